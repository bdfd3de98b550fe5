"""What the dashboard's pages read of the run stores under its runs folder, a page at a time.

A run of 100,000 trials holds gigabytes of transcripts, so nothing here reads them except for the one trial
a page shows: the runs list, the scenario grid, the trial lists and the live view are SQL counts and small
columns over the store, and the one costly thing, the run's report model (seconds to build), is kept in
memory and on disk under ``<out>/.cache/dashboard/`` by ``RunCache``.

A cached value is kept while its run's store files are untouched (two stat calls), and, once they moved,
while the store's content stamp (trial counts by kind, creation time, configuration) is unchanged: file
times alone would throw good models away, since SQLite rewrites the store file when any connection that
closes last checkpoints its journal. A run still being written is recomputed when its stamp changes, at
most every ``LIVE_RECOMPUTE_S`` seconds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import re
import sqlite3
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict

from passhat.errors import UserError
from passhat.file_writes import LOCK_FILE, write_atomically
from passhat.metrics.estimators import pass_hat_curve
from passhat.metrics.gate import Decision
from passhat.metrics.intervals import run_intervals
from passhat.metrics.summary import Scenario
from passhat.report.caveats import RunCaveats, run_caveats
from passhat.report.model import Report
from passhat.run_config import RunConfig, stored_config
from passhat.store.results import JUDGED, STORE_FILE, ResultStore, TrialRecord, TrialRow
from passhat.trajectory import Signature

if TYPE_CHECKING:
    from passhat.metrics.extrapolate import SuccessModel  # numpy and scipy: loaded when a model is fit
    from passhat.metrics.traffic import Credibility

PAGE_SIZE = 50  # runs and trials a page
GRID_TASKS = 100  # tasks (rows of the scenario grid) a page
LIVE_RECOMPUTE_S = 5.0  # a run being written gets a new report model at most this often
REPORTS_IN_MEMORY = 8  # the report model of a 100,000-trial run holds about 30 MB
CACHE_FOLDER = (".cache", "dashboard")
RUN_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,254}")  # what `passhat run --run-id` accepts: no path can hide in it

PASSED = f"({JUDGED} AND reward = 1)"
Judgement = Literal["passed", "failed", "unjudged"]  # how a stored trial was judged, as the trials page filters them
JUDGEMENTS: tuple[Judgement, ...] = get_args(Judgement)
SIGNATURES: tuple[str, ...] = get_args(Signature)
JUDGEMENT_SQL: dict[Judgement, str] = {
    "passed": PASSED,
    "failed": f"({JUDGED} AND reward = 0)",
    "unjudged": f"(NOT {JUDGED})",
}

T = TypeVar("T")


class NotFound(Exception):
    """No such run or trial in the runs folder (or a folder that holds no passhat store): the message says which."""


# --- finding and opening a run -----------------------------------------------------------------------


def run_folder(out: Path, run_id: str) -> Path:
    """The folder of the run ``run_id`` under ``out``; NotFound for a name that is no run id (``..``, a slash)
    or a folder without a store."""
    folder = out / run_id
    if not RUN_ID.fullmatch(run_id) or not (folder / STORE_FILE).is_file():
        raise NotFound(f"There is no run {run_id!r} in this runs folder.")
    return folder


def run_folders(out: Path) -> list[str]:
    """The names of the folders directly under ``out`` that hold a results store (others may live there)."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir() if RUN_ID.fullmatch(p.name) and (p / STORE_FILE).is_file())


FileStamp = tuple[tuple[int, int] | None, ...]  # (mtime_ns, size) of the store file and of its journal


def file_stamp(folder: Path) -> FileStamp:
    """Cheap evidence that a store is untouched: the same stamp twice means no trial was written between."""
    stamps = []
    for name in (STORE_FILE, STORE_FILE + "-wal"):
        try:
            st = os.stat(folder / name)
        except OSError:
            stamps.append(None)
        else:
            stamps.append((st.st_mtime_ns, st.st_size))
    return tuple(stamps)


