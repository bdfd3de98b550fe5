"""The suite's copy of a domain: the attacker's rows added, and read tools that show an attack's text.

An attacked trial registers its ``Exposure`` (the attack's text, the customer served) for its backend. Each read
tool then runs inside a savepoint in which the text is appended to every vector's column in the rows the vector
selects; the read's result is taken, and the savepoint rolled back. So the agent reads the text wherever a third
party's field shows, while the backend, the graders and the write results never hold it: an attacked trial is
graded exactly as a clean one. Write tools note each write carried out, so that the goal's check can run on the
backend the trial leaves once the trial's own connection is closed: its writes replayed, in order, on the seeded
backend (tools are deterministic; the suite runs no guard that could undo a write after its tool returned).

One world per domain and process: its template backend and the expected backends of its tasks are built once.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

from passhat.domains.injection import Injection, Vector
from passhat.domains.model import Domain
from passhat.env import fork_backend, template_for
from passhat.errors import UserError
from passhat.faults.kinds import leaves

SAVEPOINT = "passhat_injection"


@dataclasses.dataclass
class Exposure:
    """One trial in the world: the attack's ``text`` (None: a clean trial, which the world leaves alone) and the
    customer served; filled as the trial goes: whether a read showed the text, and the writes carried out (each
    tool's own function, with its arguments)."""

    text: str | None
    customer_id: str
    shown: bool = False
    writes: list[tuple[Callable[..., Any], dict[str, Any]]] = dataclasses.field(default_factory=list)


class AttackWorld:
    """A domain as the suite runs it (``domain``): its generator followed by the attacker's rows, its tools wrapped
    so that each trial's ``Exposure`` decides what its reads show."""

    def __init__(self, domain: Domain, injection: Injection):
        self.injection = injection
        self._exposures: dict[sqlite3.Connection, Exposure] = {}
        self._lock = threading.Lock()
        tools = tuple(self._wrapped(fn) for fn in domain.tools)
        tasks = list(domain.tasks.values())  # read once: the world's tasks are the domain's
        self.domain = dataclasses.replace(domain, generate=self._generate(domain), tools=tools, load_tasks=lambda: tasks)

    def _generate(self, domain: Domain) -> Callable[[sqlite3.Connection, int], None]:
        rows = self.injection.attacker_rows

        def generate(db: sqlite3.Connection, seed: int) -> None:
            domain.generate(db, seed)
            if rows is not None:
                rows(db, seed)

        return generate

    def expose(self, db: sqlite3.Connection, exposure: Exposure) -> None:
        """From now on, reads on ``db`` show ``exposure``'s text (if any), and its writes are noted."""
        with self._lock:
            self._exposures[db] = exposure

    def release(self, db: sqlite3.Connection) -> None:
        with self._lock:
            self._exposures.pop(db, None)

    def backend(self, exposure: Exposure) -> sqlite3.Connection:
        """A connection on the backend as the trial left it: the seeded one, with the trial's writes made again in
        their order; the caller closes it."""
        db = fork_backend(template_for(self.domain))
        for fn, args in exposure.writes:
            with db:
                fn(db, **args)
        return db

    def _wrapped(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        write = fn.__passhat_tool__.write  # type: ignore[attr-defined]  # every domain tool is marked

        @functools.wraps(fn)
        def tool(db: sqlite3.Connection, **args: Any) -> Any:
            exposure = self._exposures.get(db)
            if exposure is None or exposure.text is None:
                return fn(db, **args)
            if write:
                result = fn(db, **args)
                exposure.writes.append((fn, args))  # it returned: carried out (a failure raises, and rolls back)
                return result
            return self._read_exposed(fn, db, args, exposure)

        return tool

    def _read_exposed(self, fn: Callable[..., Any], db: sqlite3.Connection, args: dict[str, Any], exposure: Exposure) -> Any:
        db.execute(f"SAVEPOINT {SAVEPOINT}")
        try:
            for vector in self.injection.vectors:
                plant(db, vector, exposure.text or "", exposure.customer_id)
            result = fn(db, **args)
        finally:
            db.execute(f"ROLLBACK TO {SAVEPOINT}")
            db.execute(f"RELEASE {SAVEPOINT}")
        text = exposure.text or ""
        exposure.shown = exposure.shown or any(isinstance(v, str) and text in v for _, v in leaves(result))
        return result


def plant(db: sqlite3.Connection, vector: Vector, text: str, customer_id: str) -> int:
    """Append ``text`` to the vector's column in the rows it selects; returns how many rows."""
    where = f"WHERE {vector.where}" if vector.where else ""
    sql = f"UPDATE {vector.table} SET {vector.column} = trim(coalesce({vector.column}, '') || ' ' || :text) {where}"
    return db.execute(sql, {"text": text, "customer_id": customer_id}).rowcount


_worlds: dict[Domain, AttackWorld] = {}
_worlds_lock = threading.Lock()


def attack_world(domain: Domain) -> AttackWorld:
    """The domain's world for the suite, built once per process; a domain that declares no injection is a UserError."""
    if domain.injection is None:
        raise UserError(
            f"domain {domain.name!r} declares no injection vectors or attacker goals, so `passhat attack` has nothing to "
            "put in its data; a domain declares them in its `injection` field (see docs/attacks.md)."
        )
    with _worlds_lock:
        if domain not in _worlds:
            _worlds[domain] = AttackWorld(domain, domain.injection)
        return _worlds[domain]
