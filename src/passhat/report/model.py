"""The report of a stored run as one typed document.

`build_report` assembles it once from the metrics; the terminal, HTML, JUnit and JSON writers all read
its attributes, so every figure has one name and one type wherever it is shown, and `passhat schema
report` publishes its JSON Schema (docs/report-json.md says what each field means; a test keeps the two
in step). Every model forbids unknown fields: a misspelt key is an error where it is made, not a figure
silently missing from a report.

A few keys are in a report only sometimes: ``gate`` (a gate was given), its ``ci`` (`passhat report`)
or ``trials_saved`` (`passhat run`), and the statistics that need judged trials (``metrics.ci`` ...
``metrics.compounding``, ``metrics.consistency``), ``metrics.steps`` (judged trials that recorded their steps) and a scenario's
``outcomes`` (a task whose passes took several acceptable outcomes). They have defaults, and `Report.to_json`
leaves out every key that was not set (a scenario's outcomes: when None), so the JSON holds exactly the keys the
run has.

The records a report holds one of per scenario, per task or per step (tens of thousands in a large run: scenarios,
their state diffs, each task's plan step by step, risky scenarios) are frozen pydantic dataclasses with slots, not
models: validated, serialized and described by the JSON Schema alike, in a sixth of a model's memory.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass

from passhat.report.state_diff import RowChange
from passhat.run_config import RunConfig
from passhat.trajectory import Signature, SuspicionKind
from passhat.vocabulary import HarmType as HarmName
from passhat.vocabulary import Resource as ResourceName


class Strict(BaseModel):
    """Unknown fields are errors; a field with a default is a key the JSON holds only when it was set."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


ROW = ConfigDict(extra="forbid", populate_by_name=True)  # Strict's, for the records held by the thousand (the module says)


Interval = tuple[float, float]  # a 95% interval: (low, high)
PerK = dict[int, float]  # a figure for each k (JSON keys "1", "2", ...)
ModelName = Literal["mixture-1", "always+mixture-1", "mixture-2", "always+mixture-2", "mixture-3", "beta-binomial", "always+beta"]
ScenarioClass = Literal["reliable", "unreliable", "out_of_reach"]
FailureName = Signature | Literal["unclassified"]  # unclassified: a failed trial the graders gave no signature
Verdict = Literal["better", "worse", "within noise"]
DeltaMetric = Annotated[str, Field(pattern=r"^(avg_reward|pass\^[0-9]+|pass@[0-9]+)$")]


# --- metrics ---------------------------------------------------------------------------------------


class Intervals(Strict):
    """95% intervals over scenarios (metrics.intervals: a Wilson interval on the effective sample size joined with a Bayesian bootstrap), one set for every figure."""

    avg_reward: Interval
    pass_hat_k: dict[int, Interval]
    pass_at_k: dict[int, Interval]


class GroupStats(Strict):
    """The estimates over one slice of the scenarios (a persona, a task tag), k = 1..min n of the slice."""

    scenarios: int
    avg_reward: float
    pass_hat_k: PerK
    pass_at_k: PerK
    ci: Intervals


class MixtureParams(Strict):
    weights: list[float]
    rates: list[float]


class BetaParams(Strict):
    a: float
    b: float


class AlwaysBetaParams(Strict):
    always: float
    a: float
    b: float


class FitPoint(Strict):
    model: float
    exact: float


class Candidate(Strict):
    name: ModelName
    n_params: int
    loglik: float
    aic: float
    pass_hat_k: PerK


class Extrapolation(Strict):
    """pass^k beyond n from the model of per-scenario success with the lowest AIC; a k whose prediction is
    withheld has None in pass_hat_k and ci, and its reason in not_predicted."""

    model: ModelName
    params: MixtureParams | BetaParams | AlwaysBetaParams
    pass_hat_k: dict[int, float | None]
    ci: dict[int, Interval | None]
    not_predicted: dict[int, str]
    curve: dict[int, tuple[float, float, float]]  # k -> (value, low, high), as far as it is predicted
    fit_vs_exact: dict[int, FitPoint]
    agrees: dict[int, bool]
    max_gap: float
    candidates: list[Candidate]
    chosen_in_resamples: dict[ModelName, float]
    assumptions: list[str]


