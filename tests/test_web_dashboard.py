"""The dashboard pages of `passhat serve`, read by a signed-in viewer: each page shows what the store and the
commands say (`passhat report`, `traffic` and `compare` give the figures a page must equal), pages are distinct,
text from transcripts is escaped, and an address that names no run or trial is a 404 page, never a 500.

One runs folder is built per module: two runs of the reference agents on a few retail tasks (flaky: failures with
backend differences; perfect: the same scenarios), and synthetic stores (a hostile transcript, a run of 60 trials
left unfinished, a file that is no store)."""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from markupsafe import escape
from starlette.testclient import TestClient
from test_store import damaged_run
from test_web_queries import PERSONAS, TASKS, synthetic_run, trial
from web_support import make_app, signed_in

from passhat.cli import main
from passhat.metrics.summary import scenario_counts
from passhat.report.numbers import num
from passhat.run.runner import execute
from passhat.run_config import RunConfig
from passhat.serve.web import pages_runs
from passhat.serve.web.queries import LIVE_RECOMPUTE_S, RunCache
from passhat.store import ResultStore, TrialRecord

RETAIL_TASKS = ["retail-001", "retail-002", "retail-016", "retail-020"]
SCRIPT = "<script>alert('owned')</script>"
HOSTILE_TASK = "t<i>/1"  # markup to escape, and a slash the trial's address must carry


def reference_run(out: Path, run_id: str, agent: str) -> None:
    config = RunConfig(personas=["baseline", "incoherent"], tasks=RETAIL_TASKS, trials=3, agent=agent)
    with ResultStore.create(out / run_id, run_id, config.model_dump()) as store:
        asyncio.run(execute(config, store, 4))


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    reference_run(folder, "flaky", "reference:flaky")
    reference_run(folder, "perfect", "reference:perfect")
    hostile = [trial(HOSTILE_TASK, "baseline", 0, "fail", text=SCRIPT), trial(HOSTILE_TASK, "baseline", 1, text=SCRIPT)]
    synthetic_run(folder, "hostile", hostile, tasks=[HOSTILE_TASK], personas=["baseline"], planned=2)
    synthetic_run(
        folder,
        "many",
        [trial(t, p, i, "fail" if i % 3 else "pass") for t in TASKS for p in PERSONAS for i in range(10)],
        planned=12,
    )
    (folder / "junk").mkdir()
    (folder / "junk" / "results.sqlite").write_bytes(b"no database here " * 64)
    return folder


@pytest.fixture(scope="module")
def client(out: Path) -> TestClient:
    return signed_in(make_app(out), out, "viewer")


def cli_json(out: Path, *args: str) -> dict[str, Any]:
    """What a command writes with --json."""
    path = out.parent / f"{out.name}-{abs(hash(args))}.json"
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--json", str(path)])
    assert path.is_file(), result.output
    return json.loads(path.read_text())


