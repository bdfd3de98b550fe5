"""The results database: one SQLite file per run directory, one committed transaction per trial.

WAL journal mode with synchronous=NORMAL means a trial is durable once record() returns, even if the
process is killed the next instant (only an OS crash or power loss can drop the last commits), and
a report can read the store while the run is still writing it. The store knows nothing of agents,
models or domains: it keeps what it is given, in a form every reader can take — text that is not
text visibly escaped, known secrets redacted, numbers and nesting JSON cannot carry as notes (see
``passhat.untrusted``), since a trial holds whatever its agent and customer sent.

One process writes a run at a time: create() and resume() hold an exclusive lock on the run folder
until close() (or the process's end), and refuse a second writer. A trial's audit entries (opaque
numbered lines, see ``passhat.guard.audit``) are committed in the trial's own transaction, so a kill
never leaves one without the other. A store file that a kill during create() left holding nothing
is no run: create() takes its place, with a note.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from passhat.crashpoints import crash_point
from passhat.errors import UserError
from passhat.file_writes import FolderLock
from passhat.store.sqlite_file import HeldStore, configure, connect, transaction
from passhat.trajectory import USER_SIMULATOR_ERROR, Signature
from passhat.untrusted import storable, storable_json

if TYPE_CHECKING:  # the metrics load numpy: `passhat runs` opens stores and needs none of them
    from passhat.metrics.summary import TrialResult

STORE_FILE = "results.sqlite"
SCHEMA_VERSION = 4  # 2: per-trial model usage (tokens, cost, latency); 3: the audit table; 4: per-trial steps
READABLE_VERSIONS = (2, 3, 4)  # a version-2 store has no audit table: its trail, if any, is unkeyed; before 4, no steps
AUDIT_VERSION = 3  # the first schema with the audit table
APPLICATION_ID = 0x70687374  # "phst": marks a SQLite file as a passhat store

SCHEMA = (
    """CREATE TABLE run (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        run_id TEXT NOT NULL,
        config TEXT NOT NULL,
        created REAL NOT NULL
    )""",
    """CREATE TABLE trials (
        task_id TEXT NOT NULL,
        persona TEXT NOT NULL,
        trial INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        reward INTEGER,
        signature TEXT,
        infra_error TEXT,
        events TEXT NOT NULL,
        grade TEXT NOT NULL,
        started REAL NOT NULL,
        finished REAL NOT NULL,
        usage TEXT NOT NULL DEFAULT '{}',
        steps TEXT,
        PRIMARY KEY (task_id, persona, trial)
    )""",
    "CREATE TABLE audit (seq INTEGER PRIMARY KEY, entry TEXT NOT NULL)",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)

COLUMNS = "task_id, persona, trial, seed, reward, signature, infra_error, events, grade, started, finished, usage, steps"
TRIAL_COLUMNS = frozenset(COLUMNS.split(", ")) - {"steps"}  # what every readable schema's trials table holds

# One statement, so one transaction: a new key inserts; an existing key is overwritten only when its
# row could not be judged (an infra error or a user simulator error: resume re-runs those), otherwise
# nothing changes and rowcount is 0.
UPSERT = f"""
INSERT INTO trials ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id, persona, trial) DO UPDATE SET
    seed = excluded.seed, reward = excluded.reward, signature = excluded.signature,
    infra_error = excluded.infra_error, events = excluded.events, grade = excluded.grade,
    started = excluded.started, finished = excluded.finished, usage = excluded.usage, steps = excluded.steps
