"""JUnit XML for CI systems: one test case per scenario, failed unless every judged trial passed.

A scenario with trials that could not be judged (and none judged) is reported as an error, not a
failure: it says nothing about the agent. With a gate (``report --gate``), one more test case holds
its verdict: failed when the run does not meet it, an error while it is undecided.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.report.model import Report


def junit_xml(report: Report) -> ET.ElementTree:
    scenarios = report.scenarios
    suite = ET.Element("testsuite", name=f"passhat run {report.run_id}", tests=str(len(scenarios)))
    failures = errors = 0
    for s in scenarios:
        case = ET.SubElement(suite, "testcase", classname=s.task_id, name=f"{s.task_id} / {s.persona}")
        if not s.judged:
            errors += 1
            ET.SubElement(case, "error", message=f"no trial could be judged ({s.infra_errors} infra errors)")
        elif s.passed < s.judged:
            failures += 1
            failure = ET.SubElement(case, "failure", message=f"{s.passed}/{s.judged} trials passed", type="pass^k")
            failure.text = "failure signatures: " + (", ".join(s.failure_names) or "none recorded")
    g = report.gate
    if g is not None:
        case = ET.SubElement(suite, "testcase", classname="passhat.gate", name=f"gate {g.gate}")
        message = g.reason + (f" (95% CI [{g.ci[0]:.3f}, {g.ci[1]:.3f}])" if g.ci else "")
        if g.meets is False:
            failures += 1
            ET.SubElement(case, "failure", message=message, type="gate")
        elif g.meets is None:
            errors += 1
            ET.SubElement(case, "error", message=message)
        else:
            ET.SubElement(case, "system-out").text = message
        suite.set("tests", str(len(scenarios) + 1))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    return ET.ElementTree(suite)


def write_junit(report: Report, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        document = io.BytesIO()
        junit_xml(report).write(document, encoding="utf-8", xml_declaration=True)
        write_atomically(path, document.getvalue(), window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the JUnit report to {path} (--junit): {exc.strerror}.") from None
