"""The dashboard pages of `passhat serve`: the runs list, a run's page (every figure and chart of the HTML report),
its scenario grid, trial lists and trial viewer, the comparison of two runs, the traffic calculator and the live
view of a run being written. Every page is for viewers and above, and only reads.

The figures come from the libraries the commands use (the report model and the HTML report's own sections and
charts, `compare`'s and `traffic`'s metrics), so a page and `passhat report` never disagree. Store reads and
metrics run in a worker thread: a report model that takes seconds to build must not stall every other request.
Transcripts are untrusted text: the templates autoescape them; the only markup marked safe here is what the
report's own HTML writers made, and they escape everything they are given.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from passhat.errors import UserError
from passhat.metrics.gate import Gate, decide, gate_ci, parse_gate
from passhat.report.html import figure_sections, state_diff_table
from passhat.report.model import GateSection, Report
from passhat.report.numbers import num, with_ci
from passhat.report.state_diff import row_changes
from passhat.serve.web.queries import (
    JUDGEMENTS,
    PAGE_SIZE,
    SIGNATURES,
    NotFound,
    RunCache,
    RunReader,
    TrialFilter,
    run_folder,
)
from passhat.serve.web.security import error_page, render, requires
from passhat.store.results import TrialRecord

MAX_PAGE_NUMBER = 10_000_000  # keeps an offset inside SQLite's integers whatever the address says
MAX_INDEX_DIGITS = 18
MAX_PER_DAY, MAX_DAYS = 1e9, 36_500
LIVE_REFRESH_MS = 3000
GRADER_FLAGS = ("state_ok", "output_ok", "trajectory_ok")
SHOWN_DETAILS_LEFT_OUT = ("state_differences", "facts")  # the viewer shows these in sections of their own

T = TypeVar("T")


# --- helpers shared by the pages ----------------------------------------------------------------------


def run_cache(request: Request) -> RunCache:
    """The app's one RunCache over its runs folder, made on first use."""
    state = request.app.state
    if getattr(state, "run_cache", None) is None:
        state.run_cache = RunCache(state.out)
    return state.run_cache


async def off_loop(call: Callable[..., T], *args: Any) -> T:
    """Run a store read or a computation in a worker thread."""
    return await run_in_threadpool(call, *args)


def page_number(request: Request) -> int:
    text = request.query_params.get("page", "1")
    if not text.isdecimal() or len(text) > 8 or not 1 <= int(text) <= MAX_PAGE_NUMBER:
        raise UserError(f"page {text[:40]!r} is not a page number.")
    return int(text)


def path_part(text: str) -> str:
    return quote(text, safe="")


def trial_url(run_id: str, task: str, persona: str, index: int) -> str:
    return f"/runs/{path_part(run_id)}/trials/{path_part(task)}/{path_part(persona)}/{index}"


def page_url(path: str, query: Mapping[str, Any], number: int = 1) -> str:
    """``path`` with the query's non-empty values, and the page number unless it is the first."""
    kept = {k: v for k, v in query.items() if v not in (None, "", False)} | ({"page": number} if number > 1 else {})
    return path + (f"?{urlencode(kept)}" if kept else "")


def trials_url(run_id: str, **query: Any) -> str:
    return page_url(f"/runs/{path_part(run_id)}/trials", query)


def when(created: float | None) -> str:
    return "—" if created is None else datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%d %H:%M UTC")


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def verdict(reward: int | None, signature: str | None, infra_error: bool) -> str:
    """A trial's outcome in words: passed, failed: <signature>, infra error, or user simulator error."""
    if infra_error:
        return "infra error"
    if signature == "user_simulator_error":
        return "user simulator error"
    return "passed" if reward == 1 else f"failed: {signature or 'unclassified'}"


HELPERS = {
    "num": num,
    "with_ci": with_ci,
    "when": when,
    "pretty": pretty,
    "path_part": path_part,
    "page_url": page_url,
    "trial_url": trial_url,
    "trials_url": trials_url,
    "verdict": verdict,
    "signature_names": SIGNATURES,
}


def page(request: Request, template: str, context: Mapping[str, Any], status_code: int = 200) -> Response:
    return render(request, template, {**HELPERS, **context}, status_code)


def not_found(request: Request, exc: NotFound) -> Response:
    return error_page(request, 404, str(exc))


# --- the runs list -----------------------------------------------------------------------------------------


