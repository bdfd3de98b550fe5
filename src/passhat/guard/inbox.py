"""The operator inbox: one SQLite file of human-gate tickets that runs, MCP sessions and people share.

A run's worker processes and an MCP server file tickets into ``<out>/inbox.sqlite`` while people read,
assign, annotate and decide them in the web inbox, so the file is opened by several processes at once:
WAL (readers never wait for a writer), a busy timeout (writers queue instead of failing), and each change
one ``BEGIN IMMEDIATE`` transaction that appends its history entry in the same statement. A decision is
an ``UPDATE ... WHERE status = 'open'``: of two people deciding the same ticket, exactly one changes a
row, and the other is told the ticket is closed. Lists are paged in SQL (``LIMIT``/``OFFSET`` and a
``COUNT``) over indexed columns, so an inbox of 100,000 tickets reads a page as fast as one of ten.

Ticket numbers here are the inbox's own (``T-<id>``), global to the file; the gate's numbers in a
trial's backend count that conversation's tickets only.

``InboxOperator`` is the human gate's operator (``passhat.guard.gate.Operator``) when people decide: it files
each ticket the gate opens, and its verdicts are the people's decisions; one that does not come within the
timeout expires the ticket, and counts as a rejection.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, get_args

from passhat.guard.gate import GateTicket, Verdict

TicketStatus = Literal["open", "approved", "rejected", "expired"]
Priority = Literal["low", "normal", "high", "urgent"]
Source = Literal["run", "mcp"]
Decision = Literal["approved", "rejected"]
Sort = Literal["newest", "oldest", "priority", "status"]
EntryKind = Literal["notes", "replies"]
ENTRIES: dict[EntryKind, tuple[str, str]] = {"notes": ("note", "note added"), "replies": ("reply", "replied")}  # what, action

INBOX_FILE = "inbox.sqlite"
DEFAULT_PRIORITY: Priority = "high"  # what a priority the inbox does not know becomes: a person is waiting
MAX_TEXT = 4_000  # a note, a reply, a decision's note, an outcome
MAX_NAME = 200  # a person's name, an owner
MAX_SEARCH = 200
MAX_PAGE = 500
SCHEMA_VERSION = 1
BUSY_TIMEOUT = 30.0  # seconds a writer waits for another process's transaction
DEFAULT_OPERATOR_TIMEOUT = 600.0  # seconds a conversation's end waits for the decisions on its tickets
PASSHAT = "passhat"  # who files, expires and records outcomes
STOPPED_NOTE = "the conversation was stopped before a decision (a resumed run files its own ticket)"

# Ranks for the priority and status sorts; the same expressions are indexed, so the sorts use the index.
PRIORITY_RANK = "(CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END)"
STATUS_RANK = "(CASE status WHEN 'open' THEN 0 WHEN 'approved' THEN 1 WHEN 'rejected' THEN 2 ELSE 3 END)"
ORDER: dict[Sort, str] = {
    "newest": "id DESC",  # ids are issued in filing order: the primary key is the index of "created"
    "oldest": "id ASC",
    "priority": f"{PRIORITY_RANK}, id DESC",
    "status": f"{STATUS_RANK}, id DESC",
}
EQUAL_FILTERS: dict[str, Any] = {"status": TicketStatus, "priority": Priority, "owner": None, "source": Source, "origin": None}
SEARCHED = ("'T-' || id", "tool", "rule", "reason", "domain", "conversation", "origin", "owner", "args")

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tickets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL,
        origin TEXT NOT NULL,
        conversation TEXT NOT NULL,
        domain TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        rule TEXT NOT NULL,
        reason TEXT NOT NULL,
        priority TEXT NOT NULL,
        owner TEXT NOT NULL,
        status TEXT NOT NULL,
        request TEXT NOT NULL,
        evidence TEXT NOT NULL,
        notes TEXT NOT NULL,
        replies TEXT NOT NULL,
        history TEXT NOT NULL,
        outcome TEXT NOT NULL,
        notified INTEGER NOT NULL,  -- unused; kept, as inbox files from before hold it NOT NULL
        created_at TEXT NOT NULL,
        decided_at TEXT,
        decided_by TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS tickets_status ON tickets (status, id)",
    f"CREATE INDEX IF NOT EXISTS tickets_status_rank ON tickets ({STATUS_RANK}, id DESC)",
    f"CREATE INDEX IF NOT EXISTS tickets_priority_rank ON tickets ({PRIORITY_RANK}, id DESC)",
    f"CREATE INDEX IF NOT EXISTS tickets_status_priority_rank ON tickets (status, {PRIORITY_RANK}, id DESC)",  # the queue view
    "CREATE INDEX IF NOT EXISTS tickets_priority ON tickets (priority, id)",
    "CREATE INDEX IF NOT EXISTS tickets_owner ON tickets (owner, id)",
    "CREATE INDEX IF NOT EXISTS tickets_origin ON tickets (origin, id)",
    "CREATE INDEX IF NOT EXISTS tickets_source ON tickets (source, id)",
)


@dataclasses.dataclass(frozen=True)
class TicketEntry:
    """One line of a ticket's history, notes or replies."""

    at: str  # ISO-8601, UTC
    by: str
    action: str
    text: str


