"""Every command that reads a run says what `report` says about it first, and fits a model only where `report`
does; the headline of a run with trials left out says something true, once; the partition legend's labels never
overlap; the state diff marks the fields that differ, not whole rows."""

from __future__ import annotations

import itertools
import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from test_report_review import invoke, report_json, store

from passhat.report.caveats import run_caveats
from passhat.report.state_diff import row_changes
from passhat.report.svg import LEGEND_ROW, SWATCH, SWATCH_GAP, WIDTH, Box, stacked_bars, text_width
from passhat.report.terminal import MARK, diff_text
from passhat.run_config import RunConfig
from passhat.vocabulary import HUMAN

EARLY = {"early_stop": "k=8,min=0.9"}
SIX = {(f"t{i}", "a"): 0.9 for i in range(6)}
EARLY_CAVEAT = "the figures are not estimates of the agent, use this run for the gate decision only"


def _first_fails(task: str, persona: str, i: int) -> dict[str, Any] | None:
    """t0's first trial fails, every other trial passes: a gate k=8,min=0.9 is missed after one trial."""
    failed = task == "t0" and i == 0
    return {"reward": 0 if failed else 1, "signature": "no_write" if failed else None}


def early_stopped(out: Path, run_id: str = "es") -> None:
    """A run stopped early against k=8,min=0.9 after one trial per scenario (t0's failed)."""
    store(out, run_id, SIX, stored=1, extra=EARLY, trial_extra=_first_fails)


# --- 1. every command shows the caveats and refuses the fit where `report` does ----------------------------------


def test_traffic_on_an_early_stopped_run_shows_the_caveat_and_gives_no_model_figure(tmp_path):
    store(tmp_path, "es", SIX, stored=5, extra=EARLY)  # 5 trials a scenario: enough for a fit, were it a sample
    result = invoke("traffic", "es", "--out", tmp_path, "--per-day", 100, "--json", tmp_path / "t.json")
    assert result.exit_code == 2, result.output
    assert "early-stopped run (against the gate k=8,min=0.9, 30 of 48 planned trials judged)" in result.output
    assert EARLY_CAVEAT in result.output and "stopped early against its gate" in result.output.split("error:")[1]
    assert "failed/day" not in result.output and "model-based" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "t.json").exists()


def test_traffic_on_an_incomplete_run_shows_the_caveat_and_its_view(tmp_path):
    store(tmp_path, "inc", SIX, stored=6)
    path = tmp_path / "t.json"
    result = invoke("traffic", "inc", "--out", tmp_path, "--per-day", 100, "--json", path)
    assert result.exit_code == 0, result.output
    assert "incomplete: 36 of 48 planned trials judged" in result.output and "passhat run --resume inc" in result.output
    assert "failed/day" in result.output
    assert json.loads(path.read_text())["caveats"][0].startswith("incomplete: 36 of 48")


def test_traffic_of_a_complete_run_has_no_caveat(tmp_path):
    store(tmp_path, "full", SIX)
    result = invoke("traffic", "full", "--out", tmp_path, "--per-day", 100)
    assert result.exit_code == 0 and "incomplete" not in result.output and "early-stopped" not in result.output


@pytest.mark.parametrize(
    ("trials", "stored", "extra"),
    [
        (8, None, {}),  # complete
        (8, 3, {}),  # incomplete, 3 judged trials a scenario: still enough for a model
        (2, None, {}),  # too few trials for a model
        (8, 5, EARLY),  # early-stopped
    ],
)
def test_traffic_fits_a_model_exactly_when_report_does(tmp_path, trials, stored, extra):
    store(tmp_path, "r", SIX, trials=trials, stored=stored, extra=extra)
    _, doc = report_json(tmp_path, "r")
    traffic = invoke("traffic", "r", "--out", tmp_path, "--per-day", 10)
    assert (doc["metrics"]["extrapolated"] is not None) == (traffic.exit_code == 0), traffic.output
    if traffic.exit_code:
        assert doc["metrics"]["extrapolation_skipped"] in " ".join(traffic.output.split())


@pytest.mark.parametrize("order", [("full", "es"), ("es", "full")])
def test_compare_with_an_early_stopped_run_shows_its_caveat_and_gives_no_verdict(tmp_path, order):
    store(tmp_path, "full", SIX, seed=1)
    store(tmp_path, "es", SIX, stored=5, extra=EARLY)
    path = tmp_path / "cmp.json"
    result = invoke("compare", *order, "--out", tmp_path, "--json", path)
    assert result.exit_code == 2, result.output
    assert "es: early-stopped run" in result.output and "full: " not in result.output
    assert "verdict" not in result.output and "within noise" not in result.output and "better" not in result.output
    assert "passhat run --resume es" in result.output and not path.exists()