@requires("viewer")
async def runs_list(request: Request) -> Response:
    number = page_number(request)
    summaries = await off_loop(run_cache(request).summaries)
    shown = summaries[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]
    pages = max(1, -(-len(summaries) // PAGE_SIZE))
    return page(request, "runs_list.html", {"runs": shown, "number": number, "pages": pages, "total": len(summaries)})


# --- a run's page --------------------------------------------------------------------------------------------


def report_sections(report: Report) -> Markup:
    """The HTML report's header and figure sections (curves, partition, signatures, personas, compounding, steps,
    faults and guards) as its writer makes them; its document head, scenario table and transcripts are left out:
    the grid and the trial pages show those a page at a time."""
    return Markup("".join(figure_sections(report)))


def gate_section(reader: RunReader, spec: str) -> GateSection:
    """The verdict of the gate ``spec`` on the run, as `passhat report --gate` gives it; UserError for a gate
    that is no gate or that the run cannot answer."""
    from passhat.run.stored import check_gate  # the report command's own checks of a gate against a run

    try:
        gate: Gate = parse_gate(spec)
    except ValueError as exc:
        raise UserError(f"{spec[:80]!r} is not a gate: {exc}.") from None
    counts = reader.counts()
    check_gate(gate, reader.config, "gate")
    try:
        decision = decide(gate, counts, reader.config.planned_trials())
    except ValueError as exc:
        raise UserError(f"the gate {gate} cannot be decided on this run: {exc}.") from None
    return GateSection.model_validate({**decision.to_json(), "ci": gate_ci(gate, counts, decision)})


def run_view(cache: RunCache, run_id: str, gate_spec: str) -> dict[str, Any]:
    """What the run page shows; the gate's problem, if any, as ``gate_error`` beside the figures without it."""
    report, gate_error = cache.report(run_id), None
    if gate_spec:
        with RunReader.open(cache.out, run_id) as reader:
            try:
                report = report.model_copy(update={"gate": gate_section(reader, gate_spec)})
            except UserError as exc:
                gate_error = str(exc)
    return {
        "run_id": run_id,
        "report": report,
        "sections": report_sections(report),
        "signatures": report.metrics.failure_signatures,
        "gate_spec": gate_spec,
        "gate_error": gate_error,
    }


@requires("viewer")
async def run_page(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    try:
        view = await off_loop(run_view, run_cache(request), run_id, request.query_params.get("gate", "").strip())
    except NotFound as exc:
        return not_found(request, exc)
    return page(request, "runs_run.html", view, 400 if view["gate_error"] else 200)


# --- the scenario grid and the trials ----------------------------------------------------------------------


async def read_run(request: Request, read: Callable[[RunReader], T]) -> T:
    """``read`` on the run of the address, in a worker thread."""
    out, run_id = request.app.state.out, request.path_params["run_id"]

    def reading() -> T:
        with RunReader.open(out, run_id) as reader:
            return read(reader)

    return await off_loop(reading)


@requires("viewer")
async def grid_page(request: Request) -> Response:
    number = page_number(request)
    try:
        grid = await read_run(request, lambda reader: reader.grid(number))
    except NotFound as exc:
        return not_found(request, exc)
    return page(request, "runs_grid.html", {"run_id": request.path_params["run_id"], "grid": grid})


@requires("viewer")
async def trials_page(request: Request) -> Response:
    params = request.query_params
    which = TrialFilter(params.get("task") or None, params.get("persona") or None, params.get("outcome") or None)
    number = page_number(request)
    try:
        listing = await read_run(request, lambda reader: reader.trials(which, number))
    except NotFound as exc:
        return not_found(request, exc)
    context = {"run_id": request.path_params["run_id"], "listing": listing, "which": which}
    return page(request, "runs_trials.html", context | {"outcomes": JUDGEMENTS})


def trial_view(t: TrialRecord) -> dict[str, Any]:
    """The trial viewer's parts: events laid out for the template, the backend diff, the grader's verdict."""
    grade = t.grade or {}
    details = grade.get("details") or {}
    diffs = details.get("state_differences") or []
    return {
        "trial": t,
        "outcome": verdict(t.reward, t.signature, t.infra_error is not None),
        "events": [event_view(e) for e in t.events],
        "backend": Markup(state_diff_table(row_changes(diffs))) if diffs else None,
        "flags": {name: grade[name] for name in GRADER_FLAGS if name in grade},
        "accepted_outcome": grade.get("outcome"),
        "facts": [f for f in details.get("facts") or [] if isinstance(f, dict)],
        "details": {k: v for k, v in details.items() if k not in SHOWN_DETAILS_LEFT_OUT and v not in (None, [], {}, "")},
        "duration": max(0.0, t.finished - t.started),
    }


def event_view(e: Mapping[str, Any]) -> dict[str, Any]:
    """One event as the viewer shows it: who spoke and what, or a tool call with its arguments, its result, the
    fault that changed it and the guard that decided it."""
    kind = str(e.get("kind", ""))
    view: dict[str, Any] = {"kind": kind, "text": str(e.get("text", ""))}
    if kind in ("tool", "guard"):
        view |= {
            "name": str(e.get("name")),
            "args": pretty(e.get("args")),
            "result": pretty(e.get("result")),
            "error": isinstance(e.get("result"), dict) and e["result"].get("status") == "error",
            "violations": [v for v in e.get("violations") or [] if isinstance(v, dict)],
        }
    if fault := e.get("fault"):
        view["fault"] = {"class": str(fault.get("class")), "actual": pretty(fault.get("actual"))}
    if guard := e.get("guard"):
        view["guard"] = {"guard": str(guard.get("guard")), "decision": str(guard.get("decision")), "details": pretty(guard)}
    return view


def trial_index(text: str) -> int:
    if not text.isdecimal() or len(text) > MAX_INDEX_DIGITS:
        raise NotFound(f"{text[:40]!r} is not a trial index.")
    return int(text)


@requires("viewer")
async def trial_page(request: Request) -> Response:
    p = request.path_params
    try:
        index = trial_index(p["index"])
        record = await read_run(request, lambda reader: reader.trial(p["task"], p["persona"], index))
    except NotFound as exc:
        return not_found(request, exc)
    return page(request, "runs_trial.html", {"run_id": p["run_id"]} | trial_view(record))


# --- compare, traffic, live -------------------------------------------------------------------------------------


def comparison(cache: RunCache, a: str, b: str, intersection: bool) -> dict[str, Any]:
    """`passhat compare`'s paired comparison of run b against run a, with both runs' headline figures; UserError
    when the runs cannot be compared (an early-stopped run, different scenarios without ``intersection``)."""
    from passhat.metrics.compare import ScenarioMismatch, compare_runs
    from passhat.report.terminal_stats import changes_to_show

    counts, warnings = {}, {}
    for run_id in (a, b):
        with RunReader.open(cache.out, run_id) as reader:
            counts[run_id] = reader.counts()
            caveats = reader.caveats(counts[run_id])
        if not counts[run_id]:
            raise UserError(f"run {run_id} has no judged trial: there is nothing to compare.")
        if caveats.comparison_refused:
            raise UserError(f"no comparison: {caveats.comparison_refused}.")
        warnings[run_id] = caveats.warnings
    try:
        result = compare_runs(counts[a], counts[b], intersection)
    except ScenarioMismatch as exc:
        hint = "" if intersection else "; tick “only the scenarios both have” to compare those"
        raise UserError(f"runs {a} and {b} cover different scenarios ({exc}){hint}.") from None
    shown, title = changes_to_show(result) if result.changes else ([], "")
    return {
        "result": result,
        "summaries": (cache.summary(a), cache.summary(b)),
        "warnings": warnings,
        "changes": shown,
        "changes_title": title,
    }


@requires("viewer")
async def compare_page(request: Request) -> Response:
    params, cache = request.query_params, run_cache(request)
    a, b, intersection = params.get("a", ""), params.get("b", ""), params.get("intersection") == "1"
    run_ids = [s.run_id for s in await off_loop(cache.summaries) if s.error is None]
    context: dict[str, Any] = {"run_ids": run_ids, "a": a, "b": b, "intersection": intersection, "error": None, "view": None}
    if not (a and b):  # the form, with the run already chosen when a run's page sent us here
        return page(request, "runs_compare.html", context)
    try:
        context["view"] = await off_loop(comparison, cache, a, b, intersection)
    except NotFound as exc:
        return page(request, "runs_compare.html", context | {"error": str(exc)}, 404)
    except UserError as exc:
        return page(request, "runs_compare.html", context | {"error": str(exc)}, 400)
    return page(request, "runs_compare.html", context)


def traffic_inputs(params: Mapping[str, str]) -> tuple[float, int, float]:
    """(per_day, days, target) of the traffic form; UserError naming the field that is wrong."""
    try:
        per_day = float(params.get("per_day", ""))
    except ValueError:
        raise UserError("conversations a day must be a number, such as 500.") from None
    if not (math.isfinite(per_day) and 0 < per_day <= MAX_PER_DAY):
        raise UserError(f"conversations a day must be above 0 and at most {MAX_PER_DAY:,.0f}.")
    days_text = params.get("days", "7") or "7"
    if not days_text.isdecimal() or len(days_text) > 6 or not 1 <= int(days_text) <= MAX_DAYS:
        raise UserError(f"days must be a whole number from 1 to {MAX_DAYS:,}.")
    try:
        target = float(params.get("target", "0.9") or "0.9")
    except ValueError:
        raise UserError("the target must be a number between 0 and 1, such as 0.9.") from None
    if not 0 < target < 1:  # NaN fails this too
        raise UserError("the target must lie strictly between 0 and 1, such as 0.9.")
    return per_day, int(days_text), target


def traffic_view(cache: RunCache, run_id: str, per_day: float, days: int, target: float) -> dict[str, Any]:
    """`passhat traffic`'s view of the run; UserError when no model of per-scenario success is fit to it."""
    from passhat.metrics.traffic import EVERY_K, traffic

    basis = cache.traffic_basis(run_id)
    if not basis.counts:
        raise UserError("the run has no judged trial: there is nothing to measure.")
    if basis.model is None:
        raise UserError(
            "no traffic view: it rests on a model of per-scenario success fit to the run, and none is fit to this one: "
            f"{basis.caveats.fit_refused}."
        )
    view = traffic(basis.counts, basis.model, per_day, days, target, basis.credible or EVERY_K)
    return {"view": view, "warnings": basis.caveats.warnings}


@requires("viewer")
async def traffic_page(request: Request) -> Response:
    run_id, params = request.path_params["run_id"], request.query_params
    form = {k: params.get(k, default) for k, default in (("per_day", ""), ("days", "7"), ("target", "0.9"))}
    context: dict[str, Any] = {"run_id": run_id, "form": form, "error": None, "traffic": None}
    try:
        run_folder(request.app.state.out, run_id)  # the run exists, even before the form is filled in
        if "per_day" in params:
            inputs = traffic_inputs(params)
            context["traffic"] = await off_loop(traffic_view, run_cache(request), run_id, *inputs)
    except NotFound as exc:
        return not_found(request, exc)
    except UserError as exc:
        return page(request, "runs_traffic.html", context | {"error": str(exc)}, 400)
    return page(request, "runs_traffic.html", context)


@requires("viewer")
async def live_page(request: Request) -> Response:
    try:
        progress = await read_run(request, lambda reader: reader.progress())
    except NotFound as exc:
        return not_found(request, exc)
    run_id = request.path_params["run_id"]
    context = {"run_id": run_id, "progress": progress, "refresh_ms": LIVE_REFRESH_MS}
    return page(request, "runs_live.html", context)


@requires("viewer")
async def live_json(request: Request) -> Response:
    try:
        progress = await read_run(request, lambda reader: reader.progress())
    except NotFound as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
    return JSONResponse(progress.to_json())


ROUTES: list[Route] = [
    Route("/", runs_list, methods=["GET"], name="home"),
    Route("/runs", runs_list, methods=["GET"], name="runs"),
    Route("/runs/{run_id}", run_page, methods=["GET"], name="run"),
    Route("/runs/{run_id}/grid", grid_page, methods=["GET"], name="run_grid"),
    Route("/runs/{run_id}/trials", trials_page, methods=["GET"], name="run_trials"),
    Route("/runs/{run_id}/trials/{task:path}/{persona}/{index}", trial_page, methods=["GET"], name="run_trial"),
    Route("/runs/{run_id}/traffic", traffic_page, methods=["GET"], name="run_traffic"),
    Route("/runs/{run_id}/live", live_page, methods=["GET"], name="run_live"),
    Route("/runs/{run_id}/live.json", live_json, methods=["GET"], name="run_live_json"),
    Route("/compare", compare_page, methods=["GET"], name="compare"),
]
