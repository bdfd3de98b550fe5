"""passhat's pytest plugin: an agent's acceptance test in a team's own test suite and CI.

A test marked ``@pytest.mark.passhat(...)`` runs a passhat evaluation, the same way `passhat run` does, and
fails unless the run meets its gate (or, without a gate, unless some trial could be judged)::

    @pytest.mark.passhat(agent="python:shop.agent:make", tasks="retail-001,retail-002", trials=8, k=8, min_pass_hat_k=0.9)
    def test_cancellations_are_reliable():
        pass  # the gate is the test

The marker takes `passhat run`'s options as keyword arguments (``agent`` is required; ``personas``, ``tasks``
and ``guard`` a comma list or a list), the gate as ``k``, ``min_pass_hat_k`` and ``gate_persona``, and
``concurrency``. A test that asks for the ``passhat_run`` fixture gets the run's report to assert on
(``passhat_run.metrics.failure_signatures``, ``passhat_run.scenarios``...). Every marker is checked before
any test runs: a bad one is a pytest usage error. A failing test's message is the gate's verdict and the
run's headline, its partition of scenarios and its failing scenarios with their signatures, so it also lands in
``--junitxml``. Runs are kept under pytest's temporary folder, or in ``--passhat-out DIR``.

passhat itself is imported only when a marked test is collected: the plugin costs nothing to other suites.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from passhat.metrics.gate import Gate
    from passhat.report.model import Report
    from passhat.run_config import RunConfig

MARKER = "passhat"
GATE_ARGUMENTS = ("k", "min_pass_hat_k", "gate_persona")
RECORDED = frozenset({"tasks_fingerprint", "passhat_version", "early_stop", "prices"})  # what a run records, not is given
UNMARKED = f"the passhat_run fixture needs @pytest.mark.{MARKER}(...) on the test"
SHOWN = 20  # failing scenarios a failure message lists


@dataclasses.dataclass(frozen=True)
class PlannedRun:
    """A marked test's evaluation, checked at collection."""

    config: RunConfig
    gate: Gate | None
    concurrency: int


