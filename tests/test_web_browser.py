"""`passhat serve` in a real browser: Debian's Chromium, driven by Playwright, signs in with a password and a TOTP
code, reads a run down to a failing transcript, approves a ticket and finds the approval in the audit trail; a new
account enrols its authenticator app from the QR code page; a viewer is shown no approve button, and an approval
forged from the page is refused.

The server is the real command (`passhat serve --port 0`) over a runs folder made by `passhat run` and
`passhat accounts add`; tickets are filed straight into its inbox, as a run with `--operator inbox` files them. Every
page a test shows is checked as a person would notice a broken one: the heading they expect, something drawn
under the top bar (the screenshot is not blank), no error in the browser's console (a failed load, an uncaught
exception, a Content-Security-Policy refusal) and none in the server's log.

Nothing is downloaded: Playwright drives the system's /usr/bin/chromium (`make test` installs Debian's package),
and the module is skipped without it. One browser serves the module; each test's person has a context (cookies)
of their own, and an account of their own, so that no TOTP code is ever entered twice.

`PASSHAT_UPDATE_SCREENSHOTS=1` retakes the README's screenshot (docs/images/dashboard.png); without it the
committed file is only checked."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyotp
import pytest
import test_web_queries as synthetic
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, ViewportSize, expect, sync_playwright
from web_support import PASSWORD, serving

from passhat.guard.inbox import InboxStore, Ticket
from passhat.serve.web.accounts import Accounts, Role
from passhat.store import ResultStore, TrialRecord

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
RUN_ID = "demo"
TASKS = "retail-001,retail-002,retail-016"
APPROVERS_TICKET, VIEWERS_TICKET = "retail-016/baseline/1", "retail-016/incoherent/0"  # the conversations they came from
TICKETS = {APPROVERS_TICKET: "#W2378156", VIEWERS_TICKET: "#W4817420", "retail-002/baseline/1": "#W6390527"}  # and the orders
README_SHOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "dashboard.png"
UPDATE_SCREENSHOTS = os.environ.get("PASSHAT_UPDATE_SCREENSHOTS") == "1"
MAX_README_SHOT = 300_000  # bytes
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_INK = 0.01  # share of the pixels under the top bar that differ from the page's background; a blank page has none

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="chromium is not installed (make test installs Debian's chromium package)"
)


def passhat(*args: str, stdin: str | None = None) -> str:
    """What the command prints; it must succeed. A process of its own, as a person's terminal runs it (and since
    Playwright's synchronous API keeps an event loop running in this one, which `passhat run` cannot share)."""
    done = subprocess.run([sys.executable, "-m", "passhat.cli", *args], input=stdin, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@dataclass(frozen=True)
class Site:
    """A running `passhat serve`: its address, its runs folder, and the file its stderr goes to."""

    url: str
    out: Path
    log: Path

    def server_errors(self) -> str:
        """What the server wrote besides the line with its address (a 500's traceback, a warning)."""
        return self.log.read_text().partition("\n")[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A runs folder with one small run of the flaky reference agent (it fails some trials) and a few tickets held
    by the human gate, served."""
    folder = tmp_path_factory.mktemp("served")
    out = folder / "runs"
    passhat(
        *("run", "--out", str(out), "--run-id", RUN_ID, "--tasks", TASKS, "--personas", "baseline,incoherent"),
        *("--trials", "2", "--agent", "reference:flaky", "--workers", "1"),
    )
    for conversation, order in TICKETS.items():
        file_ticket(out, order, conversation)
    with serving(out, folder / "serve.log") as url:
        yield Site(url, out, folder / "serve.log")


def file_ticket(out: Path, order: str, conversation: str) -> Ticket:
    """A cancellation the gate held back for a person, as a run files it: the customer's words, what the agent read."""
    with InboxStore.open(out) as store:
        return store.file(
            source="run", origin=RUN_ID, conversation=conversation, domain="retail", tool="cancel_order",
            args={"order_id": order, "reason": "ordered by mistake"}, rule="refund-review",
            reason="a refund of $312.40 is over the $250 that needs a person's approval", priority="high", note="",
            request=[f"Please cancel order {order}, I ordered it by mistake."],
            evidence=[{"tool": "get_order_details", "args": {"order_id": order}, "result": {"status": "pending", "total": 312.4}}],
        )  # fmt: skip


def ticket_of(out: Path, conversation: str) -> Ticket:
    with InboxStore.open(out) as store:
        [ticket] = store.page(search=conversation)[0]
        return ticket


def add_account(site: Site, name: str, role: Role, *, enrolled: bool) -> str:
    """An account made with `passhat accounts add` while the server runs; returns the two-factor secret it prints.
    ``enrolled``: as if its authenticator app had been set up at an earlier sign-in."""
    printed = passhat("accounts", "add", name, "--role", role, "--password-stdin", "--out", str(site.out), stdin=PASSWORD + "\n")
    secret = re.search(r"authenticator app: ([A-Z2-7]+)", printed)
    assert secret, printed
    if enrolled:
        Accounts(site.out).confirm_enrolment(name)
    return secret[1]


# --- what a person would notice on each page -----------------------------------------------------------------------------


def pixels(png: bytes) -> np.ndarray:
    """The RGB(A) pixels of an 8-bit PNG (what Chromium's screenshots are), as a height × width × channels array."""
    assert png.startswith(PNG_SIGNATURE)
    pos, data = len(PNG_SIGNATURE), b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        body = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), "not an 8-bit RGB or RGBA PNG"
        elif kind == b"IDAT":
            data += body
        pos += 12 + length
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw, above, rows = zlib.decompress(data), bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        rows.append(above := unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), above, channels))
    return np.frombuffer(b"".join(rows), np.uint8).reshape(height, width, channels)


