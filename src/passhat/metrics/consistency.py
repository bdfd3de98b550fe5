"""Consistency beyond outcomes: whether an agent behaves the same way each time it meets the same request, not only
whether it ends the same way.

pass^k asks whether every trial of a scenario succeeds; these figures ask how alike its trials are: in outcome, in the
tool calls they made (against each other and against the task's ground-truth plan), in what they cost, whether the
request's wording changes the result, and whether the confidence an agent states means anything. Pure functions
over what each judged trial did, counted as the trials come (one pass, nothing of a transcript kept); the formulas
are in docs/statistics.md.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np

from passhat.metrics.compare import paired_deltas
from passhat.metrics.estimators import pass_hat_k
from passhat.metrics.intervals import bootstrap_means, percentile, z_value
from passhat.metrics.summary import Scenario
from passhat.openings import opening_variant
from passhat.vocabulary import RESOURCES

BOOTSTRAP_DISTINCT = 200  # distinct per-scenario values up to which a mean's interval is bootstrapped
CALIBRATION_BINS = 10  # equal-width bins of stated confidence for the expected calibration error
# The stated-confidence convention: the word (confidence or Confidence), an optional ":" or "=", a number, an optional
# "%": "confidence: 0.8", "Confidence = 80%", "(confidence 0.85)".
STATED_CONFIDENCE = re.compile(r"\b[Cc]onfidence\s*[:=]?\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)")

Tools = tuple[str, ...]


def stated_confidence(text: str) -> float | None:
    """The last confidence an agent message states by the convention (STATED_CONFIDENCE), as a probability: a
    number with "%", or above 1, is a percentage; a value outside [0, 1] after that is no statement. None: none."""
    found = None
    for number, percent in STATED_CONFIDENCE.findall(text):
        value = float(number)
        value = value / 100 if percent or value > 1 else value
        if 0.0 <= value <= 1.0:
            found = value
    return found


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two tool sequences: insertions, deletions and substitutions of whole calls."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def normalized_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """edit_distance / the longer length: 0 for the same calls, 1 for nothing in common (0 for two empty sequences)."""
    longest = max(len(a), len(b))
    return edit_distance(a, b) / longest if longest else 0.0


def outcome_consistency(successes: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """1 − 4·p(1 − p) for each scenario's success share p = c / n: 1 when every trial agrees, 0 at p = ½."""
    p = successes / trials
    return 1.0 - 4.0 * p * (1.0 - p)


class Conversation(NamedTuple):
    """What consistency reads of a trial's conversation: the agent's tool calls in order, its messages (turns), and
    the last confidence it stated (None: none)."""

    tools: Tools
    turns: int
    confidence: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form, recorded when the trial is judged (``TrialRecord.steps["conversation"]``), so a report
        reads it without its transcript."""
        return {"tools": list(self.tools), "turns": self.turns, "confidence": self.confidence}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Conversation:
        return cls(tuple(raw["tools"]), raw["turns"], raw["confidence"])


def conversation_of_events(events: Sequence[dict[str, Any]]) -> Conversation:
    """The conversation from a trial's whole events (``Event.to_dict`` each)."""
    tools = tuple(e["name"] for e in events if e.get("kind") == "tool")
    turns = sum(e.get("kind") == "agent" for e in events)
    return Conversation(tools, turns, last_confidence(events))


def last_confidence(events: Iterable[dict[str, Any]]) -> float | None:
    """The last confidence the agent's messages stated, None when they stated none."""
    stated = None
    for e in events:
        if e.get("kind") == "agent" and (value := stated_confidence(str(e.get("text", "")))) is not None:
            stated = value
    return stated


class Usage(NamedTuple):
    """A trial's agent model usage: tokens in and out, cost in USD, seconds its model calls took."""

    tokens: int
    cost_usd: float
    latency_s: float


