"""Plain-language conventions shared by simulated customers, reference agents, graders and guards.

Customers and agents talk in words only, so "did the customer say yes, and to what?" and "was this fact
told?" are questions about text. Keeping the answers in one place means the graders judge exactly the
wording the simulators produce, and a real model's wording by the same rules: ``facts`` (a fact told by
meaning), ``proposals`` (what a yes agrees to), ``values`` and ``text`` (the reading underneath).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from passhat.dialogue.values import dates_in, names_identifier, numbers_in

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

_YES = re.compile(
    r"^\W*(yes|yeah|yep|yup|sure|correct|confirm(ed)?|i confirm|go ahead|please do|please proceed|"
    r"proceed|ok(ay)?|do it|that'?s (right|correct)|sounds good|absolutely|definitely)\b",
    re.I,
)
_TAKES_BACK = re.compile(r"\?|\b(no|not|don'?t|do not|never|wait|stop|hold on|wrong|but|instead|rather)\b", re.I)
_HARMLESS = re.compile(r"\bno (problem|worries)\b", re.I)

Message = tuple[str, str]  # (role: "user" | "agent", text)


def is_affirmative(text: str) -> bool:
    """An explicit yes: opens with a word of assent, and what follows neither asks nor takes it back.

    "Yes, cancel that booking please" is a yes; "Okay, but why only $50?" and "Yes... no wait" are not.
    """
    opening = _YES.match(text)
    return bool(opening) and not _TAKES_BACK.search(_HARMLESS.sub("", text[opening.end() :]))


def takes_back(text: str) -> bool:
    """A customer message that withdraws or questions an earlier yes ("wait", "no", any question)."""
    return bool(_TAKES_BACK.search(_HARMLESS.sub("", text)))


def standing_yes(messages: Sequence[Message]) -> int | None:
    """The index of the customer's yes that still stands at the end of ``messages``, or None.

    A yes stays valid until the customer says something that takes it back: "Thanks" after the agent's
    "one moment while I process that" does not withdraw it, "wait, which card?" does.
    """
    for i in range(len(messages) - 1, -1, -1):
        role, text = messages[i]
        if role != "user":
            continue
        if is_affirmative(text):
            return i
        if takes_back(text):
            return None
    return None


def answered_proposal(messages: Sequence[Message]) -> tuple[int, str] | None:
    """The standing yes and the agent message it answers, or None when no yes stands."""
    yes = standing_yes(messages)
    if yes is None:
        return None
    proposal = next((messages[j][1] for j in range(yes - 1, -1, -1) if messages[j][0] == "agent"), None)
    return None if proposal is None else (yes, proposal)


def mentions(text: str, value: object) -> bool:
    """Whether a value the customer gave is named in a message (an email, a name, a date, an id)."""
    if isinstance(value, (list, tuple)):
        return all(mentions(text, v) for v in value)
    if isinstance(value, (int, float)):
        return any(float(n.value) == float(value) for n in numbers_in(text))
    if isinstance(value, str) and _ISO_DATE.fullmatch(value) and any(d.value == value for d in dates_in(text)):
        return True  # a date said in any usual form ("14 March 1987") names 1987-03-14; one without its year does not
    return bool(names_identifier(text, str(value))) or str(value).lower() in text.lower()