WHERE trials.infra_error IS NOT NULL OR trials.signature = '{USER_SIMULATOR_ERROR}'
"""


JUDGED = f"(infra_error IS NULL AND signature IS NOT '{USER_SIMULATOR_ERROR}')"  # SQL: a trial resume does not run again
_DECODER = json.JSONDecoder()  # reads the JSON columns (see _stored_json)
AuditRow = tuple[int, str]  # (sequence number, the entry's line)
Seal = Callable[[str], Sequence[AuditRow]]  # a stored trial's digest -> the audit entries committed with it
TrialKey = tuple[str, str, int]


class DuplicateTrialError(ValueError):
    """A judged trial is already stored under this (task_id, persona, trial): a harness bug."""


@dataclasses.dataclass(frozen=True)
class TrialRecord:
    """One trial as stored. reward is None exactly when infra_error (the message) is set.

    ``usage``: model calls by role, {"agent": {"model", "calls", "cached_calls", "input_tokens",
    "output_tokens", "cost_usd", "unpriced_calls", "latency_s": [...]}, "user": {...}}; empty when no
    model was called. The store keeps it as given.

    ``steps``: how the trial went along its task's plan (``passhat.grade.steps.TrialSteps.to_json``: the outcome
    it took and each step's mark); None when not recorded (an infra error, a store from before steps). A run also
    records there the trial's conversation shape, ``"conversation": {"tools": [...], "turns": n, "confidence": x|null}``
    (``passhat.metrics.consistency.Conversation.to_json``), so a report's consistency figures need not scan the
    transcript; absent in stores written before it was recorded.

    ``transcript``: the stored events as their JSON text, unparsed; set only by report_trials(), whose ``events`` are
    cut, for a report's scans of every event (the tool calls, what the agent said) that must not parse them.
    """

    task_id: str
    persona: str
    trial: int
    seed: int
    reward: int | None
    signature: Signature | None
    infra_error: str | None
    events: list[dict[str, Any]]
    grade: dict[str, Any]
    started: float
    finished: float
    usage: dict[str, Any] = dataclasses.field(default_factory=dict)
    steps: dict[str, Any] | None = None
    transcript: str | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.infra_error is not None and self.reward is not None:
            raise ValueError(f"{self.key}: an infra error has no reward, got {self.reward!r}")
        if self.infra_error is None and self.reward not in (0, 1):
            raise ValueError(f"{self.key}: a judged trial's reward is 0 or 1, got {self.reward!r}")

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.persona, self.trial)

    def to_result(self) -> TrialResult:
        """The part of the record that metrics read."""
        from passhat.metrics.summary import TrialResult

        return TrialResult(self.task_id, self.persona, self.trial, self.reward, self.signature, self.infra_error is not None)

    def encoded(self) -> EncodedTrial:
        return EncodedTrial(_row(self))


@dataclasses.dataclass(frozen=True, slots=True)
class EncodedTrial:
    """A trial as its row of the trials table (COLUMNS, its transcript and grade as JSON text), encoded where it was
    judged: a worker process sends text, cheap to pickle, and the run's one writer only inserts it."""

    row: tuple[Any, ...]

    @property
    def key(self) -> tuple[str, str, int]:
        return self.row[0], self.row[1], self.row[2]

    @property
    def reward(self) -> int | None:
        return self.row[4]

    def to_result(self) -> TrialResult:
        from passhat.metrics.summary import TrialResult

        task_id, persona, trial, _, reward, signature, infra_error = self.row[:7]
        return TrialResult(task_id, persona, trial, reward, signature, infra_error is not None)


@dataclasses.dataclass(frozen=True, slots=True)
class TrialRow:
    """A stored trial's small columns, without its transcript (events) and grade: what the metrics, the gate and
    the choice of transcripts to embed read, light enough to hold for every trial of a large run."""

    task_id: str
    persona: str
    trial: int
    seed: int
    reward: int | None
    signature: Signature | None
    infra_error: bool

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.persona, self.trial)

    def to_result(self) -> TrialResult:
        from passhat.metrics.summary import TrialResult

        return TrialResult(self.task_id, self.persona, self.trial, self.reward, self.signature, self.infra_error)