def text(fragment: str) -> str:
    """A piece of a page as a reader sees it: tags dropped, entities read, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def row(page: str, run_id: str) -> str:
    match = re.search(rf'<tr[^>]*data-run="{re.escape(run_id)}">(.*?)</tr>', page, re.S)
    assert match, f"no row for {run_id}"
    return text(match.group(1))


def shown(value: float, ci: list[float]) -> str:
    return f"{num(value)} [{num(ci[0])}, {num(ci[1])}]"


def trial_links(page: str) -> list[str]:
    return sorted(set(re.findall(r'href="(/runs/[^"]+/trials/[^"?]+/\d+)"', page)))


# --- the runs list ---------------------------------------------------------------------------------------------------


def test_the_runs_list_shows_each_run_with_the_headline_figures_of_its_report(client, out):
    page = client.get("/runs")
    assert page.status_code == 200
    for run_id in ("flaky", "perfect"):
        m = cli_json(out, "report", run_id)["metrics"]
        n = m["trials_per_scenario"]
        line = row(page.text, run_id)
        assert shown(m["avg_reward"], m["ci"]["avg_reward"]) in line
        assert f"n={n} {shown(m['pass_hat_k'][str(n)], m['ci']['pass_hat_k'][str(n)])}" in line
        assert "24 / 24" in line and "retail" in line and "complete" in line
    assert "incomplete" in row(page.text, "many") and "60 / 72" in row(page.text, "many")
    assert "not a readable passhat run" in row(page.text, "junk")
    assert client.get("/").text == page.text


def test_the_runs_list_is_newest_first_in_pages_that_do_not_overlap(client, monkeypatch):
    monkeypatch.setattr(pages_runs, "PAGE_SIZE", 2)
    pages = [re.findall(r'data-run="([^"]+)"', client.get(f"/runs?page={n}").text) for n in (1, 2, 3)]
    assert pages[0] == ["many", "hostile"] and pages[1] == ["perfect", "flaky"] and pages[2] == ["junk"]
    assert 'rel="next"' in client.get("/runs?page=1").text and 'rel="next"' not in client.get("/runs?page=3").text


# --- a run's page ----------------------------------------------------------------------------------------------------


def test_the_run_page_has_the_figures_and_charts_of_the_report(client, out):
    document = cli_json(out, "report", "flaky")
    m, n = document["metrics"], document["metrics"]["trials_per_scenario"]
    page = client.get("/runs/flaky")
    assert page.status_code == 200
    headline = text(re.search(r"<p class=headline>(.*?)</p>", page.text, re.S).group(1))
    assert headline.startswith(f"pass^1 {shown(m['avg_reward'], m['ci']['avg_reward'])} vs pass^{n} ")
    assert shown(m["pass_hat_k"][str(n)], m["ci"]["pass_hat_k"][str(n)]) in headline
    for heading in ("pass^k and pass@k against k", "Partition", "Failure signatures", "Personas", "Faults and guards"):
        assert f"<h2>{heading}</h2>" in page.text
    assert page.text.count('<svg class="chart"') >= 3
    for signature in m["failure_signatures"]:
        assert f'href="/runs/flaky/trials?outcome={signature}"' in page.text
    assert "<script>" not in page.text and "<style>" not in page.text  # the app's CSP allows neither


def test_a_gate_asked_on_the_run_page_gives_the_verdict_of_report_gate(client, out):
    verdict = cli_json(out, "report", "flaky", "--gate", "k=3,min=0.5")["gate"]
    page = client.get("/runs/flaky", params={"gate": "k=3,min=0.5"})
    word = {True: "MEETS THE BAR", False: "DOES NOT MEET THE BAR"}[verdict["meets"]]
    assert (
        page.status_code == 200
        and f"Gate pass^3 &gt;= 0.5: <span class={'meets' if verdict['meets'] else 'fails'}>{word}" in page.text
    )
    for bad, reason in (("k=three", "is not a gate"), ("k=9,min=0.5", "exceeds"), ("k=2,min=0.5,persona=nobody", "persona")):
        refused = client.get("/runs/flaky", params={"gate": bad})
        assert refused.status_code == 400 and reason in html.unescape(refused.text)
        assert "<h2>Partition</h2>" in refused.text  # the figures stay, the gate's problem beside them


# --- grid, trial lists, trial viewer ---------------------------------------------------------------------------------------


def test_the_grid_counts_each_scenario_as_the_store_does_and_links_its_trials(client, out):
    page = client.get("/runs/flaky/grid")
    cells = re.findall(
        r'data-task="([^"]+)" data-persona="([^"]+)">\s*<a href="([^"]+)"[^>]*><span class="dash-count">(\d+)/(\d+)</span>',
        page.text,
    )
    with ResultStore.open(out / "flaky") as store:
        counts = scenario_counts(t.to_result() for t in store.trial_rows())
    assert {(t, p): (int(c), int(n)) for t, p, _, c, n in cells} == counts
    task, persona, link, _, judged = cells[0]
    listed = client.get(html.unescape(link))
    assert listed.status_code == 200 and len(trial_links(listed.text)) == int(judged)
    assert all(f"/trials/{task}/{persona}/" in href for href in trial_links(listed.text))


def test_trial_lists_are_paginated_into_distinct_pages_and_filtered_by_outcome(client):
    first, second = (client.get("/runs/many/trials", params={"page": n}).text for n in (1, 2))
    assert len(trial_links(first)) == 50 and len(trial_links(second)) == 10
    assert not set(trial_links(first)) & set(trial_links(second))
    failed = client.get("/runs/many/trials", params={"outcome": "failed"}).text
    assert "36 trials" in text(failed) and "passed" not in re.findall(r'class="badge [a-z]+">([^<]+)</a>', failed)
    one = client.get("/runs/many/trials", params={"task": "t2", "persona": "impatient", "outcome": "passed"}).text
    assert trial_links(one) == [f"/runs/many/trials/t2/impatient/{i}" for i in (0, 3, 6, 9)]
    assert client.get("/runs/many/trials", params={"outcome": "robbed"}).status_code == 400
    assert client.get("/runs/many/trials", params={"page": "0"}).status_code == 400


def first_failure(out: Path, run_id: str) -> TrialRecord:
    with ResultStore.open(out / run_id) as store:
        key = next(t.key for t in store.trial_rows() if t.reward == 0)
        return next(store.records([key]))


def test_the_trial_viewer_shows_that_trials_conversation_tool_calls_diff_and_verdict(client, out):
    failed = first_failure(out, "flaky")
    page = client.get(f"/runs/flaky/trials/{failed.task_id}/{failed.persona}/{failed.trial}")
    assert page.status_code == 200
    for event in failed.events:
        if event["kind"] in ("user", "agent"):
            assert str(escape(event["text"])) in page.text  # as the templates escape it
        if event["kind"] == "tool":
            assert f"<code>{event['name']}</code>" in page.text
    assert re.search(rf"<td data-signature>{failed.signature}</td>", page.text)
    assert f"failed: {failed.signature}" in page.text
    plan = re.search(r"<h3>Steps of its plan \((.*?)\)</h3>", page.text)
    assert plan and plan.group(1) != "None", "the plan heading names the outcome measured against, never None"
    differences = failed.grade["details"]["state_differences"]
    changed = [d for d in differences if d.get("actual") and d.get("expected")]
    if changed:
        column = next(c for c in changed[0]["expected"] if changed[0]["expected"][c] != changed[0]["actual"].get(c))
        assert f"<mark>{column}</mark>" in page.text
    else:
        assert "extra row" in page.text or "missing row" in page.text


def test_transcript_text_is_escaped_on_every_page_and_any_task_id_has_an_address(client):
    listed = client.get("/runs/hostile/trials").text
    assert trial_links(listed) == ["/runs/hostile/trials/t%3Ci%3E%2F1/baseline/0", "/runs/hostile/trials/t%3Ci%3E%2F1/baseline/1"]
    for path in (*trial_links(listed), "/runs/hostile/trials", "/runs/hostile/grid", "/runs/hostile"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert "<script>alert" not in page.text and "<i>/1" not in page.text
    viewer = client.get(trial_links(listed)[0]).text
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in viewer and "t&lt;i&gt;/1" in viewer


@pytest.mark.parametrize(
    "path",
    [
        "/runs/nothing",
        "/runs/%2E%2E",
        "/runs/.cache",
        "/runs/nothing/grid",
        "/runs/nothing/trials",
        "/runs/nothing/live",
        "/runs/nothing/live.json",
        "/runs/nothing/traffic?per_day=10",
        "/runs/flaky/trials/retail-001/baseline/99",
        "/runs/flaky/trials/no-task/baseline/0",
        "/runs/flaky/trials/retail-001/baseline/99999999999999999999999999",
        "/runs/flaky/trials/retail-001/baseline/-1",
        "/runs/%2E%2E/trials/retail-001/baseline/0",
    ],
)
def test_an_address_that_names_no_run_or_trial_is_a_404_page(client, path):
    page = client.get(path)
    assert page.status_code == 404, page.text[:500]


def test_a_folder_whose_store_is_no_passhat_store_is_a_404_saying_so(client):
    page = client.get("/runs/junk")
    assert page.status_code == 404 and "not a readable passhat run" in page.text


def test_a_store_without_its_trials_table_is_listed_with_its_reason_and_breaks_no_other_page(tmp_path: Path):
    """The damage that found it: with one store's trials table dropped, the home page and every compare page were 500."""
    synthetic_run(tmp_path, "good", [trial("t1", "calm", 0)], tasks=["t1"], personas=["calm"], planned=1)
    damaged_run(tmp_path, "DROP TABLE trials")
    client = signed_in(make_app(tmp_path), tmp_path, "viewer")
    home = client.get("/runs")
    assert home.status_code == 200 and "good" in home.text and "has no trials table" in home.text
    assert client.get("/compare").status_code == 200
    for path in ("/runs/damaged", "/compare?a=good&b=damaged"):
        page = client.get(path)
        assert page.status_code == 404 and "has no trials table" in page.text, path