class Partition(Strict):
    reliable: int
    unreliable: int
    out_of_reach: int


class PartitionBy(Strict):
    persona: dict[str, Partition]
    tag: dict[str, Partition]


class Spread(Strict):
    mean_trial_variance: float | None
    between_scenarios: float


class Delta(Strict):
    """One figure of a persona against the baseline persona on the same tasks, with its paired interval."""

    metric: DeltaMetric
    a: float
    b: float
    change: float
    ci: Interval
    verdict: Verdict


class WritesPoint(Strict):
    writes: int
    scenarios: int
    avg_reward: float
    avg_reward_ci: Interval
    k: int
    pass_hat_k: float
    pass_hat_k_ci: Interval


class Conservative(Strict):
    avg_reward: float | None
    pass_hat_k: PerK


class Tokens(Strict):
    input: int
    output: int


class Latency(Strict):
    mean: float | None
    p50: float | None
    p95: float | None


class RoleUsage(Strict):
    model: str
    cost_usd: float
    calls: int
    cached_calls: int
    input_tokens: int
    output_tokens: int
    unpriced_calls: int
    latency_s: Latency


class FaultFigures(Strict):
    injected: int
    trials_affected: int
    trials_passed: int

    @property
    def recovery(self) -> float | None:
        """The share of the trials this fault hit that still passed."""
        return self.trials_passed / self.trials_affected if self.trials_affected else None


class GuardFigures(Strict):
    enabled: list[str]
    trials: int
    duplicate_writes: int
    unconfirmed_writes: int
    policy_violations: int
    refusals: int
    handoffs: int
    handoffs_task_declared: int | None
    helpfulness: float | None


@dataclass(config=ROW, frozen=True, slots=True)
class StepFigures:
    """One step of a task's plan over the trials that went along it: how many reached it (called its tool for its
    entity) and how many did it right (a successful call with its arguments); ``conditional``: right among the
    ``at_risk`` trials whose every earlier step was right (None when there were none); ``first_wrong``: the trials
    that went wrong first at this step."""

    tool: str
    write: bool
    entity: str
    reached: int
    right: int
    rate: float
    ci: Interval
    at_risk: int
    conditional: float | None
    first_wrong: int


@dataclass(config=ROW, frozen=True, slots=True)
class FirstWrong:
    """The step (``step``: its number in the plan, from 1) at which the most trials went wrong first, and how many."""

    step: int
    tool: str
    entity: str
    trials: int
    share: float


class KindFirstWrong(Strict):
    """The step kind (tool) at which the most trials went wrong first, over every plan."""

    tool: str
    trials: int
    share: float


@dataclass(config=ROW, frozen=True, slots=True)
class TaskSteps:
    """A task's plan (of one acceptable outcome) over the trials that went along it: each step's rate, the rate
    its steps' kinds predict (``predicted``: each kind's conditional rate over the domain, multiplied along the
    plan; None when a kind was never reached along a right chain) beside the share that passed (observed), and
    where they went wrong first. ``failed_every_step_right``: failed trials whose every step was right (they failed
    on what they said or how)."""

    task_id: str
    outcome: str
    trials: int
    passed: int
    observed: float
    observed_ci: Interval
    predicted: float | None
    steps: list[StepFigures]
    first_wrong: FirstWrong | None
    failed_every_step_right: int


class StepKind(Strict):
    """Every step of one tool, over every plan and trial: its rate, and its rate among the steps reached along a
    right chain (``at_risk``: every earlier step of the trial right), the kind's own reliability."""

    tool: str
    write: bool
    steps: int
    right: int
    rate: float
    ci: Interval
    at_risk: int
    conditional: float | None


class StepsPoint(Strict):
    """Plans of ``steps`` steps: observed success (pooled over their trials) and the predicted rate."""

    steps: int
    tasks: int
    trials: int
    observed: float
    observed_ci: Interval
    predicted: float | None


class StepReliability(Strict):
    """Per-step reliability of the run's domain: the figures of every task's plan, by step kind, and the
    compounding curve (success against the number of steps)."""

    trials: int
    observed: float
    observed_ci: Interval
    predicted: float | None
    by_kind: list[StepKind]
    first_wrong: KindFirstWrong | None
    tasks: list[TaskSteps]
    compounding: list[StepsPoint]


