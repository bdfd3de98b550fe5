"""The operator inbox: the human gate's tickets, listed, read and worked by the people behind the gate.

Everything on a ticket came from an agent or a customer, so it is untrusted text: the templates autoescape
it and nothing here marks any of it safe. Each action is one store call under the role the issue gives it
(operators work tickets, approvers decide them), audited with the person's name, and answered with a
redirect to the ticket, so reloading the page never repeats it. What a person can get wrong (an empty
note, an unknown priority, a ticket someone else decided a moment ago) comes back as the ticket page
with a message and a 4xx status, never a 500.

The store is SQLite that a run's workers and an MCP server write at the same time: its calls run in a
worker thread, so a page waiting on the store's lock does not stall every other request.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from passhat.errors import UserError
from passhat.guard.inbox import (
    MAX_NAME,
    MAX_SEARCH,
    MAX_TEXT,
    InboxStore,
    Priority,
    Sort,
    Source,
    Ticket,
    TicketClosed,
    TicketNotFound,
    TicketStatus,
    plain_text,
)
from passhat.serve.web.accounts import Accounts, role_includes
from passhat.serve.web.security import Role, audited, error_page, render, requires

PAGE_SIZE = 50
MAX_DEPTH = 3  # nesting of a tool's arguments or result laid out as tables; deeper parts are shown as JSON
MAX_PAGE_NUMBER = 10_000_000  # keeps the offset inside SQLite's integers whatever the address says
TICKET_ID = re.compile(r"(?:T-)?([0-9]{1,18})", re.IGNORECASE)  # "12" or "T-12", as the list shows it
MINE, UNASSIGNED = "mine", "unassigned"  # owner filters that are not names


@dataclasses.dataclass(frozen=True)
class Filters:
    """What the list shows, as the address says it: every page link is built from it, so filters survive paging."""

    status: TicketStatus | None = None
    priority: Priority | None = None
    owner: str | None = None  # a name, MINE or UNASSIGNED
    source: Source | None = None
    origin: str | None = None
    q: str | None = None
    sort: Sort = "newest"
    page: int = 1

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Filters:
        """The filters of a query string; ValueError with the reason for a value no form offers."""

        def choice(name: str, allowed: tuple[str, ...]) -> Any:
            value = params.get(name, "")
            if value and value not in allowed:
                raise ValueError(f"unknown {name} {value[:40]!r}: choose one of {', '.join(allowed)}")
            return value or None

        def text(name: str, limit: int) -> str | None:
            value = params.get(name, "").strip()
            if len(value) > limit:
                raise ValueError(f"the {name} filter is longer than {limit} characters")
            return plain_text(value, f"{name} filter") or None

        page = params.get("page", "1")
        if not page.isdecimal() or not 1 <= int(page) <= MAX_PAGE_NUMBER:
            raise ValueError(f"page {page[:40]!r} is not a page number")
        return cls(
            status=choice("status", get_args(TicketStatus)),
            priority=choice("priority", get_args(Priority)),
            owner=text("owner", MAX_NAME),
            source=choice("source", get_args(Source)),
            origin=text("origin", MAX_NAME),
            q=text("q", MAX_SEARCH),
            sort=choice("sort", get_args(Sort)) or "newest",
            page=int(page),
        )

    def store_query(self, me: str) -> dict[str, Any]:
        """The filters as InboxStore.page takes them ("mine" is the signed-in person, "unassigned" no one)."""
        owner = {MINE: me, UNASSIGNED: ""}.get(self.owner or "", self.owner)
        return {
            "status": self.status, "priority": self.priority, "owner": owner, "source": self.source,
            "origin": self.origin, "search": self.q, "sort": self.sort,
        }  # fmt: skip

    def link(self, **changes: Any) -> str:
        """The list's address with these filters changed; defaults are left out so addresses stay short."""
        changed, default = dataclasses.replace(self, **changes), Filters()
        query = {
            f.name: getattr(changed, f.name)
            for f in dataclasses.fields(self)
            if getattr(changed, f.name) != getattr(default, f.name)
        }
        return "/inbox" + (f"?{urlencode(query)}" if query else "")


@dataclasses.dataclass(frozen=True)
class Listing:
    """One page of the list, the totals of each status under the same other filters, and the filter menus."""

    tickets: list[Ticket]
    total: int
    counts: dict[str, int]
    owners: list[str]
    origins: list[str]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))


