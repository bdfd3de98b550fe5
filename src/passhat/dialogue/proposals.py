"""What a customer's yes agrees to: the proposal it answers, bound to the writes that follow.

A yes confirms a write only if the proposal it answers *proposes* that write — its action said as
something the agent will do, not as what it will do instead ("instead of cancelling order X, I can put
it on hold" proposes no cancellation) — names every term the write commits the customer to (the order,
each item, the payment method, the address), and states nothing the writes do not do (another amount,
the refund as a charge, another card). The graders judge a write by this after the fact, the
confirmation guard before it, and the scripted customer before it says yes.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from passhat.dialogue.facts import Direction, denied_after, put_right_later
from passhat.dialogue.lexicon import with_synonyms
from passhat.dialogue.questions import REFUSING, answered, asks_yes, within
from passhat.dialogue.text import (
    clause_at,
    clause_at_keeping_labels,
    contrasted_at,
    negated_at,
    reported_at,
    sentence_at,
    sentences,
)
from passhat.dialogue.values import (
    Mention,
    card_endings_in,
    cued_card_endings_in,
    dates_in,
    money_in,
    names_date,
    names_identifier,
    names_person,
    names_phrase,
    names_street,
    names_time,
    same_date,
    times_in,
    units_in,
)

TermKind = Literal["id", "street", "phrase", "name", "description", "money", "card_ending", "date", "time"]
Spans = Sequence[tuple[int, int]]


@dataclasses.dataclass(frozen=True)
class Term:
    """One thing a write commits the customer to, and how a proposal can name it.

    ``id``: an entity id in any usual form; ``street``: a street line, abbreviations allowed; ``phrase``:
    words said as they are; ``description``: a thing by its name's head noun with, in the same sentence,
    every one of ``words`` and none of ``unlike`` (an item by its product and the options that tell it from
    the others: "the walnut speakers", not "the black speakers"), and ``replaced`` (what it replaces) only as
    what is given up ("the white speakers for the walnut ones", not the other way round); ``money``: an amount, moving
    ``direction`` for the customer; ``card_ending``: a card's last four digits. A term is named when it or
    one of its ``alternatives`` is. ``date`` (ISO) and ``time`` ("HH:MM"): a day or a time of day in any usual form
    ("Monday 16 June", "2:00 pm"; once a write of the batch has a date term, a proposal that states another date
    conflicts); ``name``: a person, also by initial ("L. Eklund") or surname first. A ``phrase`` term's ``unlike``
    are the other values of its closed set (the other hold reasons): one of them stated beside it conflicts. An
    optional term (``required=False``) need not be named, but a proposal may state it without stating something
    the write does not do.
    """

    kind: TermKind
    value: str
    role: str = ""
    required: bool = True
    direction: Direction | None = None
    words: tuple[str, ...] = ()
    unlike: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    alternatives: tuple[Term, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "value": self.value}
        out.update({k: v for k, v in (("role", self.role), ("direction", self.direction)) if v})
        if not self.required:
            out["required"] = False
        if self.words:
            out["words"] = list(self.words)
        if self.unlike:
            out["unlike"] = list(self.unlike)
        if self.replaced:
            out["replaced"] = list(self.replaced)
        if self.alternatives:
            out["alternatives"] = [a.to_dict() for a in self.alternatives]
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Term:
        return cls(
            **{
                **raw,
                **{k: tuple(raw.get(k, ())) for k in ("words", "unlike", "replaced")},
                "alternatives": tuple(cls.from_dict(a) for a in raw.get("alternatives", ())),
            }
        )

    def __str__(self) -> str:
        return f"{self.role} {self.value}".strip()


@dataclasses.dataclass(frozen=True)
class Commitment:
    """What a yes to one write agrees to: its action (``words``, regex fragments) and its terms."""

    tool: str
    words: tuple[str, ...]
    terms: tuple[Term, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "words": list(self.words), "terms": [t.to_dict() for t in self.terms]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Commitment:
        return cls(raw["tool"], tuple(raw["words"]), tuple(Term.from_dict(t) for t in raw["terms"]))


@dataclasses.dataclass(frozen=True)
class Binding:
    """Why a proposal does or does not bind a write; empty tuples mean it does."""

    unproposed: bool = False  # the action is not offered (absent, negated, or what is done instead of)
    unnamed: tuple[str, ...] = ()  # required terms the proposal does not name
    conflicting: tuple[str, ...] = ()  # what the proposal states that no write of the batch does

    @property
    def ok(self) -> bool:
        return not (self.unproposed or self.unnamed or self.conflicting)

    def explain(self) -> str:
        parts = ["the action is not what the proposal offers"] if self.unproposed else []
        if self.unnamed:
            parts.append(f"it does not name {', '.join(self.unnamed)}")
        if self.conflicting:
            parts.append(f"it states {', '.join(self.conflicting)}, which this write does not do")
        return "; ".join(parts)


_CONTRAST_OPENS = re.compile(r"\W*(?:instead\s+of|rather\s+than|as\s+opposed\s+to|in\s+place\s+of|other\s+than)\b", re.I)
_OFFER = re.compile(r"\b(?:i|we)\s*(?:can|could|will|would|shall|'ll|'d)\b|\blet\s+me\b", re.I)


def proposes(proposal: str, words: Iterable[str], reported: bool = False, spans: Spans | None = None) -> bool:
    """Whether one of the action's words is offered: said, and neither negated (even as a modifier: "I can't
    change the payment method"), nor what is done instead, nor said as done already ("your order has been
    cancelled. Would you like a receipt?") — unless ``reported``: the message is judged as a report of what was
    done. Only within ``spans`` when given (what the customer's yes answers). The engine's synonyms of each word
    count (``dialogue.lexicon``); a word inside a quoted wording (a notice's text) is none. A tool that declares no
    words is offered by any proposal that names its terms."""
    words = tuple(words)
    if not words:
        return True
    proposal = wording_blanked(proposal)
    for word in with_synonyms(words):
        for found in re.finditer(rf"\b(?:{word})", proposal, re.I):
            start, end = found.span()
            if spans is not None and not within(spans, start):
                continue
            if negated_at(proposal, start, end, spare_modifiers=False) or _withheld(proposal, start, end):
                continue
            if reported or not reported_at(proposal, start, end):
                return True
    return False


# the action itself the subject of a denial: "its workaround does not apply", "a cancellation isn't possible"
_DENIED_ACTION = re.compile(
    r"\w*(?:\s+(?!(?:and|or|but|so|that|which|who|if|when|because|as)\b)\S+){0,2}?\s+"
    r"(?:(?:does|do|did|is|are|was|were|could|would|should)(?:\s+not|n't)|can(?:not|'t|\s+not)|won't|will\s+not)\b",
    re.I,
)


def _withheld(text: str, start: int, end: int) -> bool:
    """Negated ("I can't cancel it"), the subject of a denial ("its workaround does not apply"), or named as what is
    done instead of: "instead of cancelling", or anywhere in a clause that opens "instead of the request to ..."
    before any "I can" offers something."""
    if negated_at(text, start, end) or contrasted_at(text, start, end):
        return True
    clause_start, clause_end = clause_at(text, start)
    denied = _DENIED_ACTION.match(text, end)
    if denied and denied.end() <= clause_end:
        return True
    opening = _CONTRAST_OPENS.match(text, clause_start)
    return bool(opening) and not _OFFER.search(text, opening.end(), start)


def binding(
    proposal: str,
    write: Commitment,
    batch: Sequence[Commitment] = (),
    id_pattern: str | None = None,
    own: Iterable[str] = (),
    context: Sequence[Commitment] = (),
) -> Binding:
    """Whether ``proposal`` binds ``write``, when the customer's yes to it is followed by ``batch`` (which
    includes ``write``; several writes may be proposed together). ``own``: ids anyone may mention (the
    customer's own id) without proposing anything; ``context``: writes already made, which the message
    may report ("Done: order A is cancelled. I can now cancel order B...")."""
    batch, own = list(batch) or [write], tuple(own)
    mine = {_id_core(i) for i in own}
    pattern = actions([*batch, *context])
    spans = answered(proposal, pattern)
    taken = _other_values_said(proposal, write, batch)
    return Binding(
        unproposed=not proposes(proposal, write.words, spans=spans),
        unnamed=tuple(str(t) for t in write.terms if t.required and not _given(proposal, t, spans, mine, taken)),
        conflicting=tuple(
            _stated_but_not_agreed(proposal, _terms_of(batch), id_pattern, set(own), spans, pattern, made=_terms_of(context))
        ),
    )


def _terms_of(writes: Iterable[Commitment]) -> list[Term]:
    return [t for c in writes for t in c.terms]


def actions(writes: Iterable[Commitment]) -> re.Pattern[str] | None:
    """One pattern for the action words of ``writes`` and their synonyms (None: no write declares any)."""
    return action_pattern(tuple(sorted({w for c in writes for w in c.words})))


@functools.cache
def action_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for action words and their synonyms, matched from a word start (None: no words)."""
    every = with_synonyms(words)
    return re.compile(r"\b(?:" + "|".join(every) + ")", re.I) if every else None


def named(text: str, term: Term, spans: Spans | None = None, taken: Spans = ()) -> bool:
    """Whether ``text`` names the term. What a write sets (an amount, a date, a value of a closed set: a phrase
    with ``unlike``) counts only within ``spans``, what the yes answers: an amount recapped among the findings is
    not proposed ("Billed $1,792.00 ... Proposed: short-pay to $1,523.20"); a record may be named anywhere. A phrase
    said only as part of a longer value another write sets (``taken``: "vendor" in the status "vendor query") is not
    said for itself."""
    return _named_here(text, term, spans, taken) or any(named(text, alt, spans, taken) for alt in term.alternatives)


def _named_here(text: str, term: Term, spans: Spans | None, taken: Spans = ()) -> bool:
    if term.kind == "id":
        return bool(names_identifier(text, term.value))
    if term.kind == "street":
        return bool(names_street(text, term.value))
    if term.kind == "description":
        return _described(text, term)
    if term.kind == "card_ending":
        return any(not _refused_value(text, m.start, m.end, spans) for m in card_endings_in(text) if m.value == term.value)
    if term.kind == "name":
        return bool(names_person(text, term.value))
    if term.kind == "phrase":
        found = [
            start
            for start, end in names_phrase(text, term.value)
            if not (_refused_value(text, start, end, spans) or _part_of(taken, start, end))
        ]
        return any(within(spans, start) for start in found) if term.unlike and spans else bool(found)
    spans = spans or [(0, len(text))]
    if term.kind == "date":
        return _said_last(text, names_date(text, term.value), dates_in(text), spans)
    if term.kind == "time":
        return _said_last(text, names_time(text, term.value), times_in(text), spans)
    amounts = money_in(text)
    agreed = [(m.start, m.end) for m in amounts if _agreed_money(m.value, m.direction, [term])]
    return _said_last(text, agreed, amounts, spans)


def _said_last(text: str, found: Sequence[tuple[int, int]], kind: Sequence[Mention], spans: Spans) -> bool:
    """Whether a value is said within ``spans`` and not put right later by another of its ``kind`` ("at 2:30 pm —
    sorry, I meant 2:00 pm" books 2:00 pm): the last word counts."""
    every = [(m.start, m.end) for m in kind]
    return any(within(spans, start) and not put_right_later(text, end, every) for start, end in found)


def _part_of(taken: Spans, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a longer span of ``taken``."""
    return any(s <= start and end <= e and e - s > end - start for s, e in taken)


def _other_values_said(text: str, write: Commitment, others: Sequence[Commitment]) -> list[tuple[int, int]]:
    """Where the phrases that the other writes in play set are said: "vendor query" for a status beside a notice."""
    phrases = {
        a.value for c in others if c.tool != write.tool for t in c.terms for a in (t, *t.alternatives) if a.kind == "phrase"
    }
    return [span for p in phrases for span in names_phrase(text, p)]


def _refused_value(text: str, start: int, end: int, spans: Spans | None) -> bool:
    """A value said as what the agent will not do: negated ("I can't make it critical", "Critical isn't allowed"), or
    in a sentence that declines, outside what the yes answers ("Can't renew it that way (club credit pays for callouts
    only). Renew ... to your Visa instead? y/n"). It names no term of the write asked about."""
    if negated_at(text, start, end) or denied_after(text, end):
        return True
    if spans is None or within(spans, start):
        return False
    s_start, s_end = sentence_at(text, start)
    return bool(REFUSING.search(text, s_start, s_end))


def _described(text: str, term: Term) -> bool:
    """By the head noun of its name (singular or plural) with, in that sentence, every distinguishing word
    and no word of another thing of the same name; what it replaces said, in its clause, only as given up."""
    head = _tokens(term.value)[-1:]
    for start, end in sentences(text):
        said = _spans(text, start, end)
        if not head or not _occurrences(said, head) or any(_occurrences(said, _tokens(w)) for w in term.unlike):
            continue
        found = [_occurrences(said, _tokens(w)) for w in term.words]
        if not all(found):
            continue
        if not term.replaced or any(_replaced_only_as_given(text, said, term, at) for at in found[0]):
            return True
    return False


_UNITS = {
    "inch": "in",
    "inche": "in",
    "pound": "lb",
    "foot": "ft",
    "feet": "ft",
    "lumen": "lm",
    "liter": "l",
    "litre": "l",
    "milliliter": "ml",
    "millilitre": "ml",
    "millimeter": "mm",
    "millimetre": "mm",
    "pc": "piece",
}


def _tokens(words: str) -> list[str]:
    """Words as compared: lower case, letters and digits apart ("28-inch", "11x14"), singular, units abbreviated
    (12" is "12 in")."""
    return [t for t, _ in _spans(words, 0, len(words))]


def _spans(text: str, start: int, end: int) -> list[tuple[str, int]]:
    """The tokens of ``text[start:end]`` with their offsets."""
    out = []
    for m in re.finditer(r"(\d+)([\"″])?|[a-z]+", text[start:end].lower()):
        word = m.group(1) or m.group()
        out.append((_UNITS.get(_stem(word), _stem(word)), start + m.start()))
        if m.group(2):
            out.append(("in", start + m.start(2)))
    return out


def _occurrences(said: list[tuple[str, int]], wanted: list[str]) -> list[int]:
    """Where the token run ``wanted`` is said, as offsets in the text."""
    n = len(wanted)
    return [said[i][1] for i in range(len(said) - n + 1) if n and [t for t, _ in said[i : i + n]] == wanted]


_GIVEN_UP_AFTER = re.compile(r"\b(?:instead\s+of|in\s+place\s+of|rather\s+than|in\s+exchange\s+for|not)\b", re.I)


def _replaced_only_as_given(text: str, said: list[tuple[str, int]], term: Term, at: int) -> bool:
    """Whether every word of what ``term`` replaces, said in the clause at ``at``, is what is given up: said
    before it ("the white speakers for the walnut ones", "from black to green") unless marked as received
    ("black instead of green"), or after it only when so marked ("green instead of black")."""
    c_start, c_end = clause_at(text, at)
    for word in term.replaced:
        for other in _occurrences(said, _tokens(word)):
            if not c_start <= other < c_end:
                continue
            marked = bool(_GIVEN_UP_AFTER.search(text, min(at, other), max(at, other)))
            if marked != (other > at):
                return False
    return True


def _stem(word: str) -> str:
    return word.lower().removesuffix("es") if word.lower().endswith("shes") else word.lower().rstrip("s")


def _agreed_money(value: str, direction: Direction | None, terms: Iterable[Term]) -> bool:
    """Whether an amount said, moving ``direction``, is one of the terms' amounts.

    A price or a total (no direction) matches any wording, unless the same amount is a movement the other
    way: "you would have to pay $8.62" where $8.62 comes back is a sign flip, even if an item costs $8.62.
    """
    same = [t for t in terms if t.kind == "money" and t.value == value]
    if not same or direction is None:
        return bool(same)
    if any(t.direction == direction for t in same):
        return True
    return not any(t.direction for t in same)


def _id_core(value: str) -> str:
    """An id as ids written in full are compared: "#R3042198" and "r3042198" are the same order."""
    return re.sub(r"[^0-9a-z]", "", value.lower())


def _agreed_id(core: str, agreed: set[str]) -> bool:
    """An id in full, or by its trailing digits alone ("order 3042198" for #R3042198), as :func:`names_identifier` reads."""
    return core in agreed or (
        len(core) >= 5 and core.isdigit() and any(a.endswith(core) and a[: -len(core)].isalpha() for a in agreed)
    )


# a text the agent will write for someone (a note's or a notice's wording): quoted at length, or block-quoted in markdown
_QUOTED_WORDING = re.compile(r'"[^"\n]{25,}"|\u201c[^\u201d\n]{25,}\u201d|^[ \t]*>[^\n]*', re.M)
# or said after a cue that it is one, unquoted, to the end of its sentence: "the case note will read: Member asks for
# $219.00 dues back.", "Internal note: ..."; a bare "Note:" labels the agent's own statement and is no cue
_CUED_WORDING = re.compile(
    r"\b(?:(?:will|would|'ll|to|shall|should)\s+(?:read|say)|(?:case|internal|staff|audit|hand-?off)\s+note|"
    r"note\s+(?:for|to)\s+(?:staff|the\s+team|the\s+case)|summary\s+for\s+(?:staff|the\s+team))\s*:[*_]*"
    r"(?P<wording>[^\n]+?)(?:[.!](?=\s|$)|$)",
    re.I | re.M,
)


def wording_blanked(text: str) -> str:
    """``text`` with every quoted wording blanked, offsets unchanged: what a notice or a note will say states no term
    of the proposal and offers no action of its own ('Email the vendor: "Invoice approved in full."' approves nothing)."""
    text = _QUOTED_WORDING.sub(lambda m: " " * len(m.group()), text)
    return _CUED_WORDING.sub(lambda m: m.group()[: m.start("wording") - m.start()] + " " * (m.end() - m.start("wording")), text)


def _stated_but_not_agreed(
    proposal: str,
    terms: list[Term],
    id_pattern: str | None,
    own: set[str],
    spans: Spans | None = None,
    actions: re.Pattern[str] | None = None,
    reported: bool = False,
    made: Sequence[Term] = (),
) -> list[str]:
    """Amounts, card endings, ids, dates, closed-set phrases and (with an address) apartments the proposal states
    (un-negated) that match no term of the batch nor of the writes ``made`` already (which a proposal may recap; they
    do not make ids of their kind terms: a hand-off offer names an order as context after an address change). Within ``spans`` (what the yes answers) when given: findings
    recapped around the proposal are context, except a card (where the writes take one or move money) and, where the writes move money for the customer,
    an amount moving for them: what the customer would get or pay, wherever it is said. A quoted wording (a note's or
    a message's text: "Approved in full: variance $6.00 within the $20.00 cap") states no term of its own, nor does an
    amount labelled as a finding in a clause that names none of the writes' ``actions`` (:func:`_context_amount`) unless
    it moves for the customer where the writes move money ("I'd charge the $2.19 difference to your Visa"), nor
    money that moved before (:func:`_recapped`), nor an amount put right later ("sorry, I meant $90.00")."""
    proposal = wording_blanked(proposal)
    spans = spans or [(0, len(proposal))]
    kinds = {_id_kind(_id_core(t.value)) for term in terms for t in (term, *term.alternatives) if t.kind == "id"}
    every = [t for term in [*terms, *made] for t in (term, *term.alternatives)]
    out = []
    streets = [span for t in every if t.kind == "street" for span in names_street(proposal, t.value)]
    if streets:
        out += [
            proposal[start:end]
            for start, end in units_in(proposal)
            if within(spans, start)
            and not negated_at(proposal, start, end)
            and not any(start < named_end and named_start < end for named_start, named_end in streets)
        ]
    moving = any(t.direction for t in every)
    amounts = money_in(proposal)
    for m in amounts:
        if put_right_later(proposal, m.end, [(a.start, a.end) for a in amounts]):
            continue  # "$80.00 — sorry, I meant $90.00": the last word counts
        if _threshold(proposal, m, actions) or _left_as_is(proposal, m.start, m.end):
            continue  # "refunds over $150 need a colleague's approval", "your club credit of $120.00 stays untouched"
        if within(spans, m.start) and not (moving and m.direction) and _context_amount(proposal, m, actions):
            continue
        if not within(spans, m.start) and not (moving and m.direction):
            continue
        if m.direction and _recapped(proposal, m):
            continue
        if not negated_at(proposal, m.start, m.end) and not _agreed_money(m.value, m.direction, every):
            out.append(f"${m.value}" + (f" as a {m.direction}" if m.direction else ""))
    out += _other_values(proposal, every, spans, actions)
    endings = {t.value for t in every if t.kind == "card_ending"}
    if endings or moving:  # a card said beside writes that take none and move no money is context
        out += [
            f"card ending {m.value}"
            for m in cued_card_endings_in(proposal)
            if m.value not in endings and not negated_at(proposal, m.start, m.end) and not _card_recapped(proposal, m)
        ]
    if id_pattern:
        agreed = {_id_core(t.value) for t in every if t.kind == "id"} | {_id_core(i) for i in own}
        # a record of a kind the writes do not act on, said as an aside, is context ("INV-71004 (PO-4104)", "PO-4106:
        # 20 boxes @ $61.00"), and in a report what the writes made ("your appointment reference is AP-5233"); a write
        # that names no record (a hand-off) has ids as context
        for found in re.finditer(id_pattern, proposal):
            if (
                kinds
                and (
                    _id_kind(_id_core(found.group(0))) in {*kinds, ""}
                    or not (reported or _aside(proposal, found.start(), found.end()) or _recap(proposal, found.start(), actions))
                )
                and within(spans, found.start())
                and not _agreed_id(_id_core(found.group(0)), agreed)
                and not _withheld(proposal, found.start(), found.end())
                and not _left_as_is(proposal, found.start(), found.end(), id_pattern)
            ):
                out.append(found.group(0))
    return list(dict.fromkeys(out))


# a record said as one the writes leave alone: labelled so ("Keep: V-45881", "❌ Not returning: V-45881", "keeping
# V-45881") or said so after it ("Jeans (V-45881): stay with you, not returned", "V-45881 stays on the order")
_LEFT_LABEL = re.compile(
    r"\b(?:keep(?:ing|s)?|kept|not\s+(?:return|includ|chang|cancel|touch|affect|refund)\w*|unchanged|untouched|excluded|"
    r"leav(?:e|es|ing)|stay(?:s|ing)?|remain(?:s|ing)?)\b[\W_]*(?:[\w-]+[\W_]+){0,3}?$",
    re.I,
)
_LEFT_AFTER = re.compile(
    r"^[^\w]*(?:[\w':-]+[^\w.!?\n]+){0,8}?(?:"
    r"(?:stays?|remains?|is\s+kept|will\s+be\s+kept)(?:\s+\w+){0,2}?\s+(?:with\s+you|on\s+the\s+order|as\s+(?:it|they)\s+(?:is|are)|"
    r"unchanged|untouched|unused|booked|in\s+place)"
    r"|(?:is\s+|are\s+|was\s+|were\s+)?not\s+(?:being\s+)?(?:returned|included|changed|cancell?ed|touched|affected|part|used)"
    r"|(?:won't|will\s+not)\s+be\s+(?:touched|changed|cancell?ed|affected|returned|used))\b",
    re.I,
)


# what, between a value and "stays as it is", says the value is part of something done: "and", a money verb
_JOINED = re.compile(r"\b(?:and|or|plus|also|refund\w*|charg\w*|pa(?:y|id)\w*|credited|debit\w*|moved?|sent|send)\b", re.I)


def _left_as_is(text: str, start: int, end: int, id_pattern: str | None = None) -> bool:
    """Whether an id is said, in its own line or sentence, as a record the writes leave alone (:data:`_LEFT_LABEL`,
    :data:`_LEFT_AFTER`, with no other record or "and" between: "cancel AP-1 and AP-2; the rest stays as it is" leaves
    neither): the item kept beside the one returned is context, not a term the proposal adds."""
    s_start, s_end = sentence_at(text, start)
    line_start = max(s_start, text.rfind("\n", 0, start) + 1)
    line_end = min(s_end, text.find("\n", end) % (len(text) + 1))
    if _LEFT_LABEL.search(text, line_start, start):
        return True
    after = _LEFT_AFTER.match(text[end:line_end])
    between = text[end : end + after.end()] if after else ""
    another = bool(id_pattern and re.search(id_pattern, between))
    return bool(after) and not (another or _JOINED.search(between))


def _recap(text: str, at: int, actions: re.Pattern[str] | None) -> bool:
    """Whether the sentence at ``at`` names none of the writes' actions: a recap of findings ("INV-71035, Brookvale
    Cable (BVC-4519), PO-4135, electrical."), whose records of another kind are context."""
    return actions is not None and not _acted(text, *sentence_at(text, at), actions)


def _aside(text: str, start: int, end: int) -> bool:
    """Whether an id is said as an aside: in brackets, or as the label of findings ("PO-4106: billed $1,320.00")."""
    s_start, _ = sentence_at(text, start)
    bracketed = text.rfind("(", s_start, start) > text.rfind(")", s_start, start)
    return bracketed or bool(re.match(r"\s*:", text[end:]))


# what labels an amount as a finding rather than a term: a variance, an allowance, a limit, what was matched or
# ordered ("variance $12.60", "2% capped $75 = $17.04 allowed"), or a unit price ("20 boxes @ $61.00"); what was
# billed is the write's own total, and another one conflicts
_PER_UNIT = r"@|\b(?:each|apiece|per|a (?:box|unit|piece|item|case|ream))\b|/\s*(?:pc|pcs|unit|ea|each|box|item)\b"
_FINDING_LABEL = re.compile(
    rf"\b(?:variance|difference|tolerance|allow(?:s|ed|ance)?|cap(?:s|ped)?|limit|threshold|maximum|max|matched|ordered|"
    rf"unit)\b|{_PER_UNIT}",
    re.I,
)
_PRICED_PER_UNIT = re.compile(_PER_UNIT, re.I)
# a threshold the amount is compared with, said just before it: "under $5,000, so no second approver is needed"
_THRESHOLD = re.compile(r"\b(?:under|over|below|above|exceed(?:s|ing)?|less than|more than|up to|at most|at least)\W{0,4}$", re.I)
# the one who does an action, not the action: "approver", "holders"
_AGENT_NOUN = re.compile(r"e?rs?\b", re.I)


_FINDING_COLUMN = re.compile(rf"{_FINDING_LABEL.pattern}|\bprice\b", re.I)  # "| PO price | Billed price | Variance |"


def _column_header(text: str, at: int) -> str:
    """The header of the table column a cell at ``at`` is in ("" outside a table): the first row of its table, above
    the "|---|" rule. A table of findings labels its amounts by column, not in the cell."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start : text.find("\n", at) % (len(text) + 1)]
    if not line.lstrip().startswith("|"):
        return ""
    column = text.count("|", line_start, at)
    lines = text[:line_start].split("\n")[:-1]
    rows = []
    for row in reversed(lines):
        if not row.lstrip().startswith("|"):
            break
        rows.append(row)
    if len(rows) < 2 or not re.fullmatch(r"[\s|:-]+", rows[-2]):
        return ""
    cells = rows[-1].split("|")
    return cells[column] if column < len(cells) else ""


def _acted(text: str, start: int, end: int, actions: re.Pattern[str] | None) -> bool:
    """Whether an action of the writes is said in ``text[start:end]``, as an action: "no second approver is needed"
    names who approves, not an approval."""
    return actions is not None and any(not _AGENT_NOUN.match(text, m.end()) for m in actions.finditer(text, start, end))


def _context_amount(text: str, amount: Mention, actions: re.Pattern[str] | None) -> bool:
    """An amount said as a finding beside a proposal, not as a term of it: its clause labels it as another quantity
    (:data:`_FINDING_LABEL`) and names no action of the writes ("billed $864.60 vs matched $852.00 → variance $12.60.
    Approve INV-71004?"), or it is in brackets that price by the unit ("(20 boxes @ $61 ordered; billed $66)"). An
    amount in the clause of the action itself ("approve INV-1 for $900.00 within tolerance") is a term, whatever
    labels it."""
    start, end = clause_at(text, amount.start)
    labelled = clause_at_keeping_labels(text, amount.start)[0]  # "- **Variance:** $50.00 (3.41%)"
    if _acted(text, min(start, labelled), end, actions):
        return False
    if _FINDING_LABEL.search(text, min(start, labelled), end) or _THRESHOLD.search(text, start, amount.start):
        return True
    if _FINDING_COLUMN.search(_column_header(text, amount.start)):
        return True
    opened = text.rfind("(", 0, amount.start)
    closed = text.find(")", amount.start)
    aside = opened > text.rfind(")", 0, amount.start) and closed > 0
    return aside and bool(_PRICED_PER_UNIT.search(text, opened, closed))


# money that moved before the proposal, recalled: "you were charged $90.00", "charged in full at $90.00 on your Visa"
_MOVED_BEFORE = re.compile(
    r"\b(?:was|were|been|got)\s+(?:\w+\s+)?(?:charged|billed|paid)\b|(?<!be )(?<!'ll )(?<!will )\bcharged\s+(?:in\s+full|at|on)\b"
    r"|\b(?:originally|already)\s+(?:charged|billed|paid)\b|\byou\s+paid\b"
    r"|\b(?:charged|billed|paid)[*_]*\s*[|:]",  # a recap's label: "| Charged | $55.00 to Visa 7591 |", "Charged: $55.00"
    re.I,
)


_CHARGED_TO = re.compile(r"\bcharged\s+to\b", re.I)
_MODAL = re.compile(r"\b(?:will|would|shall|going to|be)\b|'ll\b|'d\b", re.I)


def _threshold(text: str, amount: Mention, actions: re.Pattern[str] | None) -> bool:
    """An amount said as a bound compared with ("refunds over $150 need a colleague's approval"), in a clause that
    offers none of the writes' actions as such: "approve INV-1 for payment under $5,000" states the approval's terms."""
    start, end = clause_at(text, amount.start)
    if not _THRESHOLD.search(text, start, amount.start):
        return False
    return not any(
        not _AGENT_NOUN.match(text, m.end()) and not _plural_noun(text, m)
        for m in (actions.finditer(text, start, end) if actions else ())
    )


def _plural_noun(text: str, found: re.Match[str]) -> bool:
    """An action word said as the things it names ("refunds over $150 need ..."), not as the action offered."""
    return text[found.end() : found.end() + 1] == "s" and not text[found.end() + 1 : found.end() + 2].isalpha()


def _card_recapped(text: str, card: Mention) -> bool:
    """A card said as where money went before ("$380.00 charged to Visa ending 6482", "you were charged on Visa 6482"),
    not where the proposal moves money ("the $2.19 would be charged to Visa ending 6482" is a term)."""
    if _recapped(text, card):
        return True
    start, end = clause_at_keeping_labels(text, card.start)
    return bool(_CHARGED_TO.search(text, start, card.start)) and not _MODAL.search(text, start, end)


def _recapped(text: str, amount: Mention) -> bool:
    """Money said as moved already (a recap of the charge a refund puts right), not as what the proposal moves: "you'd
    pay $37.50" is a term, "you were charged $90.00" is not."""
    start, end = clause_at_keeping_labels(text, amount.start)
    return bool(_MOVED_BEFORE.search(text, start, end))


def _other_values(proposal: str, every: list[Term], spans: Spans, actions: re.Pattern[str] | None) -> list[str]:
    """Dates (once the batch has a date term) and other values of a closed set the proposal states within
    ``spans``, un-negated, that no term of the batch is: "cancel AP-1 (2025-07-30)" for the appointment of 18 June."""
    values = {t.value.lower() for t in every if t.kind == "phrase"}
    days = [t.value for t in every if t.kind == "date"]
    out = [
        m.value
        for m in dates_in(proposal)
        if days and within(spans, m.start) and not negated_at(proposal, m.start, m.end)
        if not any(same_date(m.value, d) for d in days) and not _left_as_is(proposal, m.start, m.end)
    ]
    for other in {u for t in every if t.kind == "phrase" for u in t.unlike if u.lower() not in values}:
        out += [
            other
            for s, e in names_phrase(proposal, other)
            if within(spans, s) and not negated_at(proposal, s, e) and not _said_as_before(proposal, s, e, actions)
        ][:1]
    return out


# a value of a closed set said as what a record is or was before the write, not as what it sets: "raise it from medium
# to high", "(currently medium)", "logged as hardware", "It's low now", "the endpoint team turned it down"
_BEFORE_CUE = re.compile(
    r"\b(?:from|currently|presently|previously|originally|was|were|is at|at present|"
    r"(?:logged|filed|opened|raised|recorded|marked|classified|categori[sz]ed) as)\W+(?:(?!(?:to|into|as|for)\b)\w+\W+){0,2}$",  # "from critical to high" sets high
    re.I,
)
_STATE_AFTER = re.compile(
    r"^\W*(?:(?:\w+\W+){0,2}(?:now|currently|at the moment|at present|today|so far)\b|"
    r"(?:\w+\W+){0,2}(?:turned (?:it |this )?down|rejected|declined|refused|bounced|sent (?:it |this )?back))",
    re.I,
)


def _said_as_before(text: str, start: int, end: int, actions: re.Pattern[str] | None) -> bool:
    """Whether a closed-set value is said as the record's present or earlier state: cued before it in its clause
    (:data:`_BEFORE_CUE`), or after it in a clause that names none of the writes' actions (:data:`_STATE_AFTER`:
    "It's low now", not "Shall I classify it as hardware now?"). Context a proposal recaps, not a value it sets."""
    clause_start, clause_end = clause_at(text, start)
    if _BEFORE_CUE.search(text[clause_start:start]):
        return True
    return bool(_STATE_AFTER.match(text[end:clause_end])) and not _acted(text, clause_start, clause_end, actions)


def _says_otherwise(proposal: str, write: Commitment, spans: Spans) -> bool:
    """Whether the proposal gives, instead of a value of a closed set the write sets (even an optional one), another
    value of that set: "cancel it as ordered by mistake" is no cancellation as "no longer needed"."""
    return any(
        t.unlike
        and not named(proposal, t, spans)
        and any(within(spans, at) for u in t.unlike for at, _ in names_phrase(proposal, u))
        for t in write.terms
    )


def _outside(spans: Spans, length: int) -> list[tuple[int, int]]:
    """The rest of a message of ``length`` once ``spans`` are taken out: what a report says, not what it asks."""
    out, at = [], 0
    for start, end in sorted(spans):
        out += [(at, start)] if start > at else []
        at = max(at, end)
    return [*out, (at, length)] if at < length else out


def _fully_named(proposal: str, write: Commitment, spans: Spans, mine: set[str], rivals: Sequence[Commitment] = ()) -> bool:
    """A write proposed: every required term named (the customer's own record, ``mine``, goes without saying: "book
    you in with Dr Varga"), a value that another action in play (``rivals``) may also take said of this write's own
    action and not only as part of a longer value another of them sets, and no other value of a closed set it sets said
    instead."""
    taken = _other_values_said(proposal, write, rivals)
    return all(
        (named(proposal, t, spans, taken) and _said_for(proposal, t, write, spans, rivals)) or _own_record(t, mine)
        for t in write.terms
        if t.required
    ) and not _says_otherwise(proposal, write, spans)


def _given(proposal: str, term: Term, spans: Spans, mine: set[str], taken: Spans = ()) -> bool:
    """A term named, or the customer's own record (``mine``: id cores), which goes without saying ("a check-up for
    you"): the customer who says yes and the grader who judges that yes read a proposal by this one rule."""
    return named(proposal, term, spans, taken) or _own_record(term, mine)


def _own_record(term: Term, mine: set[str]) -> bool:
    return term.kind == "id" and _id_core(term.value) in mine


def _said_for(proposal: str, term: Term, write: Commitment, spans: Spans, rivals: Sequence[Commitment]) -> bool:
    """Whether a wording that is a value of this write and, in another role, of another action in play (a category and
    a group both called "network") is said of this one: the action
    word nearest before it is the write's own, or none is ("Classify INC-1331 as network, and assign it to
    applications": "network" is the category there, so it assigns nothing to network)."""
    shared = [
        c
        for c in rivals
        if c.tool != write.tool
        and any(o.kind == "phrase" and o.value.lower() == term.value.lower() and o.role != term.role for o in c.terms)
    ]
    own, every = action_pattern(tuple(write.words)), actions([write, *shared])
    if term.kind != "phrase" or not shared or own is None or every is None:
        return True
    for start, _ in names_phrase(proposal, term.value):
        before = [m.start() for m in every.finditer(proposal, 0, start)] if within(spans, start) else None
        if before == [] or (before and own.match(proposal, before[-1])):
            return True
    return False


def _about_the_record_in_view(
    proposal: str,
    wanted: Sequence[Commitment],
    context: Sequence[Commitment],
    spans: Spans,
    own: set[str],
    id_pattern: str | None,
) -> set[int]:
    """Terse proposals that leave out the record the conversation is about ("OK to email the vendor: '...'?", "Return the
    headlamp (800 lm, AAA); the refund of $29.07 would go to your gift card? y/n"): a write whose other terms are all
    named and which the message states nothing against (the candle of the order whose refund is the $24.33 said, not
    the same candle in another order), when the message names no record of that kind at all, proposes no write in
    full, and it is the only such write of its action (two open cancellations and "Shall I cancel it?" are
    ambiguous: neither)."""
    said = {_id_kind(_id_core(m.group(0))) for m in re.finditer(id_pattern, proposal)} if id_pattern else set()
    mine = {_id_core(i) for i in own}
    found: dict[str, list[int]] = {}
    for i, c in enumerate(wanted):
        record = _record(c)  # a record's id has letters; a zip code is no record
        kind = _id_kind(_id_core(record.value)) if record and record.required else ""
        if c in context or not kind or kind in said:
            continue
        rest = dataclasses.replace(c, terms=tuple(t for t in c.terms if t is not record))
        if (
            proposes(proposal, c.words, spans=spans)
            and _fully_named(proposal, rest, spans, mine)
            and not _stated_but_not_agreed(proposal, list(c.terms), id_pattern, own, spans, made=_terms_of(context))
        ):
            found.setdefault(c.tool, []).append(i)
    return {ones[0] for ones in found.values() if len(ones) == 1}


def _id_kind(core: str) -> str:
    """The kind of record an id is of, by its letters: "inv" for INV-71028, "r" for #R5162460."""
    return re.match(r"[a-z]*", core).group()


def _refused(proposal: str, write: Commitment, spans: Spans) -> bool:
    """Whether the message declines this very write outside what the yes answers ("I'm afraid I can't cancel it —
    appointment AP-5103 is tomorrow. What I can do instead is cancel AP-5104. Would you like me to do that?"): its
    action declined (negated: not a record's state beside the refusal, "I can't send notice before INV-1 is on hold")
    and its record said where the agent declines, and its record not named in what the yes answers."""
    term = _record(write)
    record = term.value if term else ""
    pattern = action_pattern(tuple(write.words))
    if not record or pattern is None or any(within(spans, start) for start, _ in names_identifier(proposal, record)):
        return False
    return any(
        not within(spans, start)
        and REFUSING.search(said)
        and names_identifier(said, record)
        and any(_declined(said, m.start(), m.end()) for m in pattern.finditer(said))
        for start, end in sentences(proposal)
        for said in [proposal[start:end]]
    )


_SUBORDINATE = re.compile(r"\b(?:before|after|until|once|when|whenever|if|unless|while)\b", re.I)


def _declined(text: str, start: int, end: int) -> bool:
    """An action the agent's refusal governs ("I can't cancel it"), not one in a clause the refusal waits on ("I can't
    send notice before INV-1 is on hold")."""
    return negated_at(text, start, end, spare_modifiers=False) and not _SUBORDINATE.search(text, clause_at(text, start)[0], start)


def _another_record_asked(proposal: str, write: Commitment, spans: Spans, id_pattern: str | None) -> bool:
    """Whether what the yes answers names another record of the kind this write acts on, and this one only outside it:
    "You have two appointments: ... AP-5230 ... AP-5229. Shall I cancel the skin clinic one, AP-5230?" cancels AP-5230
    alone."""
    term = _record(write)
    if term is None or not id_pattern or any(within(spans, start) for start, _ in names_identifier(proposal, term.value)):
        return False
    kind, core = _id_kind(_id_core(term.value)), _id_core(term.value)
    return any(
        within(spans, m.start()) and _id_kind(_id_core(m.group(0))) == kind and _id_core(m.group(0)) != core
        for m in re.finditer(id_pattern, proposal)
    )


def _questions(text: str, pattern: re.Pattern[str] | None) -> list[tuple[int, int]]:
    """The sentences that ask something ("Next, shall I post it?", "Anything else?"): what a report does not say."""
    return [(s, e) for s, e in sentences(text) if "?" in text[s:e] or asks_yes(text[s:e], pattern)]


def _recalled(report: str, write: Commitment, made: Sequence[Commitment], spans: Spans) -> bool:
    """A write made, as a report recalls it outside its questions (``spans``): its action said, and any one of its
    terms ("the exchange on #R1 has been processed"), or none ("your account address has been updated") unless it
    names another write of that action made instead ("I've cancelled AP-2", AP-1 cancelled too). What it states that
    no write made does voids it (below)."""
    if not proposes(report, write.words, True, spans) or _says_otherwise(report, write, spans):
        return False
    if any(named(report, t, spans) for t in write.terms):
        return True
    others = [c for c in made if c.tool == write.tool and c != write]
    return not any(named(report, t, spans) for c in others for t in c.terms)


def _rivals(wanted: Sequence[Commitment], offered: set[int], i: int) -> set[int]:
    """The other versions of write ``i`` among ``offered``: the same action on the same record (its first id)."""
    return {j for j in offered if j != i and wanted[j].tool == wanted[i].tool and _record(wanted[j]) == _record(wanted[i])}


def _record(write: Commitment) -> Term | None:
    """The record a write acts on: its first id term."""
    return next((t for t in write.terms if t.kind == "id"), None)


def bound_writes(
    proposal: str,
    wanted: Sequence[Commitment],
    context: Sequence[Commitment] = (),
    id_pattern: str | None = None,
    own: Iterable[str] = (),
    reported: bool = False,
) -> set[int]:
    """Which of the ``wanted`` writes a yes to ``proposal`` would agree to, as a customer judges it
    (``reported``: which of them a report says were done).

    Each write offered in what the yes answers (a report: outside what it asks) and fully named is in; then that part must
    state nothing that none of them (nor the ``context``: writes already done, which the message may report)
    does — otherwise the customer is being asked to agree to something it does not want, and agrees to none of it.
    A write already made is never agreed to again; a report recalls it loosely (:func:`_recalled`). Of two versions
    of one write, the yes is to the one the message's values belong to; a proposal that names no write in full may
    be about the one record in view (:func:`_about_the_record_in_view`).
    """
    own = tuple(own)
    pattern = actions([*wanted, *context])
    asked = answered(proposal, pattern)
    whole = [(0, len(proposal))]
    spans = (whole if asked == whole else _outside(asked, len(proposal))) if reported else asked
    mine = {_id_core(i) for i in own}
    told = _outside(_questions(proposal, pattern), len(proposal))
    offered = {
        i
        for i, c in enumerate(wanted)
        if (
            (reported and _recalled(proposal, c, context, told))
            if c in context  # a write made is reported, never agreed to again
            else proposes(proposal, c.words, reported, spans)
            and _fully_named(proposal, c, spans, mine, wanted)
            and (reported or not (_refused(proposal, c, spans) or _another_record_asked(proposal, c, spans, id_pattern)))
        )
    }
    if not (reported or offered):
        offered = _about_the_record_in_view(proposal, wanted, context, spans, set(own), id_pattern)
    if not offered:
        return set()

    def conflicts(chosen: Iterable[int]) -> list[str]:
        terms = _terms_of(wanted[i] for i in chosen)
        return _stated_but_not_agreed(
            proposal, terms, id_pattern, set(own), told if reported else spans, pattern, reported, made=_terms_of(context)
        )

    if conflicts(offered):
        return set()
    # of two versions of one write (same action, same record), the one whose terms the message states: the other is
    # only let through by its rival's values ("adjust INV-1 from $1,792.00 down to $1,523.20" is not "adjust to $1,792.00")
    alone = {i for i in offered if not conflicts(offered - _rivals(wanted, offered, i))}
    return alone | {i for i in offered - alone if not alone & _rivals(wanted, offered, i)}
