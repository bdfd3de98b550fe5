"""A domain's conversation kit: what the engine's scripted customer and reference agent need to talk about
*this* world, so that neither knows any domain's nouns.

The customer is asked for details (the kit's *slots*: an order, an invoice, a member number), recognises
a question for one by its cue, and answers it from its task in the domain's phrasings; it identifies
itself the way the domain's customers do. The reference agent asks for what a goal still lacks, and reads
the profile after authenticating. Phrasings come per tone (plain, terse, upset, scattered), like the
engine's own, and are spoken through a ``Voice`` that picks among them with the trial's random source.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from passhat.dialogue.text import cue
from passhat.domains.model import Action, Customer, Goal

__all__ = ["IDENTITY", "ConversationKit", "Identification", "Phrasings", "Voice", "cue", "joined", "transposed"]

IDENTITY = "identity"  # the slot every kit has: who the customer is
Phrasings = Mapping[str, Mapping[str, tuple[str, ...]]]  # kind -> tone -> templates ("plain" required)


class Voice(Protocol):
    """How a kit speaks for the customer: a template of ``kind`` in the customer's tone, filled in."""

    rng: random.Random

    def say(self, kind: str, **fields: str) -> str: ...


@dataclasses.dataclass(frozen=True)
class Identification:
    """What the customer says when asked who it is.

    ``given``: the details are all there (False: a slip, such as only a first name; it will be asked
    again). ``correction``: what it says if the agent then finds nothing (a typo put right), said through
    the voice at that moment.
    """

    text: str
    given: bool = True
    correction: Callable[[Voice], str] | None = None


@dataclasses.dataclass(frozen=True)
class ConversationKit:
    """Everything the scripted customer and the reference agent know about talking in one domain."""

    slots: tuple[str, ...]  # details the customer may be asked for, in the order it answers them; IDENTITY first
    cues: Mapping[str, re.Pattern[str]]  # per slot: the wording of a question that asks for it
    phrasings: Phrasings  # the domain's customer templates: at least "vague" (a request not said yet)
    slips: Callable[[Customer], Sequence[str | None]]  # an incoherent customer's possible first-try slips (None: none)
    identify: Callable[[Customer, str | None, Voice], Identification]  # (customer, slip, voice)
    answer: Callable[[str, Goal, Voice], str]  # a detail slot's answer from the goal; "" when the goal lacks it
    refind: Callable[[str], str | None]  # the slot an agent's "not found" is about, once identity is given
    knows: Callable[[Goal], list[str]]  # the values the customer knows of a goal and can say (ids, a reason)
    identity_text: Callable[[Customer], str]  # everything the customer could say to identify itself
    ask_identity: str  # the reference agent's first question for who the customer is
    ask_identity_again: str
    questions: Mapping[str, str]  # per detail slot: how the reference agent asks for it
    missing: Callable[[str, Goal, str], bool]  # whether a goal needs a slot the customer's words so far lack
    profile: Callable[[Customer], Action | None] = lambda customer: None  # read right after authentication
    which: str | None = None  # the slot a bare "which one?" asks for: the record a request is about
    # per slot: words that name one such thing besides the slot's name ("Visa ending in 4698" a payment method), so
    # "Which of those?" after them asks for that slot
    nouns: Mapping[str, re.Pattern[str]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.slots or self.slots[0] != IDENTITY:
            raise ValueError(f"a conversation kit's slots start with {IDENTITY!r}")
        if unknown := (set(self.cues) | set(self.questions) | set(self.nouns) | {self.which} - {None}) - set(self.slots):
            raise ValueError(f"cues, questions or nouns for slots the kit does not declare: {sorted(unknown)}")


def joined(*parts: str) -> str:
    """The non-empty parts of a message, one space apart."""
    return " ".join(p for p in parts if p)


def transposed(text: str, rng: random.Random, start: int = 0) -> str:
    """The text with two neighbouring, different characters from ``start`` on swapped: the number an incoherent
    customer misreads. Always another number (the swapped characters differ), so the lookup misses and the
    customer's correction is really needed; ``start`` keeps a prefix (a letter code) as it is."""
    spots = [i for i in range(start, len(text) - 1) if text[i] != text[i + 1]]
    i = rng.choice(spots)
    return f"{text[:i]}{text[i + 1]}{text[i]}{text[i + 2 :]}"
