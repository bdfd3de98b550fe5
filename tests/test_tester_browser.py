"""The tester page in a real browser: a person signs in to `passhat serve --agent reference:perfect`, picks a
scenario, reads its brief and plays the whole conversation in the chat (the agent's messages arriving without a
reload), ends it with "I'm done", and the stored trial's grade equals what the same words earn replayed.
`PASSHAT_UPDATE_SCREENSHOTS=1` retakes docs/images/tester.png, the chat as it ends; without it the file is only checked.

The person types what the scripted customer would say to each agent message, so the conversation is one the
graders can pass; the replay runs the stored customer words against the same agent and seed. Debian's Chromium is
driven by Playwright, as in the dashboard's browser tests; the module is skipped without it."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pyotp
import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Page, expect, sync_playwright
from web_support import PASSWORD, serving

from passhat.agents import resolve_agent
from passhat.customers.human import ReplayedCustomer
from passhat.customers.personas import PERSONAS
from passhat.customers.scripted import ScriptedUser
from passhat.domains import load_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.serve.web.accounts import Accounts
from passhat.store import ResultStore, TrialRecord
from passhat.trajectory import Event

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
AGENT = "reference:perfect"
CONTROLS = {"satisfied": "I'm done", "unsatisfied": "Give up", "abandoned": "Ask for a person"}
SHOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "tester.png"  # docs/serve.md shows it
UPDATE_SCREENSHOTS = os.environ.get("PASSHAT_UPDATE_SCREENSHOTS") == "1"  # retake it; without it only checked
T = TypeVar("T")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed (make test installs it)")


def in_thread(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine run to its end in an event loop of its own (Playwright's keeps this thread's loop busy)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def sign_in(page: Page, url: str, name: str, secret: str) -> None:
    page.goto(url)
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("6-digit code").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("header")).to_contain_text(name)


def play(page: Page, scripted: ScriptedUser) -> list[str]:
    """Type what the scripted customer says to each agent message until it ends the conversation; the words typed."""
    typed: list[str] = []
    agent = page.locator(".tester-agent .tester-text")
    while True:
        seen = agent.count()
        turn = in_thread(scripted.respond(agent.nth(seen - 1).text_content() if typed else None))
        page.get_by_label("Your message").fill(turn.text)
        page.get_by_role("button", name=CONTROLS[turn.stop] if turn.stop else "Send", exact=True).click()
        typed.append(turn.text)
        if turn.stop:
            return typed
        expect(agent).to_have_count(seen + 1)  # the agent's answer, drawn by the page's script
        expect(page.locator("[data-typing]")).to_be_hidden()


def stored_trial(out: Path) -> TrialRecord:
    [run] = [p for p in out.iterdir() if p.name.startswith("human-retail-")]
    with ResultStore.open(run) as store:
        assert store.config["user"] == "human" and store.config["agent"] == AGENT
        [trial] = store.trials()
    return trial


def test_a_person_plays_a_whole_trial_in_the_browser_and_its_stored_grade_equals_the_replay(tmp_path: Path):
    out = tmp_path / "runs"
    accounts = Accounts(out)
    accounts.hasher = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)  # the server checks it as cheaply
    secret = accounts.add("tess", "operator", PASSWORD).totp_secret
    accounts.confirm_enrolment("tess")  # as if the authenticator app had been set up at an earlier sign-in
    retail = load_domain("retail")
    task, persona = retail.tasks["retail-001"], PERSONAS["baseline"]
    errors: list[str] = []
    with serving(out, tmp_path / "serve.log", "--agent", AGENT) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        sign_in(page, url, "tess", secret)
        page.get_by_role("link", name="Tester", exact=True).click()
        expect(page.locator("h1")).to_have_text("Play a customer")
        page.get_by_label("Task").select_option(task.id)
        page.get_by_role("button", name="Show the brief").click()
        expect(page.locator("[data-brief]")).to_contain_text(task.goals[0].request[0])
        page.get_by_role("button", name="Start the conversation").click()
        expect(page.locator("h1")).to_have_text(f"{task.id} as baseline")
        page.evaluate("window.notReloaded = true")
        typed = play(page, ScriptedUser(retail, task, persona, random.Random(3)))
        expect(page.get_by_role("status")).to_contain_text("The conversation is over and stored")
        if UPDATE_SCREENSHOTS:
            page.screenshot(path=SHOT, full_page=True)
        assert page.evaluate("window.notReloaded") is True  # every message came without a page load
        browser.close()
    assert errors == []
    assert SHOT.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and SHOT.stat().st_size < 300_000
    assert (tmp_path / "serve.log").read_text().partition("\n")[2] == ""

    trial = stored_trial(out)
    assert [e["text"] for e in trial.events if e["kind"] == "user"] == typed
    assert (trial.task_id, trial.persona, trial.trial, trial.reward) == (task.id, "baseline", 0, 1), trial.grade
    spec = TrialSpec(task, persona, 0, trial_seed(0, task.id, persona.name, 0))
    replayed = ReplayedCustomer.from_events([Event.from_dict(e) for e in trial.events])
    out_replayed = in_thread(run_trial(retail, spec, resolve_agent(AGENT), replayed))
    assert out_replayed.grade.to_dict() == trial.grade
    trail = (out / "audit" / "audit.jsonl").read_text()
    assert trail.count('"action": "tester.say"') == len(typed) and '"action": "human_trial_stored"' in trail
