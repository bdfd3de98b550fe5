"""The tester page in a real browser, on every built-in domain against reference:perfect and reference:hasty: a
person signs in to `passhat serve --agent AGENT`, picks the domain and a task, reads the brief and plays the whole
conversation in the chat (the agent's messages arriving without a reload), ends it with a control, and the stored
trial's grade equals what the same words earn replayed (perfect passes, hasty does not).
`PASSHAT_UPDATE_SCREENSHOTS=1` retakes docs/images/tester.png, retail's chat with the perfect agent as it ends;
without it the file is only checked.

The person types what the scripted customer would say to each agent message; the replay runs the stored customer
words against the same agent and seed. One browser serves the module and one server each agent, signed in once:
a case costs its conversation only. Debian's Chromium is driven by Playwright, as in the dashboard's browser tests;
the module is skipped without it."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pyotp
import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, expect, sync_playwright
from web_support import PASSWORD, serving

from passhat.agents import resolve_agent
from passhat.customers.human import ReplayedCustomer
from passhat.customers.personas import PERSONAS
from passhat.customers.scripted import ScriptedUser
from passhat.domains import domain_names, load_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial
from passhat.serve.web.accounts import Accounts
from passhat.store import ResultStore, TrialRecord
from passhat.trajectory import Event

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
AGENTS = ["reference:perfect", "reference:hasty"]
# per domain a task the perfect agent passes and the hasty one fails, each a conversation of three to five turns
TASKS = {"retail": "retail-001", "payables": "pay-001", "helpdesk": "hd-001", "benefits": "benefits-006", "intake": "intake-004"}
CONTROLS = {"satisfied": "I'm done", "unsatisfied": "Give up", "abandoned": "Ask for a person"}
SHOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "tester.png"  # docs/serve.md shows it
UPDATE_SCREENSHOTS = os.environ.get("PASSHAT_UPDATE_SCREENSHOTS") == "1"  # retake it; without it only checked
FIRST_GRADE_MS = 30_000
T = TypeVar("T")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed (make test installs it)")


@dataclasses.dataclass
class Site:
    """One `passhat serve --agent` and the browser tab signed in to it, with the errors its scripts raised."""

    agent: str
    url: str
    out: Path
    log: Path
    page: Page
    errors: list[str]


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


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def site(request: pytest.FixtureRequest, browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The agent's server over a runs folder of its own, and a tab signed in to it as the operator tess."""
    agent: str = request.param
    folder = tmp_path_factory.mktemp(agent.replace(":", "-"))
    accounts = Accounts(folder / "runs")
    accounts.hasher = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)  # the server checks it as cheaply
    secret = accounts.add("tess", "operator", PASSWORD).totp_secret
    accounts.confirm_enrolment("tess")  # as if the authenticator app had been set up at an earlier sign-in
    with serving(folder / "runs", folder / "serve.log", "--agent", agent) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        sign_in(page, url, "tess", secret)
        yield Site(agent, url, folder / "runs", folder / "serve.log", page, errors)
        context.close()


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


def stored_trial(site: Site, domain: str) -> TrialRecord:
    """The one trial of the domain's human run (the server holds it open; a reader needs no lock)."""
    [run] = [p for p in site.out.iterdir() if p.name.startswith(f"human-{domain}-")]
    with ResultStore.open(run) as store:
        assert store.config["user"] == "human" and store.config["agent"] == site.agent
        [trial] = store.trials()
    return trial


def test_every_built_in_domain_is_played():
    assert sorted(TASKS) == sorted(domain_names())


@pytest.mark.parametrize("site", AGENTS, indirect=True)
@pytest.mark.parametrize("domain_name", TASKS)
def test_a_person_plays_a_whole_trial_in_the_browser_and_its_stored_grade_equals_the_replay(site: Site, domain_name: str):
    domain = load_domain(domain_name)
    task, persona, page = domain.tasks[TASKS[domain_name]], PERSONAS["baseline"], site.page
    page.get_by_role("link", name="Tester", exact=True).click()
    expect(page.locator("h1")).to_have_text("Play a customer")
    page.get_by_label("Domain").select_option(domain_name)
    page.get_by_role("button", name="Show the brief").click()  # lists the domain's tasks
    page.get_by_label("Task").select_option(task.id)
    page.get_by_role("button", name="Show the brief").click()
    expect(page.locator("[data-brief]")).to_contain_text(task.goals[0].request[0])
    page.get_by_role("button", name="Start the conversation").click()
    expect(page.locator("h1")).to_have_text(f"{task.id} as baseline")
    page.evaluate("window.notReloaded = true")
    typed = play(page, ScriptedUser(domain, task, persona, random.Random(3)))
    # a server's first trial pays the graders' first use as it ends (seconds, on a loaded machine)
    expect(page.get_by_role("status")).to_contain_text("The conversation is over and stored", timeout=FIRST_GRADE_MS)
    shows_the_docs = (domain_name, site.agent) == ("retail", "reference:perfect")
    if shows_the_docs and UPDATE_SCREENSHOTS:
        page.screenshot(path=SHOT, full_page=True)
    assert page.evaluate("window.notReloaded") is True  # every message came without a page load
    assert site.errors == []
    assert site.log.read_text().partition("\n")[2] == ""  # the server logged nothing beyond its address

    trial = stored_trial(site, domain_name)
    assert [e["text"] for e in trial.events if e["kind"] == "user"] == typed
    passes = int(site.agent == "reference:perfect")
    assert (trial.task_id, trial.persona, trial.trial, trial.reward) == (task.id, "baseline", 0, passes), trial.grade
    spec = TrialSpec(task, persona, 0, trial_seed(0, task.id, persona.name, 0))
    replayed = ReplayedCustomer.from_events([Event.from_dict(e) for e in trial.events])
    assert in_thread(run_trial(domain, spec, resolve_agent(site.agent), replayed)).grade.to_dict() == trial.grade
    trail = [line for line in (site.out / "audit" / "audit.jsonl").read_text().splitlines() if f'"{task.id}"' in line]
    assert sum('"action": "tester.say"' in line for line in trail) == len(typed)
    if shows_the_docs:
        assert SHOT.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and SHOT.stat().st_size < 300_000