class ConsistencyTally:
    """What the judged trials did, added trial by trial, in flat columns of numbers: one entry per judged trial (its
    scenario, whether it passed and whether its opening was paraphrased), per trial whose conversation was read
    (its tool sequence and plan, as codes of ``sequences``, and its turns), per trial whose agent used a model, and
    per stated confidence; never a transcript, and nothing per trial that the garbage collector has to walk."""

    def __init__(self, paraphrases: int = 0):
        self.paraphrases = paraphrases
        self.scenarios: list[Scenario] = []
        self._index: dict[Scenario, int] = {}
        self._last: tuple[str, str, int] = ("", "", -1)  # the scenario of the last trial: a run's trials come in order
        self.sequences: list[Tools] = []  # every distinct tool sequence seen (calls or plans); a code is an index here
        self._codes: dict[Tools, int] = {}
        self.judged = (array("i"), array("b"), array("b"))  # scenario, passed, paraphrased opening
        self.read = (array("i"), array("i"), array("i"), array("i"))  # scenario, calls' code, plan's code (-1: none), turns
        self.used = (array("i"), array("d"), array("d"), array("d"))  # scenario, tokens, cost, latency
        self.stated = (array("i"), array("d"), array("b"))  # scenario, confidence, passed

    def add(
        self,
        task_id: str,
        persona: str,
        trial: int,
        success: bool,
        said: Conversation | None,
        plan: Tools | None,
        usage: Usage | None,
    ) -> None:
        """One judged trial: ``said`` None when its transcript was not read, ``plan`` None when it recorded none,
        ``usage`` None when its agent called no model."""
        last_task, last_persona, i = self._last
        if task_id is not last_task or persona is not last_persona:
            i = self._scenario(task_id, persona)
        scenarios, passes, paraphrased = self.judged
        scenarios.append(i)
        passes.append(success)
        paraphrased.append(self.paraphrases > 0 and opening_variant(trial, self.paraphrases) > 0)
        if said is not None:
            codes = self._codes
            calls = codes.get(said.tools)
            if calls is None:
                calls = self._code(said.tools)
            planned = -1 if plan is None else codes.get(plan)
            if planned is None:
                planned = self._code(plan)  # type: ignore[arg-type]
            read_in, read_calls, read_plans, read_turns = self.read
            read_in.append(i)
            read_calls.append(calls)
            read_plans.append(planned)
            read_turns.append(said.turns)
            if said.confidence is not None:
                _append(self.stated, i, said.confidence, success)
        if usage is not None:
            _append(self.used, i, *usage)

    def _scenario(self, task_id: str, persona: str) -> int:
        """The scenario's index, a new one for a scenario not seen yet."""
        i = self._index.get((task_id, persona))
        if i is None:
            i = self._index[task_id, persona] = len(self.scenarios)
            self.scenarios.append((task_id, persona))
        self._last = (task_id, persona, i)
        return i

    def _code(self, tools: Tools) -> int:
        """A new sequence's code."""
        code = self._codes[tools] = len(self.sequences)
        self.sequences.append(tools)
        return code


def _append(columns: tuple[array[Any], ...], *values: float) -> None:
    for column, value in zip(columns, values, strict=True):
        column.append(value)


def _numbers(column: array[Any]) -> np.ndarray:
    """An array module column as numbers, without a copy."""
    return np.frombuffer(column, dtype={"i": np.int32, "b": np.int8, "d": float}[column.typecode])


def consistency_figures(tally: ConsistencyTally) -> dict[str, Any]:
    """The run's figures, with each scenario's in ``scenarios`` (one list per figure, entry i for scenario i), JSON-ready;
    {} without a judged trial."""
    if not tally.scenarios:
        return {}
    scenario, passed, _ = map(_numbers, tally.judged)
    count = len(tally.scenarios)
    trials = np.bincount(scenario, minlength=count)
    wins = np.bincount(scenario, weights=passed, minlength=count)
    outcome = outcome_consistency(wins, trials)
    columns: dict[str, Any] = {
        "task_id": [t for t, _ in tally.scenarios],
        "persona": [p for _, p in tally.scenarios],
        "outcome": outcome.tolist(),
    }
    run: dict[str, Any] = {"outcome": mean_with_ci(outcome)}
    run["trajectory"] = _trajectory(tally, columns)
    run["resources"], run["resources_skipped"] = _resources(tally, trials, columns)
    run["robustness"] = _robustness(tally, columns)
    run["calibration"] = _calibration(tally, int(trials.sum()), columns)
    run["scenarios"] = columns
    return run


