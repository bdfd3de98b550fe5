"""An ending hand-off told to the customer: a call that ends the conversation is announced before it does.

Every domain's policy asks the agent to tell the customer who takes over ("tell them staff will take over"); a
call of a tool that ends the conversation (``ToolMeta.ends_conversation``) made in a silent turn leaves the
customer looking at the agent's last question, never told they were handed over. So the agent's messages since
the customer last spoke, the one of the very turn that makes the call included, must say the hand-off plainly:
in the tool's own words for it (its ``confirm_words``, the engine's hand-off words by default, with their
synonyms) or saying who will take over. Asked ("Shall I transfer you?"), negated, hedged, offered as a
possibility or dumped it is not said; a later negation of it ("I'm not transferring you after all") takes it back.
A hand-off the customer asked for is told too: the agent offered it ("Want me to hand you to the nurse line?")
and the customer's yes to that offer still stands ("Yes! Please just do it").
"""

from __future__ import annotations

import functools
import re
from typing import Any

from passhat.dialogue import answered_proposal
from passhat.dialogue.dumps import dump_spans, in_dump
from passhat.dialogue.facts import said_plainly
from passhat.dialogue.proposals import action_pattern
from passhat.dialogue.text import is_question, negated_at, plain
from passhat.env import Environment
from passhat.env.tools import ToolSpec
from passhat.trajectory import Event

# who takes over, as the policies say it: "staff will take over", "the controller will take it from here", "one of
# them will pick this up", "escalated to the controller" (someone else than the agent: "I'll take it from here" is none)
_TAKING_OVER = re.compile(
    r"\b(?!(?:i|we)\b)[a-z]+(?:'ll|\s+will|\s+(?:is|are)\s+going\s+to)\s+(?:now\s+|soon\s+)?"
    r"(?:take\s+(?:over|it\s+from\s+here|this\s+from\s+here)|pick\s+(?:this|it)\s+up|be\s+in\s+touch|contact\s+you"
    r"|follow\s+up|be\s+with\s+you)\b"
    r"|\bescalat(?:e|ed|ing)\s+(?:\S+\s+){0,3}?to\s+(?:a\s+|an\s+|our\s+|the\s+)?(?:member\s+of\s+)?"
    r"(?:staff|human|person|colleague|specialist|supervisor|manager|controller|nurse|records\s+office)",
    re.I,
)

# a hand-off the agent only could make, its sentence before it: "I could transfer you", "If you want, I can hand you over"
_POSSIBLE = re.compile(r"(?:\b(?:can|could|might|may)\b(?!'t|\s+not)|\bif\s+you\b)[^.?!\n]*$", re.I)


def unannounced_handoffs(events: list[Event], env: Environment, id_pattern: str | None = None) -> list[dict[str, Any]]:
    """Each call that ended the conversation with no message since the customer last spoke saying the hand-off."""
    out = []
    for i, e in enumerate(events):
        spec = env.tools.get(e.name or "") if e.kind == "tool" else None
        if spec is None or not spec.meta.ends_conversation or not e.took_effect:
            continue
        said = [x.text for x in _since_the_customer_spoke(events, i) if x.kind == "agent" and x.text]
        if not (_announced(said, _words(spec), id_pattern) or _agreed(events[:i], _words(spec), id_pattern)):
            out.append({"tool": e.name, "event": i, "said": said})
    return out


def _agreed(before: list[Event], words: tuple[re.Pattern[str], ...], id_pattern: str | None) -> bool:
    """Whether the customer's standing yes answers an offer of the hand-off: its words said there, not negated."""
    answered = answered_proposal([(e.kind, e.text) for e in before if e.kind in ("user", "agent")])
    if answered is None:
        return False
    offer = plain(answered[1])
    dumps = dump_spans(offer, (), id_pattern)
    return any(
        not negated_at(offer, m.start(), m.end()) and not in_dump(m.start(), m.end(), dumps)
        for pattern in words
        for m in pattern.finditer(offer)
    )


def _since_the_customer_spoke(events: list[Event], at: int) -> list[Event]:
    """The events from the customer's last message before ``at`` to their next one (or the end)."""
    start = next((j for j in range(at - 1, -1, -1) if events[j].kind == "user"), -1) + 1
    end = next((j for j in range(at + 1, len(events)) if events[j].kind == "user"), len(events))
    return events[start:end]


@functools.cache
def _words_of(words: tuple[str, ...]) -> re.Pattern[str] | None:
    """The tool's hand-off words with the lexicon's synonyms, compiled once per tool (every trial reads them)."""
    return action_pattern(words)


def _words(spec: ToolSpec) -> tuple[re.Pattern[str], ...]:
    """How the hand-off is said: in the tool's own words for it, or by who takes over."""
    own = _words_of(tuple(spec.meta.confirm_words))
    return (own, _TAKING_OVER) if own else (_TAKING_OVER,)


def _announced(said: list[str], words: tuple[re.Pattern[str], ...], id_pattern: str | None) -> bool:
    """Whether the messages say the hand-off plainly and no later mention of it takes it back."""
    announced = False
    for raw in said:
        text = plain(raw)
        for m in sorted((m for pattern in words for m in pattern.finditer(text)), key=lambda m: m.start()):
            if _said(raw, text, m.start(), m.end(), id_pattern):
                announced = True
            elif announced and negated_at(text, m.start(), m.end()):
                announced = False
    return announced


def _said(raw: str, text: str, start: int, end: int, id_pattern: str | None) -> bool:
    """A hand-off said as made: plainly (see ``said_plainly``), not asked, not only possible."""
    return (
        said_plainly(raw, start, end, id_pattern) and not is_question(text, start, end) and not _POSSIBLE.search(text, 0, start)
    )
