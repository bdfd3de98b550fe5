"""The tester page's rules, through the app's own routes: operators only, no page without --agent, a form post
(no script) plays a turn, and one person cannot reach another's conversation."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from argon2 import PasswordHasher
from starlette.applications import Starlette
from web_support import PASSWORD, csrf, served, sign_in, signed_in

from passhat.customers.human import Control
from passhat.customers.personas import PERSONAS
from passhat.customers.scripted import ScriptedUser
from passhat.domains import load_domain
from passhat.serve.web import trail
from passhat.serve.web.app import create_app as make_app
from passhat.store import ResultStore

JSON = {"Accept": "application/json"}  # as the chat page's script asks
CONTROL_OF: dict[str | None, Control | str] = {"satisfied": "done", "unsatisfied": "give_up", "abandoned": "ask_for_person"}


def create_app(out: Path, **options: object) -> Starlette:
    """The app, its passwords hashed cheaply: these tests are about the tester page, not sign-in's cost."""
    app = make_app(out, **options)  # type: ignore[arg-type]
    app.state.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)
    return app


def test_the_tester_page_needs_an_agent_and_the_operator_role(tmp_path: Path):
    without = create_app(tmp_path)
    with signed_in(without, tmp_path, "operator") as client:
        page = client.get("/tester")
        assert page.status_code == 404 and "passhat serve --agent" in page.text
    app = create_app(tmp_path, agent="reference:perfect")
    with signed_in(app, tmp_path, "viewer") as viewer:
        assert viewer.get("/tester").status_code == 403
        assert 'href="/tester"' not in viewer.get("/runs").text


def test_a_domain_changed_in_the_picker_lists_its_tasks_rather_than_failing(tmp_path: Path):
    app = create_app(tmp_path, agent="reference:perfect")
    with signed_in(app, tmp_path, "operator") as client:
        page = client.get("/tester?domain=payables&task=retail-001&persona=baseline")  # the task still selected
        assert page.status_code == 200 and "pick one of its tasks" in page.text
        assert 'value="pay-001"' in page.text and "Your brief" not in page.text


def test_a_conversation_goes_on_without_scripts_and_is_only_its_persons(tmp_path: Path):
    app = create_app(tmp_path, agent="reference:perfect", idle_timeout=30)
    omar = signed_in(app, tmp_path, "operator", "omar")  # not entered: the server's life is tess's client's
    with signed_in(app, tmp_path, "operator", "tess") as tess:
        brief = tess.get("/tester?domain=retail&task=retail-001&persona=impatient")
        assert "Your brief: retail-001 as impatient" in brief.text and "cancel_order" not in brief.text
        token = csrf(tess)
        started = tess.post(
            "/tester/start", data={"csrf_token": token, "domain": "retail", "task": "retail-001", "persona": "impatient"},
            follow_redirects=False,
        )  # fmt: skip
        chat = started.headers["location"]
        sent = tess.post(f"{chat}/say", data={"csrf_token": token, "text": "Cancel #R3042198 please."}, follow_redirects=False)
        assert (sent.status_code, sent.headers["location"]) == (303, chat)
        for _ in range(200):
            news = tess.get(f"{chat}.json").json()
            if news["your_turn"]:
                break
            time.sleep(0.01)
        assert [m["who"] for m in news["messages"]] == ["customer", "agent"]
        assert "verify your identity" in tess.get(chat).text
        assert omar.get(chat).status_code == 400 and omar.get(f"{chat}.json").status_code == 400
        empty = tess.post(f"{chat}/say", data={"csrf_token": token, "text": " "}, follow_redirects=False)
        assert "the%20message%20is%20empty" in empty.headers["location"]


def news_when(client: httpx.Client, chat: str, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The chat's JSON once ``ready`` says so (asked every 10 ms, for at most 20 s)."""
    for _ in range(2000):
        news = client.get(f"{chat}.json").json()
        if ready(news):
            return news
        time.sleep(0.01)
    raise AssertionError(f"the chat never got there: {news}")


def start_chat(client: httpx.Client, token: str, task: str = "retail-001") -> str:
    """Start ``task`` as the baseline customer from the tester page's form; the chat's address."""
    scenario = {"csrf_token": token, "domain": "retail", "task": task, "persona": "baseline"}
    return client.post("/tester/start", data=scenario, follow_redirects=False).headers["location"]


def trail_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "audit" / "audit.jsonl").read_text().splitlines()]


