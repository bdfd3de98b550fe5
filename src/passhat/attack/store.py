"""An attack suite's results: one SQLite file in its run folder, one committed transaction per trial.

Like a run's store (``passhat.store``): WAL with synchronous=NORMAL, so a trial is durable once recorded; one
writer at a time (the folder's lock); resumable, since a trial's key says everything about it: the defense
configuration, the attack template and goal (empty for the clean baseline), the task, persona and trial index.
A trial that could not be judged (an infra error) is stored, and replaced when the suite is resumed.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.file_writes import FolderLock
from passhat.store.sqlite_file import HeldStore, configure, connect, transaction
from passhat.untrusted import storable, storable_json

STORE_FILE = "attack.sqlite"
APPLICATION_ID = 0x70686174  # "phat": marks a SQLite file as a passhat attack store
SCHEMA_VERSION = 1

SCHEMA = (
    "CREATE TABLE run (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, config TEXT NOT NULL, created REAL NOT NULL)",
    """CREATE TABLE trials (
        defense TEXT NOT NULL,
        attack TEXT NOT NULL,
        goal TEXT NOT NULL,
        task_id TEXT NOT NULL,
        persona TEXT NOT NULL,
        trial INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        reward INTEGER,
        signature TEXT,
        reached INTEGER,
        shown INTEGER,
        infra_error TEXT,
        interventions TEXT NOT NULL,
        events TEXT NOT NULL,
        started REAL NOT NULL,
        finished REAL NOT NULL,
        PRIMARY KEY (defense, attack, goal, task_id, persona, trial)
    )""",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
COLUMNS = "defense, attack, goal, task_id, persona, trial, seed, reward, signature, reached, shown, infra_error"
UPSERT = f"""
INSERT INTO trials ({COLUMNS}, interventions, events, started, finished) VALUES ({", ".join("?" * 16)})
ON CONFLICT (defense, attack, goal, task_id, persona, trial) DO UPDATE SET
    seed = excluded.seed, reward = excluded.reward, signature = excluded.signature, reached = excluded.reached,
    shown = excluded.shown, infra_error = excluded.infra_error, interventions = excluded.interventions,
    events = excluded.events, started = excluded.started, finished = excluded.finished
