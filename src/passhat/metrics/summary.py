"""From trial outcomes to the figures a report shows: pass^k, pass@k, and where failures come from.

Only judged trials count. An infra error (the trial could not be judged) and a user simulator
error (the simulated customer broke its instruction) say nothing about the agent, so both are
left out of every estimate and counted apart.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from passhat.metrics.estimators import pass_at_curve, pass_hat_curve
from passhat.trajectory import USER_SIMULATOR_ERROR, Signature

UNCLASSIFIED = "unclassified"

Scenario = tuple[str, str]  # (task_id, persona)


@dataclasses.dataclass(frozen=True, slots=True)  # one per trial, held for a whole run: no __dict__ each
class TrialResult:
    """What metrics need from one trial; reward is 1 or 0 for a judged trial, None when not judged."""

    task_id: str
    persona: str
    trial: int
    reward: int | None
    signature: Signature | None
    infra_error: bool


class ResultLike(Protocol):
    """What the figures read of a trial: a TrialResult, or a stored trial as it is (its infra error a message)."""

    @property
    def task_id(self) -> str: ...
    @property
    def persona(self) -> str: ...
    @property
    def trial(self) -> int: ...
    @property
    def reward(self) -> int | None: ...
    @property
    def signature(self) -> Signature | None: ...
    @property
    def infra_error(self) -> object: ...


@dataclasses.dataclass(frozen=True)
class GroupStats:
    """Estimates over one slice of the scenarios (a persona, a task tag), k = 1..min n of the slice."""

    scenarios: int
    avg_reward: float
    pass_hat_k: dict[int, float]
    pass_at_k: dict[int, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenarios,
            "avg_reward": self.avg_reward,
            "pass_hat_k": _str_keys(self.pass_hat_k),
            "pass_at_k": _str_keys(self.pass_at_k),
        }


@dataclasses.dataclass(frozen=True)
class Summary:
    """Run-level figures.

    avg_reward is the mean over scenarios of c / n (equal to pass^1), so every scenario weighs the
    same even when infra errors left some with fewer judged trials than others. It is None, and the
    k dictionaries are empty, when no trial was judged.
    """

    scenarios: int
    trials_per_scenario: int
    avg_reward: float | None
    pass_hat_k: dict[int, float]
    pass_at_k: dict[int, float]
    by_persona: dict[str, GroupStats]
    by_tag: dict[str, GroupStats]
    failure_signatures: dict[str, int]
    infra_errors: int
    user_simulator_errors: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dicts; k keys become strings ("1", "2", ...) as JSON requires."""
        return {
            "scenarios": self.scenarios,
            "trials_per_scenario": self.trials_per_scenario,
            "avg_reward": self.avg_reward,
            "pass_hat_k": _str_keys(self.pass_hat_k),
            "pass_at_k": _str_keys(self.pass_at_k),
            "by_persona": {name: group.to_json() for name, group in self.by_persona.items()},
            "by_tag": {name: group.to_json() for name, group in self.by_tag.items()},
            "failure_signatures": dict(self.failure_signatures),
            "infra_errors": self.infra_errors,
            "user_simulator_errors": self.user_simulator_errors,
        }


def headline_ks(n: int) -> list[int]:
    """The k a report shows for n trials per scenario: powers of two below n, then n itself."""
    ks: list[int] = []
    k = 1
    while k < n:
        ks.append(k)
        k *= 2
    return ks + [n] if n >= 1 else []


@dataclasses.dataclass
class ScenarioVerdicts:
    """One scenario's trials in the order they were added: the judged ones' numbers, rewards and signatures, and
    the trials that could not be judged, counted (never read as failures)."""

    trials: list[int] = dataclasses.field(default_factory=list)
    rewards: list[int] = dataclasses.field(default_factory=list)
    signatures: list[Signature | None] = dataclasses.field(default_factory=list)
    infra_errors: int = 0
    user_simulator_errors: int = 0


