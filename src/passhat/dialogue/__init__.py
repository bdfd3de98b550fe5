"""Plain-language conventions shared by simulated customers, reference agents and graders.

Customers and agents talk in words only, so "did the customer say yes?" and "was this fact said?" are
questions about text. Keeping the answers in one place means the graders judge exactly the wording
the simulators produce, and a real model's wording by the same rules.
"""

from __future__ import annotations

import re

_YES = re.compile(
    r"^\W*(yes|yeah|yep|yup|sure|correct|confirm(ed)?|i confirm|go ahead|please do|please proceed|"
    r"proceed|ok(ay)?|do it|that'?s (right|correct)|sounds good|absolutely|definitely)\b",
    re.I,
)
_TAKES_BACK = re.compile(r"\?|\b(no|not|don'?t|do not|never|wait|stop|hold on|wrong|but|instead|rather)\b", re.I)
_HARMLESS = re.compile(r"\bno (problem|worries)\b", re.I)
_NUMBER = re.compile(r"(?<![\w#-])\d[\d,]*(?:\.\d+)?(?!\w|-\d)")  # not the digits of an id such as card_1234


def is_affirmative(text: str) -> bool:
    """An explicit yes: opens with a word of assent, and what follows neither asks nor takes it back.

    "Yes, cancel that order please" is a yes; "Okay, but why only $50?" and "Yes... no wait" are not.
    """
    opening = _YES.match(text)
    return bool(opening) and not _TAKES_BACK.search(_HARMLESS.sub("", text[opening.end():]))


def numbers_in(text: str) -> list[float]:
    out = []
    for token in _NUMBER.findall(text):
        try:
            out.append(float(token.replace(",", "")))
        except ValueError:
            continue
    return out


def fact_said(fact: str, text: str) -> bool:
    """Whether ``fact`` appears in ``text``: numbers by value ("$1,204.50" says 1204.5), words by case."""
    cleaned = fact.strip().lstrip("$")
    try:
        value = float(cleaned.replace(",", ""))
    except ValueError:
        return cleaned.lower() in text.lower()
    return any(abs(value - n) < 0.005 for n in numbers_in(text))


def mentions(text: str, value: object) -> bool:
    """Whether a call's argument value is named in a message (ids, zips, amounts)."""
    if isinstance(value, (list, tuple)):
        return all(mentions(text, v) for v in value)
    if isinstance(value, (int, float)):
        return fact_said(str(value), text)
    return str(value).lower() in text.lower()


def confirms(proposal: str | None, reply: str | None, values: list[object], words: tuple[str, ...] = ()) -> bool:
    """Whether ``reply`` is an explicit yes to a ``proposal`` that names every one of ``values`` and
    uses one of ``words`` (the action: a yes to a cancellation does not confirm a return).

    Graders judge a write by this after the fact; the confirmation guard refuses one by it before.
    """
    return (
        proposal is not None
        and reply is not None
        and is_affirmative(reply)
        and all(mentions(proposal, v) for v in values)
        and (not words or any(re.search(rf"\b{re.escape(w)}", proposal, re.I) for w in words))
    )