WHERE trials.infra_error IS NOT NULL
"""

AttackKey = tuple[str, str, str, str, str, int]  # (defense, attack, goal, task_id, persona, trial)


@dataclasses.dataclass(frozen=True)
class AttackTrial:
    """One trial of the suite as the figures read it. ``attack`` and ``goal`` are "" for a clean (baseline) trial,
    whose ``reached`` and ``shown`` are None; ``shown``: whether any read showed the agent the attack's text.
    ``reward`` is None exactly when the trial could not be judged (``infra_error``)."""

    defense: str
    attack: str
    goal: str
    task_id: str
    persona: str
    trial: int
    seed: int
    reward: int | None
    signature: str | None
    reached: bool | None
    shown: bool | None
    infra_error: str | None = None
    refused: tuple[str, ...] = ()  # the calls the tool filter refused, by tool
    withheld: int = 0  # the results the detector withheld

    @property
    def key(self) -> AttackKey:
        return (self.defense, self.attack, self.goal, self.task_id, self.persona, self.trial)


@dataclasses.dataclass(frozen=True)
class AttackRecord:
    """A trial as stored: its outcome and its events."""

    outcome: AttackTrial
    events: list[dict[str, Any]]
    started: float
    finished: float


class AttackStore(HeldStore):
    """A suite's trials in ``<run_dir>/attack.sqlite``. Use create(), resume() or open()."""

    def __init__(self, path: Path, conn: sqlite3.Connection, run: tuple[str, str, float], lock: FolderLock | None = None):
        self.path, self._conn, self._lock = path, conn, lock
        self.run_id, self._config, self.created = run

    @classmethod
    def create(cls, run_dir: Path, run_id: str, config: dict[str, Any]) -> AttackStore:
        path = Path(run_dir) / STORE_FILE
        run = (run_id, json.dumps(config), time.time())
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the attack store {path}: {exc.strerror or exc}") from None
        lock = FolderLock.acquire(path.parent, f"attack suite {run_id!r} ({path.parent})")
        try:
            if path.exists():
                raise UserError(f"an attack store already exists at {path}; choose another --run-id, or --resume that suite")
            conn = configure(connect(str(path)))
            conn.execute("PRAGMA journal_mode = WAL")
            with transaction(conn):
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT INTO run (id, run_id, config, created) VALUES (1, ?, ?, ?)", run)
        except BaseException:
            lock.release()
            raise
        return cls(path, conn, run, lock)

    @classmethod
    def open(cls, run_dir: Path) -> AttackStore:
        """Open an existing store to read it; a missing or foreign file is a UserError naming it."""
        path = Path(run_dir) / STORE_FILE
        if not path.is_file():
            raise UserError(f"no passhat attack store at {path}; give the folder of a suite `passhat attack` made")
        conn = connect(str(path))
        try:
            configure(conn)
            if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                raise UserError("another program's file")
            row = conn.execute("SELECT run_id, config, created FROM run WHERE id = 1").fetchone()
            if row is None:
                raise UserError("no run row: edited by hand?")
        except (sqlite3.DatabaseError, UserError) as exc:
            conn.close()
            raise UserError(f"{path} is not a readable passhat attack store ({exc})") from None
        return cls(path, conn, tuple(row))  # type: ignore[arg-type]

    @classmethod
    def resume(cls, run_dir: Path) -> AttackStore:
        """Open a suite's store to go on writing it, holding its folder's lock."""
        lock = FolderLock.acquire(Path(run_dir), f"attack suite {Path(run_dir).name!r} ({run_dir})")
        try:
            store = cls.open(run_dir)
        except BaseException:
            lock.release()
            raise
        store._lock = lock
        return store

    @property
    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = json.loads(self._config)
        return config

    def record(self, record: AttackRecord) -> None:
        """Store one trial in its own transaction; a judged trial already stored under its key is never replaced."""
        o = record.outcome
        row = (
            *o.key, o.seed, o.reward, o.signature, _flag(o.reached), _flag(o.shown), storable(o.infra_error),
            storable_json({"refused": o.refused, "withheld": o.withheld}), storable_json(record.events), record.started, record.finished,
        )  # fmt: skip
        with transaction(self._conn):
            if self._conn.execute(UPSERT, row).rowcount == 0:
                raise ValueError(f"attack trial {o.key} is already stored with a judged outcome")

    def completed_keys(self) -> set[AttackKey]:
        rows = self._conn.execute("SELECT defense, attack, goal, task_id, persona, trial FROM trials WHERE infra_error IS NULL")
        return {tuple(r) for r in rows}  # type: ignore[misc]

    def outcomes(self) -> list[AttackTrial]:
        """Every stored trial's outcome (no transcripts), in key order."""
        order = "ORDER BY defense, attack, goal, task_id, persona, trial"
        rows = self._conn.execute(f"SELECT {COLUMNS}, interventions FROM trials {order}")
        return [_outcome(r) for r in rows]

    def events(self, key: AttackKey) -> list[dict[str, Any]]:
        """One stored trial's events ([] when the key is not stored)."""
        where = "defense = ? AND attack = ? AND goal = ? AND task_id = ? AND persona = ? AND trial = ?"
        row = self._conn.execute(f"SELECT events FROM trials WHERE {where}", key).fetchone()
        return json.loads(row[0]) if row else []


def _outcome(row: tuple[Any, ...]) -> AttackTrial:
    *key, seed, reward, signature, reached, shown, infra, interventions = row
    done = json.loads(interventions)
    return AttackTrial(
        *key, seed, reward, signature, _bool(reached), _bool(shown), infra, tuple(done["refused"]), done["withheld"]
    )


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)