class ResultStore(HeldStore):
    """A run's trials in `<run_dir>/results.sqlite`. Use create() or open(), not the constructor."""

    def __init__(self, path: Path, conn: sqlite3.Connection, run: tuple[str, str, float], lock: FolderLock | None = None):
        self.path = path
        self._conn = conn
        self.run_id, self._config_json, self.created = run
        self._lock = lock  # held by a writer (create, resume) until close()
        self._columns = COLUMNS if _has_steps(conn) else COLUMNS.replace(", steps", ", NULL")  # what a trial's row reads
        self.notes: list[str] = []  # what the person running passhat should be told about this store

    @classmethod
    def create(cls, run_dir: Path, run_id: str, config: dict[str, Any]) -> ResultStore:
        """Create the run directory and its store, and hold the run's lock; refuse to touch an existing
        store, but take the place of one a killed create() left holding nothing."""
        path = Path(run_dir) / STORE_FILE
        run = (run_id, json.dumps(config), time.time())  # serialize first: a bad config leaves no file
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a parent that is a file, no permission, a read-only or full disk
            raise UserError(f"cannot create the results store {path}: {exc.strerror or exc}") from None
        lock = FolderLock.acquire(path.parent, f"run {run_id!r} ({path.parent})")
        try:
            notes = _clear_unwritten_store(path, run_id)
            path.touch(exist_ok=False)
            crash_point("store_create")
            conn = configure(connect(str(path)))
            conn.execute("PRAGMA journal_mode = WAL")  # persistent in the file; cannot run inside a transaction
            with transaction(conn):
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT INTO run (id, run_id, config, created) VALUES (1, ?, ?, ?)", run)
        except FileExistsError:
            lock.release()
            raise UserError(f"a results store already exists at {path}; choose another run id, or resume that run") from None
        except OSError as exc:
            lock.release()
            raise UserError(f"cannot create the results store {path}: {exc.strerror or exc}") from None
        except BaseException:
            lock.release()
            raise
        store = cls(path, conn, run, lock)
        store.notes += notes
        return store

    @classmethod
    def open(cls, run_dir: Path) -> ResultStore:
        """Open an existing store to read it (a run may be writing it meanwhile); a missing or foreign
        file is a UserError naming the path."""
        path = _existing_store(run_dir)
        conn = connect(f"{path.resolve().as_uri()}?mode=rw")  # mode=rw: never create a database here
        try:
            return cls(path, configure(conn), _identify(conn, path))
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise UserError(f"{path} is not a readable passhat results store ({exc})") from None
        except UserError:
            conn.close()
            raise

    @classmethod
    def resume(cls, run_dir: Path) -> ResultStore:
        """Open an existing store to go on writing it, holding the run's lock; a store whose creation
        was interrupted, or one written by an older schema, is a UserError saying what to do."""
        path = _existing_store(run_dir)
        name = path.parent.name
        lock = FolderLock.acquire(path.parent, f"run {name!r} ({path.parent})")
        try:
            if _holds_nothing(path):
                raise UserError(
                    f"run {name!r} was killed while its store was being created ({path} holds nothing): there is "
                    f"nothing to resume; start it again with its flags and --run-id {name}, which reuses the id."
                )
            store = cls.open(run_dir)
        except BaseException:
            lock.release()
            raise
        version = store._conn.execute("PRAGMA user_version").fetchone()[0]
        store._lock = lock  # released by close(), below or when the caller is done
        if version != SCHEMA_VERSION:
            store.close()
            raise UserError(
                f"run {name!r} was stored by an older passhat (results store schema {version}, this one writes "
                f"{SCHEMA_VERSION}); finish it with that version, or start a fresh run."
            )
        return store

    @property
    def config(self) -> dict[str, Any]:
        """The run's configuration as given to create(), a fresh copy on every access."""
        config: dict[str, Any] = json.loads(self._config_json)
        return config

    def update_config(self, config: dict[str, Any]) -> None:
        """Replace the stored configuration (one transaction), e.g. to record how a resumed run went on."""
        text = json.dumps(config)
        with transaction(self._conn):
            self._conn.execute("UPDATE run SET config = ? WHERE id = 1", (text,))
        self._config_json = text

    def record(self, trial: TrialRecord | EncodedTrial, seal: Seal | None = None) -> None:
        """Store one trial, and the audit entries ``seal`` returns for it, in one transaction committed
        before returning. ``seal`` is given the digest of the trial's row as stored, to seal it.

        A key already stored replaces the old row only if that row could not be judged (an infra error
        or a user simulator error); a judged row is never overwritten: DuplicateTrialError, and nothing
        is stored.
        """
        row = trial.row if isinstance(trial, EncodedTrial) else _row(trial)
        with transaction(self._conn):
            if self._conn.execute(UPSERT, row).rowcount == 0:
                raise DuplicateTrialError(f"trial {trial.key} is already stored with a judged outcome")
            if seal is not None:
                self._conn.executemany("INSERT INTO audit (seq, entry) VALUES (?, ?)", seal(_digest(row)))

    def add_audit(self, audit: Sequence[AuditRow]) -> None:
        """Store audit entries that belong to no trial (a repair of the trail) in their own transaction."""
        with transaction(self._conn):
            self._conn.executemany("INSERT INTO audit (seq, entry) VALUES (?, ?)", audit)

    def audit_state(self) -> tuple[list[AuditRow] | None, dict[TrialKey, str]]:
        """(the audit entries by number, or None for a schema-2 store, made before the audit table; the
        digest of every stored trial), read in one snapshot so that each trial comes with its entries."""
        with _reading(self._conn):
            rows: list[AuditRow] | None
            if self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").fetchone():
                raw = self._conn.execute("SELECT seq, CAST(entry AS BLOB) FROM audit ORDER BY seq")  # text or not
                rows = [(seq, bytes(entry or b"").decode("utf-8", "backslashreplace")) for seq, entry in raw]
            else:  # a schema-2 store never had the table; one made with it that lost it lost its entries
                rows = None if self._conn.execute("PRAGMA user_version").fetchone()[0] < AUDIT_VERSION else []
            digests = {tuple(r[:3]): _digest(r) for r in self._conn.execute(f"SELECT {self._columns} FROM trials")}
        return rows, digests  # type: ignore[return-value]

    def trials(self) -> list[TrialRecord]:
        """Every stored trial, ordered by (task_id, persona, trial)."""
        return list(self.iter_trials())

    def iter_trials(self) -> Iterator[TrialRecord]:
        """The stored trials one at a time, in trials()' order: for readers of runs too big to hold at once (an export)."""
        rows = self._conn.execute(f"SELECT {self._columns} FROM trials ORDER BY task_id, persona, trial")
        yield from (_record(row, self.path) for row in rows)

    def report_trials(self) -> Iterator[TrialRecord]:
        """iter_trials() as a report's one pass reads them: each trial's events cut to the tool calls a fault or a
        guard marked (what the figures read of a parsed transcript; the few transcripts a report shows come from
        records()), and a transcript with neither never parsed: most of a large run's reading time was that. The
        whole transcript comes along unparsed, as ``transcript``, for the figures that scan it."""
        rows = self._conn.execute(f"SELECT {self._columns} FROM trials ORDER BY task_id, persona, trial")
        yield from (_record(row, self.path, _marked_events, keep_transcript=True) for row in rows)

    def trial_rows(self, unjudged_only: bool = False) -> list[TrialRow]:
        """Every stored trial's small columns, in trials()' order, or only those of the trials that could not be judged
        (infra errors, user simulator errors); reads no transcript or grade."""
        where = f"WHERE infra_error IS NOT NULL OR signature = '{USER_SIMULATOR_ERROR}' " if unjudged_only else ""
        rows = self._conn.execute(
            f"SELECT task_id, persona, trial, seed, reward, signature, infra_error IS NOT NULL FROM trials {where}"
            "ORDER BY task_id, persona, trial"
        )
        return [TrialRow(*_row_of(row, self.path)) for row in rows]

    def records(self, keys: Iterable[TrialKey]) -> Iterator[TrialRecord]:
        """The full records of the chosen trials, in the order given (a key not stored is skipped): the few
        transcripts a report embeds, without reading the others."""
        for key in keys:
            row = self._conn.execute(f"SELECT {self._columns} FROM trials WHERE task_id = ? AND persona = ? AND trial = ?", key)
            yield from (_record(r, self.path) for r in row)

    def completed_keys(self) -> set[tuple[str, str, int]]:
        """Keys of judged trials; infra and user simulator errors are left out so that resume runs them again."""
        rows = self._conn.execute(f"SELECT task_id, persona, trial FROM trials WHERE {JUDGED}")
        return {(t, p, i) for t, p, i in rows}

    def judged_count(self) -> int:
        """How many trials completed_keys() holds, counted by SQLite (`passhat runs` lists large runs)."""
        count: int = self._conn.execute(f"SELECT count(*) FROM trials WHERE {JUDGED}").fetchone()[0]
        return count