def test_broken_json_in_one_trial_is_a_page_naming_the_trial_and_the_column(tmp_path: Path):
    damaged_run(tmp_path, "UPDATE trials SET events = '{broken' WHERE task_id = 't1' AND persona = 'baseline' AND trial = 0")
    client = signed_in(make_app(tmp_path), tmp_path, "viewer")
    page = client.get("/runs/damaged/trials/t1/baseline/0")
    assert page.status_code == 400 and "trial 0 of task" in page.text and "its events column is not the JSON" in page.text
    assert client.get("/runs/damaged/trials/t1/baseline/1").status_code == 200
    assert client.get("/runs").status_code == 200


# --- compare, traffic, live -------------------------------------------------------------------------------------------


def test_compare_shows_the_runs_side_by_side_with_the_paired_differences_of_passhat_compare(client, out):
    expected = cli_json(out, "compare", "flaky", "perfect")
    page = client.get("/compare", params={"a": "flaky", "b": "perfect"})
    assert page.status_code == 200
    assert (
        f'<strong class="dash-verdict-{expected["verdict"].replace(" ", "-")}" data-verdict>{expected["verdict"]}</strong>'
        in page.text
    )
    words = text(page.text)
    for d in expected["deltas"]:
        assert (
            f"{d['metric']} {d['a']:.3f} {d['b']:.3f} {d['change']:+.3f} [{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}] {d['verdict']}"
            in words
        )
    for change in expected["changes"]:
        task, persona = change["scenario"]
        assert f'href="/runs/perfect/trials?task={task}&amp;persona={persona}"' in page.text
    assert "The runs side by side" in page.text and "reference:perfect" in page.text


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ({"a": "flaky", "b": "hostile"}, 400, "cover different scenarios"),
        ({"a": "flaky", "b": "hostile", "intersection": "1"}, 400, "cover different scenarios"),
        ({"a": "flaky", "b": "nothing"}, 404, "no run"),
    ],
)
def test_runs_that_cannot_be_compared_give_the_form_again_with_the_reason(client, query, status, message):
    page = client.get("/compare", params=query)
    assert page.status_code == status and message in html.unescape(page.text)
    assert '<form class="dash-filters" method="get" action="/compare">' in page.text