def test_compare_with_an_incomplete_run_shows_its_caveat_and_compares(tmp_path):
    store(tmp_path, "full", SIX, seed=1)
    store(tmp_path, "inc", SIX, seed=2, stored=6)
    path = tmp_path / "cmp.json"
    result = invoke("compare", "full", "inc", "--out", tmp_path, "--json", path)
    assert result.exit_code == 0, result.output
    assert "inc: incomplete: 36 of 48 planned trials judged" in result.output and "full: incomplete" not in result.output
    assert "verdict:" in result.output
    assert json.loads(path.read_text())["caveats"] == {"run_a": [], "run_b": [result.output.split("inc: ")[1].split("\n")[0]]}


def test_gate_shows_the_caveat_before_its_verdict(tmp_path):
    early_stopped(tmp_path)
    result = invoke("gate", "es", "--out", tmp_path, "--k", 8, "--min-pass-hat-k", 0.9)
    assert result.exit_code == 1
    caveat, verdict = result.output.index(EARLY_CAVEAT), result.output.index("DOES NOT MEET THE BAR")
    assert caveat < verdict
    store(tmp_path, "full", SIX)
    assert "early-stopped" not in invoke("gate", "full", "--out", tmp_path, "--k", 8, "--min-pass-hat-k", 0.5).output