PLANNED = pytest.StashKey[PlannedRun]()
VERDICT = pytest.StashKey[str]()  # why the test fails, set by the run


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("passhat").addoption(
        "--passhat-out",
        metavar="DIR",
        help="Folder for the runs of @pytest.mark.passhat tests (default: pytest's temporary folder).",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(agent=..., k=..., min_pass_hat_k=..., **run_options): run a passhat evaluation; fail unless it meets the gate",
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Check every selected marker before any test runs, so a typo stops the session, not a test an hour in."""
    for item in session.items:
        marker = item.get_closest_marker(MARKER)
        if marker is not None:
            item.stash[PLANNED] = planned_run(marker, item.nodeid)
        elif "passhat_run" in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(f"{item.nodeid}: {UNMARKED}")


def planned_run(marker: pytest.Mark, test: str) -> PlannedRun:
    """The marker's run, with every argument checked as `passhat run` checks its flags; a pytest.UsageError
    naming the test otherwise."""
    from pydantic import ValidationError

    from passhat.errors import UserError
    from passhat.run.stored import check_gate

    def usage(problem: str) -> pytest.UsageError:
        return pytest.UsageError(f"{test}: @pytest.mark.{MARKER}: {problem}")

    options, known = dict(marker.kwargs), _known_arguments()
    if marker.args:
        raise usage(f"takes keyword arguments only, got {len(marker.args)} positional")
    unknown = sorted(set(options) - known)
    if unknown:
        raise usage(f"unknown argument {', '.join(map(repr, unknown))}; it takes {', '.join(sorted(known))}")
    if "agent" not in options:
        raise usage('name the agent under test, e.g. agent="python:package.module:factory"')
    concurrency = options.pop("concurrency", 4)
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise usage(f"concurrency is a whole number of trials in flight, at least 1; got {concurrency!r}")
    try:
        gate = _gate({name: options.pop(name) for name in GATE_ARGUMENTS if name in options})
        config = _run_config(options)
        check_gate(gate, config, "k / gate_persona")
    except ValidationError as exc:  # a ValueError too: first
        raise usage("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    except (UserError, ValueError) as exc:
        raise usage(str(exc)) from None
    return PlannedRun(config, gate, concurrency)


@pytest.fixture(scope="session")
def _passhat_out(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = request.config.getoption("passhat_out")
    return Path(given) if given else tmp_path_factory.mktemp("passhat-runs")


@pytest.fixture
def passhat_run(request: pytest.FixtureRequest, _passhat_out: Path) -> Report:
    """The report of the test's @pytest.mark.passhat run (`passhat.report.model.Report`)."""
    planned = request.node.stash.get(PLANNED, None)
    if planned is None:
        pytest.fail(UNMARKED, pytrace=False)  # asked for by another fixture, which collection cannot see
    report, folder = _run(planned, _passhat_out, request.node.name)
    request.node.user_properties.append(("passhat_run", str(folder)))  # in --junitxml as a property
    verdict = _verdict(report, planned.gate)
    if verdict:
        request.node.stash[VERDICT] = f"{verdict}\n{_details(report, folder)}"
    return report


@pytest.fixture(autouse=True)
def _passhat_marked(request: pytest.FixtureRequest) -> None:
    """A marked test runs its evaluation whether or not it asks for the report."""
    if request.node.get_closest_marker(MARKER) is not None:
        request.getfixturevalue("passhat_run")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """A run that fails its gate fails the test itself (not its setup), before the test's own assertions."""
    verdict = item.stash.get(VERDICT, None)
    if verdict is not None:
        pytest.fail(verdict, pytrace=False)


def _known_arguments() -> set[str]:
    from passhat.run_config import RunConfig

    return (set(RunConfig.model_fields) - RECORDED) | set(GATE_ARGUMENTS) | {"concurrency"}


def _gate(arguments: dict[str, Any]) -> Gate | None:
    from passhat.metrics.gate import Gate

    if not arguments:
        return None
    k, minimum = arguments.get("k"), arguments.get("min_pass_hat_k")
    if k is None or minimum is None:
        raise ValueError("a gate needs both k and min_pass_hat_k (e.g. k=8, min_pass_hat_k=0.9)")
    if not isinstance(k, int) or isinstance(k, bool):
        raise ValueError(f"k is a whole number of trials, got {k!r}")
    if not isinstance(minimum, int | float) or isinstance(minimum, bool):
        raise ValueError(f"min_pass_hat_k is a number between 0 and 1, got {minimum!r}")
    return Gate(k, float(minimum), arguments.get("gate_persona"))


def _run_config(options: dict[str, Any]) -> RunConfig:
    """The run's configuration from the marker's options, as `passhat run` makes it from its flags."""
    from passhat.domains import DEFAULT_DOMAIN, domain_ref
    from passhat.run.runner import new_config
    from passhat.run_config import RunConfig

    flags = {name: ",".join(map(str, value)) if isinstance(value, list | tuple) else value for name, value in options.items()}
    flags.setdefault("personas", "all")
    flags.setdefault("tasks", "")
    flags.setdefault("user", RunConfig.model_fields["user"].default)
    flags["domain"] = domain_ref(str(flags.get("domain", DEFAULT_DOMAIN)))
    if flags.get("tasks_dir"):
        flags["tasks_dir"] = str(Path(flags["tasks_dir"]).resolve())
    return new_config(**flags)


def _run(planned: PlannedRun, out: Path, test_name: str) -> tuple[Report, Path]:
    """Run the evaluation into a new run folder under ``out`` and build its report."""
    from passhat.domains import load_domain
    from passhat.errors import UserError
    from passhat.report import build_report
    from passhat.run.evaluate import evaluate
    from passhat.store import ResultStore

    name = re.sub(r"[^\w.-]+", "-", test_name).strip("-.")[:100] or "test"
    run_id = f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        with ResultStore.create(out / run_id, run_id, planned.config.model_dump()) as store:
            result = evaluate(planned.config, store, planned.concurrency, planned.gate)
            tasks = load_domain(planned.config.domain, planned.config.tasks_dir).tasks.values()
            tags, gated = {t.id: t.tags for t in tasks}, {t.id for t in tasks if t.guards}
            return build_report(store, tags, None, gated, result.gate_json()), out / run_id
    except (UserError, OSError) as exc:
        pytest.fail(f"passhat could not run the evaluation: {exc}", pytrace=False)


def _verdict(report: Report, gate: Gate | None) -> str | None:
    """Why the run fails the test, or None when it passes."""
    if report.metrics.scenarios == 0:
        return f"passhat run {report.run_id}: no trial could be judged ({report.metrics.infra_errors} infra errors)"
    if report.gate is not None and not report.gate.meets:
        return f"passhat run {report.run_id} does not meet the gate {gate}: {report.gate.reason}"
    return None


def _details(report: Report, folder: Path) -> str:
    """The run's headline, its partition of scenarios and its failing scenarios with their signatures, as text."""
    from rich.text import Text

    from passhat.report.terminal import headline

    lines = [Text.from_markup(headline(report)).plain]
    part = report.metrics.partition
    if part is not None:
        lines.append(f"partition: {part.reliable} scenarios passed all trials, {part.unreliable} some, {part.out_of_reach} none")
    failing = sorted((s for s in report.scenarios if s.passed < s.judged), key=lambda s: (s.passed / s.judged, s.task_id))
    if failing:
        lines.append(f"failing scenarios ({len(failing)} of {len(report.scenarios)}):")
        lines += [
            f"  {s.task_id} / {s.persona}: {s.passed}/{s.judged} passed; {', '.join(s.failure_names)}" for s in failing[:SHOWN]
        ]
        lines += [f"  ... and {len(failing) - SHOWN} more"] if len(failing) > SHOWN else []
    lines.append(f"run stored in {folder}; `passhat report {report.run_id} --out {folder.parent}` shows the whole report")
    return "\n".join(lines)