def unfilter(kind: int, line: bytearray, above: bytearray, step: int) -> bytearray:
    """One scanline of PNG data as pixels again, given the line above (the five filters of the PNG standard)."""
    if kind == 2:
        return bytearray((x + b) & 255 for x, b in zip(line, above, strict=True))
    for i in range(len(line) if kind in (1, 3, 4) else 0):
        a = line[i - step] if i >= step else 0
        if kind == 1:
            line[i] = (line[i] + a) & 255
        elif kind == 3:
            line[i] = (line[i] + (a + above[i]) // 2) & 255
        else:
            b, c = above[i], above[i - step] if i >= step else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    return line


def ink(png: bytes, below: int) -> float:
    """The share of the pixels from row ``below`` down that are not the commonest colour there (the background)."""
    image = pixels(png)[below:, :, :3].reshape(-1, 3).astype(np.uint32)
    colours = image[:, 0] << 16 | image[:, 1] << 8 | image[:, 2]
    return 1 - np.unique(colours, return_counts=True)[1].max() / len(colours) if len(colours) else 0.0


class Tab:
    """One person's browser tab on the site, with every error the browser logs kept: a failed load (a 4xx or 5xx
    answer, the page's own included), an uncaught exception, and Chromium's Content-Security-Policy refusals,
    which it logs as console errors."""

    def __init__(self, context: BrowserContext, site: Site, shots: Path):
        self.page, self.site, self.shots = context.new_page(), site, shots
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"{self.page.url}: uncaught {exc}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{self.page.url}: {message.text} ({message.location.get('url')})")

    def shows(self, heading: str | re.Pattern[str]) -> Page:
        """Check the page now shown: the heading the person expects (waited for, so a click's navigation lands
        first), a screenshot that is not blank under the top bar, no error in the browser or the server."""
        expect(self.page.locator("h1").first).to_contain_text(heading)
        self.page.wait_for_load_state("load")
        shot = self.shots / f"{len(list(self.shots.iterdir())):02d}.png"
        assert self.ink(shot) > MIN_INK, f"{self.page.url} looks blank: {shot}"
        assert self.errors == []
        assert self.site.server_errors() == ""
        return self.page

    def ink(self, shot: Path) -> float:
        """Screenshot the tab into ``shot``; how much is drawn under the top bar."""
        self.page.screenshot(path=shot)
        top = self.page.locator("header").bounding_box()
        assert top is not None
        return ink(shot.read_bytes(), below=round(top["y"] + top["height"]))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def tab(browser: Browser, site: Site, tmp_path: Path) -> Iterator[Tab]:
    context = browser.new_context(viewport=VIEWPORT)
    (tmp_path / "shots").mkdir()
    yield Tab(context, site, tmp_path / "shots")
    context.close()


def enter_password(tab: Tab, name: str) -> Page:
    """Open the site's address and send the sign-in form, as a person does."""
    page = tab.page
    page.goto(tab.site.url)
    tab.shows("Sign in")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Continue").click()
    return page


def sign_in(tab: Tab, name: str, secret: str) -> Page:
    """Sign in with the password, then the code the authenticator app shows now; lands on the runs list."""
    page = enter_password(tab, name)
    tab.shows("Two-factor code")
    page.get_by_label("6-digit code").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(tab.site.url)
    tab.shows("Runs")
    expect(page.locator("header")).to_contain_text(name)
    return page


def first_failure(out: Path) -> TrialRecord:
    with ResultStore.open(out / RUN_ID) as store:
        key = next((t.key for t in store.trial_rows() if t.reward == 0), None)
        assert key is not None, f"the flaky agent failed no trial of {TASKS}: pick tasks it fails"
        return next(store.records([key]))


# --- the tests ------------------------------------------------------------------------------------------------------------