def test_guard_compare_shows_each_whole_runs_caveats(tmp_path):
    store(tmp_path, "full", SIX, seed=1)
    store(tmp_path, "inc", SIX, seed=1, stored=6)
    store(tmp_path, "fewer", dict(list(SIX.items())[:4]), seed=1)  # complete, with fewer scenarios
    result = invoke("guard", "compare", "full", "inc", "fewer", "--intersection", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "inc: incomplete: 36 of 48 planned trials judged" in result.output
    assert "full: incomplete" not in result.output and "fewer: incomplete" not in result.output  # the shared part is not the run


def test_one_rule_decides_for_every_reader():
    counts = {(f"t{i}", "a"): (4, 5) for i in range(6)}
    config = RunConfig(tasks=[f"t{i}" for i in range(6)], personas=["a"], trials=8)
    full = run_caveats("r", config, {s: (7, 8) for s in counts})
    assert (full.complete, full.warnings, full.fit_refused, full.comparison_refused) == (True, [], None, None)
    incomplete = run_caveats("r", config, counts)
    assert not incomplete.complete and incomplete.fit_refused is None and incomplete.comparison_refused is None
    stopped = run_caveats("r", config.model_copy(update=EARLY), counts)
    assert stopped.fit_refused and stopped.comparison_refused and stopped.stop_decision.meets is False
    tiny = run_caveats("r", config, {s: (1, 2) for s in counts})
    assert "at least 3" in tiny.fit_refused and tiny.comparison_refused is None
    unplanned = run_caveats("r", config.model_copy(update={"user": HUMAN}), counts)  # people chose what to play
    assert unplanned.complete and unplanned.planned_trials is None and unplanned.warnings == []


# --- 2. the headline of a run with trials left out ----------------------------------------------------------------


def _headline(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", re.search(r"<p class=headline>(.*?)</p>", html).group(1)))


def test_the_headline_of_an_early_stopped_run_is_its_gates_verdict_said_once(tmp_path):
    early_stopped(tmp_path)
    html_path = tmp_path / "es.html"
    result, doc = report_json(tmp_path, "es", "--html", html_path, "--gate", "k=8,min=0.9")
    assert result.exit_code == 1
    verdict = (
        "gate pass^8 >= 0.9, the one this run stopped early against: DOES NOT MEET THE BAR — "
        "pass^8 <= 0.833 < 0.9 whatever the remaining trials over 6 scenarios (42 planned trials left out)"
    )
    html = html_path.read_text()
    assert _headline(html) == verdict
    assert "pass^1 1" not in html[: html.index("<h2>")] and "vs &nbsp;" not in html  # not pass^1 against pass^1
    assert html.count("is not predicted") == 1 and html.count(EARLY_CAVEAT) == 1
    assert html.count("DOES NOT MEET THE BAR") == 1  # the --gate asked for is the run's own: said once
    lines = result.output.splitlines()  # its first line, repeated as the headline above the next: line, and nowhere else
    then = next(i for i, line in enumerate(lines) if line.startswith("next: "))
    assert lines[0] == verdict and lines[then - 1] == verdict and result.output.count("DOES NOT MEET THE BAR") == 2
    assert "a request succeeds" not in result.output
    assert doc["early_stop_decision"]["meets"] is False


def test_an_early_stopped_report_shows_another_gate_apart(tmp_path):
    early_stopped(tmp_path)
    html_path = tmp_path / "es.html"
    result, _ = report_json(tmp_path, "es", "--html", html_path, "--gate", "k=1,min=0.1")
    html = html_path.read_text()
    assert "DOES NOT MEET THE BAR" in _headline(html) and "<p>Gate pass^1 &gt;= 0.1: <span class=meets>" in html
    assert "gate pass^1 >= 0.1: MEETS THE BAR" in result.output


def test_the_headline_of_an_incomplete_run_says_how_far_it_got(tmp_path):
    store(tmp_path, "inc", {("t1", "a"): 1.0, ("t2", "a"): 0.5, ("t3", "a"): 0.8}, stored=6)
    html_path = tmp_path / "inc.html"
    result, doc = report_json(tmp_path, "inc", "--html", html_path)
    m = doc["metrics"]
    scope = "3 scenarios × at least 6 of 8 planned trials"
    headline = _headline(html_path.read_text())
    assert headline.startswith(f"pass^1 {m['avg_reward']:.3f}") and f"pass^6 {m['pass_hat_k']['6']:.3f}" in headline
    assert f"over {scope} (95% intervals)" in headline
    line = next(ln for ln in result.output.splitlines() if ln.startswith("pass^1 "))
    assert f"({scope}, 95% intervals)" in line


def test_a_headline_with_one_judged_trial_a_scenario_shows_pass1_alone(tmp_path):
    store(tmp_path, "one", SIX, stored=1)
    html_path = tmp_path / "one.html"
    report_json(tmp_path, "one", "--html", html_path)
    headline = _headline(html_path.read_text())
    assert headline.startswith("pass^1 ") and " vs " not in headline and "6 scenarios × at least 1 of 8 planned" in headline


def test_a_complete_runs_headline_is_unchanged(tmp_path):
    store(tmp_path, "full", SIX)
    html_path = tmp_path / "full.html"
    report_json(tmp_path, "full", "--html", html_path)
    headline = _headline(html_path.read_text())
    assert re.fullmatch(
        r"pass\^1 \S+ \[\S+, \S+\]   vs   pass\^8 \S+ \[\S+, \S+\] over 6 scenarios × 8 trials "
        r"\(95% intervals\)",
        headline.replace("\xa0", " "),
    ), headline


# --- 3. the partition legend -----------------------------------------------------------------------------------


def legend_label_boxes(svg: str) -> list[Box]:
    """Each legend entry's box as drawn: its swatch and its label, at the label's estimated (or forced) width."""
    boxes = []
    for attrs, label in re.findall(r'<text class="legend" ([^>]*)>([^<]*)</text>', svg):
        x, y = (float(re.search(rf'\b{a}="([\d.]+)"', attrs).group(1)) for a in ("x", "y"))
        forced = re.search(r'textLength="([\d.]+)"', attrs)
        width = float(forced.group(1)) if forced else text_width(unescape(label))
        boxes.append(Box(x - SWATCH - SWATCH_GAP, y - 10, SWATCH + SWATCH_GAP + width, LEGEND_ROW - 4))
    return boxes


LEGENDS = [
    ("passed all 8 (Wilson ≥ 0.68)", "passed some", "passed none"),
    ("passed all 1000 (Wilson ≥ 0.996)", "passed some", "passed none"),
    (
        "passed every one of its 1000 trials, a Wilson lower bound of 0.996",
        "passed some but not all of its trials",
        "passed none of its trials at all",
    ),
    ("W" * 80, "M" * 3, "m" * 40),  # one label wider than the chart
]


@pytest.mark.parametrize("legend", LEGENDS)
def test_partition_legend_labels_never_overlap_and_stay_in_the_chart(legend):
    svg = stacked_bars("partition", [("all scenarios", [1, 2, 3]), ("persona a", [0, 1, 0])], legend)
    boxes = legend_label_boxes(svg)
    assert len(boxes) == 3
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
    assert all(0 <= b.x and b.x + b.w <= WIDTH + 0.01 for b in boxes)
    first_bar = min(float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="14"', svg))
    assert first_bar >= max(b.y + b.h for b in boxes)  # the bars start below the legend, however many rows it has
    height = float(re.search(r'height="([\d.]+)" role="img"', svg).group(1))
    assert first_bar + 22 * 2 <= height


def test_a_legend_that_fits_stays_on_one_row():
    boxes = legend_label_boxes(stacked_bars("partition", [("all", [1, 1, 1])], LEGENDS[0]))
    assert len({b.y for b in boxes}) == 1


def test_estimated_label_widths_grow_with_the_glyphs():
    assert text_width("ill") < text_width("abc") < text_width("ABC") < text_width("MWM") == 3 * 11.0


# --- 4. the state diff marks the differing fields -------------------------------------------------------------------

DIFFERENCES = [
    {
        "table": "orders",
        "key": '["#W1"]',
        "actual": {"id": "#W1", "status": "pending", "city": "Oslo", "zip": "0150", "reason": None},
        "expected": {"id": "#W1", "status": "cancelled", "city": "Oslo", "zip": "0150", "reason": "<mistake>"},
    },
    {"table": "payments", "key": '["#W1", 3]', "actual": {"order_id": "#W1", "seq": 3, "amount": 9.5}, "expected": None},
    {"table": "payments", "key": '["#W1", 2]', "actual": None, "expected": {"order_id": "#W1", "seq": 2, "amount": 12.0}},
]


def test_row_changes_keep_only_the_differing_columns_of_a_changed_row():
    changed, extra, missing = row_changes(DIFFERENCES)
    assert (changed.kind, [(f.column, f.expected, f.actual) for f in changed.fields]) == (
        "changed",
        [("status", "cancelled", "pending"), ("reason", "<mistake>", None)],
    )
    assert (extra.kind, extra.label, extra.row["amount"]) == ("extra", "#W1, 3", 9.5)
    assert (missing.kind, missing.label, missing.row["amount"]) == ("missing", "#W1, 2", 12.0)
    (plain,) = row_changes([{"table": "orders", "key": "#W1", "actual": {"status": "a"}, "expected": {"status": "b"}}])
    assert plain.label == "#W1"  # a key written as plain text reads as it is


def test_terminal_diff_marks_exactly_the_differing_columns():
    text = diff_text(row_changes(DIFFERENCES))
    marked = [text.plain[s.start : s.end] for s in text.spans if s.style == MARK]
    assert marked == ["status", "reason"]
    lines = text.plain.splitlines()
    assert lines[0] == 'orders #W1: status "cancelled" → "pending"; reason "<mistake>" → null'
    assert lines[1].startswith("+ payments #W1, 3: extra row") and lines[2].startswith("− payments #W1, 2: missing row")


def _with_differences(task: str, persona: str, i: int) -> dict[str, Any] | None:
    if i != 1:
        return {"reward": 1, "signature": None}
    return {"reward": 0, "signature": "wrong_arguments", "grade": {"details": {"state_differences": DIFFERENCES}}}


def test_reports_show_the_state_diff_field_by_field(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 1.0}, trial_extra=_with_differences)
    html_path = tmp_path / "r.html"
    result, doc = report_json(tmp_path, "r", "--html", html_path, "--full")  # the scenarios that fail most
    assert doc["scenarios"][0]["state_diff"]["trial"] == 1
    assert [r["kind"] for r in doc["scenarios"][0]["state_diff"]["rows"]] == ["changed", "extra", "missing"]
    out = result.output
    assert 'status "cancelled" → "pending"' in out and "+ payments #W1, 3: extra row" in out and "city" not in out
    html = html_path.read_text()
    table = html[html.index("<table class=diff>") :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr class=(\w+)>(.*?)</tr>", table)
    assert [kind for kind, _ in rows] == ["changed", "extra", "missing"]
    changed = rows[0][1]
    assert re.findall(r"<mark>(.*?)</mark>", table) == ["status", "reason"]
    assert "city" not in changed and "&quot;cancelled&quot; → &quot;pending&quot;" in changed
    assert "&quot;&lt;mistake&gt;&quot; → null" in changed  # stored text is escaped
    assert "extra row" in rows[1][1] and "amount 9.5" in rows[1][1] and "missing row" in rows[2][1]


def test_a_failure_with_the_expected_backend_says_so(tmp_path):
    store(tmp_path, "r", {("t1", "a"): 0.0})
    result, doc = report_json(tmp_path, "r", "--full")
    assert doc["scenarios"][0]["state_diff"] is None and "matches the expected state" in result.output
