"""The acceptance gate: does pass^k reach the bar, and can more trials still change the answer?

The gate reads the exact estimator, so a finished run meets the bar exactly when mean over scenarios
of C(c, k) / C(n, k) >= minimum. While a run is under way each scenario's term is only bounded:
between its value if every remaining trial fails and its value if every one passes. Once the mean
of the upper bounds is below the bar, or the mean of the lower bounds reaches it, no remaining
trial can change the decision; and a scenario whose two bounds meet (too many failures for k
successes) cannot move it either. That is what early stopping relies on.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import numpy as np

from passhat.metrics.estimators import scenario_pass_hat
from passhat.metrics.intervals import run_intervals
from passhat.metrics.summary import Scenario


@dataclasses.dataclass(frozen=True)
class Gate:
    """The bar: pass^k >= minimum, over one persona's scenarios or all of them."""

    k: int
    minimum: float
    persona: str | None = None

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"the gate's k must be at least 1, got {self.k}")
        if not 0.0 <= self.minimum <= 1.0:
            raise ValueError(f"the gate's minimum is a pass^k between 0 and 1, got {self.minimum}")

    def covers(self, scenario: Scenario) -> bool:
        return self.persona is None or scenario[1] == self.persona

    def __str__(self) -> str:
        where = f" for persona {self.persona}" if self.persona else ""
        return f"pass^{self.k} >= {self.minimum:g}{where}"


_FIELD = re.compile(r"\s*(k|min|persona)\s*=\s*([^,\s]+)\s*")


def parse_gate(text: str) -> Gate:
    """Parse "k=8,min=0.9[,persona=P]"; a ValueError names what is wrong."""
    fields: dict[str, str] = {}
    for part in text.split(","):
        match = _FIELD.fullmatch(part)
        if not match or match[1] in fields:
            raise ValueError(f"{part.strip()!r} is not one of k=INT, min=FLOAT, persona=NAME (each once)")
        fields[match[1]] = match[2]
    if not {"k", "min"} <= fields.keys():
        raise ValueError('both k=INT and min=FLOAT are required, e.g. "k=8,min=0.9"')
    if not fields["k"].isascii() or not fields["k"].isdigit():
        raise ValueError(f"k={fields['k']} is not a whole number")
    try:
        minimum = float(fields["min"])
    except ValueError:
        raise ValueError(f"min={fields['min']} is not a number") from None
    return Gate(int(fields["k"]), minimum, fields.get("persona"))


@dataclasses.dataclass(frozen=True)
class Decision:
    """meets is None while remaining trials can still change the answer; lo/hi bound pass^k."""

    gate: Gate
    meets: bool | None
    lo: float
    hi: float
    scenarios: int

    @property
    def value(self) -> float | None:
        """pass^k itself, once no trial is pending."""
        return self.lo if self.lo == self.hi else None

    @property
    def reason(self) -> str:
        """A short sentence saying why the run meets the bar or not."""
        g = self.gate
        if self.value is not None:
            relation = ">=" if self.meets else "<"
            figure = f"pass^{g.k} = {self.value:.3f} {relation} {g.minimum:g}"
        elif self.meets is None:
            return f"undecided: pass^{g.k} lies between {self.lo:.3f} and {self.hi:.3f}, the bar is {g.minimum:g}"
        elif self.meets:
            figure = f"pass^{g.k} >= {self.lo:.3f} >= {g.minimum:g} whatever the remaining trials"
        else:
            figure = f"pass^{g.k} <= {self.hi:.3f} < {g.minimum:g} whatever the remaining trials"
        where = f" of persona {g.persona}" if g.persona else ""
        return f"{figure} over {self.scenarios} scenario{'s' if self.scenarios != 1 else ''}{where}"

    def to_json(self) -> dict[str, object]:
        return {
            "gate": str(self.gate),
            "k": self.gate.k,
            "min": self.gate.minimum,
            "persona": self.gate.persona,
            "meets": self.meets,
            "pass_hat_k": self.value,
            "bounds": [self.lo, self.hi],
            "reason": self.reason,
        }


def scenario_bounds(
    gate: Gate, counts: Mapping[Scenario, tuple[int, int]], planned: Mapping[Scenario, int]
) -> dict[Scenario, tuple[float, float]]:
    """Each gated scenario's C(c, k) / C(n, k) if all its remaining trials fail, and if all pass.

    counts holds (successes, judged trials) so far; planned the trials each scenario will have (n).
    A planned scenario with no trial yet has bounds (0, 1).
    """
    keys = [s for s in planned if gate.covers(s)]
    if not keys:
        raise ValueError(f"no scenario is covered by the gate {gate}")
    done = np.array([counts.get(s, (0, 0)) for s in keys], dtype=np.int64).reshape(-1, 2)
    n = np.array([planned[s] for s in keys], dtype=np.int64)
    if (n < gate.k).any():
        raise ValueError(f"the gate's k = {gate.k} exceeds the {n.min()} trials of some scenario; pass^k needs k <= n")
    lo = scenario_pass_hat(done[:, 0].tolist(), n.tolist(), gate.k)[:, -1]
    hi = scenario_pass_hat((done[:, 0] + n - done[:, 1]).tolist(), n.tolist(), gate.k)[:, -1]
    return {s: (float(a), float(b)) for s, a, b in zip(keys, lo, hi, strict=True)}


def decide(gate: Gate, counts: Mapping[Scenario, tuple[int, int]], planned: Mapping[Scenario, int] | None = None) -> Decision:
    """The gate's decision; planned defaults to a finished run (each scenario's n is its judged trials)."""
    planned = planned if planned is not None else {s: n for s, (_, n) in counts.items()}
    bounds = scenario_bounds(gate, counts, planned)
    lo = float(np.mean([b[0] for b in bounds.values()]))
    hi = float(np.mean([b[1] for b in bounds.values()]))
    meets = True if lo >= gate.minimum else False if hi < gate.minimum else None
    return Decision(gate, meets, lo, hi, len(bounds))


def gate_ci(gate: Gate, counts: Mapping[Scenario, tuple[int, int]], decision: Decision) -> list[float] | None:
    """The 95% bootstrap interval of the gate's pass^k over its scenarios, once the run is finished."""
    gated = [cn for s, cn in counts.items() if gate.covers(s)]
    if decision.value is None or not gated or min(n for _, n in gated) < gate.k:
        return None
    return list(run_intervals(gated).pass_hat_k[gate.k])
