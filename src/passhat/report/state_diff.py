"""The backend against the expected state, field by field, for the HTML and terminal reports.

The grader stores each differing row whole, as the backend holds it (``actual``) and as the expected
state does (``expected``). Two whole rows hide the one column that differs among a dozen, so the
reports show, for a row both hold, only its differing columns (expected → actual), and a row only one
side holds as an extra or a missing row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import ConfigDict
from pydantic.dataclasses import dataclass

WholeRow = Literal["extra", "missing"]  # a row only one side holds
ROW_WORDS: dict[WholeRow, str] = {"extra": "extra row", "missing": "missing row"}
ROW_MEANING: dict[WholeRow, str] = {
    "extra": "in the backend, not in the expected state",
    "missing": "in the expected state, not in the backend",
}


@dataclass(config=ConfigDict(extra="forbid"), frozen=True, slots=True)  # a report holds thousands: see report.model
class FieldChange:
    column: str
    expected: Any
    actual: Any


@dataclass(config=ConfigDict(extra="forbid"), frozen=True, slots=True)
class RowChange:
    """One differing row. changed: fields holds its differing columns; extra / missing: row holds the
    values of the side that has it (the backend's / the expected state's). Part of the JSON report."""

    table: str
    key: str  # the row's primary key as the grader stores it (a JSON list of its key columns' values)
    kind: Literal["changed"] | WholeRow
    row: dict[str, Any]
    fields: list[FieldChange]

    @property
    def label(self) -> str:
        """The primary key for a reader: "#W1" or "#W1, 2"; a key that is no JSON list as it is."""
        try:
            values = json.loads(self.key)
        except ValueError:
            return self.key
        return ", ".join(map(str, values)) if isinstance(values, list) else self.key


def row_changes(differences: Iterable[Mapping[str, Any]]) -> list[RowChange]:
    """The grader's state_differences ({table, key, actual, expected}) as field-level changes."""
    out = []
    for d in differences:
        actual, expected = d.get("actual"), d.get("expected")
        if expected is None:
            out.append(RowChange(table=d["table"], key=d["key"], kind="extra", row=dict(actual), fields=[]))
        elif actual is None:
            out.append(RowChange(table=d["table"], key=d["key"], kind="missing", row=dict(expected), fields=[]))
        else:
            columns = list(dict.fromkeys([*expected, *actual]))  # the row's column order, then any only one side has
            fields = [
                FieldChange(column=c, expected=expected.get(c), actual=actual.get(c))
                for c in columns
                if expected.get(c) != actual.get(c)
            ]
            out.append(RowChange(table=d["table"], key=d["key"], kind="changed", row={}, fields=fields))
    return out


def value(v: Any) -> str:
    """A stored value as the reports print it: JSON, so a string reads "pending" and no value reads null."""
    return json.dumps(v, ensure_ascii=False)
