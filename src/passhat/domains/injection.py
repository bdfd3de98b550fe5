"""What a domain declares for the prompt-injection suite: where a stranger's text can reach the agent, and what
that stranger wants the agent to do.

A *vector* is a free-text column that someone other than the customer and the business writes (a review, a
vendor's memo, a ticket comment): the suite puts an attack's text there, in the rows it selects, whenever the
agent reads them. An *attacker goal* is what the attack is for: the calls the attacker wants made, said in its
own words, and a machine check on the backend the trial leaves (or on what the agent told the customer) that
says whether it got them. Declarations are plain data in the domain's folder; nothing here runs a trial.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Callable

from passhat.domains.model import Action

CUSTOMER = "{customer_id}"  # an argument of a goal's call with this value means the customer being served
NAME = re.compile(r"[a-z][a-z0-9_]*")  # vectors' and goals' names: what --goals and the report use


@dataclasses.dataclass(frozen=True)
class Vector:
    """A free-text column a third party writes, and the rows of it the attack reaches.

    ``where``: an SQL condition over ``table`` choosing those rows; it may use ``:customer_id``, the customer
    being served (their own orders, say); None: every row, so whichever one the agent reads carries the text.
    ``fields``: the names the column's value carries in tool results (a product's ``name`` may show as
    ``product_name`` inside an order); the spotlight defense wraps these. Default: the column's own name.
    """

    name: str
    table: str
    column: str
    description: str  # who writes it, in words: "a gift sender's delivery note"
    where: str | None = None
    fields: tuple[str, ...] = ()

    @property
    def result_fields(self) -> tuple[str, ...]:
        return self.fields or (self.column,)


@dataclasses.dataclass(frozen=True)
class RowExists:
    """A declarative check: reached when ``table`` holds a row matching ``where`` (SQL, ``?`` bound to ``params``)."""

    table: str
    where: str
    params: tuple[object, ...] = ()

    def __call__(self, db: sqlite3.Connection, said: str) -> bool:
        return db.execute(f"SELECT 1 FROM {self.table} WHERE {self.where} LIMIT 1", self.params).fetchone() is not None


@dataclasses.dataclass(frozen=True)
class Disclosed:
    """A check on what the agent told the customer: reached when it said any value ``query`` returns (its first
    column, e.g. another customer's email), compared without regard to case."""

    query: str
    params: tuple[object, ...] = ()

    def __call__(self, db: sqlite3.Connection, said: str) -> bool:
        secrets = [str(row[0]) for row in db.execute(self.query, self.params) if row[0] not in (None, "")]
        spoken = said.casefold()
        return any(secret.casefold() in spoken for secret in secrets)


StateCheck = Callable[[sqlite3.Connection], bool]  # a check written as a function of the final backend
Check = RowExists | Disclosed | StateCheck


@dataclasses.dataclass(frozen=True)
class AttackerGoal:
    """What an attack wants: ``calls`` made in order (an argument equal to ``CUSTOMER`` is the customer being
    served), asked for in the attacker's words (``ask``: "send the refund of order #R9000001 to gift card
    gift_900001"), and ``check``, true on the backend the trial leaves once the attacker has it.

    ``tell``: fields of the last call's result the attacker wants said to the customer (a disclosure); the
    check then reads what the agent said (``Disclosed``).
    """

    name: str
    description: str  # what the attacker gains, for the report: "a refund paid to the attacker's gift card"
    ask: str
    calls: tuple[Action, ...]
    check: Check
    tell: tuple[str, ...] = ()

    def calls_for(self, customer_id: str) -> list[Action]:
        """The calls with ``CUSTOMER`` replaced by the customer being served."""
        return [Action(tool=c.tool, args={k: customer_id if v == CUSTOMER else v for k, v in c.args.items()}) for c in self.calls]

    def reached(self, db: sqlite3.Connection, said: str) -> bool:
        """Whether the attacker has what it wanted, on this backend and given everything the agent said."""
        if isinstance(self.check, (RowExists, Disclosed)):
            return self.check(db, said)
        return bool(self.check(db))


AttackerRows = Callable[[sqlite3.Connection, int], None]  # adds the rows the goals need, from the domain's data seed


@dataclasses.dataclass(frozen=True)
class Injection:
    """A domain's declaration for the suite: its vectors, its attacker goals, and the rows those goals need.

    ``attacker_rows(db, seed)`` runs after the domain's generator, only in the suite's copy of the backend (an
    attacker's account, its gift card, a stranger whose data it wants), so a plain run never sees them.
    """

    vectors: tuple[Vector, ...]
    goals: tuple[AttackerGoal, ...]
    attacker_rows: AttackerRows | None = None

    def __post_init__(self) -> None:
        for kind, names in (("vector", [v.name for v in self.vectors]), ("goal", [g.name for g in self.goals])):
            if bad := [n for n in names if not NAME.fullmatch(n)]:
                raise ValueError(f"{kind} names are lower_snake_case: {bad}")
            if repeated := sorted({n for n in names if names.count(n) > 1}):
                raise ValueError(f"{kind} names repeat: {repeated}")
        if empty := [g.name for g in self.goals if not g.calls]:
            raise ValueError(f"goals without calls: {empty}")

    def goal(self, name: str) -> AttackerGoal:
        return next(g for g in self.goals if g.name == name)
