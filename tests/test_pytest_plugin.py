"""The pytest plugin: a test marked @pytest.mark.passhat runs an evaluation and fails unless it meets its gate,
with the headline, the partition and the failing scenarios in the failure (and so in --junitxml); the
passhat_run fixture hands the report to the test; a bad marker stops the session as a usage error."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

# pytester's in-process runs forget every module first imported inside them, and numpy cannot be imported twice in
# one process: what the plugin imports when it runs (the run, its metrics and report) is imported here first.
import passhat.cli  # noqa: F401
import passhat.report.json_report  # noqa: F401
import passhat.run.evaluate  # noqa: F401

pytest_plugins = ["pytester"]

SCENARIOS = 'personas="baseline", tasks="retail-001,retail-002", trials=4'


def acceptance_test(agent: str, gate: str = ", k=4, min_pass_hat_k=0.9", body: str = "pass", args: str = "") -> str:
    return f"""
import pytest

@pytest.mark.passhat(agent="{agent}", {SCENARIOS}{gate})
def test_agent({args}):
    {body}
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_an_agent_that_meets_the_gate_passes_and_its_run_is_kept_where_asked(pytester):
    pytester.makepyfile(acceptance_test("reference:perfect"))
    out = pytester.path / "kept"
    result = run(pytester, "--passhat-out", str(out))
    result.assert_outcomes(passed=1)
    assert [p.name.startswith("test_agent-") for p in out.iterdir()] == [True]


def test_an_agent_below_the_bar_fails_with_the_headline_partition_and_failing_scenarios(pytester):
    pytester.makepyfile(acceptance_test("reference:hasty", body='raise RuntimeError("the body ran")'))
    result = run(pytester)
    result.assert_outcomes(failed=1)  # failed, not an error in setup
    result.stdout.fnmatch_lines(
        [
            "passhat run test_agent-* does not meet the gate pass^4 >= 0.9: pass^4 = 0.000 < 0.9 over 2 scenarios",
            "pass^1 0.000 * vs pass^4 0.000 *",
            "partition: 0 scenarios passed all trials, 0 some, 2 none",
            "failing scenarios (2 of 2):",
            "  retail-001 / baseline: 0/4 passed; unconfirmed_write",
            "  retail-002 / baseline: 0/4 passed; unconfirmed_write",
            "run stored in *; `passhat report test_agent-* --out *` shows the whole report",
        ]
    )
    assert "the body ran" not in result.stdout.str()  # the gate is judged before the test's own assertions


def test_the_failure_lands_in_junit_xml(pytester):
    pytester.makepyfile(acceptance_test("reference:hasty"))
    run(pytester, "--junitxml=report.xml").assert_outcomes(failed=1)
    case = ET.parse(pytester.path / "report.xml").find(".//testcase[@name='test_agent']")
    failure = case.find("failure")
    assert "does not meet the gate pass^4 >= 0.9" in failure.get("message")
    assert "retail-002 / baseline: 0/4 passed; unconfirmed_write" in failure.text
    assert case.find("properties/property[@name='passhat_run']") is not None


def test_the_fixture_hands_the_report_to_the_test(pytester):
    body = 'assert passhat_run.metrics.failure_signatures == {"unconfirmed_write": 8}\n    assert passhat_run.gate is None'
    pytester.makepyfile(acceptance_test("reference:hasty", gate="", body=body, args="passhat_run"))
    run(pytester).assert_outcomes(passed=1)  # no gate: judged trials are enough, the test asserts the rest


@pytest.mark.parametrize(
    ("marker", "problem"),
    [
        (f'agent="reference:perfect", {SCENARIOS}, k=4, min_pass_hatk=0.9', "unknown argument 'min_pass_hatk'; it takes "),
        (f"{SCENARIOS}", 'name the agent under test, e.g. agent="'),
        ('agent="reference:perfect", tasks="retail-999"', "unknown task id 'retail-999'"),
        (f'agent="reference:perfect", {SCENARIOS}, k=8, min_pass_hat_k=0.9', "the gate's k = 8 * exceeds the run's 4 trials"),
        (f'agent="reference:perfect", {SCENARIOS}, k=4', "a gate needs both k and min_pass_hat_k"),
        (f'agent="reference:perfect", {SCENARIOS}, k="4", min_pass_hat_k=0.9', "k is a whole number of trials, got '4'"),
        ('agent="reference:perfect", trials=0', "trials: Input should be greater than or equal to 1"),
        ('"reference:perfect"', "takes keyword arguments only"),
    ],
)
def test_a_bad_marker_is_a_usage_error_before_any_test_runs(pytester, marker, problem):
    pytester.makepyfile(
        f"""
import pytest

def test_first():
    raise AssertionError("test_first ran")

@pytest.mark.passhat({marker})
def test_agent():
    pass
"""
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: test_*.py::test_agent: @pytest.mark.passhat: *{problem}*"])
    assert "Traceback" not in result.stderr.str() and "test_first ran" not in result.stdout.str()


def test_a_deselected_test_is_not_checked(pytester):
    pytester.makepyfile(acceptance_test("reference:perfect", gate=", k=4") + "\ndef test_other():\n    pass\n")
    run(pytester, "-k", "test_other").assert_outcomes(passed=1, deselected=1)


def test_the_fixture_without_the_marker_is_a_usage_error(pytester):
    pytester.makepyfile("def test_agent(passhat_run):\n    pass\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *::test_agent: the passhat_run fixture needs @pytest.mark.passhat(...) on the test"])
