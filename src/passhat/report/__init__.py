"""Reports over a stored run: the JSON document and the terminal summary."""

from passhat.report.json_report import build_report, write_json
from passhat.report.terminal import print_report

__all__ = ["build_report", "print_report", "write_json"]