@needs_chromium
def test_an_approver_reads_a_failing_transcript_approves_a_ticket_and_finds_the_approval_in_the_audit_trail(site, tab):
    page = sign_in(tab, "ann", add_account(site, "ann", "approver", enrolled=True))
    page.get_by_role("link", name=RUN_ID, exact=True).click()
    tab.shows(f"passhat run {RUN_ID}")
    page.get_by_role("link", name="Scenario grid").click()
    tab.shows(f"Scenario grid of run {RUN_ID}")

    failed = first_failure(site.out)
    page.locator(f'td[data-task="{failed.task_id}"][data-persona="{failed.persona}"] a').click()
    tab.shows(f"Trials of run {RUN_ID}")
    page.get_by_role("link", name=str(failed.trial), exact=True).click()
    tab.shows(f"{failed.task_id} / {failed.persona} / trial {failed.trial}")
    expect(page.locator("[data-outcome]")).to_have_text(f"failed: {failed.signature}")
    expect(page.locator("[data-signature]")).to_have_text(str(failed.signature))
    customer = [e["text"] for e in failed.events if e["kind"] == "user"]
    expect(page.locator(".dash-customer .dash-text")).to_have_text(customer)
    expect(page.locator(".dash-agent")).to_have_count(sum(e["kind"] == "agent" for e in failed.events))

    ticket = ticket_of(site.out, APPROVERS_TICKET)
    page.get_by_role("link", name="Inbox", exact=True).click()
    tab.shows("Inbox")
    page.get_by_role("link", name=ticket.number, exact=True).click()
    tab.shows(f"{ticket.number}: cancel_order open")
    page.get_by_label("Note (optional)").fill("Checked the order: pending, the customer asked twice.")
    page.get_by_role("button", name="Approve cancel_order").click()
    tab.shows(f"{ticket.number}: cancel_order approved")
    expect(page.get_by_role("status")).to_have_text("Approved: the call will be carried out.")
    decided = ticket_of(site.out, APPROVERS_TICKET)
    assert (decided.status, decided.decided_by) == ("approved", "ann")

    page.get_by_role("link", name="Audit", exact=True).click()
    tab.shows("Audit trail")
    expect(page.get_by_role("status")).to_contain_text("Intact")
    approval = page.locator("tbody tr", has_text="ticket.approve")
    expect(approval).to_have_count(1)
    details = re.compile(re.escape(f'"ticket": "{ticket.number}"'))
    expect(approval.locator("td")).to_have_text([re.compile(r"^\d+$"), re.compile(r"^\d{4}-"), "ann", "ticket.approve", details])


@needs_chromium
def test_a_first_sign_in_enrols_the_authenticator_app_from_the_qr_code_and_the_secret_shown(site, tab):
    add_account(site, "nia", "operator", enrolled=False)
    page = enter_password(tab, "nia")
    tab.shows("Set up two-factor sign-in")
    expect(page.locator(".qr svg")).to_be_visible()
    secret = page.locator(".secret").inner_text().strip()
    page.get_by_label("The 6-digit code your app shows now").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Confirm and sign in").click()
    expect(page).to_have_url(site.url)
    tab.shows("Runs")
    expect(page.locator("header")).to_contain_text("nia")
    assert Accounts(site.out).require("nia").enrolled


@needs_chromium
def test_a_viewer_is_shown_no_approve_button_and_an_approval_forged_from_the_page_is_refused(site, tab):
    page = sign_in(tab, "vic", add_account(site, "vic", "viewer", enrolled=True))
    ticket = ticket_of(site.out, VIEWERS_TICKET)
    page.get_by_role("link", name="Inbox", exact=True).click()
    tab.shows("Inbox")
    page.get_by_role("link", name=ticket.number, exact=True).click()
    tab.shows(f"{ticket.number}: cancel_order open")
    expect(page.get_by_role("button", name=re.compile("approve", re.IGNORECASE))).to_have_count(0)
    expect(page.locator("form[action$='/approve']")).to_have_count(0)

    refused = page.evaluate(
        """async (path) => {
            const token = document.querySelector('meta[name="csrf-token"]').content;
            const answer = await fetch(path, {method: "POST", body: new URLSearchParams({csrf_token: token, note: "ok"})});
            return {status: answer.status, text: await answer.text()};
        }""",
        f"/inbox/{ticket.id}/approve",
    )
    assert refused["status"] == 403 and "This needs the approver role" in refused["text"]  # the role, not the token
    assert len(tab.errors) == 1 and "403 (Forbidden)" in tab.errors[0]  # the browser logs the refusal, nothing else
    tab.errors.clear()
    page.reload()
    tab.shows(f"{ticket.number}: cancel_order open")
    assert ticket_of(site.out, VIEWERS_TICKET).status == "open"