@dataclasses.dataclass(frozen=True)
class RunEntry:
    """A run folder under an output folder: its store's identity, or why the store cannot be read.

    ``folder`` is the folder's name (what `--resume` and `report` take); ``done`` counts judged trials.
    ``error`` is set (and the rest empty) when the folder holds a results store that cannot be read.
    """

    folder: str
    run_id: str | None = None
    created: float | None = None
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    done: int = 0
    error: str | None = None


def list_runs(out_dir: Path) -> list[RunEntry]:
    """Every folder directly under out_dir that holds a results store: readable stores newest first,
    then the unreadable ones by name. Folders without a store are left out (anything may live there)."""
    runs, unreadable = [], []
    for run_dir in sorted(Path(out_dir).iterdir()) if Path(out_dir).is_dir() else []:
        if not (run_dir / STORE_FILE).is_file():
            continue  # not a run folder: any other folder may live next to the runs
        try:
            with ResultStore.open(run_dir) as store:
                runs.append(RunEntry(run_dir.name, store.run_id, store.created, store.config, store.judged_count()))
        except (UserError, sqlite3.Error) as exc:
            unreadable.append(RunEntry(run_dir.name, error=str(exc)))
    return sorted(runs, key=lambda run: run.created or 0.0, reverse=True) + unreadable