@dataclasses.dataclass(frozen=True)
class Ticket:
    id: int
    number: str  # "T-<id>", for display
    source: Source
    origin: str  # the run id, or "mcp:<server>"
    conversation: str  # task/persona/trial, or the MCP session
    domain: str
    tool: str
    args: dict[str, Any]
    rule: str
    reason: str
    priority: Priority
    owner: str  # "" = unassigned
    status: TicketStatus
    request: list[str]  # the customer's messages before the ticket was filed (none for MCP)
    evidence: list[dict[str, Any]]  # the reads made in the conversation before it: {"tool", "args", "result"}
    notes: list[TicketEntry]  # internal, for staff
    replies: list[TicketEntry]  # to the customer
    history: list[TicketEntry]  # every change, in order
    outcome: str  # what carrying out an approved ticket did
    created_at: str
    decided_at: str | None
    decided_by: str | None


class TicketNotFound(LookupError):
    pass


class TicketClosed(ValueError):
    """A change only an open ticket takes (a decision, a reply, an assignment), asked of a decided one."""


def priority_of(value: str) -> Priority:
    """A gate's priority as the inbox's; one the inbox does not know is ``high``."""
    return value if value in get_args(Priority) else DEFAULT_PRIORITY  # type: ignore[return-value]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class InboxStore:
    """The ticket store over one SQLite file; safe to share between threads (one connection, one lock)."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db
        self._lock = threading.Lock()

    @classmethod
    def open(cls, out: Path) -> InboxStore:
        """The store of the runs folder ``out``, created with its schema when new."""
        out.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(out / INBOX_FILE, isolation_level=None, timeout=BUSY_TIMEOUT, check_same_thread=False)
        db.execute("PRAGMA journal_mode = WAL")  # persistent in the file; outside any transaction
        db.execute("PRAGMA synchronous = NORMAL")
        db.row_factory = sqlite3.Row
        store = cls(db)
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:  # new: made once, not at every open
            with store._change():
                for statement in SCHEMA:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return store

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> InboxStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # ---- filing and reading

    def file(
        self,
        *,
        source: Source,
        origin: str,
        conversation: str,
        domain: str,
        tool: str,
        args: dict[str, Any],
        rule: str,
        reason: str,
        priority: Priority,
        note: str,
        request: list[str],
        evidence: list[dict[str, Any]],
        owner: str = "",
    ) -> Ticket:
        """A new open ticket; ``note`` (the gate's internal note for whoever takes it) becomes its first note."""
        _one_of(source, Source, "source")
        _one_of(priority, Priority, "priority")
        owner = _bounded(owner, "owner", MAX_NAME, empty_ok=True)
        at = now()
        notes = [_entry(at, "gate", "note added", note)] if note else []
        history = [_entry(at, origin, "filed", reason)]
        if owner:
            history.append(_entry(at, origin, "assigned", owner))
        with self._change() as db:
            number = db.execute(
                "INSERT INTO tickets (source, origin, conversation, domain, tool, args, rule, reason, priority, owner, status,"
                " request, evidence, notes, replies, history, outcome, notified, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, '[]', ?, '', 0, ?)",
                (
                    source,
                    origin,
                    conversation,
                    domain,
                    tool,
                    _json(args),
                    rule,
                    reason,
                    priority,
                    owner,
                    _json(request),
                    _json(evidence),
                    _json(notes),
                    _json(history),
                    at,
                ),
            ).lastrowid
            return self._read(db, number)

    def get(self, ticket_id: int) -> Ticket:
        with self._lock:
            return self._read(self._db, ticket_id)

    def page(
        self,
        *,
        status: TicketStatus | None = None,
        priority: Priority | None = None,
        owner: str | None = None,
        source: Source | None = None,
        origin: str | None = None,
        search: str | None = None,
        sort: Sort = "newest",
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[Ticket], int]:
        """One page of the tickets matching every filter given, and how many match in all.

        ``owner=""`` selects the unassigned tickets; ``search`` matches text anywhere in the number, tool,
        rule, reason, domain, conversation, origin, owner or arguments.
        """
        _one_of(sort, Sort, "sort")
        if not (isinstance(offset, int) and offset >= 0):
            raise ValueError(f"offset must be a whole number from 0, not {offset!r}")
        if not (isinstance(limit, int) and 1 <= limit <= MAX_PAGE):
            raise ValueError(f"limit must be a whole number from 1 to {MAX_PAGE}, not {limit!r}")
        clause, params = _matching(status=status, priority=priority, owner=owner, source=source, origin=origin, search=search)
        with self._lock:
            total = self._db.execute(f"SELECT COUNT(*) FROM tickets{clause}", params).fetchone()[0]
            rows = self._db.execute(
                f"SELECT * FROM tickets{clause} ORDER BY {ORDER[sort]} LIMIT ? OFFSET ?", [*params, limit, offset]
            ).fetchall()
            return [_ticket(row) for row in rows], total

    def counts(self, **filters: str | None) -> dict[TicketStatus, int]:
        """How many tickets of each status match ``filters`` (``page``'s: priority, owner, source, origin, search), in
        one pass."""
        clause, params = _matching(**filters)
        with self._lock:
            found = dict(self._db.execute(f"SELECT status, COUNT(*) FROM tickets{clause} GROUP BY status", params).fetchall())
        return {status: found.get(status, 0) for status in get_args(TicketStatus)}

    def owners(self) -> list[str]:
        """Everyone who has a ticket, for the owner filter."""
        return self._distinct("owner")

    def origins(self) -> list[str]:
        """Every run and MCP server that filed a ticket, for the origin filter."""
        return self._distinct("origin")

    # ---- changes

    def assign(self, ticket_id: int, owner: str, *, by: str) -> Ticket:
        owner = _bounded(owner, "owner", MAX_NAME, empty_ok=True)
        return self._update(ticket_id, {"owner": owner}, by, "assigned" if owner else "unassigned", owner)

    def set_priority(self, ticket_id: int, priority: Priority, *, by: str) -> Ticket:
        _one_of(priority, Priority, "priority")
        return self._update(ticket_id, {"priority": priority}, by, "priority", priority)

    def add_note(self, ticket_id: int, text: str, *, by: str) -> Ticket:
        """An internal note; the one change a decided ticket still takes."""
        return self._append(ticket_id, "notes", by, text)

    def reply(self, ticket_id: int, text: str, *, by: str) -> Ticket:
        """A reply to the customer; the conversation has then not been told the latest."""
        return self._append(ticket_id, "replies", by, text)

    def decide(self, ticket_id: int, decision: Decision, *, by: str, note: str = "") -> Ticket:
        """A person's decision; of two at once exactly one wins, the other gets ``TicketClosed``."""
        _one_of(decision, Decision, "decision")
        return self._close(ticket_id, decision, by, note)

    def expire(self, ticket_id: int, *, by: str, note: str) -> Ticket:
        """No decision in time: the waiting side (the harness) closes the ticket."""
        return self._close(ticket_id, "expired", by, note)

    def record_outcome(self, ticket_id: int, outcome: str, *, by: str) -> Ticket:
        """What carrying out an approved ticket did."""
        outcome = _bounded(outcome, "outcome", MAX_TEXT)
        return self._update(ticket_id, {"outcome": outcome}, by, "carried out", outcome, required="approved")

    async def wait_for_decision(self, ticket_id: int, timeout: float, poll: float = 0.2) -> Ticket:
        """The ticket once it is no longer open, or as it stands after ``timeout`` seconds; sleeps between
        reads, so the other tasks of the event loop keep going."""
        deadline = time.monotonic() + timeout
        while (ticket := self.get(ticket_id)).status == "open" and (left := deadline - time.monotonic()) > 0:
            await asyncio.sleep(min(poll, left))
        return ticket

    # ---- inside

    @contextlib.contextmanager
    def _change(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``IMMEDIATE``) so it never fails half-way on another writer."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _update(
        self, ticket_id: int, values: dict[str, str], by: str, action: str, text: str, required: TicketStatus = "open"
    ) -> Ticket:
        """Set ``values`` on a ticket of status ``required`` and append the history line, in one statement."""
        entry = _entry(now(), _bounded(by, "by", MAX_NAME), action, text)
        assignments = "".join(f"{column} = ?, " for column in values)
        with self._change() as db:
            changed = db.execute(
                f"UPDATE tickets SET {assignments}history = json_insert(history, '$[#]', json(?)) WHERE id = ? AND status = ?",
                (*values.values(), _json(entry), ticket_id, required),
            )
            self._changed(db, ticket_id, changed, required)
            return self._read(db, ticket_id)

    def _append(self, ticket_id: int, kind: EntryKind, by: str, text: str) -> Ticket:
        """A note (any ticket) or a reply (open tickets only; the conversation has then not been told the latest)."""
        what, action = ENTRIES[kind]
        entry = _json(_entry(now(), _bounded(by, "by", MAX_NAME), action, _bounded(text, what, MAX_TEXT)))
        open_only = " AND status = 'open'" if kind == "replies" else ""
        with self._change() as db:
            changed = db.execute(
                f"UPDATE tickets SET {kind} = json_insert({kind}, '$[#]', json(?)),"
                f" history = json_insert(history, '$[#]', json(?)) WHERE id = ?{open_only}",
                (entry, entry, ticket_id),
            )
            self._changed(db, ticket_id, changed)
            return self._read(db, ticket_id)

    def _close(self, ticket_id: int, status: TicketStatus, by: str, note: str) -> Ticket:
        by = _bounded(by, "by", MAX_NAME)
        at = now()
        entry = _entry(at, by, status, _bounded(note, "note", MAX_TEXT, empty_ok=True))
        with self._change() as db:
            changed = db.execute(
                "UPDATE tickets SET status = ?, decided_at = ?, decided_by = ?,"
                " history = json_insert(history, '$[#]', json(?)) WHERE id = ? AND status = 'open'",
                (status, at, by, _json(entry), ticket_id),
            )
            self._changed(db, ticket_id, changed)
            return self._read(db, ticket_id)

    @staticmethod
    def _changed(db: sqlite3.Connection, ticket_id: int, cursor: sqlite3.Cursor, required: TicketStatus = "open") -> None:
        """Raise why an update changed no row: no such ticket, or not in the status the change needs."""
        if cursor.rowcount:
            return
        row = db.execute("SELECT status FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
        if row is None:
            raise TicketNotFound(f"no ticket T-{ticket_id}")
        raise TicketClosed(f"ticket T-{ticket_id} is {row[0]}: this change needs an {required} ticket")

    @staticmethod
    def _read(db: sqlite3.Connection, ticket_id: int) -> Ticket:
        row = db.execute("SELECT * FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
        if row is None:
            raise TicketNotFound(f"no ticket T-{ticket_id}")
        return _ticket(row)

    def _distinct(self, column: Literal["owner", "origin"]) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute(f"SELECT DISTINCT {column} FROM tickets WHERE {column} != '' ORDER BY 1")]


LIKE_ESCAPES = str.maketrans({"\\": "\\\\", "%": "\\%", "_": "\\_"})


def _matching(**filters: str | None) -> tuple[str, list[Any]]:
    """The WHERE clause (empty for no filter) and its parameters selecting the tickets that match every filter given;
    ValueError for a value outside its vocabulary or too long; TypeError for a filter there is not."""
    unknown = set(filters) - {*EQUAL_FILTERS, "search"}
    if unknown:
        raise TypeError(f"no ticket filter {', '.join(sorted(unknown))}")
    for name, vocabulary in EQUAL_FILTERS.items():
        if vocabulary is not None and filters.get(name) is not None:
            _one_of(filters[name], vocabulary, name)
    given = {column: filters[column] for column in EQUAL_FILTERS if filters.get(column) is not None}
    where, params = [f"{column} = ?" for column in given], list(given.values())
    if search := filters.get("search"):
        pattern = "%" + plain_text(_bounded(search, "search", MAX_SEARCH), "search").translate(LIKE_ESCAPES) + "%"
        where.append("(" + " OR ".join(f"{column} LIKE ? ESCAPE '\\'" for column in SEARCHED) + ")")
        params += [pattern] * len(SEARCHED)
    return (f" WHERE {' AND '.join(where)}" if where else ""), params


def _ticket(row: sqlite3.Row) -> Ticket:
    values = dict(row)
    for column in ("args", "request", "evidence"):
        values[column] = json.loads(values[column])
    for column in ("notes", "replies", "history"):
        values[column] = [TicketEntry(**e) for e in json.loads(values[column])]
    del values["notified"]  # never set: passhat sends no reply or decision to a customer
    return Ticket(number=f"T-{values['id']}", **values)


def _entry(at: str, by: str, action: str, text: str) -> dict[str, str]:
    return {"at": at, "by": by, "action": action, "text": text}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _one_of(value: Any, vocabulary: Any, what: str) -> None:
    if value not in get_args(vocabulary):
        raise ValueError(f"{what} must be one of {', '.join(get_args(vocabulary))}, not {value!r}")


def plain_text(text: str, what: str) -> str:
    """``text`` when it holds no control character; else ValueError. SQLite's LIKE stops reading a pattern at a
    NUL, so "%\0…%" would match every ticket; no ticket's words hold one (their JSON escapes it)."""
    if bad := next((c for c in text if unicodedata.category(c) == "Cc" and c != "\t"), None):
        raise ValueError(f"the {what} holds a control character (U+{ord(bad):04X}): give the words to look for")
    return text


def _bounded(text: Any, what: str, limit: int, *, empty_ok: bool = False) -> str:
    """``text`` stripped, when it is text within ``limit`` characters (and not empty unless allowed)."""
    if not isinstance(text, str):
        raise ValueError(f"{what} must be text")
    text = text.strip()
    if not text and not empty_ok:
        raise ValueError(f"{what} must not be empty")
    if len(text) > limit:
        raise ValueError(f"{what} is {len(text):,} characters long; at most {limit:,} are kept")
    return text


@dataclasses.dataclass(frozen=True)
class Inbox:
    """Where one run or MCP server files its tickets, and how long a conversation's end waits for decisions."""

    store: InboxStore
    source: Source
    origin: str  # the run id, or "mcp:<host:port or stdio>"
    timeout: float = DEFAULT_OPERATOR_TIMEOUT

    def operator(self, conversation: str, domain: str) -> InboxOperator:
        return InboxOperator(self, conversation, domain)


class InboxOperator:
    """People decide this conversation's tickets in the inbox (see the module)."""

    def __init__(self, inbox: Inbox, conversation: str, domain: str):
        self.inbox, self.conversation, self.domain = inbox, conversation, domain
        self._filed: dict[int, int] = {}  # the gate's ticket number -> the inbox's

    def filed(self, ticket: GateTicket, request: list[str], evidence: list[dict[str, Any]]) -> None:
        self._filed[ticket.number] = self.inbox.store.file(
            source=self.inbox.source,
            origin=self.inbox.origin,
            conversation=self.conversation,
            domain=self.domain,
            tool=ticket.tool,
            args=ticket.args,
            rule=ticket.rule,
            reason=ticket.reason,
            priority=priority_of(ticket.priority),
            note=ticket.note,
            request=request,
            evidence=evidence,
        ).id

    def verdict(self, ticket: GateTicket) -> Verdict | None:
        return _verdict(self.inbox.store.get(self._filed[ticket.number]))

    async def wait(self, ticket: GateTicket) -> Verdict:
        """The people's decision, or after the timeout the ticket expired (a rejection, unless a decision came
        in the last instant)."""
        number, timeout = self._filed[ticket.number], self.inbox.timeout
        try:
            decided = await self.inbox.store.wait_for_decision(number, timeout)
        except asyncio.CancelledError:  # the run was stopped (Ctrl-C): no one is left to carry out a decision
            with contextlib.suppress(TicketClosed):
                self.inbox.store.expire(number, by=PASSHAT, note=STOPPED_NOTE)
            raise
        if decided.status == "open":
            try:
                decided = self.inbox.store.expire(number, by=PASSHAT, note=f"no decision within {timeout:g} s")
            except TicketClosed:
                decided = self.inbox.store.get(number)
        return _verdict(decided)  # type: ignore[return-value]  # no longer open

    def carried_out(self, ticket: GateTicket, outcome: str) -> None:
        self.inbox.store.record_outcome(self._filed[ticket.number], outcome[:MAX_TEXT], by=PASSHAT)


def _verdict(ticket: Ticket) -> Verdict | None:
    """A decided ticket as the gate's verdict: approved, or rejected (a person's rejection or an expiry) with its note."""
    if ticket.status == "open":
        return None
    note = next(e.text for e in reversed(ticket.history) if e.action == ticket.status)
    return Verdict(ticket.status == "approved", ticket.decided_by or PASSHAT, note)