def read_listing(out: Path, filters: Filters, me: str) -> Listing:
    query = filters.store_query(me)
    with InboxStore.open(out) as store:
        tickets, total = store.page(**query, offset=(filters.page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
        counts = store.counts(**{k: v for k, v in query.items() if k not in ("status", "sort")})
        return Listing(tickets, total, counts, store.owners(), store.origins())


@requires("viewer")
async def inbox(request: Request) -> Response:
    try:
        filters = Filters.parse(request.query_params)
    except ValueError as exc:
        return error_page(request, 400, str(exc))
    listing = await run_in_threadpool(read_listing, request.app.state.out, filters, request.state.operator.name)
    context = {
        "filters": filters, "listing": listing, "when": when, "MINE": MINE, "UNASSIGNED": UNASSIGNED,
        "statuses": get_args(TicketStatus), "priorities": get_args(Priority), "sources": get_args(Source),
        "sorts": get_args(Sort),
    }  # fmt: skip
    return render(request, "inbox_list.html", context)


# -- one ticket ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Shown:
    """A value laid out for reading: field/value rows (an object), a grid (a list of like records) or text.
    Rows and cells are Shown themselves, down to MAX_DEPTH; deeper parts are JSON text."""

    rows: list[tuple[str, Shown]] = dataclasses.field(default_factory=list)
    columns: list[str] = dataclasses.field(default_factory=list)
    grid: list[list[Shown]] = dataclasses.field(default_factory=list)
    text: str = ""


def shown(value: Any, depth: int = 0) -> Shown:
    """Tool arguments and results as a person reads them: one row per field rather than a JSON blob."""
    if depth < MAX_DEPTH and isinstance(value, dict) and value:
        return Shown(rows=[(str(key), shown(item, depth + 1)) for key, item in value.items()])
    if depth < MAX_DEPTH and isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        columns = list(dict.fromkeys(key for item in value for key in item))
        grid = [[shown(item.get(column, ""), depth + 1) for column in columns] for item in value]
        return Shown(columns=[str(column) for column in columns], grid=grid)
    return Shown(text=value if isinstance(value, str) else json.dumps(value, indent=1 if depth else 2, ensure_ascii=False))


def when(iso: str | None) -> str:
    """An ISO-8601 time to the minute, as a person scans a list of them; text that is not one, unchanged."""
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.utcoffset() is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def ticket_number(request: Request) -> int | None:
    """The ticket the address names ("12" or "T-12"), None when it names none."""
    match = TICKET_ID.fullmatch(request.path_params["ticket_id"])
    return int(match[1]) if match else None


def no_ticket(request: Request) -> Response:
    return error_page(request, 404, f"There is no ticket {request.path_params['ticket_id'][:40]!r}: the inbox lists them all.")


@dataclasses.dataclass(frozen=True)
class Problem:
    """Why an action was refused, shown with the form's text given back, so nothing typed is lost."""

    form: str
    message: str
    draft: str = ""


def workers(accounts: Accounts) -> list[str]:
    """The accounts a ticket can be assigned to: enabled, and allowed to work tickets."""
    return [a.name for a in accounts.all() if not a.disabled and role_includes(a.role, "operator")]


def read_ticket(out: Path, accounts: Accounts, number: int) -> tuple[Ticket, list[str]]:
    """The ticket and who could take it; TicketNotFound when there is no such ticket."""
    with InboxStore.open(out) as store:
        return store.get(number), workers(accounts)


async def ticket_view(request: Request, number: int, status_code: int = 200, problem: Problem | None = None) -> Response:
    """The ticket page: everything on the ticket, and the forms the signed-in role may send."""
    try:
        ticket, names = await run_in_threadpool(read_ticket, request.app.state.out, request.app.state.accounts, number)
    except TicketNotFound:
        return no_ticket(request)
    role = request.state.operator.role
    context = {
        "ticket": ticket, "when": when, "problem": problem, "priorities": get_args(Priority), "workers": names,
        "UNASSIGNED": UNASSIGNED, "max_name": MAX_NAME, "max_text": MAX_TEXT, "proposal": shown(ticket.args),
        "evidence": [(read.get("tool", ""), shown(read.get("args", {})), shown(read.get("result"))) for read in ticket.evidence],
        "done": DONE.get(request.query_params.get("done", "")),
        "may_work": role_includes(role, "operator"),
        "may_decide": role_includes(role, "approver"),
    }  # fmt: skip
    return render(request, "inbox_ticket.html", context, status_code=status_code)


@requires("viewer")
async def ticket_page(request: Request) -> Response:
    number = ticket_number(request)
    return no_ticket(request) if number is None else await ticket_view(request, number)


# -- actions -------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Asked:
    """One action as a person sent it: which ticket, the form, who they are, and the accounts to check names in."""

    number: int
    form: FormData
    me: str
    accounts: Accounts

    def field(self, name: str) -> str:
        value = self.form.get(name, "")
        if not isinstance(value, str):
            raise ValueError(f"{name} must be text, not a file")
        return value.strip()

    def draft(self, name: str) -> str:
        """What the person typed in a text field, to give back with a refusal (nothing for a file)."""
        value = self.form.get(name, "")
        return value if isinstance(value, str) else ""

    def required(self, name: str, what: str) -> str:
        value = self.field(name)
        if not value:
            raise ValueError(f"write {what} first: an empty one is not sent")
        return value


Done = tuple[Ticket, dict[str, Any]]  # the ticket after the action, and what the audit entry records of it


def assign(store: InboxStore, asked: Asked) -> Done:
    """To a name with an account that may work tickets ("me" when empty), or back to no one ("unassigned")."""
    owner = asked.field("owner")
    owner = {"": asked.me, "me": asked.me, UNASSIGNED: ""}.get(owner.lower(), owner)
    if owner and owner not in workers(asked.accounts):
        raise ValueError(f"{owner[:40]!r} is not an account that can work tickets: assign to an operator, approver or admin")
    return store.assign(asked.number, owner, by=asked.me), {"owner": owner}


def reply(store: InboxStore, asked: Asked) -> Done:
    text = asked.required("text", "the reply")
    return store.reply(asked.number, text, by=asked.me), {"text": text}


def note(store: InboxStore, asked: Asked) -> Done:
    text = asked.required("text", "the note")
    return store.add_note(asked.number, text, by=asked.me), {"text": text}


def prioritise(store: InboxStore, asked: Asked) -> Done:
    priority = asked.field("priority")
    if priority not in get_args(Priority):
        raise ValueError(f"choose a priority: {', '.join(get_args(Priority))}")
    return store.set_priority(asked.number, priority, by=asked.me), {"priority": priority}


def approve(store: InboxStore, asked: Asked) -> Done:
    text = asked.field("note")
    return store.decide(asked.number, "approved", by=asked.me, note=text), {"note": text}


def reject(store: InboxStore, asked: Asked) -> Done:
    """A rejection always says why: the customer is told, and the record must show the reason."""
    text = asked.required("note", "why it is rejected (the note)")
    return store.decide(asked.number, "rejected", by=asked.me, note=text), {"note": text}


@dataclasses.dataclass(frozen=True)
class Action:
    """A form of the ticket page: who may send it, what it does to the store, what the page says after."""

    name: str
    role: Role
    act: Callable[[InboxStore, Asked], Done]
    done: str
    draft_field: str = ""  # the form's text field, given back when the action is refused (none: nothing to give back)


ACTIONS = (
    Action("assign", "operator", assign, "Ticket assigned."),
    Action("reply", "operator", reply, "Reply sent to the customer.", draft_field="text"),
    Action("note", "operator", note, "Note added.", draft_field="text"),
    Action("priority", "operator", prioritise, "Priority changed."),
    Action("approve", "approver", approve, "Approved: the call will be carried out.", draft_field="note"),
    Action("reject", "approver", reject, "Rejected.", draft_field="note"),
)
DONE = {action.name: action.done for action in ACTIONS}


def act_on(request: Request, action: Action, asked: Asked) -> Ticket:
    """The action taken, inside the trail's record of it (refused, untaken, when the trail cannot record it)."""
    with (
        audited(request, f"ticket.{action.name}") as record,
        InboxStore.open(request.app.state.out) as store,
    ):
        ticket, details = action.act(store, asked)
        record.update(ticket=ticket.number, **details)
    return ticket


def endpoint(action: Action) -> Callable[[Request], Any]:
    """The POST endpoint of one action: store change with its audit entry, redirect; a refusal shows the form again."""

    async def act(request: Request) -> Response:
        number = ticket_number(request)
        if number is None:
            return no_ticket(request)
        form = await request.form()
        asked = Asked(number, form, request.state.operator.name, request.app.state.accounts)
        try:
            ticket = await run_in_threadpool(act_on, request, action, asked)
        except TicketNotFound:
            return no_ticket(request)
        except (ValueError, UserError) as exc:  # TicketClosed: decided, perhaps a moment ago by someone else; UserError:
            status = 409 if isinstance(exc, TicketClosed) else 400  # the trail cannot record it, so it is not taken
            return await ticket_view(request, number, status, Problem(action.name, str(exc), asked.draft(action.draft_field)))
        return RedirectResponse(f"/inbox/{ticket.id}?done={action.name}", status_code=303)

    act.__name__ = act.__qualname__ = f"ticket_{action.name}"
    return requires(action.role)(act)


ROUTES: list[Route] = [
    Route("/inbox", inbox, methods=["GET"], name="inbox"),
    Route("/inbox/{ticket_id}", ticket_page, methods=["GET"], name="inbox_ticket"),
    *(
        Route(f"/inbox/{{ticket_id}}/{action.name}", endpoint(action), methods=["POST"], name=f"ticket_{action.name}")
        for action in ACTIONS
    ),
]
