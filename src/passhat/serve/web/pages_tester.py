"""The tester page: a person picks a scenario (domain, task, persona), reads the customer's brief and plays the
customer in a chat with the agent `passhat serve --agent` names, ending with done, give up or ask for a person.

Each conversation is one trial of the domain's human run (``passhat.run.human``), judged and stored as any trial;
the page only carries the person's words there and shows what the agent says back. The chat page polls its
session's JSON (the agent's messages appear without a reload, a typing state while the agent works) and sends the
person's words with the page's CSRF token; without JavaScript its forms work too, one page load per message.
Testing an agent is the operator's work, so every route needs the operator role. Every start, message and end is
on the runs folder's audit trail with the person's account. Agent messages are untrusted text: the templates
autoescape them and the script writes them as text only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import anyio.from_thread
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from passhat.customers.brief import render_brief
from passhat.customers.human import CONTROLS, Control, Said
from passhat.customers.personas import PERSONAS
from passhat.domains import domain_names, load_domain
from passhat.errors import UserError
from passhat.run.human import HumanRuns, HumanSession
from passhat.serve.web.security import audited, error_page, render, requires

POLL_MS = 500  # how often the chat page asks for the agent's news
ENDINGS = {  # what the chat says of a conversation stored without a grade
    "abandoned": "The conversation was abandoned (no answer in time): it is stored, not scored.",
    "unjudged": "The conversation could not be judged (the agent's service or passhat failed): it is stored, not scored.",
}
CONTROL_LABELS: dict[Control, str] = {"done": "I'm done", "give_up": "Give up", "ask_for_person": "Ask for a person"}
NO_AGENT = (
    "No agent is under test: start the server with `passhat serve --agent SPEC` (e.g. reference:perfect) to test one as a person."
)


def _runs(request: Request) -> HumanRuns | None:
    return request.app.state.human


@requires("operator")
async def tester(request: Request) -> Response:
    """The scenario picker; with a task chosen, that scenario's brief and the button that starts its conversation."""
    runs = _runs(request)
    if runs is None:
        return error_page(request, 404, NO_AGENT)
    params = request.query_params
    domain_name = params.get("domain") or domain_names()[0]
    if domain_name not in domain_names():
        raise UserError(f"unknown domain {domain_name[:40]!r}; choose from {', '.join(domain_names())}.")
    domain = load_domain(domain_name)
    task_id, persona = params.get("task", ""), params.get("persona", "baseline")
    if persona not in PERSONAS:
        raise UserError(f"unknown persona {persona[:40]!r}; choose from {', '.join(PERSONAS)}.")
    task = domain.tasks.get(task_id)
    # a task of another domain is what the picker sends once the person changed the domain: its tasks are listed
    problem = (
        f"There is no task {task_id[:40]!r} in domain {domain_name!r}: pick one of its tasks." if task_id and not task else ""
    )
    brief = render_brief(domain, task, PERSONAS[persona]) if task else None
    context = {
        "agent": runs.agent, "domains": domain_names(), "domain": domain_name, "tasks": list(domain.tasks.values()),
        "task": task, "personas": list(PERSONAS), "persona": persona, "brief": brief, "idle_timeout": runs.idle_timeout,
        "problem": problem,
    }  # fmt: skip
    return render(request, "tester.html", context)


@requires("operator")
async def start(request: Request) -> Response:
    """Start the chosen scenario's conversation: a new trial of its human run, then its chat page."""
    runs = _runs(request)
    if runs is None:
        return error_page(request, 404, NO_AGENT)
    form = await request.form()
    field = {name: str(form.get(name, "")) for name in ("domain", "task", "persona")}
    session = await runs.start(request.state.operator.name, field["domain"], field["task"], field["persona"])
    return RedirectResponse(f"/tester/session/{session.id}", status_code=303)


@requires("operator")
async def session_page(request: Request) -> Response:
    runs, session = _session(request)
    brief = render_brief(session.domain, session.spec.task, session.spec.persona)
    context = {
        "session": session, "brief": brief, "messages": messages(session), "controls": CONTROL_LABELS,
        "poll_ms": POLL_MS, "endings": ENDINGS, "agent": runs.agent, "problem": request.query_params.get("problem", ""),
    }  # fmt: skip
    return render(request, "tester_session.html", context)


@requires("operator")
async def session_json(request: Request) -> Response:
    _, session = _session(request)
    return JSONResponse(news(session))


@requires("operator")
async def say(request: Request) -> Response:
    """The person's message or control, carried to the trial and recorded on the audit trail; JSON for the page's
    script (Accept: application/json), else a redirect back to the chat."""
    _, session = _session(request)
    form = await request.form()
    text, control = str(form.get("text", "")), str(form.get("control", "")) or None
    wants_json = "application/json" in request.headers.get("accept", "")
    if control is not None and control not in CONTROLS:
        raise UserError(f"unknown control {control[:40]!r}; choose from {', '.join(CONTROLS)}.")
    try:
        await run_in_threadpool(said, request, session, text, control)
    except UserError as exc:
        if wants_json:
            return JSONResponse({**news(session), "problem": str(exc)}, status_code=409)
        return RedirectResponse(f"/tester/session/{session.id}?problem={quote(str(exc)[:300], safe='')}", status_code=303)
    if wants_json:
        return JSONResponse(news(session))
    return RedirectResponse(f"/tester/session/{session.id}", status_code=303)


def said(request: Request, session: HumanSession, text: str, control: str | None) -> None:
    """The person's words given to the trial inside the trail's record of them (refused, unsaid, when the trail cannot
    record them). Blocking: called from a worker thread, it hands the words to the server's event loop, the trial's."""
    spec = session.spec
    scenario = {"run": session.run_id, "task": spec.task.id, "persona": spec.persona.name, "trial": spec.trial}
    with audited(request, "tester.say", **scenario, control=control) as record:
        turn = anyio.from_thread.run_sync(session.customer.say, text, control)
        record["text"] = turn.text


def _session(request: Request) -> tuple[HumanRuns, HumanSession]:
    """The signed-in person's session the address names; UserError when there is none or no agent is served."""
    runs = _runs(request)
    if runs is None:
        raise UserError(NO_AGENT)
    return runs, runs.session(request.path_params["session_id"], request.state.operator.name)


def messages(session: HumanSession) -> list[Said]:
    """The conversation as the person sees it: as it goes, what the customer was given and said; once stored, the
    stored trial's own messages (a hand-off's last agent message too)."""
    if session.record is None:
        return list(session.customer.transcript)
    shown = {"user": "customer", "agent": "agent"}
    return [Said(shown[e["kind"]], str(e.get("text") or "")) for e in session.record.events if e["kind"] in shown]  # type: ignore[arg-type]


def news(session: HumanSession) -> dict[str, Any]:
    """What the chat page's script shows: the state (talking, graded, abandoned, unjudged; the grade itself is not shown, so
    that it does not teach a person how to play the next scenario), whether the agent is working or it is the
    person's turn, and the messages."""
    return {
        "state": session.state,
        "agent_working": session.customer.agent_working,
        "your_turn": session.customer.your_turn,
        "messages": [{"who": m.who, "text": m.text} for m in messages(session)],
    }


ROUTES: list[Route] = [
    Route("/tester", tester, methods=["GET"], name="tester"),
    Route("/tester/start", start, methods=["POST"], name="tester_start"),
    Route("/tester/session/{session_id}.json", session_json, methods=["GET"], name="tester_session_json"),
    Route("/tester/session/{session_id}", session_page, methods=["GET"], name="tester_session"),
    Route("/tester/session/{session_id}/say", say, methods=["POST"], name="tester_say"),
]