def _row(trial: TrialRecord) -> tuple[Any, ...]:
    """The trial as its row in the trials table (COLUMNS), exactly as it reads back."""
    return (
        trial.task_id, trial.persona, trial.trial, trial.seed, trial.reward, trial.signature,
        storable(trial.infra_error), storable_json(trial.events), storable_json(trial.grade), float(trial.started),
        float(trial.finished), storable_json(trial.usage), None if trial.steps is None else storable_json(trial.steps),
    )  # fmt: skip


def _record(
    row: Sequence[Any],
    path: Path,
    read_events: Callable[[str], list[dict[str, Any]]] = json.loads,
    keep_transcript: bool = False,
) -> TrialRecord:
    """A row of the trials table (COLUMNS) of the store at ``path`` as the trial it stores (its events as
    ``read_events`` reads them, and their text as its transcript if ``keep_transcript``). A column that does not
    hold what the store writes is a UserError naming the store, the trial and the column: the user's data is damaged,
    which is no bug of passhat's."""
    t, p, i, seed, reward, sig, infra, events, grade, start, end, usage, steps = row
    try:
        _check_scalars(row)
        t, p, sig = _shared(t, p, sig)
        return TrialRecord(
            t, p, i, seed, reward, sig, infra, _column(read_events, events, "events", list),
            _column(_stored_json, grade, "grade", dict), start, end, _column(_stored_json, usage, "usage", dict),
            None if steps is None else _column(_stored_json, steps, "steps", dict), events if keep_transcript else None,
        )  # fmt: skip
    except DamagedColumn as exc:
        raise _damaged(path, row, exc) from None


def _damaged(path: Path, row: Sequence[Any], exc: DamagedColumn) -> UserError:
    return UserError(
        f"{path}: trial {row[2]!r} of task {row[0]!r} with persona {row[1]!r}: its {exc.column} column {exc.reason}; the "
        "store was edited by hand or damaged"
    )


class DamagedColumn(Exception):
    """A stored column that does not read back as what the store wrote; _record names its trial."""

    def __init__(self, column: str, reason: str):
        super().__init__(column, reason)
        self.column, self.reason = column, reason


SIGNATURES = frozenset(get_args(Signature))
# the types the store writes to the plain columns of a trial's row, by position (COLUMNS)
SCALAR_TYPES: tuple[tuple[int, str, tuple[type, ...]], ...] = (
    (0, "task_id", (str,)), (1, "persona", (str,)), (2, "trial", (int,)), (3, "seed", (int,)),
    (4, "reward", (int, type(None))), (5, "signature", (str, type(None))), (6, "infra_error", (str, type(None))),
    (9, "started", (int, float)), (10, "finished", (int, float)),
)  # fmt: skip


def _check_scalars(row: Sequence[Any], upto: int | None = None) -> None:
    """DamagedColumn for the first plain column (of the first ``upto``) that does not hold what the store writes."""
    for position, column, types in SCALAR_TYPES:
        if (upto is None or position < upto) and not isinstance(row[position], types):
            raise DamagedColumn(
                column, f"holds {row[position]!r}, not the {' or '.join(t.__name__ for t in types)} passhat stores"
            )
    if row[4] not in (0, 1, None):
        raise DamagedColumn("reward", f"holds {row[4]!r}; a reward is 0, 1 or empty")
    if (upto is None or upto > 5) and row[5] is not None and row[5] not in SIGNATURES:
        raise DamagedColumn("signature", f"holds {row[5][:64]!r}, which is no failure signature passhat knows")


def _column(read: Callable[[str], Any], text: Any, column: str, shape: type) -> Any:
    """A JSON column read by ``read``, which must give a ``shape`` (a list of events: of objects)."""
    try:
        value = read(text)
    except (TypeError, ValueError, AttributeError) as exc:  # not text, not JSON, or JSON of another shape
        raise DamagedColumn(column, f"is not the JSON passhat stores ({exc})") from None
    if not isinstance(value, shape) or (shape is list and not all(isinstance(item, dict) for item in value)):
        raise DamagedColumn(column, f"holds JSON of another shape than the {shape.__name__} passhat stores")
    return value


def _stored_json(text: str) -> Any:
    """A column the store wrote with json.dumps: one document with nothing around it, read without json.loads's checks
    for that (a report reads three a trial; the checks cost a quarter of the parsing)."""
    return _DECODER.raw_decode(text)[0]


