"""Reports over a stored run: the JSON document and the terminal summary.

The names below load their module on first use (PEP 562): a command that needs one light part of this package
(the report's schema, a count's wording) must not load every metric, numpy and scipy with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.lazy import lazy_names

if TYPE_CHECKING:
    from passhat.report.json_report import build_report, write_json
    from passhat.report.terminal import print_report

_HOMES = {"build_report": "json_report", "write_json": "json_report", "print_report": "terminal"}

__getattr__ = lazy_names(__name__, _HOMES)


__all__ = ["build_report", "print_report", "write_json"]