class MeanWithCi(Strict):
    """A mean over scenarios with its 95% bootstrap interval over scenarios."""

    mean: float
    ci: Interval


class TrajectoryConsistency(Strict):
    """How alike the tool calls of a scenario's trials are, averaged over scenarios (see ScenarioConsistency)."""

    trials: int
    tool_sequences: float
    modal_share: float
    pairwise_distance: MeanWithCi | None
    plan_distance: MeanWithCi | None


class ResourceSpread(Strict):
    """One resource: its mean per trial, and the mean over scenarios of their coefficient of variation and IQR."""

    mean: float
    cv: float | None
    iqr: float | None


class CalibrationBin(Strict):
    low: float
    high: float
    trials: int
    confidence: float
    success: float


class Calibration(Strict):
    """Stated confidence against success over the judged trials that stated one (``stated``; none: no figures)."""

    judged: int
    stated: int
    brier: float | None
    ece: float | None
    bins: list[CalibrationBin]


class Robustness(Strict):
    """The task's own opening against paraphrases of it (a run with ``--paraphrase``), paired by scenario."""

    paraphrases: int
    scenarios: int
    k: int | None
    original_pass_hat_k: float | None
    paraphrased_pass_hat_k: float | None
    deltas: list[Delta]


class ScenarioColumns(Strict):
    """Each judged scenario's consistency figures, one list per figure with scenario i at index i of every list: a run
    of 12,500 scenarios holds a dozen lists, not 12,500 objects. None where a scenario has no such figure."""

    task_id: list[str]
    persona: list[str]
    outcome: list[float]
    tool_sequences: list[int | None]
    modal_share: list[float | None]
    pairwise_distance: list[float | None]
    plan_distance: list[float | None]
    cv: dict[ResourceName, list[float | None]]
    iqr: dict[ResourceName, list[float | None]]
    brier: list[float | None]
    original: list[tuple[int, int]] | None = None  # a run with paraphrases: (passed, trials) on the task's own opening
    paraphrased: list[tuple[int, int]] | None = None  # and on the paraphrased ones


class Consistency(Strict):
    """Consistency beyond outcomes over the run's scenarios (docs/statistics.md has each formula), and each
    scenario's figures."""

    outcome: MeanWithCi
    trajectory: TrajectoryConsistency | None
    resources: dict[ResourceName, ResourceSpread]
    resources_skipped: list[ResourceName]
    robustness: Robustness | None
    calibration: Calibration
    scenarios: ScenarioColumns


@dataclass(config=ROW, frozen=True, slots=True)
class ScenarioHarm:
    """One scenario of a task with risks: its risky trials (incidents), mean harm and passes, each with its interval."""

    task_id: str
    persona: str
    trials: int
    incidents: int
    incidence: float
    incidence_ci: Interval
    harm: float
    harm_ci: Interval
    helped: int
    helpfulness: float
    helpfulness_ci: Interval


class HarmTypeFigures(Strict):
    """One harm type: the trials that incurred a risk of it, and the severity those risks add up to."""

    trials: int
    severity: int


class RiskyActions(Strict):
    """Risky actions under ambiguity over the trials of tasks with risks (see passhat.metrics.harm): failure incidence,
    severity-weighted harm and helpfulness side by side, each the mean over scenarios with its bootstrap interval."""

    scenarios: int
    trials: int
    incidence: float
    incidence_ci: Interval
    harm: float
    harm_ci: Interval
    harm_per_1000: float
    harm_per_1000_ci: Interval
    helpfulness: float
    helpfulness_ci: Interval
    by_harm: dict[HarmName, HarmTypeFigures]
    by_scenario: list[ScenarioHarm]


class Sign(Strict):
    """One sign that the simulated customer went wrong: at which event of the trial, and why (grade/noise.py)."""

    kind: SuspicionKind
    event: int
    note: str


class SuspectedTrial(Strict):
    task_id: str
    persona: str
    trial: int
    signs: list[Sign]