@needs_chromium
def test_the_page_checks_see_a_content_security_policy_refusal_and_a_blank_page(site, tab):
    page = tab.page
    page.goto(site.url)
    tab.shows("Sign in")
    with page.expect_console_message(lambda message: message.type == "error"):
        page.evaluate("document.head.insertAdjacentHTML('beforeend', '<style>main { display: none }</style>')")
    assert len(tab.errors) == 1 and "Content Security Policy" in tab.errors[0]
    page.evaluate("document.querySelector('main').replaceChildren()")
    assert tab.ink(tab.shots / "emptied.png") < MIN_INK


# --- the README's screenshot ---------------------------------------------------------------------------------------------


@needs_chromium
@pytest.mark.skipif(not UPDATE_SCREENSHOTS, reason="PASSHAT_UPDATE_SCREENSHOTS=1 retakes the README's screenshot")
def test_the_readme_screenshot_is_retaken_from_the_run_page(site, tab):
    passhat(
        *("run", "--out", str(site.out), "--run-id", "retail-flaky", "--personas", "all", "--trials", "8"),
        *("--agent", "reference:flaky", "--workers", "1"),
    )
    page = sign_in(tab, "sam", add_account(site, "sam", "approver", enrolled=True))
    page.get_by_role("link", name="retail-flaky", exact=True).click()
    tab.shows("passhat run retail-flaky")
    README_SHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=README_SHOT)


def test_the_readme_screenshot_is_a_small_png_of_the_dashboard():
    png = README_SHOT.read_bytes()
    assert png.startswith(PNG_SIGNATURE) and png[12:16] == b"IHDR"
    assert struct.unpack(">II", png[16:24]) == (VIEWPORT["width"], VIEWPORT["height"])
    assert len(png) < MAX_README_SHOT


WORD_BROKEN_ACROSS_LINES = """() => {
    const broken = [];
    for (const cell of document.querySelectorAll(".inbox-ticket td, .inbox-ticket pre, .inbox-ticket dd")) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const match of node.data.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
                if (lines.size > 1) broken.push(match[0]);
            }
        }
    }
    return broken;
}"""


@needs_chromium
def test_at_1366_px_a_tickets_evidence_breaks_no_word_in_the_middle(site, tab):
    """Evidence tables beside the Decide panel were squeezed until words broke mid-token ("item_i d", "274. 5")."""
    items = [
        {"item_id": f"83109260{n}3", "product_id": f"70417283{n}1", "name": "Water Bottle", "price": 274.5 + n,
         "options": {"capacity": "750ml", "material": "stainless steel", "color": "forest green"}, "status": "pending"}
        for n in range(4)
    ]  # fmt: skip
    with InboxStore.open(site.out) as store:
        ticket = store.file(
            source="run", origin=RUN_ID, conversation="retail-001/incoherent/1", domain="retail", tool="cancel_order",
            args={"order_id": "#W9999001", "reason": "ordered by mistake"}, rule="refund-review",
            reason="a refund of $1,109.99 is over the $250 that needs a person's approval", priority="high", note="",
            request=["Please cancel order #W9999001."],
            evidence=[{"tool": "get_order_details", "args": {"order_id": "#W9999001"}, "result": {"items": items}}],
        )  # fmt: skip
    page = sign_in(tab, "wes", add_account(site, "wes", "viewer", enrolled=True))
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site.url}inbox/{ticket.id}")
    tab.shows(f"{ticket.number}: cancel_order open")
    assert page.evaluate(WORD_BROKEN_ACROSS_LINES) == []


INTERVALS_OVER_TWO_LINES = """() => Array.from(document.querySelectorAll("td.num")).filter(cell => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    return new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top))).size > 1;
}).map(cell => cell.textContent.trim())"""


@needs_chromium
def test_at_1366_px_the_runs_list_keeps_each_interval_on_one_line_beside_a_long_domain_path(site, tab):
    """A run of a domain folder lists the folder's path: the intervals beside it wrapped ("0.950 [0.937," / "0.958]")."""
    path = "/home/someone/projects/our-support-agent-evaluations/domains/shop2-with-phone-changes"
    trials = [
        synthetic.trial(t, p, i, "fail" if i == 0 else "pass")
        for t in synthetic.TASKS
        for p in synthetic.PERSONAS
        for i in range(4)
    ]
    synthetic.synthetic_run(site.out, "folder-domain", trials, domain=path)
    page = sign_in(tab, "lou", add_account(site, "lou", "viewer", enrolled=True))
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site.url}runs")
    tab.shows("Runs")
    expect(page.locator("tr[data-run=folder-domain]")).to_contain_text(path)
    assert page.evaluate(INTERVALS_OVER_TWO_LINES) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366, "the list is wider than the screen"