def _shared(task_id: str, persona: str, signature: str | None) -> tuple[str, str, str | None]:
    """The texts every trial of a scenario repeats, one object each however many trials hold them (a large run's
    rows would otherwise carry their own copies: megabytes per 100,000 trials)."""
    return sys.intern(task_id), sys.intern(persona), None if signature is None else sys.intern(signature)


def _row_of(row: Sequence[Any], path: Path) -> tuple[Any, ...]:
    """The small columns of a trial (trial_rows), checked as _record checks them."""
    t, p, i, seed, reward, sig, infra = row
    try:
        _check_scalars(row, upto=6)  # the seventh is infra_error IS NOT NULL, not the column
    except DamagedColumn as exc:
        raise _damaged(path, row, exc) from None
    t, p, sig = _shared(t, p, sig)
    return t, p, i, seed, reward, sig, bool(infra)


def _marked_events(text: str) -> list[dict[str, Any]]:
    """The events a fault or a guard marked; a transcript that names neither key is not parsed at all."""
    if '"fault"' not in text and '"guard"' not in text:
        return []
    return [e for e in json.loads(text) if e.get("fault") or e.get("guard")]


def _digest(row: Sequence[Any]) -> str:
    """A digest of a trial's row: an audit trail seals it, so a stored result edited later shows. A row without
    steps is digested as a store from before steps wrote it, so their sealed trails still verify."""
    kept = list(row) if row[-1] is not None else list(row[:-1])
    return hashlib.sha256(json.dumps(kept).encode()).hexdigest()


def _has_steps(conn: sqlite3.Connection) -> bool:
    """Whether the store's trials table has the steps column (schema 4 on)."""
    return any(column[1] == "steps" for column in conn.execute("PRAGMA table_info(trials)"))


def _existing_store(run_dir: Path) -> Path:
    path = Path(run_dir) / STORE_FILE
    if not path.is_file():
        raise UserError(f"no passhat results store at {path}; pass a run directory, one that holds {STORE_FILE}")
    return path


def _holds_nothing(path: Path) -> bool:
    """A store file a kill during create() leaves: empty, or a database without a single table."""
    try:
        conn = connect(f"{path.resolve().as_uri()}?mode=rw")
        try:
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError:  # not SQLite at all: someone else's file, never replaced
        return False
    return tables == 0 and application_id == 0


def _clear_unwritten_store(path: Path, run_id: str) -> list[str]:
    """Remove a store file that holds nothing (and its journal files); the note that says so."""
    if not (path.is_file() and _holds_nothing(path)):
        return []
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    return [f"run id {run_id!r}: its store {path} held nothing (a run killed while creating it); created afresh"]


def _identify(conn: sqlite3.Connection, path: Path) -> tuple[str, str, float]:
    """(run_id, config JSON, created) of a passhat store; any other SQLite file is a UserError."""
    if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
        raise UserError(f"{path} is not a passhat results store (an empty file, or another program's database)")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version not in READABLE_VERSIONS:
        raise UserError(
            f"{path} has results store schema version {version}, this passhat reads version "
            f"{' or '.join(map(str, READABLE_VERSIONS))}; open it with the passhat version that wrote it, or run the evaluation again"
        )
    # create() sets application_id in the transaction that inserts the run row, so the row is there,
    # unless the file was edited by hand: then say so rather than fail on a missing row or bad JSON.
    row = conn.execute("SELECT run_id, config, created FROM run WHERE id = 1").fetchone()
    if row is None:
        raise UserError(f"{path} has no run row (edited by hand?); it is not a usable passhat results store")
    run_id, config, created = row
    if not isinstance(run_id, str) or not isinstance(created, int | float):
        raise UserError(f"{path}: its run row holds {run_id!r}, {created!r}, not a run id and a time (edited by hand?)")
    if missing := TRIAL_COLUMNS - {column[1] for column in conn.execute("PRAGMA table_info(trials)")}:
        what = "no trials table" if len(missing) == len(TRIAL_COLUMNS) else f"no {', '.join(sorted(missing))} in its trials table"
        raise UserError(f"{path} has {what} (edited by hand?); it is not a usable passhat results store")
    try:
        parsed = json.loads(config)
    except (TypeError, ValueError) as exc:
        raise UserError(f"{path}: the stored run configuration is not valid JSON ({exc}); the store was edited by hand") from None
    if not isinstance(parsed, dict):
        raise UserError(f"{path}: the stored run configuration is not a JSON object; the store was edited by hand")
    return run_id, config, created


@contextlib.contextmanager
def _reading(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: every SELECT in it sees the same committed state."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")
