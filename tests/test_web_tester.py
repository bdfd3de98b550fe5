"""The tester page's rules, through the app's own routes: operators only, no page without --agent, a form post
(no script) plays a turn, and one person cannot reach another's conversation."""

from __future__ import annotations

import time
from pathlib import Path

from argon2 import PasswordHasher
from starlette.applications import Starlette
from web_support import csrf, signed_in

from passhat.serve.web.app import create_app as make_app


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