@dataclasses.dataclass(frozen=True)
class Stamp:
    """What a run's figures depend on: judged trials are never overwritten, so these counts change whenever a
    figure can; ``created`` and ``config`` tell a run recreated or resumed with a new configuration apart."""

    created: float
    config: str  # a digest of the stored configuration
    trials: int
    judged: int
    infra_errors: int


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of a list: ``number`` from 1, of ``size`` items, over ``total`` items."""

    number: int
    size: int
    total: int

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.size

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.pages


@dataclasses.dataclass(frozen=True)
class GridCell:
    """One scenario's judged trials (passed of judged) and the trials that could not be judged."""

    passed: int
    judged: int
    unjudged: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None

    @property
    def band(self) -> int | None:
        """The rate in five bands (0: below 0.2 ... 4: 0.8 and above, all passed gets 5) for the cell's colour."""
        rate = self.rate
        if rate is None:
            return None
        return 5 if self.passed == self.judged else min(4, int(rate * 5))


@dataclasses.dataclass(frozen=True)
class Grid:
    """The scenario grid of a page of tasks: one row per task, one cell per persona that has trials."""

    personas: list[str]
    rows: list[tuple[str, dict[str, GridCell]]]
    page: Page


@dataclasses.dataclass(frozen=True)
class TrialFilter:
    """Which trials a trial list shows: a task, a persona, a judgement or a failure signature (each optional)."""

    task: str | None = None
    persona: str | None = None
    outcome: str | None = None  # one of JUDGEMENTS or SIGNATURES; "outcome", as the page's address names it

    def __post_init__(self) -> None:
        if self.outcome is not None and self.outcome not in JUDGEMENTS and self.outcome not in SIGNATURES:
            raise UserError(f"outcome {self.outcome!r} is none of {', '.join(JUDGEMENTS)} or a failure signature.")

    def where(self) -> tuple[str, list[str]]:
        """The SQL condition (``1`` for every trial) and its parameters."""
        clauses, params = [], []
        for column, value in (("task_id", self.task), ("persona", self.persona)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.outcome in JUDGEMENT_SQL:
            clauses.append(JUDGEMENT_SQL[self.outcome])  # type: ignore[index]
        elif self.outcome is not None:
            clauses.append("signature = ?")
            params.append(self.outcome)
        return " AND ".join(clauses) or "1", params


@dataclasses.dataclass(frozen=True)
class TrialPage:
    trials: list[TrialRow]
    page: Page


@dataclasses.dataclass(frozen=True)
class Progress:
    """How far a run is: judged trials of the planned ones, what they give so far, and whether a process is
    writing the run now (``writing`` is None where the system does not say)."""

    stored: int
    unjudged: int
    planned: int | None
    scenarios: int
    trials_per_scenario: int
    pass_hat_k: dict[int, float]  # pass^1 and pass^n so far
    complete: bool
    early_stopped: bool
    writing: bool | None

    @property
    def state(self) -> Literal["finished", "writing", "stopped", "unknown"]:
        if self.complete:
            return "finished"
        return {True: "writing", False: "stopped", None: "unknown"}[self.writing]  # type: ignore[return-value]

    def to_json(self) -> dict[str, object]:
        return {
            **dataclasses.asdict(self),
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "state": self.state,
        }


class RunReader:
    """One run's store, open for the reads of one request: ResultStore for its identity and whole trials, its
    configuration as a RunConfig, and a query-only connection of its own for the counts and pages that ResultStore
    has no method for."""

    def __init__(self, folder: Path, store: ResultStore, config: RunConfig, conn: sqlite3.Connection):
        self.folder, self.store, self.config, self._conn = folder, store, config, conn

    @classmethod
    @contextlib.contextmanager
    def open(cls, out: Path, run_id: str) -> Iterator[RunReader]:
        folder = run_folder(out, run_id)
        try:
            store = ResultStore.open(folder)
        except UserError as exc:
            raise NotFound(f"{run_id} is not a readable passhat run: {exc}") from None
        try:
            config = stored_config(store)
        except UserError as exc:
            store.close()
            raise NotFound(f"{run_id} is not a readable passhat run: {exc}") from None
        conn = sqlite3.connect(f"{store.path.resolve().as_uri()}?mode=rw", uri=True, timeout=30.0)
        try:
            conn.execute("PRAGMA query_only = ON")
            yield cls(folder, store, config, conn)
        finally:
            conn.close()
            store.close()

    @property
    def run_id(self) -> str:
        """The run's folder name: what every command and address names it by."""
        return self.folder.name

    def stamp(self) -> Stamp:
        trials, judged, infra = self._conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM({JUDGED}), 0), COALESCE(SUM(infra_error IS NOT NULL), 0) FROM trials"
        ).fetchone()
        config = hashlib.sha256(json.dumps(self.store.config, sort_keys=True).encode()).hexdigest()[:16]
        return Stamp(self.store.created, config, trials, judged, infra)

    def counts(self) -> dict[Scenario, tuple[int, int]]:
        """(successes, judged trials) per scenario, sorted: metrics.summary.scenario_counts by one GROUP BY."""
        return _judged(self._scenarios())

    def _scenarios(self) -> list[tuple[str, str, int, int, int]]:
        """(task, persona, passed, judged, stored) of every scenario with a stored trial, sorted."""
        return sorted(
            self._conn.execute(
                f"SELECT task_id, persona, SUM({PASSED}), SUM({JUDGED}), COUNT(*) FROM trials GROUP BY task_id, persona"
            )
        )

    def caveats(self, counts: Mapping[Scenario, tuple[int, int]]) -> RunCaveats:
        return run_caveats(self.run_id, self.config, counts)

    def grid(self, number: int) -> Grid:
        """The scenario grid of page ``number`` of the run's tasks (GRID_TASKS a page, by task id)."""
        page = Page(number, GRID_TASKS, self._conn.execute("SELECT COUNT(DISTINCT task_id) FROM trials").fetchone()[0])
        tasks = [t for (t,) in self._conn.execute(
            "SELECT DISTINCT task_id FROM trials ORDER BY task_id LIMIT ? OFFSET ?", (page.size, page.offset)
        )]  # fmt: skip
        rows: dict[str, dict[str, GridCell]] = {t: {} for t in tasks}
        if tasks:
            cells = self._conn.execute(
                f"SELECT task_id, persona, SUM({PASSED}), SUM({JUDGED}), SUM(NOT {JUDGED}) FROM trials "
                "WHERE task_id BETWEEN ? AND ? GROUP BY task_id, persona",
                (tasks[0], tasks[-1]),
            )
            for task, persona, passed, judged, unjudged in cells:
                rows[task][persona] = GridCell(passed, judged, unjudged)
        return Grid(self._personas(), list(rows.items()), page)

    def _personas(self) -> list[str]:
        """The run's personas in its configuration's order, then any other the store holds."""
        stored = [p for (p,) in self._conn.execute("SELECT DISTINCT persona FROM trials ORDER BY persona")]
        planned = [p for p in self.config.personas if p in stored]
        return planned + [p for p in stored if p not in planned]

    def trials(self, which: TrialFilter, number: int) -> TrialPage:
        """Page ``number`` of the trials ``which`` selects, in store order; their small columns only."""
        where, params = which.where()
        total = self._conn.execute(f"SELECT COUNT(*) FROM trials WHERE {where}", params).fetchone()[0]
        page = Page(number, PAGE_SIZE, total)
        rows = self._conn.execute(
            "SELECT task_id, persona, trial, seed, reward, signature, infra_error IS NOT NULL FROM trials "
            f"WHERE {where} ORDER BY task_id, persona, trial LIMIT ? OFFSET ?",
            [*params, page.size, page.offset],
        )
        return TrialPage([TrialRow(t, p, i, seed, r, sig, bool(infra)) for t, p, i, seed, r, sig, infra in rows], page)

    def trial(self, task: str, persona: str, index: int) -> TrialRecord:
        """That one trial, transcript and all."""
        for record in self.store.records([(task, persona, index)]):
            return record
        raise NotFound(f"Run {self.run_id} has no trial {index} of task {task!r} with persona {persona!r}.")

    def progress(self) -> Progress:
        scenarios = self._scenarios()
        counts = _judged(scenarios)
        caveats = self.caveats(counts)
        unjudged = sum(stored - judged for _, _, _, judged, stored in scenarios)
        n = caveats.min_trials
        curve = pass_hat_curve([c for c, _ in counts.values()], [t for _, t in counts.values()]) if counts else {}
        return Progress(
            stored=caveats.stored_trials,
            unjudged=unjudged,
            planned=caveats.planned_trials,
            scenarios=len(counts),
            trials_per_scenario=n,
            pass_hat_k={k: curve[k] for k in sorted({1, n}) if k in curve},
            complete=caveats.complete,
            early_stopped=caveats.early_stopped,
            writing=writer_active(self.folder),
        )