def test_a_run_pages_compare_link_gives_the_form_with_that_run_chosen(client):
    page = client.get("/compare", params={"a": "flaky"})
    assert page.status_code == 200
    assert "<option selected>flaky</option>" in page.text and "The runs side by side" not in page.text


def test_the_traffic_calculator_gives_the_figures_of_passhat_traffic(client, out):
    expected = cli_json(out, "traffic", "flaky", "--per-day", "50", "--k-days", "3", "--target", "0.95")
    assert client.get("/runs/flaky/traffic").status_code == 200  # the form alone
    page = client.get("/runs/flaky/traffic", params={"per_day": "50", "days": "3", "target": "0.95"})
    assert page.status_code == 200
    assert f'<strong data-figure="expected_failures">{expected["expected_failures"]:.1f}</strong>' in page.text
    assert f'<strong data-figure="clean_day">{expected["clean_day"]:.3g}</strong>' in page.text
    words = text(page.text)
    for t in expected["tasks"]:
        assert f"{t['task_id']} {t['successes']}/{t['trials']}" in words and f"{t['expected_failures']:.2f}" in words


def test_the_traffic_calculator_fits_its_model_once_per_state_of_the_run(out, tmp_path, monkeypatch):
    import passhat.metrics.extrapolate as extrapolate

    fits = []
    fit = extrapolate.extrapolate
    monkeypatch.setattr(extrapolate, "extrapolate", lambda *args: fits.append(args) or fit(*args))
    shutil.copytree(out / "many", tmp_path / "many")
    now = [0.0]
    cache = RunCache(tmp_path, clock=lambda: now[0])
    first = pages_runs.traffic_view(cache, "many", 50, 3, 0.95)["view"]
    other = pages_runs.traffic_view(cache, "many", 500, 7, 0.9)["view"]  # other inputs, the same run: no new fit
    assert len(fits) == 1 and other.expected_failures > first.expected_failures
    with ResultStore.open(tmp_path / "many") as store:
        store.record(trial(TASKS[0], PERSONAS[0], 11, "fail"))  # the run moved on: its model is fit again
    now[0] += LIVE_RECOMPUTE_S  # (a run being written is fit again at most this often)
    pages_runs.traffic_view(cache, "many", 50, 3, 0.95)
    assert len(fits) == 2


