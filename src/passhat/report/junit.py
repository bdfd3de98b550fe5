"""JUnit XML for CI systems: one test case per scenario, failed unless every judged trial passed.

A scenario with trials that could not be judged (and none judged) is reported as an error, not a
failure: it says nothing about the agent. With a gate (``report --gate``), one more test case holds
its verdict: failed when the run does not meet it, an error while it is undecided.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.report.model import GateSection, Report, ScenarioReport

DECLARATION = b"<?xml version='1.0' encoding='utf-8'?>\n"


def junit_xml(report: Report) -> Iterator[bytes]:
    """The document in pieces, a test case at a time: a run of 100,000 trials has 12,500 of them, and the whole tree
    in memory cost more than the rest of the writing."""
    scenarios, g = report.scenarios, report.gate
    failures = sum(0 < s.judged and s.passed < s.judged for s in scenarios) + (g is not None and g.meets is False)
    errors = sum(not s.judged for s in scenarios) + (g is not None and g.meets is None)
    tests = len(scenarios) + (g is not None)
    suite = ET.Element(
        "testsuite", name=f"passhat run {report.run_id}", tests=str(tests), failures=str(failures), errors=str(errors)
    )
    yield DECLARATION
    if not tests:
        yield _xml(suite)
        return
    yield _xml(suite).removesuffix(b" />") + b">"  # its start tag: the cases follow
    yield from map(_xml, map(_scenario_case, scenarios))
    if g is not None:
        yield _xml(_gate_case(g))
    yield b"</testsuite>"


def _scenario_case(s: ScenarioReport) -> ET.Element:
    case = ET.Element("testcase", classname=s.task_id, name=f"{s.task_id} / {s.persona}")
    if not s.judged:
        ET.SubElement(case, "error", message=f"no trial could be judged ({s.infra_errors} infra errors)")
    elif s.passed < s.judged:
        failure = ET.SubElement(case, "failure", message=f"{s.passed}/{s.judged} trials passed", type="pass^k")
        failure.text = "failure signatures: " + (", ".join(s.failure_names) or "none recorded")
    return case


def _gate_case(g: GateSection) -> ET.Element:
    case = ET.Element("testcase", classname="passhat.gate", name=f"gate {g.gate}")
    message = g.reason + (f" (95% CI [{g.ci[0]:.3f}, {g.ci[1]:.3f}])" if g.ci else "")
    if g.meets is False:
        ET.SubElement(case, "failure", message=message, type="gate")
    elif g.meets is None:
        ET.SubElement(case, "error", message=message)
    else:
        ET.SubElement(case, "system-out").text = message
    return case


def _xml(element: ET.Element) -> bytes:
    return ET.tostring(element, encoding="unicode").encode()


def write_junit(report: Report, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, junit_xml(report), window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the JUnit report to {path} (--junit): {exc.strerror}.") from None
