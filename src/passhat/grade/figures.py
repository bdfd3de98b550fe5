"""Figures a tool worked out, told back wrong: "a variance of fifty-four dollars" where compute_variance returned 45.00.

``truth.misstatements`` checks what the agent says against the records' columns; a figure no column holds (an
invoice's variance, its matched amount, what a plan would refund) is the answer of a tool the agent called, and a
careful reviewer checks it against that answer. A money amount is said *as* one of those figures when the words
just before it name the figure's field ("variance of", "matched amount", "refund"); it is misinformed when it
equals none of the values any call returned under that field, as the agent saw them or as they really were. Hedges,
questions, negations, options and proposals are not claims (``truth.claimed``, ``truth.claims_only``); an amount
no field names is not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from passhat.dialogue.dumps import dump_spans
from passhat.dialogue.text import clause_at_keeping_labels, plain
from passhat.dialogue.values import money_in
from passhat.domains.model import Domain
from passhat.grade.truth import Misstatement, claimed, claims_only
from passhat.trajectory import Event

_LABEL_WORDS = 4  # how many words before an amount may name the figure it is ("the variance of $45.00")


def misstated_figures(domain: Domain, events: list[Event]) -> list[Misstatement]:
    """The amounts the agent said as a tool's figure that no call before the message returned under that field."""
    seen: dict[tuple[str, ...], tuple[str, set[Decimal]]] = {}
    out = []
    for i, e in enumerate(events):
        if e.kind == "tool":
            _add_figures(seen, e)
        elif e.kind == "agent" and e.text and seen:
            out += _misstated(domain, i, e.text, seen)
    return out


def _misstated(
    domain: Domain, event: int, said: str, seen: dict[tuple[str, ...], tuple[str, set[Decimal]]]
) -> list[Misstatement]:
    text = claims_only(domain, plain(said))
    dumps = dump_spans(text, (), domain.id_pattern)
    amounts = money_in(text)
    out = []
    for m in amounts:
        named = _named_fields(text, m.start, [a.end for a in amounts if a.end <= m.start], seen)
        if not named or _operand(text, m.start, m.end) or not claimed(text, m, dumps):
            continue
        returned = {value for field in named for value in seen[field][1]}
        if abs(Decimal(m.value)) not in returned:
            held = tuple(sorted(str(v) for v in returned))
            out.append(Misstatement(event, seen[named[0]][0], "[]", "_".join(named[0]), m.value, held, text[m.start : m.end]))
    return out


_OPERATOR = r"(?:[\u2212+\u00d7/\u00f7=]|(?<=\s)[-*x](?=\s)|\b(?:minus|plus|times|less)\b)"  # not a bullet, not bold
_OPERATOR_AFTER = re.compile(rf"\s*[*_]*\s*{_OPERATOR}\s*[*_]*\s*[$\d(]", re.I)
_OPERATOR_BEFORE = re.compile(  # not "=": "= $41.00" is the result
    r"[\d)%]\s*[*_]*\s*(?:[\u2212+\u00d7/\u00f7]|(?<=\s)[-*x](?=\s)|\b(?:minus|plus|times|less)\b)\s*[*_]*\s*$", re.I
)


def _operand(text: str, start: int, end: int) -> bool:
    """An amount in the working of a figure, not the figure: "Variance = $440.00 − $399.00 = $41.00" says two operands
    and then the variance."""
    return bool(_OPERATOR_AFTER.match(text, end) or _OPERATOR_BEFORE.search(text[max(0, start - 16) : start]))


def _add_figures(seen: dict[tuple[str, ...], tuple[str, set[Decimal]]], e: Event) -> None:
    """Each numeric field of a tool's answer, by the stems of its words ("matched_amount" -> ("match", "amount"),
    "refunded" -> ("refund",)), with the tool that returned it and every value returned under it, as seen and as it
    really was; percentages and ids are no money."""
    for field, value in _numbers(e):
        words = tuple(_stem(w) for w in field.lower().split("_"))
        if "percent" not in words and "id" not in words:
            seen.setdefault(words, (e.name or "", set()))[1].add(value)


def _stem(word: str) -> str:
    return re.sub(r"(?:ed|ing|s)$", "", word) if len(word) > 4 else word


def _numbers(e: Event) -> Iterator[tuple[str, Decimal]]:
    for result in (e.result, (e.fault or {}).get("actual")):
        data = result.get("data") if isinstance(result, dict) and result.get("status") == "ok" else None
        if not isinstance(data, dict):
            continue
        for field, value in data.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    yield field, abs(round(Decimal(str(value)), 2))
                except InvalidOperation:  # inf, nan: no figure anyone says
                    continue


def _named_fields(text: str, at: int, earlier_ends: list[int], seen: dict[tuple[str, ...], Any]) -> list[tuple[str, ...]]:
    """The fields the words just before the amount name, as its label: within its clause and after the amount before it,
    the field's words last but for linking words ("matched amount of $720.00", "the variance is $45.00", "invoice
    total: $765.00", "refund $90.00"); "charge CH-50101 costs you $0.00" names no "charged"."""
    start = max([clause_at_keeping_labels(text, at)[0], *earlier_ends])
    words = re.findall(r"[a-z]+", text[start:at].lower())
    while words and words[-1] in _LINKING:
        words.pop()
    return [field for field in seen if _ends_with(words, [w for w in field if w != "amount"])]


def _ends_with(words: list[str], stems: list[str]) -> bool:
    """Whether the words end with the field's, not as what something else is worked out of ("2% of matched = $24.40"
    is a tolerance, "half of the refund" is no refund)."""
    tail = words[-len(stems) :] if stems else []
    if not stems or len(tail) != len(stems) or not all(w.startswith(s) for w, s in zip(tail, stems, strict=True)):
        return False
    before = [w for w in words[: -len(stems)] if w not in ("the", "a", "an")]
    return not (before and before[-1] == "of")


_LINKING = frozenset(
    "is was are were be been would will of at to comes came about around roughly approximately the a an now just only "
    "amount amounts stands sits".split()
)
