"""The result of `passhat guard ablate` as one typed document, and the one table the terminal shows of it.

The JSON (``--json``) is the document itself; docs/guards.md says what each field means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from passhat.metrics.ablation import FIGURES, RATES, AblationFigures, ConfigurationFigures, Figure
from passhat.metrics.ablation import Estimate as FigureEstimate
from passhat.metrics.intervals import LEVEL, REPS
from passhat.report.model import Interval, Strict
from passhat.report.numbers import num
from passhat.run_config import RunConfig

CELL = 11  # characters of a figure's column: "-43.8–-12.5", so that the table fits 130 columns with 8 figures
HEADERS: dict[Figure, str] = {
    "pass_hat_1": "pass^1",
    "pass_hat_k": "pass^k",
    "duplicate_writes": "duplicate writes /100",
    "unconfirmed_writes": "unconfirmed writes /100",
    "policy_violations": "policy violations /100",
    "refusals": "refusals /100",
    "handoffs": "handoffs /100",
    "helpfulness": "helpfulness",
}


class Configuration(Protocol):
    """A configuration as the document names it (``passhat.guard.ablation.Configuration``: reports read no guard)."""

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def guards(self) -> tuple[str, ...]: ...

    def run_id(self, ablation_id: str) -> str: ...


class Estimate(Strict):
    """A figure and its 95% interval; both null when the figure does not exist."""

    value: float | None
    ci: Interval | None


class Counts(Strict):
    """Sums over the compared trials."""

    trials: int
    duplicate_writes: int
    unconfirmed_writes: int
    policy_violations: int
    refusals: int
    handoffs: int
    helped: int
    write_trials: int


class AblatedConfiguration(Strict):
    """One configuration: its names, run and guards, its sums, its figures and their differences to off."""

    name: str
    also_named: list[str]
    run_id: str
    guards: list[str]
    counts: Counts
    figures: dict[Figure, Estimate]
    difference_to_off: dict[Figure, Estimate] | None


class Ablation(Strict):
    """What `passhat guard ablate --json` writes: what was evaluated, over which trials, and each configuration."""

    ablation_id: str
    domain: str
    agent: str
    faults: dict[str, float]
    seed: int
    trials_per_scenario: int
    guards: list[str]
    k: int
    scenarios: int
    compared_trials: int
    left_out_trials: int
    interval: Literal["paired bootstrap over scenarios"]
    level: float
    resamples: int
    configurations: list[AblatedConfiguration]


def ablation_document(
    ablation_id: str,
    config: RunConfig,
    guards: Sequence[str],
    configurations: Sequence[Configuration],
    figures: AblationFigures,
) -> Ablation:
    """The document of an ablation: its run configuration (guards aside), the guards ablated, its configurations
    and their figures."""
    by_name = {c.name: c for c in figures.configurations}
    return Ablation(
        ablation_id=ablation_id,
        domain=config.domain,
        agent=config.agent,
        faults=config.faults,
        seed=config.seed,
        trials_per_scenario=config.trials,
        guards=list(guards),
        k=figures.k,
        scenarios=figures.scenarios,
        compared_trials=figures.trials,
        left_out_trials=figures.left_out,
        interval="paired bootstrap over scenarios",
        level=LEVEL,
        resamples=REPS,
        configurations=[_configuration(ablation_id, c, by_name[c.names[0]]) for c in configurations],
    )


def _configuration(ablation_id: str, configuration: Configuration, measured: ConfigurationFigures) -> AblatedConfiguration:
    return AblatedConfiguration(
        name=configuration.names[0],
        also_named=list(configuration.names[1:]),
        run_id=configuration.run_id(ablation_id),
        guards=list(configuration.guards),
        counts=Counts(**measured.counts),
        figures=_estimates(measured.figures),
        difference_to_off=None if measured.difference is None else _estimates(measured.difference),
    )


def _estimates(figures: Mapping[Figure, FigureEstimate]) -> dict[Figure, Estimate]:
    return {f: Estimate(value=e.value, ci=None if e.lo is None or e.hi is None else (e.lo, e.hi)) for f, e in figures.items()}


def ablation_table(ablation: Ablation) -> Table:
    """One row per configuration; each cell the figure over its 95% interval, then its difference to off (Δ) over
    the difference's interval, in bold when that interval leaves out 0."""
    faults = ",".join(f"{name}={rate:g}" for name, rate in ablation.faults.items()) or "none"
    table = Table(
        title=(
            f"what each guard bought — agent {escape(ablation.agent)}, faults {escape(faults)}, {ablation.scenarios} "
            f"scenarios: the same {ablation.compared_trials} trials in every configuration. Writes, refusals and handoffs "
            f"per 100 trials; under each figure its {LEVEL:.0%} interval (paired bootstrap over scenarios); "
            "Δ: the difference to off, in bold when its interval leaves out 0"
        ),
        box=box.SIMPLE_HEAD,
        padding=(0, 0, 0, 1),  # the box's column separator is a space: with one more, two between the figures
    )
    names = [name for c in ablation.configurations for name in (c.name, *(f"= {a}" for a in c.also_named))]
    table.add_column("configuration", min_width=max(map(len, names)), overflow="fold")
    for figure in FIGURES:
        table.add_column(HEADERS[figure].replace("^k", f"^{ablation.k}"), justify="right", max_width=CELL, overflow="fold")
    for c in ablation.configurations:
        label = Text(c.name, style="bold")
        for alias in c.also_named:
            label.append(f"\n= {alias}")
        differences = c.difference_to_off or {}
        table.add_row(label, *(_cell(f, c.figures[f], differences.get(f)) for f in FIGURES), end_section=True)
    return table


def _cell(figure: Figure, own: Estimate, difference: Estimate | None) -> Text:
    text = Text(_shown(figure, own.value) + _interval(figure, own.ci))
    if difference is not None and difference.value is not None:
        clear = difference.ci is not None and (difference.ci[0] > 0 or difference.ci[1] < 0)
        shown = f"\nΔ {_shown(figure, difference.value, signed=True)}{_interval(figure, difference.ci, signed=True)}"
        text.append(shown, style="bold" if clear else "")
    return text


def _shown(figure: Figure, value: float | None, signed: bool = False) -> str:
    """A share with three decimals (as every report shows one), a rate per 100 trials with one."""
    if value is None:
        return "—"
    if figure in RATES:
        return f"{value:+.1f}" if signed else f"{value:.1f}"
    return f"{value:+.3f}" if signed else num(value)


def _interval(figure: Figure, ci: Interval | None, signed: bool = False) -> str:
    """The interval on a line of its own, as low–high (a bound one decimal less precise than the figure)."""
    if ci is None:
        return ""
    digits = 1 if figure in RATES else 2
    return "\n" + "–".join(f"{b:+.{digits}f}" if signed else f"{b:.{digits}f}" for b in ci)
