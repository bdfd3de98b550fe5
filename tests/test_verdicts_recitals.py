"""Verdicts on rows recited instead of answered: an agent that recites every row it read, in key: value
lines, a markdown table or prose, tells the customer nothing (the JSON paste is judged the same way in
test_verdicts); a correct agent that tells its facts in its own words still passes."""

from __future__ import annotations

import pytest
from adversaries import RETAIL, Adversary, play

from passhat.domains.model import Goal

ANSWERED = [RETAIL.tasks[t] for t in ("retail-025", "retail-037", "retail-038", "retail-039", "retail-040")]


def _rows(node: object) -> list[dict]:
    """Every JSON object of a tool result with its scalar values (and lists of them): the rows the agent read."""
    if isinstance(node, list):
        return [row for child in node for row in _rows(child)]
    if not isinstance(node, dict):
        return []
    plain = [k for k, v in node.items() if not isinstance(v, (dict, list)) or all(not isinstance(x, (dict, list)) for x in v)]
    scalars = {k: ", ".join(map(str, node[k])) if isinstance(node[k], list) else node[k] for k in plain}
    return ([scalars] if scalars else []) + [row for child in node.values() for row in _rows(child)]


class RecitesRows(Adversary):
    """Recites every row of every tool result it read, whole, in one of three formats."""

    style = "lines"

    def _facts(self, goal: Goal, intro: str) -> str:
        if not goal.tell:
            return ""
        rows = [row for e in self._events if e.kind == "tool" and e.result for row in _rows(e.result)]
        return intro + "\n\n" + "\n\n".join(self._recite(row) for row in rows)

    def _recite(self, row: dict) -> str:
        words = {k.replace("_", " ").capitalize(): v for k, v in row.items()}
        if self.style == "lines":
            return "\n".join(f"{k}: {v}" for k, v in words.items())
        if self.style == "table":
            return f"| {' | '.join(words)} |\n|{'---|' * len(words)}\n| {' | '.join(map(str, words.values()))} |"
        return " ".join(f"The {k.lower()} is {v}." for k, v in words.items())


@pytest.mark.parametrize("style", ["lines", "table", "prose"])
@pytest.mark.parametrize("task", ANSWERED, ids=lambda t: t.id)
def test_reciting_whole_rows_in_any_format_is_not_telling(task, style):
    out = play(task, type("Recites", (RecitesRows,), {"style": style}))
    assert out.grade.reward == 0 and out.grade.signature in ("missing_output", "no_write"), out.grade.details["facts"]
    assert not any(f["told"] for f in out.grade.details["facts"]), out.grade.details["facts"]