@pytest.mark.parametrize(
    "query",
    [
        {"per_day": ""},
        {"per_day": "many"},
        {"per_day": "0"},
        {"per_day": "nan"},
        {"per_day": "inf"},
        {"per_day": "1e400"},
        {"per_day": "10", "days": "0"},
        {"per_day": "10", "days": "1.5"},
        {"per_day": "10", "days": "9" * 40},
        {"per_day": "10", "target": "1"},
        {"per_day": "10", "target": "nan"},
        {"per_day": "10", "target": "-0.1"},
    ],
)
def test_bad_traffic_input_gives_the_form_again_with_a_message(client, query):
    page = client.get("/runs/flaky/traffic", params=query)
    assert page.status_code == 400
    assert '<p class="error" role="alert">' in page.text and 'name="per_day"' in page.text


def test_traffic_on_a_run_too_small_for_a_model_says_why(client):
    page = client.get("/runs/hostile/traffic", params={"per_day": "10"})
    assert page.status_code == 400 and "no traffic view" in page.text


def test_the_live_view_of_a_finished_run_says_so_and_of_an_unfinished_one_shows_progress(client):
    finished = client.get("/runs/flaky/live")
    assert finished.status_code == 200 and "Finished: every planned trial" in finished.text
    assert '<script src="/static/dashboard_live.js"></script>' in finished.text
    progress = client.get("/runs/many/live.json").json()
    assert progress | {"writing": None} == {
        "stored": 60, "unjudged": 0, "planned": 72, "scenarios": 6, "trials_per_scenario": 10,
        "pass_hat_k": {"1": pytest.approx(0.4), "10": 0.0}, "complete": False, "early_stopped": False,
        "writing": None, "state": "stopped",
    }  # fmt: skip
    assert "Stopped before its end" in client.get("/runs/many/live").text


def test_the_live_script_is_served_by_the_app(client):
    script = client.get("/static/dashboard_live.js")
    assert script.status_code == 200 and "textContent" in script.text and "innerHTML" not in script.text


def test_a_visitor_without_a_session_is_sent_to_sign_in(out):
    anonymous = TestClient(make_app(out))
    response = anonymous.get("/runs/flaky/grid", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")
