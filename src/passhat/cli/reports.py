"""What a stored run amounts to: `passhat report`, `passhat gate`, `passhat traffic` and `passhat compare`.

Each prints the run's caveats first (report.caveats decides them, and whether a model may be fit to the run)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.text import Text

from passhat.cli import main
from passhat.cli.common import (
    FiniteFloat,
    OutputFile,
    console,
    err,
    existing_run_dir,
    full_option,
    out_option,
    print_report_and_json,
    run_gate,
    shown,
    tags,
)
from passhat.errors import UserError
from passhat.report.embedding import MAX_TRANSCRIPTS, ReportedTrials
from passhat.run.stored import check_gate, gate_section, gated_tasks
from passhat.store import ResultStore

if TYPE_CHECKING:  # each command imports the metrics it uses when it runs: numpy and scipy are not for `--help`
    from passhat.certify.record import Suite
    from passhat.metrics.customers import CustomerGap, StoredTrial
    from passhat.metrics.summary import Scenario
    from passhat.report.caveats import RunCaveats
    from passhat.report.model import Report
    from passhat.run_config import RunConfig


@main.command()
@click.argument("run_id")
@out_option
@click.option("--json", "json_path", type=OutputFile(), help="Write the JSON report here.")
@click.option("--html", "html_path", type=OutputFile(), help="Write the self-contained HTML report here.")
@click.option("--junit", "junit_path", type=OutputFile(), help="Write JUnit XML (one test case per scenario) here.")
@click.option(
    "--max-transcripts",
    default=MAX_TRANSCRIPTS,
    show_default=True,
    type=click.IntRange(0),
    help="Most trial transcripts the HTML report embeds (failures first).",
)
@click.option(
    "--gate",
    "gate_spec",
    metavar="SPEC",
    help='Show the verdict of the gate "k=8,min=0.9[,persona=P]" in the reports (exit 1 unless met). Without it the '
    "report judges the run against a default bar, pass^k at k = the run's trials >= 0.9, as advice; none: no verdict.",
)
@full_option
def report(
    run_id: str,
    out: Path,
    json_path: Path | None,
    html_path: Path | None,
    junit_path: Path | None,
    max_transcripts: int,
    gate_spec: str | None,
    full: bool,
) -> None:
    """Print the report of a stored run (and optionally write its JSON, HTML and JUnit reports).

    Exit status 1 when no trial could be judged or the --gate is not met, like `run`."""
    from passhat.report import build_report
    from passhat.report.html import write_html
    from passhat.report.junit import write_junit
    from passhat.run_config import stored_config

    gate = run_gate(gate_spec, early_stop=False)
    with ResultStore.open(existing_run_dir(out, run_id, "RUN_ID")) as store:  # read in one pass, never held whole
        config = stored_config(store)
        check_gate(gate, config, "--gate")
        decision, section = None, None
        if gate:
            decision, section = gate_section(gate, store.trial_rows(), config)
        build = functools.partial(build_report, store, tags(config), None, gated_tasks(config), section)
        with _kept_from_collector(build) as doc:
            print_report_and_json(doc, json_path, full, bar=gate_spec is None, out=out)
            if html_path:  # every trial, from the report (the store for those it only counts), and embedded transcripts
                trials = ReportedTrials(doc.scenarios, store.trial_rows(unjudged_only=True))
                write_html(doc, trials, html_path, max_transcripts, store.records)
                err.print(f"HTML report written to {html_path}", highlight=False, markup=False)
            if junit_path:
                write_junit(doc, junit_path)
                err.print(f"JUnit report written to {junit_path}", highlight=False, markup=False)
    if doc.metrics.scenarios == 0 or (decision and not decision.meets):
        sys.exit(1)


@contextlib.contextmanager
def _kept_from_collector(build: Callable[[], Report]) -> Iterator[Report]:
    """The report ``build`` makes, kept out of cyclic garbage collection while it is written: built with the collector
    paused, then frozen (gc.freeze: never walked again, still freed when let go) until the writers are done, whose
    own garbage (the HTML's transcripts leave cycles) is collected as it comes. A report lives until written and holds
    no cycles, yet each full collection walked all of it: half a second of a 100,000-trial report."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        report = build()
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
    try:
        yield report
    finally:
        gc.unfreeze()


def _stored_run(out: Path, run_id: str, flag: str) -> tuple[RunConfig, dict[Scenario, tuple[int, int]], RunCaveats]:
    """A stored run's configuration, (successes, judged trials) per scenario and caveats; no judged trial is a
    user error."""
    from passhat.metrics.summary import scenario_counts
    from passhat.report.caveats import run_caveats
    from passhat.run_config import stored_config

    with ResultStore.open(existing_run_dir(out, run_id, flag)) as store:
        config, counts = stored_config(store), scenario_counts(t.to_result() for t in store.trial_rows())
    if not counts:
        raise UserError(f"run {shown(run_id)} ({flag}) has no judged trial: there is nothing to measure.")
    return config, counts, run_caveats(run_id, config, counts)


@main.command("gate")
@click.argument("run_id")
@click.option("--k", "k", required=True, type=click.IntRange(1), help="pass^k's k: how many trials in a row must succeed.")
@click.option("--min-pass-hat-k", "minimum", required=True, type=FiniteFloat(0, 1), help="The bar pass^k must reach.")
@click.option("--persona", help="Judge only this persona's scenarios.")
@out_option
def gate_command(run_id: str, k: int, minimum: float, persona: str | None, out: Path) -> None:
    """Exit 0 when the run meets pass^k >= the bar, 1 when it does not, with a short reason."""
    from passhat.metrics.gate import Gate, decide, gate_ci
    from passhat.report.terminal import print_warnings
    from passhat.report.terminal_stats import print_gate

    gate = Gate(k, minimum, persona)
    config, counts, caveats = _stored_run(out, run_id, "RUN_ID")
    check_gate(gate, config, "--k / --persona")
    print_warnings(caveats.warnings, console)
    decision = decide(gate, counts, config.planned_trials())
    print_gate(decision, console, gate_ci(gate, counts, decision))
    sys.exit(0 if decision.meets else 1)


@main.command()
@click.argument("run_id")
@click.option("--per-day", required=True, type=FiniteFloat(0, min_open=True), help="Conversations a day of each task.")
@click.option(
    "--k-days",
    "days",
    default=7,
    show_default=True,
    type=click.IntRange(1),
    help="Days for the chance of a failure-free stretch.",
)
@click.option(
    "--target",
    default=0.9,
    show_default=True,
    type=FiniteFloat(0, 1, min_open=True, max_open=True),
    help="Wanted chance of a day with no failure.",
)
@out_option
@click.option("--json", "json_path", type=OutputFile(), help="Also write the traffic view as JSON.")
def traffic(run_id: str, per_day: float, days: int, target: float, out: Path, json_path: Path | None) -> None:
    """What the run means at N conversations a day: failures a day, chance of a clean day, success needed."""
    from passhat.metrics.traffic import traffic as traffic_view
    from passhat.metrics.traffic import traffic_model
    from passhat.report import write_json
    from passhat.report.terminal import print_warnings
    from passhat.report.terminal_stats import print_traffic

    _, counts, caveats = _stored_run(out, run_id, "RUN_ID")
    print_warnings(caveats.warnings, console)
    if caveats.fit_refused:
        raise UserError(
            f"no traffic view of run {shown(run_id)}: it rests on a model of per-scenario success fit to the "
            f"run, and none is fit to this one (as `passhat report` says): {caveats.fit_refused}."
        )
    model, credible = traffic_model(list(counts.values()))
    view = traffic_view(counts, model, per_day, days, target, credible)
    print_traffic(view, model.name, console)
    if json_path:
        write_json({"run_id": run_id, "model": model.name, "caveats": caveats.warnings, **view.to_json()}, json_path)


def _compared(argument: str) -> tuple[str, Suite | None]:
    """(run id, the suite a record pins) of a compare argument: an acceptance record's file, or a run id (None)."""
    from passhat.certify.record import Suite
    from passhat.cli.certify import read_record

    path = Path(argument)
    if argument.endswith(".json") and path.is_file():
        record, _ = read_record(path)
        return record["run_id"], Suite.of_record(record)
    return argument, None


def _config_suite(config: RunConfig) -> Suite:
    from passhat.certify.record import Suite

    return Suite.of_config(config)


def _check_same_suite(a: tuple[str, Suite], b: tuple[str, Suite], force: bool) -> None:
    """Figures of different suites or simulators are no paired comparison: refused unless --force, saying which part
    differs."""
    from passhat.certify.record import suite_difference

    difference = suite_difference(a[1], b[1])
    if difference and not force:
        raise UserError(
            f"runs {shown(a[0])} and {shown(b[0])} are not of one suite: {difference}; their figures measure different "
            "things. Pass --force to compare them all the same."
        )
    if difference:
        err.print(Text.assemble(("note:", "yellow"), f" compared with --force although {difference}."), soft_wrap=True)


@main.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--intersection", is_flag=True, help="Compare only the scenarios both runs have.")
@click.option("--force", is_flag=True, help="Compare runs of different task sets, domains or customer simulators all the same.")
@out_option
@click.option("--json", "json_path", type=OutputFile(), help="Also write the comparison as JSON.")
def compare(run_a: str, run_b: str, intersection: bool, force: bool, out: Path, json_path: Path | None) -> None:
    """Paired comparison of RUN_B against RUN_A: changes with intervals, and whether they are noise. Each may be a
    run id or an acceptance record (*.json of `passhat certify`: its run, under --out, is compared)."""
    from passhat.metrics.compare import ScenarioMismatch, compare_runs
    from passhat.report import write_json
    from passhat.report.terminal import print_warnings
    from passhat.report.terminal_stats import print_comparison, print_customer_gap
    from passhat.vocabulary import HUMAN

    (run_a, suite_a), (run_b, suite_b) = _compared(run_a), _compared(run_b)
    config_a, a, caveats_a = _stored_run(out, run_a, "RUN_A")
    config_b, b, caveats_b = _stored_run(out, run_b, "RUN_B")
    suites = suite_a or _config_suite(config_a), suite_b or _config_suite(config_b)
    gap = [config_a.user, config_b.user].count(HUMAN) == 1  # simulated against human customers
    if gap:  # the customers are what is compared: everything else must be the same; only what people played counts
        suites = suites[0], dataclasses.replace(suites[1], simulator=suites[0].simulator)
        intersection = True
    _check_same_suite((run_a, suites[0]), (run_b, suites[1]), force)
    for standing in (caveats_a, caveats_b):
        print_warnings(standing.warnings, console, prefix=f"{standing.run_id}: ")
    refused = caveats_a.comparison_refused or caveats_b.comparison_refused
    if refused:
        raise UserError(f"no comparison: {refused}.")
    try:
        result = compare_runs(a, b, intersection)
    except ScenarioMismatch as exc:
        example = ", ".join("/".join(s) for s in (exc.only_a + exc.only_b)[:3])  # type: ignore[arg-type]
        raise UserError(
            f"runs {shown(run_a)} and {shown(run_b)} cover different scenarios ({exc}; e.g. {example}); pass --intersection "
            "to compare only the scenarios both have."
        ) from None
    print_comparison(result, (run_a, run_b), console)
    customers = _customer_gap(out, (run_a, config_a), (run_b, config_b)) if gap else None
    if customers is not None:
        print_customer_gap(customers, console)
    if json_path:
        warnings = {"run_a": caveats_a.warnings, "run_b": caveats_b.warnings}
        extra = {"customers": customers.to_json()} if customers else {}
        write_json({"run_a": run_a, "run_b": run_b, "caveats": warnings, **result.to_json(), **extra}, json_path)


def _customer_gap(out: Path, a: tuple[str, RunConfig], b: tuple[str, RunConfig]) -> CustomerGap:
    """The gap between the simulated run and the human one (either may be given first)."""
    from passhat.metrics.customers import customer_gap
    from passhat.vocabulary import HUMAN

    (sim, _), (human, _) = (a, b) if b[1].user == HUMAN else (b, a)
    return customer_gap(_stored_trials(out, sim), _stored_trials(out, human))


def _stored_trials(out: Path, run_id: str) -> list[StoredTrial]:
    """Every stored trial of the run as the customer gap reads it (the turns from the steps a run records)."""
    from passhat.metrics.customers import StoredTrial

    with ResultStore.open(existing_run_dir(out, run_id, "RUN")) as store:
        return [
            StoredTrial(
                (t.task_id, t.persona),
                t.infra_error is None,
                t.signature if t.reward == 0 else None,
                ((t.steps or {}).get("conversation") or {}).get("turns"),
            )  # fmt: skip
            for t in store.report_trials()
        ]