def _listed(values: np.ndarray) -> list[float | None]:
    """A column of figures as JSON values: NaN (no figure) as None."""
    return [None if math.isnan(x) else x for x in values.tolist()]


def _per_scenario(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """sums / counts, NaN where a scenario counted nothing."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


# --- outcome and trajectory -----------------------------------------------------------------------------------


def mean_with_ci(values: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """The mean over scenarios of a figure in [0, 1], with its 95% percentile bootstrap interval over scenarios (the
    report's intervals' method). A bootstrap resample costs as many draws as there are distinct values, so above
    BOOTSTRAP_DISTINCT of them (only a large run has so many) the interval is the normal one, mean ± z·s/√S, clipped
    to [0, 1]: with hundreds of scenarios the bootstrap of a mean gives the same."""
    column = np.asarray(values, dtype=float)
    mean = float(column.mean())
    if len(np.unique(column)) <= BOOTSTRAP_DISTINCT:
        return {"mean": mean, "ci": list(percentile(bootstrap_means(column[:, None]))[0])}
    half = z_value() * float(column.std(ddof=1)) / math.sqrt(len(column))
    return {"mean": mean, "ci": [max(0.0, mean - half), min(1.0, mean + half)]}


def _trajectory(tally: ConsistencyTally, columns: dict[str, Any]) -> dict[str, Any] | None:
    """Each scenario's tool-sequence figures into ``columns``; the run's means over the scenarios with a read
    conversation, or None when no trial's conversation was read."""
    count = len(tally.scenarios)
    scenario, calls, plans, _ = map(_numbers, tally.read)
    read = np.bincount(scenario, minlength=count)
    distances = _Distances(tally.sequences)
    # the distinct (scenario, sequence) pairs, sorted by scenario, and how many trials made each
    pairs, made = np.unique(scenario.astype(np.int64) * len(tally.sequences) + calls, return_counts=True)
    owner = pairs // max(len(tally.sequences), 1)
    distinct = np.bincount(owner, minlength=count)
    modal = np.zeros(count)
    np.maximum.at(modal, owner, made)
    pairwise = _pairwise(owner, pairs % max(len(tally.sequences), 1), made, read, distances)
    planned = plans >= 0
    to_plan = distances.between(calls[planned], plans[planned])
    plan_distance = _per_scenario(
        np.bincount(scenario[planned], weights=to_plan, minlength=count), np.bincount(scenario[planned], minlength=count)
    )
    columns["tool_sequences"] = [int(d) if n else None for d, n in zip(distinct.tolist(), read.tolist(), strict=True)]
    columns["modal_share"] = _listed(_per_scenario(modal, read))
    columns["pairwise_distance"] = _listed(pairwise)
    columns["plan_distance"] = _listed(plan_distance)
    if not read.any():
        return None
    seen = read > 0
    return {
        "trials": int(read.sum()),
        "tool_sequences": float(distinct[seen].mean()),
        "modal_share": float((modal[seen] / read[seen]).mean()),
        "pairwise_distance": mean_with_ci(pairwise[~np.isnan(pairwise)]) if (read > 1).any() else None,
        "plan_distance": mean_with_ci(plan_distance[~np.isnan(plan_distance)]) if planned.any() else None,
    }


def _pairwise(owner: np.ndarray, codes: np.ndarray, made: np.ndarray, read: np.ndarray, distances: _Distances) -> np.ndarray:
    """Per scenario, the mean distance over every pair of its read trials, Σ m_a·m_b·d(a, b) over its distinct
    sequences a < b (m: how many trials made each) / (n(n − 1)/2); 0 for a scenario whose trials all made one
    sequence, NaN under two trials."""
    pairwise = np.where(read > 1, 0.0, np.nan)
    starts = np.searchsorted(owner, np.arange(len(read)))
    for i in np.flatnonzero(np.bincount(owner, minlength=len(read)) > 1).tolist():
        group = range(starts[i], starts[i + 1] if i + 1 < len(read) else len(owner))
        total = sum(made[a] * made[b] * distances.one(codes[a], codes[b]) for a, b in combinations(group, 2))
        pairwise[i] = total / (read[i] * (read[i] - 1) / 2)
    return pairwise


class _Distances:
    """Normalized edit distances between the tally's sequences, each pair computed once: a run repeats a handful of
    sequences thousands of times."""

    def __init__(self, sequences: list[Tools]):
        self.sequences = sequences
        self._memo: dict[tuple[int, int], float] = {}

    def one(self, a: int, b: int) -> float:
        key = (a, b) if a <= b else (b, a)
        if key not in self._memo:
            self._memo[key] = normalized_distance(self.sequences[a], self.sequences[b])
        return self._memo[key]

    def between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The distance of each pair a[i], b[i]."""
        if not len(a):
            return np.zeros(0)
        pairs, where = np.unique(np.stack([a, b]), axis=1, return_inverse=True)
        return np.array([self.one(x, y) for x, y in pairs.T.tolist()])[where.ravel()]


# --- resources ------------------------------------------------------------------------------------------------


def _resources(tally: ConsistencyTally, trials: np.ndarray, columns: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Per resource with a non-zero mean over the run: its mean per trial and the mean over scenarios of each scenario's
    coefficient of variation and interquartile range (each scenario's into ``columns``); the resources skipped for a
    zero mean (tokens, cost and latency of a run without a model). Turns and tool calls count the trials whose
    conversation was read: with none, they are neither."""
    count = len(tally.scenarios)
    read_in, calls, _, turns = map(_numbers, tally.read)
    lengths = np.array([len(s) for s in tally.sequences], dtype=float)
    used_in, *usage = map(_numbers, tally.used)
    read = np.bincount(read_in, minlength=count)
    sources = {"turns": (turns, read_in, read), "tool_calls": (lengths[calls], read_in, read)}
    sources.update({name: (values, used_in, trials) for name, values in zip(RESOURCES[2:], usage, strict=True)})
    run: dict[str, Any] = {}
    skipped = []
    columns["cv"], columns["iqr"] = {}, {}
    for name in RESOURCES:
        values, owners, counts = sources[name]
        if not counts.any():
            continue
        total = float(values.sum())
        if total == 0:
            skipped.append(name)
            continue
        cv, iqr = spread_by_scenario(counts, owners, values.astype(float))
        columns["cv"][name], columns["iqr"][name] = _listed(cv), _listed(iqr)
        run[name] = {
            "mean": total / int(counts.sum()),
            "cv": float(np.nanmean(cv)) if not np.isnan(cv).all() else None,
            "iqr": float(np.nanmean(iqr)),
        }
    return run, skipped


def spread_by_scenario(counts: np.ndarray, scenarios: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coefficient of variation, interquartile range) of each scenario's values: its ``counts[i]`` values are the
    ``values`` whose ``scenarios`` entry is i, and zeros for the rest. CV: the population standard deviation over
    the mean (NaN at a zero mean); IQR: the 75th minus the 25th percentile (linear interpolation); NaN for a scenario
    without values. Scenarios with the same count are computed as one array."""
    counts = np.asarray(counts)
    cv, iqr = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
    given = np.bincount(scenarios, minlength=len(counts))
    starts = np.concatenate(([0], np.cumsum(given)[:-1]))
    ordered = values[np.argsort(scenarios, kind="stable")]
    for n in np.unique(counts[counts > 0]).tolist():
        rows = np.flatnonzero(counts == n)
        block = np.zeros((len(rows), n))
        filled = np.arange(n) < given[rows][:, None]  # each row's given values first, its zeros after
        block[filled] = ordered[(starts[rows][:, None] + np.arange(n))[filled]]
        means = block.mean(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            cv[rows] = np.where(means > 0, block.std(axis=1) / means, np.nan)
        q25, q75 = np.percentile(block, [25, 75], axis=1)
        iqr[rows] = q75 - q25
    return cv, iqr


# --- prompt robustness ----------------------------------------------------------------------------------------


def _robustness(tally: ConsistencyTally, columns: dict[str, Any]) -> dict[str, Any] | None:
    """In a run with paraphrased openings: per scenario its [passed, trials] on the original and on the paraphrased
    openings (into ``columns``); over the scenarios with both, pass^k of each at the smallest count k, and the paired
    change in avg reward, pass^k and pass@k (``paired_deltas``). None for a run without paraphrases."""
    if not tally.paraphrases:
        return None
    scenario, passed, paraphrased = map(_numbers, tally.judged)
    count = len(tally.scenarios)
    sides = []
    for mask in (paraphrased == 0, paraphrased == 1):
        wins = np.bincount(scenario[mask], weights=passed[mask], minlength=count).astype(int)
        sides.append(list(zip(wins.tolist(), np.bincount(scenario[mask], minlength=count).tolist(), strict=True)))
    columns["original"], columns["paraphrased"] = ([list(cn) for cn in side] for side in sides)
    both = [i for i, ((_, n0), (_, n1)) in enumerate(zip(*sides, strict=True)) if n0 and n1]
    original = {tally.scenarios[i]: sides[0][i] for i in both}
    reworded = {tally.scenarios[i]: sides[1][i] for i in both}
    figures: dict[str, Any] = {"paraphrases": tally.paraphrases, "scenarios": len(both)}
    if not both:
        return {**figures, "k": None, "original_pass_hat_k": None, "paraphrased_pass_hat_k": None, "deltas": []}
    k = min(n for counts in (original, reworded) for _, n in counts.values())
    return {
        **figures,
        "k": k,
        "original_pass_hat_k": _pass_hat(original.values(), k),
        "paraphrased_pass_hat_k": _pass_hat(reworded.values(), k),
        "deltas": [d.to_json() for d in paired_deltas(original, reworded)],
    }


def _pass_hat(counts: Iterable[tuple[int, int]], k: int) -> float:
    pairs = list(counts)
    return pass_hat_k([c for c, _ in pairs], [n for _, n in pairs], k)


# --- calibration ----------------------------------------------------------------------------------------------


def brier(confidences: Sequence[float], successes: Sequence[int]) -> float:
    """The mean squared difference between stated confidence and outcome (1 success, 0 failure)."""
    return float(np.mean((np.asarray(confidences, dtype=float) - np.asarray(successes, dtype=float)) ** 2))


def calibration_bins(
    confidences: Sequence[float], successes: Sequence[int], bins: int = CALIBRATION_BINS
) -> list[dict[str, Any]]:
    """The non-empty equal-width bins of stated confidence ([0, 0.1), ..., [0.9, 1.0], 1.0 in the last): each with its
    trials, their mean confidence and their success rate."""
    grouped: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for c, y in zip(confidences, successes, strict=True):
        grouped[min(math.floor(c * bins), bins - 1)].append((c, y))
    return [
        {
            "low": b / bins,
            "high": (b + 1) / bins,
            "trials": len(pairs),
            "confidence": sum(c for c, _ in pairs) / len(pairs),
            "success": sum(y for _, y in pairs) / len(pairs),
        }
        for b, pairs in sorted(grouped.items())
    ]


def expected_calibration_error(bins: Sequence[dict[str, Any]]) -> float:
    """Σ over bins of (its trials / all trials) × |its mean confidence − its success rate|."""
    total = sum(b["trials"] for b in bins)
    return sum(b["trials"] / total * abs(b["confidence"] - b["success"]) for b in bins)


def _calibration(tally: ConsistencyTally, judged: int, columns: dict[str, Any]) -> dict[str, Any]:
    """Brier score, calibration error and bins over the judged trials that stated a confidence, and each scenario's
    Brier score (into ``columns``; None where no trial stated one); without any, only the counts (the reports then
    say there was no stated confidence)."""
    scenario, confidence, passed = map(_numbers, tally.stated)
    count = len(tally.scenarios)
    squared = (confidence - passed) ** 2
    columns["brier"] = _listed(
        _per_scenario(np.bincount(scenario, weights=squared, minlength=count), np.bincount(scenario, minlength=count))
    )
    if not len(scenario):
        return {"judged": judged, "stated": 0, "brier": None, "ece": None, "bins": []}
    bins = calibration_bins(confidence.tolist(), passed.tolist())
    return {
        "judged": judged,
        "stated": len(scenario),
        "brier": brier(confidence, passed),
        "ece": expected_calibration_error(bins),
        "bins": bins,
    }
