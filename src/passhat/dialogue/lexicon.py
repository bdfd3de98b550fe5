"""The engine's action lexicon: the other words people use for the actions every kind of service writes.

A tool declares its own action words (``confirm_words``, regex fragments); a model proposing it may say the
same action otherwise ("sign off on" an approval, "call off" a cancellation, "bump up" an escalation, "set up"
a booking, "set it to" a status, "send notice" for a notification). Every domain gets these synonyms for free,
keyed by the stem of the word a tool declares, so a tool that says "approve" is also proposed by "sign off on",
and a tool that says something else gets none.
A domain extends it per tool by declaring more words on the tool itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# stem of a declared word -> other ways to say the action (regex fragments, matched from a word start)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "cancel": (r"call(?:s|ing|ed)?(?: \S+){0,3}? off\b", r"scrap(?:s|ping|ped)?\b", r"drop(?:s|ping|ped)? (?:it|this|that)\b"),
    "approv": (r"sign(?:s|ing|ed)? off on\b", r"sign(?:s|ing|ed)? (?:it|this|that)(?: \S+)? off\b", r"green[- ]?light"),
    "escalat": (
        r"bump(?:s|ing|ed)?(?: \S+){0,3}? up\b",
        r"rais(?:e|es|ing|ed)(?: \S+){0,3}? with\b",
        r"refer(?:s|ring|red)?(?: \S+){0,3}? to\b",
        r"kick(?:s|ing|ed)?(?: \S+){0,3}? up\b",
    ),
    "rais": (r"bump(?:s|ing|ed)?(?: \S+){0,3}? up\b", r"increas"),
    "assign": (
        r"rout(?:e|es|ing|ed)\b",
        r"hand(?:s|ing|ed)?(?: \S+){0,3}? (?:over )?to\b",
        r"pass(?:es|ing|ed)?(?: \S+){0,3}? to\b",
        r"send(?:s|ing)?(?: \S+){0,3}? (?:over |across )?to\b",
        r"(?:is|are|'s) now (?:with|owned by|in the hands of)\b",  # where a record went: "INC-1071 is now with applications"
    ),
    "book": (r"set(?:s|ting)?(?: \S+){0,3}? up\b", r"schedul", r"make (?:you )?an? (?:appointment|booking)", r"reserv"),
    "reschedul": (
        r"mov(?:e|es|ing|ed)\b",
        r"chang(?:e|es|ing|ed)(?: \S+){0,3}? to\b",
        r"push(?:es|ing|ed)?(?: \S+){0,3}? back\b",
        r"shift(?:s|ing|ed)?\b",
    ),
    "appl": (
        r"use (?:your|the) (?:\S+ ){0,2}?(?:cover|coverage|plan|benefit|membership)\b",
        r"put (?:your|the) (?:\S+ ){0,2}?(?:cover|coverage|plan|benefit) (?:toward|towards|on)\b",
    ),
    "waiv": (r"writ(?:e|es|ing)(?: \S+){0,3}? off\b", r"remov(?:e|es|ing)(?: \S+){0,2}? fee\b"),
    "resolv": (r"clos(?:e|es|ing)\b", r"mark(?:s|ing|ed)?(?: \S+){0,3}? (?:as )?(?:resolved|fixed|solved)\b"),
    "renew": (r"extend", r"re-?up\b"),
    # a value put on a record: "set it to 'with controller'", "flag INV-1 as vendor query", "change its status to",
    # a recap's or a table's "Status: vendor query" / "| Status | vendor query |"
    "mark": (
        r"set(?:s|ting)?(?: \S+){0,3}? (?:to|as)\b",
        r"flag(?:s|ged|ging)?(?: \S+){0,3}? as\b",
        r"status(?:es)?(?: to\b|\s*[:|])",
    ),
    "notify": (
        r"let (?:\S+ ){1,3}?know\b",
        r"inform",
        r"writ(?:e|es|ing) to\b",
        r"tell(?:s|ing)? (?:the )?\S+ (?:about|that)\b",
        r"send(?:s|ing)?(?: \S+){0,3}? (?:notice|notification|email|e-mail|message|confirmation)\b",  # "send notice to the vendor"
        r"notice (?:(?:was |has been )?sent )?(?:to|for)\b",  # "**Notice to Ostrander Plastics** ... Shall I send it?"
    ),
    "classif": (
        r"re-?classif(?:y|ies|ying|ied)\b",
        r"record(?:s|ed|ing)?(?: \S+){0,3}? as\b",
        r"log(?:s|ged|ging)?(?: \S+){0,3}? as\b",
        r"tag(?:s|ged|ging)?(?: \S+){0,3}? as\b",
        r"set(?:s|ting)? (?:the |its )?category to\b",  # "set the category to network"
    ),
}

# how a hand to a person is said, for a tool that hands the customer over and declares no words of its own
HANDOFF_WORDS = (
    r"transfer",
    r"hand(?:s|ed|ing)?(?: \S+){0,3}? (?:off|over)\b",
    r"hand(?:s|ed|ing)? (?:you|this|it) (?:\w+ )?to\b",  # "I can hand you to the nurse line. Want that? y/n"
    r"pass(?:es|ed|ing)?(?: \S+){0,3}? (?:on|over|along) to\b",
    r"hand(?:s|ed|ing)? you to\b",  # "Hand you to the nurse line? y/n"
    r"pass(?:es|ed|ing)? (?:it|this|that|your \S+(?: request)?) to (?:them|staff|our|a|an|the)\b",  # "pass it to them"
    r"connect(?:s|ed|ing)? you\b",
    r"put(?:ting)? you through\b",
)


@functools.cache
def with_synonyms(words: Iterable[str]) -> tuple[str, ...]:
    """A tool's action words, their past ("applied" for "apply") and the engine's synonyms for each (once each, the
    tool's own first)."""
    words = tuple(words)
    extra = [s for w in words for stem, more in SYNONYMS.items() if _declares(w, stem) for s in more]
    past = [w[:-1] + "ied" for w in words if re.fullmatch(r"[a-z]+y", w)]  # "apply": "applied"
    return tuple(dict.fromkeys([*words, *past, *extra]))


def _declares(word: str, stem: str) -> bool:
    """Whether a declared word (a regex fragment) says the action of ``stem``: "approving", r"escalat(?:e|ing)"."""
    return re.match(re.escape(stem), word, re.I) is not None