def test_a_conversation_left_unanswered_past_the_idle_timeout_is_stored_abandoned_not_scored(tmp_path: Path):
    app = create_app(tmp_path, agent="reference:perfect", idle_timeout=0.3)
    with signed_in(app, tmp_path, "operator", "tess") as tess:
        token = csrf(tess)
        chat = start_chat(tess, token)
        said = tess.post(f"{chat}/say", data={"csrf_token": token, "text": "Cancel #R3042198 please."}, headers=JSON)
        assert said.json()["agent_working"] or said.json()["your_turn"]
        news = news_when(tess, chat, lambda n: n["state"] != "talking")  # then the person leaves the chat
        assert (news["state"], news["your_turn"], news["agent_working"]) == ("abandoned", False, False)
        assert [m["who"] for m in news["messages"]] == ["customer", "agent"]  # what was said stays shown
        assert "abandoned (no answer in time): it is stored, not scored" in tess.get(chat).text
        late = tess.post(f"{chat}/say", data={"csrf_token": token, "text": "Sorry, I'm back."}, follow_redirects=False)
        assert "this%20conversation%20is%20over" in late.headers["location"]
    [run] = [p for p in tmp_path.iterdir() if p.name.startswith("human-retail-")]
    with ResultStore.open(run) as store:
        [trial] = store.trials()
    assert (trial.reward, trial.signature) == (None, "infra_error") and "the trial is abandoned" in str(trial.infra_error)
    assert [e["text"] for e in trial.events if e["kind"] == "user"] == ["Cancel #R3042198 please."]
    trail = [(r["action"], r["by"], r.get("state")) for r in trail_of(tmp_path)]
    assert trail[-3:] == [
        ("human_trial_started", "tess", None),
        ("tester.say", "tess", None),
        ("human_trial_stored", "tess", "abandoned"),
    ]


def play(client: httpx.Client, token: str, chat: str, scripted: ScriptedUser) -> list[str]:
    """Answer each agent message over HTTP with what the scripted customer says, until it ends the chat; the words."""
    typed: list[str] = []
    while True:
        news = news_when(client, chat, lambda n: n["your_turn"])
        agent = [m["text"] for m in news["messages"] if m["who"] == "agent"]
        turn = asyncio.run(scripted.respond(agent[-1] if typed else None))
        control = CONTROL_OF.get(turn.stop, "")
        said = client.post(f"{chat}/say", data={"csrf_token": token, "text": turn.text, "control": control}, headers=JSON)
        assert said.status_code == 200 and "problem" not in said.text, said.text
        typed.append(turn.text)
        if turn.stop:
            return typed


def test_two_people_work_the_same_run_at_once_each_in_a_session_of_their_own(tmp_path: Path):
    app = create_app(tmp_path, agent="reference:perfect")
    retail = load_domain("retail")
    names = ["tess", "omar"]
    for name in names:
        app.state.accounts.add(name, "operator", PASSWORD)
    with served(app) as base:
        clients = [httpx.Client(base_url=base, timeout=30) for _ in names]  # a hung server fails the test in 30 s
        for client, name in zip(clients, names, strict=True):
            sign_in(client, name, accounts=app.state.accounts)
        tokens = [csrf(client) for client in clients]
        chats = [start_chat(client, token) for client, token in zip(clients, tokens, strict=True)]
        assert chats[0] != chats[1] and clients[1].get(chats[0]).status_code == 400  # each sees only their own
        scripted = [ScriptedUser(retail, retail.tasks["retail-001"], PERSONAS["baseline"], random.Random(3)) for _ in names]
        with ThreadPoolExecutor(2) as pool:  # both conversations under way together
            typed = list(pool.map(play, clients, tokens, chats, scripted))
        for client, chat in zip(clients, chats, strict=True):
            assert news_when(client, chat, lambda n: n["state"] != "talking")["state"] == "graded"
            client.close()
    [run] = [p for p in tmp_path.iterdir() if p.name.startswith("human-retail-")]
    with ResultStore.open(run) as store:
        trials = sorted(store.trials(), key=lambda t: t.trial)
    assert [(t.task_id, t.trial, t.reward) for t in trials] == [("retail-001", 0, 1), ("retail-001", 1, 1)]
    assert trials[0].seed != trials[1].seed
    started = {r["by"]: r["trial"] for r in trail_of(tmp_path) if r["action"] == "human_trial_started"}
    assert sorted(started.values()) == [0, 1]
    for name, words in zip(names, typed, strict=True):
        mine = [t for t in trials if t.trial == started[name]]
        assert [e["text"] for e in mine[0].events if e["kind"] == "user"] == words
        said = [r for r in trail_of(tmp_path) if r["action"] == "tester.say" and r["by"] == name]
        assert [r["text"] for r in said] == words and {r["trial"] for r in said} == {started[name]}


def test_a_sign_out_waiting_for_the_trail_leaves_the_server_answering(tmp_path: Path):
    """A tester's message holds the trail's lock while the trial (in the event loop) takes the words: whatever else
    waits for that lock must wait outside the loop, or the loop and the message wait for each other for ever."""
    app = create_app(tmp_path, agent="reference:perfect")
    app.state.accounts.add("tess", "operator", PASSWORD)
    with served(app) as base, httpx.Client(base_url=base, timeout=10) as tess, httpx.Client(base_url=base, timeout=10) as other:
        sign_in(tess, "tess", accounts=app.state.accounts)
        token = csrf(tess)
        with ThreadPoolExecutor(1) as pool:
            with trail.recorded(tmp_path, app.state.audit_key, "tester.say", "omar"):  # as omar's message holds it
                leaving = pool.submit(tess.post, "/logout", data={"csrf_token": token})
                time.sleep(0.3)  # the sign-out now waits for the trail
                assert other.get("/login").status_code == 200
            assert leaving.result().status_code == 303
    assert [r["action"] for r in trail_of(tmp_path)][-2:] == ["tester.say", "signed out"]