class SimulatorNoise(Strict):
    """The failed trials that may be the harness's failure rather than the agent's, counted and listed: read
    their transcripts before charging the agent with them."""

    trials: int
    by_kind: dict[SuspicionKind, int]
    suspects: list[SuspectedTrial]


class Metrics(Strict):
    """Every figure of the run. The statistics from ci to compounding need judged trials: a run without
    any has none of them (they are left out of the JSON)."""

    scenarios: int
    trials_per_scenario: int
    avg_reward: float | None
    pass_hat_k: PerK
    pass_at_k: PerK
    by_persona: dict[str, GroupStats]
    by_tag: dict[str, GroupStats]
    failure_signatures: dict[FailureName, int]
    infra_errors: int
    user_simulator_errors: int
    suspected_simulator_errors: SimulatorNoise
    ci: Intervals | None = None
    extrapolated: Extrapolation | None = None
    extrapolation_skipped: str | None = None
    partition: Partition | None = None
    partition_by: PartitionBy | None = None
    spread: Spread | None = None
    persona_drop: dict[str, list[Delta]] | None = None
    compounding: list[WritesPoint] | None = None
    conservative: Conservative
    cost_usd: float
    tokens: Tokens
    model_calls: dict[str, RoleUsage]
    unpriced_models: list[str]
    faults: dict[str, FaultFigures]
    guard: GuardFigures
    steps: StepReliability | None = None
    consistency: Consistency | None = None
    risky_actions: RiskyActions | None = None  # only for a run with tasks that declare risks


# --- the gate ----------------------------------------------------------------------------------------


class GateDecision(Strict):
    """A gate's decision: meets is None while trials still to run could change it; bounds hold pass^k."""

    gate: str
    k: int
    minimum: float = Field(alias="min")
    persona: str | None
    meets: bool | None
    pass_hat_k: float | None
    bounds: Interval
    reason: str


class GateSection(GateDecision):
    """The gate given to `run` or `report`: `report` adds the 95% interval of its pass^k (ci), `run` the
    trials early stopping saved (trials_saved)."""

    ci: Interval | None = None
    trials_saved: int | None = None


# --- scenarios ---------------------------------------------------------------------------------------


@dataclass(config=ROW, frozen=True, slots=True)
class StateDiff:
    """The backend of a scenario's first failed trial against the expected state, row by row."""

    trial: int
    rows: list[RowChange]


@dataclass(config=ROW, frozen=True, slots=True)
class ScenarioReport:
    """One task × persona: its judged trials in order, and the trials that could not be judged, counted."""

    task_id: str
    persona: str
    trials: list[int]
    rewards: list[Literal[0, 1]]
    signatures: list[FailureName | None]
    infra_errors: int
    user_simulator_errors: int
    state_diff: StateDiff | None
    scenario_class: Annotated[ScenarioClass | None, Field(alias="class")]
    wilson: Interval | None
    variance: float | None
    # passes per acceptable outcome's label, for a task with several; left out of the JSON otherwise
    outcomes: Annotated[dict[str, int] | None, Field(exclude_if=lambda outcomes: outcomes is None)] = None

    @property
    def passed(self) -> int:
        return sum(self.rewards)

    @property
    def judged(self) -> int:
        return len(self.rewards)

    @property
    def failure_names(self) -> list[str]:
        """The distinct signatures of its failed trials, sorted."""
        return sorted({s for s in self.signatures if s})


# --- the report --------------------------------------------------------------------------------------


class Report(Strict):
    run_id: str
    complete: bool
    planned_trials: int | None
    stored_trials: int
    early_stopped: bool
    caveats: list[str]
    early_stop_decision: GateDecision | None
    config: dict[str, Any]  # the run's configuration as `passhat run` stored it (secrets redacted)
    metrics: Metrics
    scenarios: list[ScenarioReport]
    infra_error_example: str | None
    gate: GateSection | None = None

    @property
    def run_config(self) -> RunConfig:
        """The configuration as a RunConfig, for every reader of it (``config`` is kept as stored, for the JSON)."""
        return RunConfig.model_validate(self.config)

    def to_json(self) -> dict[str, Any]:
        """The JSON document: JSON names ("class", "min"), and only the keys that were set (see the module)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the report as `report --json` writes it (JSON names)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **Report.model_json_schema(by_alias=True)}