@dataclasses.dataclass
class ResultTally:
    """Trial outcomes per scenario, added one at a time: what summarize(), conservative() and a report's scenario
    rows read of them, in a few lists per scenario, so that a report of a large run holds no object per trial."""

    scenarios: dict[Scenario, ScenarioVerdicts] = dataclasses.field(default_factory=dict)

    def add(self, o: ResultLike) -> bool:
        """Count one trial; whether it was judged."""
        verdicts = self.scenarios.get((o.task_id, o.persona))
        if verdicts is None:
            verdicts = self.scenarios[(o.task_id, o.persona)] = ScenarioVerdicts()
        judged = is_judged(o)
        if judged:
            verdicts.trials.append(o.trial)
            verdicts.rewards.append(o.reward)  # type: ignore[arg-type]
            verdicts.signatures.append(o.signature)
        elif o.infra_error:
            verdicts.infra_errors += 1
        else:
            verdicts.user_simulator_errors += 1
        return judged

    def counts(self, infra_as_failures: bool = False) -> dict[Scenario, tuple[int, int]]:
        """(successes, judged trials) per scenario with a judged trial, in sorted scenario order; with
        ``infra_as_failures``, every infra error counts as a judged failed trial."""
        counts = {}
        for scenario, v in sorted(self.scenarios.items()):
            n = len(v.rewards) + (v.infra_errors if infra_as_failures else 0)
            if n:
                counts[scenario] = (v.rewards.count(1), n)
        return counts

    def failure_signatures(self) -> dict[str, int]:
        """Why judged trials failed, most frequent first; a failure without a signature is 'unclassified'."""
        tally: Counter[str] = Counter()
        for v in self.scenarios.values():
            tally.update(s or UNCLASSIFIED for s, reward in zip(v.signatures, v.rewards, strict=True) if reward == 0)
        return dict(sorted(tally.items(), key=lambda item: (-item[1], item[0])))


def tally_results(outcomes: Iterable[TrialResult] | ResultTally) -> ResultTally:
    """The outcomes counted (a tally as it is)."""
    if isinstance(outcomes, ResultTally):
        return outcomes
    tally = ResultTally()
    for o in outcomes:
        tally.add(o)
    return tally


def summarize(outcomes: Iterable[TrialResult] | ResultTally, tags: Mapping[str, Sequence[str]] | None = None) -> Summary:
    """Summarize a run (its outcomes, or their tally); tags maps task_id to its task tags and fills Summary.by_tag."""
    tally = tally_results(outcomes)
    counts = tally.counts()
    overall = group_stats(list(counts.values())) if counts else None
    return Summary(
        scenarios=len(counts),
        trials_per_scenario=min((n for _, n in counts.values()), default=0),
        avg_reward=overall.avg_reward if overall else None,
        pass_hat_k=overall.pass_hat_k if overall else {},
        pass_at_k=overall.pass_at_k if overall else {},
        by_persona=_by(counts, lambda scenario: [scenario[1]]),
        by_tag=_by(counts, lambda scenario: (tags or {}).get(scenario[0], [])),
        failure_signatures=tally.failure_signatures(),
        infra_errors=sum(v.infra_errors for v in tally.scenarios.values()),
        user_simulator_errors=sum(v.user_simulator_errors for v in tally.scenarios.values()),
    )


def is_judged(outcome: ResultLike) -> bool:
    """A trial that says something about the agent; its reward must then be 0 or 1."""
    if outcome.infra_error or outcome.signature == USER_SIMULATOR_ERROR:
        return False
    if outcome.reward not in (0, 1):
        raise ValueError(
            f"trial {outcome.trial} of {outcome.task_id}/{outcome.persona} was judged but has reward "
            f"{outcome.reward!r}; a judged trial's reward is 0 or 1"
        )
    return True


def group_stats(counts: list[tuple[int, int]]) -> GroupStats:
    """Estimates for a non-empty set of scenarios; pass^1 is the mean of c / n."""
    successes = [c for c, _ in counts]
    trials = [n for _, n in counts]
    hat = pass_hat_curve(successes, trials)
    return GroupStats(len(counts), hat[1], hat, pass_at_curve(successes, trials))


def _by(counts: dict[Scenario, tuple[int, int]], labels: Callable[[Scenario], Iterable[str]]) -> dict[str, GroupStats]:
    """Group scenarios under each label that labels(scenario) gives, sorted by label."""
    return {label: group_stats(group) for label, group in slices(counts, labels).items()}


def slices(
    counts: Mapping[Scenario, tuple[int, int]], labels: Callable[[Scenario], Iterable[str]]
) -> dict[str, list[tuple[int, int]]]:
    """(c, n) of the scenarios under each label that labels(scenario) gives, sorted by label."""
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for scenario, cn in counts.items():
        for label in set(labels(scenario)):  # a tag listed twice still counts the scenario once
            groups[label].append(cn)
    return {label: groups[label] for label in sorted(groups)}


def scenario_counts(outcomes: Iterable[TrialResult]) -> dict[Scenario, tuple[int, int]]:
    """(successes, judged trials) per scenario, sorted; what every statistic beyond summarize() starts from."""
    return tally_results(outcomes).counts()


def _str_keys(curve: dict[int, float]) -> dict[str, float]:
    return {str(k): v for k, v in curve.items()}