def _judged(scenarios: list[tuple[str, str, int, int, int]]) -> dict[Scenario, tuple[int, int]]:
    return {(task, persona): (passed, judged) for task, persona, passed, judged, _ in scenarios if judged}


def writer_active(folder: Path) -> bool | None:
    """Whether a process holds the run's writer lock (an flock), read from the kernel's table of locks without
    touching the lock itself (a probe that took the lock, however briefly, could make `passhat run --resume`
    fail); None where there is no such table (not Linux)."""
    try:
        st = os.stat(folder / LOCK_FILE)
    except OSError:
        return False  # never written by `passhat run`, or a writer gone long ago
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return any(line.split()[1:2] == ["FLOCK"] and inode in line.split() for line in table.splitlines())


# --- the runs list ---------------------------------------------------------------------------------------


class RunSummary(BaseModel):
    """One line of the runs list: the run's identity, standing and headline figures, from its counts alone.
    ``error`` is set (and the figures empty) for a folder whose store cannot be read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    domain: str | None = None
    agent: str | None = None
    created: float | None = None
    stored: int = 0  # judged trials
    planned: int | None = None
    scenarios: int = 0
    trials_per_scenario: int = 0
    pass_1: float | None = None
    pass_1_ci: tuple[float, float] | None = None
    pass_n: float | None = None  # pass^n, n the smallest scenario's judged trials; None when n < 2
    pass_n_ci: tuple[float, float] | None = None
    complete: bool = False
    early_stopped: bool = False
    gate: str | None = None  # the gate the run was judged against (its early stop's or --gate's), and its verdict
    gate_meets: bool | None = None
    gate_reason: str | None = None
    error: str | None = None


def run_summary(reader: RunReader) -> RunSummary:
    """The runs list's line of a run: counts by one GROUP BY, the report's own estimators and intervals."""
    counts = reader.counts()
    caveats = reader.caveats(counts)
    n = caveats.min_trials
    figures: dict[str, object] = {}
    if counts:
        every = list(counts.values())
        curve, ci = pass_hat_curve([c for c, _ in every], [m for _, m in every]), run_intervals(every)
        figures = {"pass_1": curve[1], "pass_1_ci": ci.avg_reward}
        if n > 1:
            figures |= {"pass_n": curve[n], "pass_n_ci": ci.pass_hat_k[n]}
    return RunSummary(
        run_id=reader.run_id,
        domain=reader.config.domain or None,
        agent=reader.config.agent or None,
        created=reader.store.created,
        stored=caveats.stored_trials,
        planned=caveats.planned_trials,
        scenarios=len(counts),
        trials_per_scenario=n,
        complete=caveats.complete,
        early_stopped=caveats.early_stopped,
        **figures,
        **_gate_fields(caveats.gate, caveats.gate_decision),
    )


def _gate_fields(gate: str | None, decision: Decision | None) -> dict[str, object]:
    if gate is None:
        return {}
    if decision is None:
        return {"gate": gate}
    return {"gate": str(decision.gate), "gate_meets": decision.meets, "gate_reason": decision.reason}


# --- the cache ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Entry(Generic[T]):
    files: FileStamp
    stamp: Stamp
    made: float  # the clock when the value was made
    value: T


class RunCache:
    """Each run's summary and report model, kept while its store is unchanged (see the module), report models
    on disk too, so a restarted server does not rebuild them. One request at a time builds a run's value: the
    others wait for it rather than build it again."""

    def __init__(self, out: Path, clock: Callable[[], float] = time.monotonic):
        self.out, self._clock = out, clock
        self._summaries: dict[str, _Entry[RunSummary]] = {}
        self._traffic: dict[str, _Entry[TrafficBasis]] = {}
        self._reports: OrderedDict[str, _Entry[Report]] = OrderedDict()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def summaries(self) -> list[RunSummary]:
        """Every run of the folder: readable ones newest first, then the unreadable ones by name."""
        every = [self.summary(name) for name in run_folders(self.out)]
        readable = sorted((s for s in every if s.error is None), key=lambda s: s.created or 0.0, reverse=True)
        return readable + [s for s in every if s.error is not None]

    def summary(self, run_id: str) -> RunSummary:
        try:
            return self._value("summary", self._summaries, run_id, lambda reader, _: run_summary(reader))
        except NotFound as exc:
            return RunSummary(run_id=run_id, error=str(exc))

    def report(self, run_id: str) -> Report:
        """The run's report model, as `passhat report --json` builds it; the least recently shown ones leave memory."""
        report = self._value("report", self._reports, run_id, self._stored_or_built_report)
        with self._locks_lock:
            if run_id in self._reports:
                self._reports.move_to_end(run_id)
            while len(self._reports) > REPORTS_IN_MEMORY:
                self._reports.popitem(last=False)
        return report

    def traffic_basis(self, run_id: str) -> TrafficBasis:
        """What the traffic calculator reads of the run, its model fit once per state of the run (the fit, not the
        figures for a day of traffic, is what takes seconds on a large run)."""
        return self._value("traffic", self._traffic, run_id, lambda reader, _: traffic_basis(reader))

    def _value(self, kind: str, table: dict[str, _Entry[T]], run_id: str, make: Callable[[RunReader, Stamp], T]) -> T:
        files = file_stamp(run_folder(self.out, run_id))
        with self._lock(kind, run_id):
            entry = table.get(run_id)
            if entry is not None and entry.files == files:
                return entry.value
            with RunReader.open(self.out, run_id) as reader:
                stamp = reader.stamp()
                if entry is not None and entry.stamp == stamp:
                    entry.files = files
                    return entry.value
                if entry is not None and entry.stamp.created == stamp.created and self._clock() - entry.made < LIVE_RECOMPUTE_S:
                    return entry.value  # a run being written: its last value is recent enough
                value = make(reader, stamp)
            table[run_id] = _Entry(files, stamp, self._clock(), value)
            return value

    def _lock(self, kind: str, run_id: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault((kind, run_id), threading.Lock())

    def _stored_or_built_report(self, reader: RunReader, stamp: Stamp) -> Report:
        path = self.out.joinpath(*CACHE_FOLDER, reader.run_id, "report.json")
        stored = _read_report(path, stamp)
        if stored is not None:
            return stored
        report = build_run_report(reader)
        _write_report(path, stamp, report)
        return report


@dataclasses.dataclass(frozen=True)
class TrafficBasis:
    """A run's per-scenario counts, its caveats, and the model of per-scenario success fit to the counts (None when
    the run has no judged trial or its caveats refuse a model)."""

    counts: dict[Scenario, tuple[int, int]]
    caveats: RunCaveats
    model: SuccessModel | None
    credible: Credibility | None  # how far beyond n `report` predicts pass^k; None with no model


def traffic_basis(reader: RunReader) -> TrafficBasis:
    from passhat.metrics.traffic import traffic_model

    counts = reader.counts()
    caveats = reader.caveats(counts)
    if not counts or caveats.fit_refused:
        return TrafficBasis(counts, caveats, None, None)
    return TrafficBasis(counts, caveats, *traffic_model(list(counts.values())))


def build_run_report(reader: RunReader) -> Report:
    """The run's report model exactly as `passhat report` builds it (task tags and gated tasks from its domain)."""
    from passhat.report import build_report
    from passhat.run.stored import gated_tasks, task_tags  # the report commands' own reading of a run's domain

    tags = task_tags(reader.config, gone=lambda why: print(f"note: {why}", file=sys.stderr))
    return build_report(reader.store, tags, None, gated_tasks(reader.config))


def _read_report(path: Path, stamp: Stamp) -> Report | None:
    """The report model stored at ``path`` for this stamp (its first line), or None."""
    try:
        with path.open("rb") as f:
            if json.loads(f.readline()) != dataclasses.asdict(stamp):
                return None
            return Report.model_validate_json(f.read())
    except (OSError, ValueError):  # no file, another stamp's, or torn by hand: build it again
        return None


def _write_report(path: Path, stamp: Stamp, report: Report) -> None:
    """Store the model for the next server start; a runs folder the server cannot write keeps it in memory only."""
    from passhat.report.json_report import report_json

    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        head = json.dumps(dataclasses.asdict(stamp)).encode() + b"\n"
        write_atomically(path, itertools.chain([head], report_json(report)), durable=False)
