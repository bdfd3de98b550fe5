"""Whether the agent *told* the customer a fact: stated it, by meaning, in words addressed to them.

A fact is told by a sentence that says its value (in any usual wording, see
:mod:`passhat.dialogue.values`) and does not take it back: not negated, not set aside ("instead
of"), not hedged ("about", "X or Y"), not asked, not inside a data dump, not about another thing
(another order's id), not contradicted in the same sentence (a rival status) or by a later
correction ("Sorry, I meant $340.00"), and for money not in the other direction (a charge is no
refund) or another currency.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Literal

from passhat.dialogue.dumps import dump_spans, in_dump
from passhat.dialogue.text import (
    FUNCTION_WORDS,
    absent_at,
    clause_at,
    clause_at_keeping_labels,
    contrasted_at,
    hedged_at,
    is_offer,
    is_question,
    negated_at,
    plain,
    sentence_at,
    sentences,
)
from passhat.dialogue.values import (
    Direction,
    FactKind,
    Mention,
    canonical_number,
    card_endings_in,
    cued_card_endings_in,
    dates_in,
    money_in,
    names_date,
    names_identifier,
    names_phrase,
    numbers_in,
    parse_money,
    same_amount,
    same_date,
    same_time,
    small_number_spellings,
    times_in,
    unrounded,
)

__all__ = ["Direction", "Fact", "FactKind", "NotTold", "Telling", "answers_kind", "contradicts", "tell"]

NotTold = Literal["not_said", "negated", "contradicted", "hedged", "question", "data_dump", "about_other"]


@dataclasses.dataclass(frozen=True)
class Fact:
    """A fact the customer must be told, typed so that it is matched by meaning, not by string.

    ``value`` is canonical per kind: money "332.20" (two decimals, no sign), card_ending "8069",
    date "2026-03-04", identifier "833698649358", number "3", status and phrase as written ("delivered").
    ``direction``: for money, which way it moves for the customer (None: a balance, a price, a total).
    ``synonyms``: other wordings with this meaning (status, phrase). ``rivals``: the other values this
    status could have — stating one of them of the same thing contradicts the fact. ``about``: ids of
    the thing the fact is about (an order), so a statement about another thing does not count.
    """

    kind: FactKind
    value: str
    direction: Direction | None = None
    currency: str = "USD"
    synonyms: tuple[str, ...] = ()
    rivals: tuple[str, ...] = ()
    about: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Telling:
    """Whether and where a fact was told: the event index of the agent message and the sentence."""

    fact: Fact
    told: bool
    event: int | None = None
    quote: str | None = None
    reason: NotTold | None = None  # why it does not count, when it was not told


# Most informative first: when no mention told the fact, the reason reported is the first one met here.
_REASON_ORDER: tuple[NotTold, ...] = ("contradicted", "negated", "hedged", "about_other", "question", "data_dump")
QUOTE_CHARS = 200


@dataclasses.dataclass(frozen=True)
class _Said:
    """A span that says the fact's value; ``mismatch`` when it says it wrongly (other currency or direction)."""

    start: int
    end: int
    mismatch: NotTold | None = None
    said: Mention | None = None  # the amount as read, for money: "about $1,800" is rounded, not hedged
    absent: bool = False  # it says the thing a "no X" phrase denies: it tells the fact only when said not there


@dataclasses.dataclass(frozen=True)
class _Message:
    event: int
    text: str  # apostrophes made plain, offsets as in ``raw``
    raw: str
    dumps: list[tuple[int, int]]


def tell(
    fact: Fact,
    messages: Sequence[tuple[int, str]],
    seen: Sequence[str] = (),
    id_pattern: str | None = None,
    changes: Sequence[int] = (),
    own: Sequence[str] = (),
) -> Telling:
    """Whether the agent messages ``messages`` ((event index, text), in order) tell ``fact``.

    ``seen``: the texts of the tool results the agent saw (a fact found only inside a verbatim copy of
    them is not told). ``id_pattern``: the domain's regex for entity ids (to attribute statements to things).
    ``changes``: the event indexes of writes that took effect; a value restated after one may be the new
    state, so only a restatement with no write between takes a telling back. ``own``: the texts of the
    agent's writes (arguments and results): a report in their words is no dump (see ``dump_spans``).
    Returns the first message and sentence that tell it; else the most informative reason it was not told.
    """
    said = [_Message(event, plain(text), text, dump_spans(text, seen, id_pattern, own)) for event, text in messages]
    reasons: set[NotTold] = set()
    for index, message in enumerate(said):
        for mention in _said_spans(fact, message.text):
            reason = _rejection(fact, message, mention, id_pattern) or _taken_back_later(
                fact, said, index, mention, id_pattern, changes
            )
            if reason is None:
                return Telling(fact, True, message.event, _quote(message.raw, mention.start, mention.end))
            reasons.add(reason)
    return Telling(fact, False, reason=next((r for r in _REASON_ORDER if r in reasons), "not_said"))


def answers_kind(fact: Fact, text: str, id_pattern: str | None = None) -> bool:
    """Whether one agent message states *some* value of the fact's kind, right or wrong: un-negated,
    not asked, not in a dump. The simulated customer, who cannot know the right value, uses it to
    decide its question was answered ("Your balance is $60.00" answers a money question;
    "Thank you, your identity is verified." answers nothing)."""
    text = plain(text)
    dumps = dump_spans(text, (), id_pattern)
    return any(
        not in_dump(start, end, dumps) and not negated_at(text, start, end) and not _asks(text, start, end)
        for start, end in _any_value_spans(fact, text, id_pattern)
    )


def contradicts(fact: Fact, sentence: str, text: str, id_pattern: str | None = None) -> bool:
    """Whether free text the agent wrote for someone else (a hand-off summary, a note, a notice) says the
    fact wrongly: denies it ("not over tolerance", "the total is not $332.20"; an amount beside a negation of
    something else is no denial of it: "the 12 rolls not received ($268.80) have not been paid"), or, without saying it, puts another value in its
    place, judged as a restatement after ``sentence`` (the fact said rightly) would be: a rival status of the
    same thing, another amount or date in a clause about the same slot."""
    written = _Message(1, plain(text), text, [])
    said = _said_spans(fact, written.text)
    if any(_denies(fact, written, m, id_pattern) for m in said):
        return True
    right = _Message(0, plain(sentence), sentence, [])
    told = next(iter(_said_spans(fact, right.text)), None)
    return told is not None and any(
        _restates_otherwise(fact, right, told, written, span, id_pattern) for span in sentences(written.text)
    )


_DENIED_BEFORE = re.compile(r"(?:\bnot|n't|\bnever)\s+(?:\w+\s+)?$", re.I)


def _denies(fact: Fact, message: _Message, mention: _Said, id_pattern: str | None) -> bool:
    """A status or phrase negated anywhere in its clause ("not over tolerance"); a value only when the negation is
    said of it ("the total is not $332.20"), not of something beside it ("the 12 rolls not received ($268.80)")."""
    if fact.kind not in ("status", "phrase") and not _DENIED_BEFORE.search(message.text, 0, mention.start):
        return False
    return _rejection(fact, message, mention, id_pattern) == "negated"


# ---------------------------------------------------------------------------------------------- where the value is said


def _said_spans(fact: Fact, text: str) -> list[_Said]:
    if fact.kind == "money":
        return _money_said(fact, text)
    if fact.kind in ("status", "phrase"):
        find = _phrase_in_any_form if fact.kind == "phrase" else names_phrase
        spans = {span for wording in (fact.value, *fact.synonyms) for span in find(text, wording)}
        said = [_Said(s, e) for s, e in _outermost(spans)]
        return said + [_Said(s, e, absent=True) for s, e in _absence_spans(fact, text)] if fact.kind == "phrase" else said
    if fact.kind == "identifier":
        return [_Said(s, e) for s, e in names_identifier(text, fact.value)]
    if fact.kind == "date":  # on the weekday it falls on, when one is said
        return [_Said(s, e) for s, e in names_date(text, fact.value)]
    return [_Said(m.start, m.end) for m in _kind_mentions(fact.kind, text) if _same_value(fact, m.value)]


def _money_said(fact: Fact, text: str) -> list[_Said]:
    amount = parse_money(fact.value)
    found = []
    for m in money_in(text):
        if amount is None or not same_amount(m, amount):
            continue
        other_currency = m.currency is not None and m.currency != fact.currency
        found.append(_Said(m.start, m.end, "contradicted" if other_currency or _flipped(fact, text, m) else None, m))
    if amount is not None and amount == 0 and fact.direction in (None, "charge"):
        found += [_Said(*z.span()) for z in _NOTHING_TO_PAY.finditer(text)]
    return found


# a cost of zero said in words: "it costs you nothing", "Plus covers 100% of it", "covered in full", "a full refund"
_NOTHING_TO_PAY = re.compile(
    r"\b(?:costs?|pay|owe)\s+(?:you\s+)?nothing\b|\bnothing\s+(?:to\s+pay|out\s+of\s+pocket)\b|\bfree\s+of\s+charge\b"
    r"|\bno\s+cost\s+to\s+you\b|\bcover(?:s|ed)?\s+(?:the\s+)?(?:full\s+)?(?:100\s*%|in\s+full|it\s+all|all\s+of\s+it|the\s+(?:full|whole|entire)\b)"
    r"|\b(?:fully|completely)\s+covered\b|\bfull\s+refund\b|\brefund(?:ed|ing)?\s+(?:in\s+full|the\s+full)\b",
    re.I,
)


_DETERMINERS = frozenset("the a an your my our their his her its this that these those".split())
_FILLER = r"(?!(?:not|no|never|nor|without|except)\b)[A-Za-z0-9]+(?:'[A-Za-z]+)?"
_WORD_GAP = r"[^\S\n]*[\"'“”‘’/-]?[^\S\n]+|[^\S\n]*[\"'“”‘’/-][^\S\n]*"
_MAX_FILLERS = 2
# an amount, a number or a percent inside a phrase: "over your $2,500.00 approval limit", "over its 3% tolerance"
_VALUE_FILLER = r"(?:[$£€]|[A-Z]{3}[^\S\n]?)?\d[\d,]*(?:\.\d+)?%?"


def _phrase_said(text: str, wording: str) -> list[tuple[int, int]]:
    """Where ``text`` says a phrase by its words: in order, any determiner or up to two other words
    between them ("from your mail client" says "from the mail client", "duplicated" says "duplicate"),
    and one value besides (an amount, a number, a percent: models put the figure where it qualifies the
    noun, "over your $2,500.00 approval limit"), never across a negation, a comma or a sentence end
    ("not from the mail client" says no more of it)."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?", plain(wording)) if w.lower() not in _DETERMINERS]
    if len(words) < 2:
        return names_phrase(text, wording)
    filler = rf"(?:{_FILLER}|{_VALUE_FILLER})(?:{_WORD_GAP})"
    gap = rf"(?:{_WORD_GAP})(?:{filler}){{0,{_MAX_FILLERS}}}(?:{_VALUE_FILLER}(?:{_WORD_GAP}))?"
    body = gap.join(_word_form(w) for w in words)
    return [m.span() for m in re.finditer(rf"(?<![\w-]){body}(?![\w-])", plain(text), re.I)] or names_phrase(text, wording)


def _phrase_in_any_form(text: str, wording: str) -> list[tuple[int, int]]:
    """A phrase by its words (:func:`_phrase_said`), by the date it carries in any usual form, by its past verb
    alone when the rest only says the act is done, without its "today" in a clause about the present, or, for
    holding a plan, by the plan said as the customer's: the same claim in the words a model uses."""
    return [
        *_phrase_said(text, wording),
        *_dated_phrase_said(text, wording),
        *_past_verb_said(text, wording),
        *_now_said(text, wording),
        *_held_said(text, wording),
    ]


_NEGATIVE_HEAD = re.compile(r"\s*(?:no|not|never)\s+(?!(?:longer|more|only|just|yet)\b)(?=\S)", re.I)  # not "no longer"


def _absence_spans(fact: Fact, text: str) -> list[tuple[int, int]]:
    """Where a phrase of absence ("no recorded authorization", "not authorized") may be said as the negation of
    what it denies ("it doesn't record any authorization", "you aren't authorized"): each wording's words after
    its "no", said in any form. Whether the sentence says the thing is not there is judged per span
    (:func:`_absence_rejection`)."""
    spans = set()
    for wording in (fact.value, *fact.synonyms):
        head = _NEGATIVE_HEAD.match(wording)
        if head is not None:
            spans.update(_phrase_in_any_form(text, wording[head.end() :]))
    return _outermost(spans)


_NOW_WORD = re.compile(r"\s*\b(?:today|now|currently|at\s+present)\b", re.I)
_OTHER_TIME = re.compile(
    r"\b(?:was|were|had|did|wasn't|weren't|hadn't|didn't|used\s+to|then|last|ago|yesterday|tomorrow|next|until"
    r"|since|before|after|formerly|previously|once|will|would)\b",
    re.I,
)


def _now_said(text: str, wording: str) -> list[tuple[int, int]]:
    """A phrase with a word of the present ("no paid plan today") said without it in a clause about the present
    ("Basic, which isn't a paid plan"): the present tense says today. A clause of another time ("you had a paid plan
    until May", "it was not a paid plan on 2025-03-01") says nothing of today."""
    if not _NOW_WORD.search(wording):
        return []
    rest = _NOW_WORD.sub("", wording).strip()
    found = []
    for start, end in _phrase_said(text, rest) if rest else ():
        c_start, c_end = clause_at(text, start)
        if not _OTHER_TIME.search(text, c_start, c_end) and not dates_in(text[c_start:c_end]):
            found.append((start, end))
    return found


_HOLDING = re.compile(
    r"(?:held|had|holds|has|have|hold)\s+(?:the\s+|a\s+|an\s+)?(?!(?:no|not|any|some)\b)(?P<value>[A-Za-z][\w-]*)\s+(?P<noun>[A-Za-z]+)",
    re.I,
)


def _held_said(text: str, wording: str) -> list[tuple[int, int]]:
    """ "held the Plus plan" said as the plan's value or as what the customer is on: "your plan on the tow date
    (2025-06-04) was Plus", "you were on Plus", "you had the Plus plan", "a Plus member". A copula must stand right
    before the value, so "your plan was not Plus" or "was your plan Plus?" say no such thing; another plan says
    nothing of this one."""
    held = _HOLDING.fullmatch(wording.strip())
    if held is None:
        return []
    value, noun = re.escape(held["value"]), re.escape(held["noun"])
    copula = r"(?:is|was|were|are|has\s+been|had\s+been|'s)"
    forms = (
        rf"\b{noun}\b(?:(?!\b(?:is|was|were|are|not)\b)[^.;!?\n]){{0,60}}?\b{copula}\s+(?:the\s+|a\s+)?[*_\"']*{value}\b",
        rf"\byou(?:'re|\s+are|\s+were|'ve\s+been|\s+have\s+been|\s+had\s+been)\s+(?:still\s+|already\s+|currently\s+|only\s+)?"
        rf"on\s+(?:the\s+|a\s+)?[*_\"']*{value}\b",
        rf"\byou(?:'ve|\s+have|\s+had)?\s+(?:held|had|hold|have)\s+(?:the\s+|a\s+|an\s+)?[*_\"']*{value}\b",
        rf"\b(?:a|an)\s+[*_\"']*{value}[*_\"']*\s+member\b",
    )
    return [m.span() for form in forms for m in re.finditer(form, plain(text), re.I)]


_ISO_IN_PHRASE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_EMPHASIS_GAP = re.compile(r"[\s*_\"'“”‘’]*")


def _dated_phrase_said(text: str, wording: str) -> list[tuple[int, int]]:
    """Where a phrase with an ISO date ("expired on 2025-05-31") is said with that date in any usual form, by value,
    right beside the words around it ("Expired on **31 May 2025**", "expired on May 31, 2025"): the same claim.
    Another date, or the words apart from the date, say nothing of it."""
    iso = _ISO_IN_PHRASE.search(wording)
    if iso is None:
        return []
    before, after = wording[: iso.start()].strip(), wording[iso.end() :].strip()
    found = []
    for start, end in names_date(text, iso.group()):
        head = _adjoining(text, before, start, ahead=False)
        tail = _adjoining(text, after, end, ahead=True)
        if head is not None and tail is not None:
            found.append((head, tail))
        elif not after and (verb := _period_end_verb(text, before, start, end)) is not None:
            found.append(verb)
    return found


_PERIOD_END = re.compile(
    r"(?:\b(?:on|until|till|til|through|thru|as\s+of|ended|ending|at\s+the\s+end\s+of)\s+)?(?:the\s+)?$", re.I
)


def _period_end_verb(text: str, before: str, start: int, end: int) -> tuple[int, int] | None:
    """The same claim with the verb apart from its date, in one sentence that names no other date: "ran until the
    thirty-first of May 2025 and has expired", "it expired May 31st 2025" for "expired on 2025-05-31" (the span from
    the first of the two to the last). Only a phrase that is a past verb and its preposition ("expired on") reads so."""
    words = re.findall(r"[A-Za-z]+", before)
    if not words or not words[0].lower().endswith("ed") or len(words) > 2:
        return None
    s_start, s_end = sentence_at(text, start)
    if len(dates_in(text[s_start:s_end])) != 1 or not _PERIOD_END.search(text, s_start, start):
        return None
    verbs = [m for m in names_phrase(text[s_start:s_end], words[0]) if not negated_at(text, s_start + m[0], s_start + m[1])]
    if not verbs:
        return None
    v_start, v_end = s_start + verbs[0][0], s_start + verbs[0][1]
    return min(v_start, start), max(v_end, end)


def _adjoining(text: str, words: str, at: int, ahead: bool) -> int | None:
    """Where ``words`` said right before (or, ``ahead``, right after) offset ``at`` begin (end), with nothing but
    spaces, quotes or emphasis between; ``at`` itself when there are no words; None when they are not said there."""
    if not words:
        return at
    for start, end in _phrase_said(text, words):
        gap = text[end:at] if not ahead else text[at:start]
        if (end <= at if not ahead else start >= at) and _EMPHASIS_GAP.fullmatch(gap):
            return start if not ahead else end
    return None


_DONE_ALREADY = frozenset("already previously earlier before".split())


def _past_verb_said(text: str, wording: str) -> list[tuple[int, int]]:
    """A phrase that is a past verb and words saying it is done ("already rejected") is said by that verb alone
    ("the network group rejected it", "a group that has rejected it"): the past tense already says it is done.
    Negated or asked, it is taken back later as any mention is (:func:`_rejection`)."""
    words = re.findall(r"[A-Za-z]+", wording)
    verbs = [w for w in words if w.lower() not in _DONE_ALREADY]
    if len(verbs) != 1 or len(words) == 1 or not verbs[0].lower().endswith("ed"):
        return []
    return names_phrase(text, verbs[0])


def _word_form(word: str) -> str:
    """A word in its usual inflections: plural or possessive, a verb ending in e in any tense ("remove", "removed"),
    and a small number in either spelling ("five", "5")."""
    if len(spellings := small_number_spellings(word)) > 1:
        return "(?:" + "|".join(spellings) + ")"
    word = re.escape(word.lower())
    if len(word) >= 5 and word.endswith("e"):
        return rf"{word[:-1]}(?:e|es|ed|ing)"
    return rf"{word}(?:s|es|'s)?"


def _kind_mentions(kind: FactKind, text: str) -> list[Mention]:
    finders = {"money": money_in, "card_ending": card_endings_in, "date": dates_in, "time": times_in, "number": numbers_in}
    return finders[kind](text) if kind in finders else []


def _same_value(fact: Fact, said: str) -> bool:
    if fact.kind == "date":
        return same_date(said, fact.value)
    if fact.kind == "time":
        return same_time(said, fact.value)
    if fact.kind == "number":
        return said == canonical_number(fact.value)
    if fact.kind == "card_ending":
        return said == re.sub(r"\D", "", fact.value)[-4:]
    if fact.kind == "money":
        return Decimal(said) == parse_money(fact.value)
    return said == fact.value


def _outermost(spans: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans not inside another ("has been delivered" over "delivered")."""
    return sorted(s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans))


# ---------------------------------------------------------------------------------------------- why a mention does not tell


def _rejection(fact: Fact, message: _Message, mention: _Said, id_pattern: str | None) -> NotTold | None:
    text, start, end = message.text, mention.start, mention.end
    if in_dump(start, end, message.dumps):
        return "data_dump"
    if _asks(text, start, end):
        return "question"
    if mention.absent:
        return _absence_rejection(fact, text, start, end)
    if negated_at(text, start, end) or contrasted_at(text, start, end) or _denied(fact, text, start, end):
        return "negated"
    if _hedged(fact, _rounding_said(text, mention), start, end) or (fact.kind == "status" and _only_possible(text, start)):
        return "hedged"
    if mention.mismatch:
        return mention.mismatch
    if not _about_the_thing(fact, text, start, end, id_pattern) or (fact.kind == "status" and _generic(text, start, end)):
        return "about_other"
    if _rival_in_sentence(fact, message, mention, id_pattern):
        return "contradicted"
    return None


def _absence_rejection(fact: Fact, text: str, start: int, end: int) -> NotTold | None:
    """Why the thing a "no X" phrase denies, said at [start, end), does not tell it: said as there, or said as
    not there only inside a denying frame or a hedge ("I can't say whether there's no authorization", "if you
    aren't authorized")."""
    if not absent_at(text, start, end):
        return "not_said"
    if _denied_frame(text, start, end):
        return "negated"
    if _hedged(fact, text, start, end) or contrasted_at(text, start, end):
        return "hedged"
    return None


_CENTS_WRITTEN = re.compile(r"\d[.,]\d{2}(?!\d)")


def _rounding_said(text: str, mention: _Said) -> str:
    """The text with "about" blanked before an amount it rounds ("about $1,800" tells 1,792.00 within its step);
    an amount written to the cent ("roughly $102.91", "about $8.00") is no rounding, so "about" is a hedge of it."""
    said = mention.said
    if said is None or _CENTS_WRITTEN.search(text, said.start, said.end):
        return text
    return unrounded(text, said)


def _asks(text: str, start: int, end: int) -> bool:
    return is_question(text, start, end) and not is_offer(text, start, end)


_DENIAL = r"(?:not\s+true|untrue|false|incorrect|wrong|not\s+correct|not\s+right|not\s+accurate|not\s+the\s+case|a\s+mistake|an\s+error|mistaken)"
_DENYING_FRAME = re.compile(
    rf"\b(?:(?:it|that|this)(?:\s+is|\s+was|'s)\s+{_DENIAL}\s+that"
    r"|(?:can't|cannot|can\s+not|could\s+not|couldn't|unable\s+to|not\s+able\s+to)\s+(?:yet\s+)?"
    r"(?:confirm|verify|say|tell\s+you|promise|guarantee|state)(?:\s+(?:that|whether|if))?"
    r"|there(?:\s+is|'s)\s+no\s+(?:record|sign|evidence|indication)\s+(?:that|of))\b",
    re.I,
)
_CONTRAST = re.compile(r"\b(?:but|however|though|although|nevertheless|whereas)\b|;", re.I)
_DENIED_NEXT = re.compile(rf"\s*(?:[,;—–-]\s*)?(?:(?:which|that|this|it)\s+)?(?:is|was|are|were|'s)\s+{_DENIAL}\b", re.I)
_RETRACTION = re.compile(  # a whole sentence that only takes back the one before
    r"(?:(?:actually|sorry|wait|correction|hmm)\W+)?(?:no\W+)?"
    rf"(?:(?:that|this|it)(?:\s+is|\s+was|'s)\s+{_DENIAL}"
    r"|(?:please\s+)?(?:ignore|disregard|scratch|forget)\s+(?:that|what\s+i\s+(?:just\s+)?said|my\s+(?:last|previous)\s+\w+)"
    r"|(?:he|she|they|it|that|this|we|i)\s+(?:(?:does|do|did|is|are|was|were|has|have)(?:\s+not|n't)|won't|can't|cannot)(?:\s+\w+)?)"
    r"\W*",
    re.I,
)
_NEGATED_PREDICATE = re.compile(
    r"\s+(?:(?:does|do|did|has|have|had|is|was|could|would|should)(?:\s+not\b|n't\b)|never\b|no\s+longer\b"
    r"|won't\b|can't\b|cannot\b|will\s+not\b|can\s+not\b)",
    re.I,
)
_MONEY_WITHHELD = re.compile(  # what a negated or refusing verb after an amount says: it does not move
    r"[^.;!?]*?\b(?:(?:won't|will\s+not|isn't|is\s+not|wasn't|was\s+not|can't|cannot|can\s+not|couldn't|hasn't|has\s+not"
    r"|haven't|have\s+not|aren't|are\s+not)\s+(?:be\s+|been\s+|being\s+)?(?:refunded|issued|paid|credited|returned|processed"
    r"|approved|possible|available|due|sent|coming|owed)"
    r"|(?:was|were|has\s+been|have\s+been|is|got)\s+(?:declined|denied|rejected|refused|reversed|voided|withheld))\b",
    re.I,
)
_ANSWERED_NO = re.compile(
    r"\**[^\S\n]*(?:[:=][^\S\n]*\**[^\S\n]*(?:no|not|false|none|n)|(?:[—–?|]|\s-)[^\S\n]*\**[^\S\n]*(?:no|false|n))"
    r"(?![\w'])(?!\s+(?:longer|problem|worries|doubt|more)\b)|[^\S\n]*[:=|—–-]?[^\S\n]*[✗✘❌]",
    re.I,
)


def _denied(fact: Fact, text: str, start: int, end: int) -> bool:
    """A statement the agent denies by a wording ``negated_at`` does not read: inside a denying frame ("it is
    not true that X", "I can't confirm that …, X"), called false after it ("X is false", "X, which is wrong",
    a next sentence "That is not true." or "Scratch that."), answered no ("Over tolerance: no"), for an
    amount, withheld by the verb after it ("$8.62 won't be refunded"), or, for a phrase (a person, an
    instruction), the subject of a negated verb ("Dana Whitfield does not have it")."""
    if _denied_frame(text, start, end):
        return True
    if fact.kind == "money" and _MONEY_WITHHELD.match(text, end, clause_at(text, start)[1]):
        return True  # "$8.62 won't be refunded", "the refund of $8.62 was declined"
    return (fact.kind == "phrase" and bool(_NEGATED_PREDICATE.match(text, end))) or _value_denied(fact, text, end)


def _denied_frame(text: str, start: int, end: int) -> bool:
    """Whatever is said at [start, end) is denied around it: inside a denying frame ("it is not true that",
    "I can't say whether"), called false right after, answered no, or taken back by the next sentence."""
    s_start, s_end = sentence_at(text, start)
    frames = [m.end() for m in _DENYING_FRAME.finditer(text, s_start, start)]
    if frames and not _CONTRAST.search(text, frames[-1], start):
        return True
    if _DENIED_NEXT.match(text, end, s_end) or _answered_no(text, end):
        return True
    following = next(((a, b) for a, b in sentences(text) if a >= s_end), None)
    return following is not None and bool(_RETRACTION.fullmatch(text, *following))


_NAMED_BY = re.compile(r"\s+(?:priority|level|status|plan|tier|option)\b", re.I)  # "high priority is not allowed"


def _value_denied(fact: Fact, text: str, end: int) -> bool:
    """A record's value the verb after it denies, said bare or with the name of what it is a value of: "high is not
    allowed", "High priority is not allowed for INC-1131"."""
    return fact.kind == "status" and bool(fact.about) and denied_after(text, end)


def denied_after(text: str, end: int) -> bool:
    """Whether the verb after a value said bare or with the name of what it is a value of denies it: "critical is
    not allowed", "High priority isn't possible"."""
    named = _NAMED_BY.match(text, end)
    return bool(_NEGATED_PREDICATE.match(text, named.end() if named else end))


def _answered_no(text: str, end: int) -> bool:
    """A label answered no: "Within tolerance: no", "| Duplicate | no |", "Approved — false"."""
    return bool(_ANSWERED_NO.match(text, end))


_END_OF_PERIOD = re.compile(r"\b(?:up\s+)?(?:until|till|til|through|thru)\s+(?:the\s+)?$", re.I)


def _hedged(fact: Fact, text: str, start: int, end: int) -> bool:
    """``hedged_at``, but a date after "until" / "through" is the end of a period, said plainly ("paid until
    October 19, 2025"), not a condition ("until it arrives")."""
    period = _END_OF_PERIOD.search(text, 0, start) if fact.kind == "date" else None
    if period is not None:
        text = text[: period.start()] + " " * (period.end() - period.start()) + text[period.end() :]
    return hedged_at(text, start, end, alternatives=fact.kind != "phrase")


_GENERIC_BEFORE = re.compile(r"\b(?:only|all|any|every|no)\s+$", re.I)
_PREDICATE_BEFORE = re.compile(
    r"\b(?:is|are|was|were|be|been|being|now|already|still|currently|marked|shows?|showing|listed|as)\s+$", re.I
)


def _generic(text: str, start: int, end: int) -> bool:
    """A status word used of a class of things, not of this one: "only pending orders can be cancelled",
    "delivered orders cannot be cancelled" (but "a delivered order", of this one, and "was delivered
    days ago" are not)."""
    following = re.match(r"\s+([A-Za-z]+)", text[end:])
    noun = following.group(1).lower() if following else ""
    if not noun or noun in FUNCTION_WORDS or _PREDICATE_BEFORE.search(text[:start]):
        return False
    return bool(_GENERIC_BEFORE.search(text[:start])) or bool(re.fullmatch(r"[a-z]+[^su]s", noun))


_MODAL_BEFORE = re.compile(
    r"(?:\b(?:can|could|will|would|may|might|must|should|shall|to)|'ll|'d)\s+(?:not\s+|n't\s+)?(?:\w+ly\s+)?(?:be|get)\s+(?:\w+ly\s+)?$",
    re.I,
)


def _only_possible(text: str, start: int) -> bool:
    """A status said as possible or future, not as holding: "can be cancelled", "will be delivered"."""
    return bool(_MODAL_BEFORE.search(text[:start]))


def _rival_in_sentence(fact: Fact, message: _Message, mention: _Said, id_pattern: str | None) -> bool:
    """A rival status stated plainly of the same thing in the same sentence ("it is pending and delivered")."""
    if fact.kind != "status" or not fact.rivals:
        return False
    text = message.text
    s_start, s_end = sentence_at(text, mention.start)
    subject = _subject(fact, text, mention.start, mention.end, id_pattern)
    for rival in fact.rivals:
        for start, end in names_phrase(text[s_start:s_end], rival):
            start, end = start + s_start, end + s_start
            if start < mention.end and mention.start < end:
                continue
            if _stated(text, start, end) and not _generic(text, start, end) and not _only_possible(text, start):
                other = _subject(fact, text, start, end, id_pattern)
                if subject is None or other is None or subject & other:
                    return True  # the same thing, or things unnamed
    return False


def _stated(text: str, start: int, end: int) -> bool:
    return not (
        negated_at(text, start, end)
        or contrasted_at(text, start, end)
        or hedged_at(text, start, end)
        or _asks(text, start, end)
        or _answered_no(text, end)
    )


# ---------------------------------------------------------------------------------------------- attribution to a thing


def _id_key(value: str) -> str:
    return re.sub(r"[^0-9a-z]", "", value.lower())


def _id_shape(value: str) -> str:
    return re.sub(r"\d", "9", _id_key(value))


def _markers(fact: Fact, text: str, skip: tuple[int, int], id_pattern: str | None) -> list[tuple[int, int, str]]:
    """Where things are named (start, end, id key): ``id_pattern`` matches (shaped like ``about`` when
    given) and every form of the ``about`` ids ("order 1244351" names "#R1244351")."""
    shapes = {_id_shape(a) for a in fact.about}
    found: dict[tuple[int, int], str] = {}
    for m in re.finditer(id_pattern, text) if id_pattern else ():
        if not shapes or _id_shape(m.group()) in shapes:
            found[m.span()] = next((_id_key(a) for a in fact.about if names_identifier(m.group(), a)), _id_key(m.group()))
    for about in fact.about:
        for span in names_identifier(text, about):
            found[span] = _id_key(about)
    return sorted((s, e, key) for (s, e), key in found.items() if e <= skip[0] or s >= skip[1])


_JOINED = re.compile(r"[\s,&]*(?:\b(?:and|or|both)\b)?[\s,&]*", re.I)


def _subject(fact: Fact, text: str, start: int, end: int, id_pattern: str | None) -> frozenset[str] | None:
    """The ids of the things a statement at [start, end) is about; None when no thing is named.

    The nearest id before it in its sentence (with the ids joined to it by "and" or commas), else the
    first after it in its sentence, else the latest id named before its sentence in the message.
    """
    markers = _markers(fact, text, (start, end), id_pattern)
    s_start, s_end = sentence_at(text, start)
    before = [m for m in markers if s_start <= m[0] and m[1] <= start]
    after = [m for m in markers if m[0] >= end and m[1] <= s_end]
    earlier = [m for m in markers if m[1] <= s_start]
    if before:
        group = [before[-1]]
        for m in reversed(before[:-1]):
            if not _JOINED.fullmatch(text, m[1], group[-1][0]):
                break
            group.append(m)
    elif after or earlier:
        group = [after[0] if after else earlier[-1]]
    else:
        return None
    return frozenset(key for _, _, key in group)


def _about_the_thing(fact: Fact, text: str, start: int, end: int, id_pattern: str | None) -> bool:
    if not fact.about:
        return True
    subject = _subject(fact, text, start, end, id_pattern)
    return subject is None or bool(subject & {_id_key(a) for a in fact.about})


# ---------------------------------------------------------------------------------------------- later corrections

_CORRECTION = re.compile(
    r"\b(?:actually|correction|sorry|apologies|my\s+apologies|i\s+apologi[sz]e|i\s+meant|i\s+misspoke|my\s+mistake"
    r"|my\s+error|(?<!than\s)rather(?!\s+than)|let\s+me\s+correct|to\s+correct|on\s+second\s+thought|scratch\s+that"
    r"|i\s+was\s+wrong|that\s+was\s+(?:wrong|incorrect)|should\s+have\s+said|no\s+wait|wait\s*,?\s*no)\b"
    r"|(?<=[-—–,;.]\s)no\s*[,—–-]",  # "$332.20 -- no, $340.00": a bare "no" set off by punctuation
    re.I,
)
_CUE_WORDS = frozenset(
    "actually correction sorry apologies apologize apologise meant misspoke mistake error rather correct second "
    "thought scratch wrong incorrect said".split()
)
STOPWORDS = frozenset(  # words that say nothing of what a sentence is about
    "the a an and or but is are was were be been being has have had do does did will would can could should may might "
    "must i you we they he she it its it's your our my me us them this that these those there here of to in on at by "
    "for with from as so if then than not no yes just also still now only all any some which what who when where how "
    "let me i'm i've i'll you'll you're we'll we've that's there's very really please thanks thank".split()
)


def _taken_back_later(
    fact: Fact, said: list[_Message], index: int, mention: _Said, id_pattern: str | None, changes: Sequence[int]
) -> NotTold | None:
    """ "contradicted" when a later sentence puts another value of the fact's kind in its place: one with a
    correction cue ("Sorry, I meant $340.00" after "$332.20"), or, the last word counting, one that restates
    the same slot of the same thing with no write between that could have changed it ("Your order is
    pending." after "Your order has been delivered.")."""
    message = said[index]
    telling = message.text[slice(*sentence_at(message.text, mention.start))]
    for later, start, end in _later_segments(said, index, mention.end):
        text = later.text
        cue = _CORRECTION.search(text, start, end)
        if cue and _same_slot(telling, text[start:end]):
            for o_start, o_end in _other_values(fact, text, id_pattern):
                if (
                    cue.start() <= o_start
                    and o_end <= end
                    and not in_dump(o_start, o_end, later.dumps)
                    and _restated(text, o_start, o_end)
                ):
                    return "contradicted"
        elif later is not message and _restates_otherwise(fact, message, mention, later, (start, end), id_pattern):
            if not any(message.event < c < later.event for c in changes):
                return "contradicted"
    return None


def put_right_later(text: str, end: int, values: Sequence[tuple[int, int]]) -> bool:
    """Whether a value said up to ``end`` is put right in the rest of its sentence or the next: a correction cue, then
    another of ``values`` (the spans of the values of its kind): "$80.00 back to your Visa — sorry, I meant $90.00"."""
    _, s_end = sentence_at(text, end)
    following = next((e for s, e in sentences(text) if s >= s_end), s_end)
    cue = _CORRECTION.search(text, end, following)
    return cue is not None and any(cue.end() <= start < following for start, _ in values)


def _restated(text: str, start: int, end: int) -> bool:
    """A value put in place of the told one: said, not denied or asked; "or rather $340.00" is no alternative
    offered but the correction itself, so an "or" does not make it a hedge here."""
    return not (negated_at(text, start, end) or _asks(text, start, end) or _answered_no(text, end))


def _later_segments(said: list[_Message], index: int, after: int) -> Iterator[tuple[_Message, int, int]]:
    """The rest of the mention's sentence, then each later sentence of this and the later messages."""
    first = said[index]
    _, s_end = sentence_at(first.text, after)
    yield first, after, s_end
    for message in said[index:]:
        for start, end in sentences(message.text):
            if message is first and start < s_end:
                continue
            yield message, start, end


_CHANGED = re.compile(r"\b(?:now|new|updated|remaining|left|after|afterwards|becomes?|became|changed|instead)\b", re.I)
_ANOTHER = re.compile(r"\b(?:other|another|second|different|previous|older|newer|earlier|later)\b", re.I)
_DISCOURSE = frozenset("again checking recap summary summarise summarize note update overall finally quick reminder".split())


def _restates_otherwise(
    fact: Fact, told: _Message, mention: _Said, later: _Message, sentence: tuple[int, int], id_pattern: str | None
) -> bool:
    """Whether a later sentence, without saying the fact's value, states another value of its kind plainly,
    of the same thing, in a clause about the same slot (for a status, any clause when the thing is named
    in both), not said as a change ("now $300.00") or of another thing ("your other order"). Counts are
    left out: "3 items" and "2 of them shipped" are seldom one slot."""
    start, end = sentence
    text = later.text
    if fact.kind == "number" or any(start <= s.start < end for s in _said_spans(fact, text)):
        return False
    slot = _slot(fact, told.text, mention.start, id_pattern)
    subject = _subject(fact, told.text, mention.start, mention.end, id_pattern)
    for o_start, o_end in _other_values(fact, text, id_pattern):
        if not (start <= o_start and o_end <= end) or in_dump(o_start, o_end, later.dumps):
            continue
        if not _stated(text, o_start, o_end) or (
            fact.kind == "status" and (_generic(text, o_start, o_end) or _only_possible(text, o_start))
        ):
            continue
        c_start, c_end = clause_at_keeping_labels(text, o_start)
        other = _subject(fact, text, o_start, o_end, id_pattern)
        named = subject is not None and other is not None
        if named and not subject & other:
            continue
        marked = _CHANGED.search(text, c_start, c_end) or _ANOTHER.search(text, c_start, c_end)  # "now $300", "your other order"
        # a rival status of a thing named in both is its status, whatever the words around it ("moved to vendor query")
        if not marked and ((named and fact.kind == "status") or _one_slot(slot, _slot(fact, text, o_start, id_pattern))):
            return True
    return False


def _slot(fact: Fact, text: str, pos: int, id_pattern: str | None) -> set[str]:
    """The words of a value's clause that say what it is a value of ("total", "refund"): its content words
    without the values of the fact's kind, the ids named and the words that only steer the talk ("to recap")."""
    start, end = clause_at_keeping_labels(text, pos)
    clause = text[start:end]
    blanks = _any_value_spans(fact, clause, id_pattern) + [m.span() for m in re.finditer(id_pattern or r"(?!)", clause)]
    for b_start, b_end in blanks:
        clause = clause[:b_start] + " " * (b_end - b_start) + clause[b_end:]
    return _content_words(clause) - _DISCOURSE


def _one_slot(told: set[str], later: set[str]) -> bool:
    """The same slot: a later bare statement ("It is pending.") restates whatever was told; otherwise the two
    clauses share at least half their words."""
    if not later:
        return True
    return bool(told) and len(told & later) * 2 >= len(told | later)


def _content_words(sentence: str) -> set[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z']{2,}", sentence)}
    return words - STOPWORDS - _CUE_WORDS


def _same_slot(telling: str, correction: str) -> bool:
    """A correction concerns the told value when it shares a content word with the telling sentence
    ("refund"), or either is too bare to be about anything else ("Sorry, I meant $340.00" after
    "It is $332.20.")."""
    said, corrected = _content_words(telling), _content_words(correction)
    return len(corrected) <= 1 or not said or bool(said & corrected)


def _other_values(fact: Fact, text: str, id_pattern: str | None) -> list[tuple[int, int]]:
    if fact.kind in ("status", "phrase"):
        return [span for rival in fact.rivals for span in names_phrase(text, rival)]
    if fact.kind == "identifier":
        return [span for span in _identifier_like(fact, text, id_pattern) if not names_identifier(text[slice(*span)], fact.value)]
    if fact.kind == "money":  # the same amount the other way round is another value ("you pay $8.62", not get it)
        amount = parse_money(fact.value)
        return [
            (m.start, m.end) for m in money_in(text) if amount is None or not same_amount(m, amount) or _flipped(fact, text, m)
        ]
    return [(m.start, m.end) for m in _kind_mentions(fact.kind, text) if not _same_value(fact, m.value)]


def _flipped(fact: Fact, text: str, mention: Mention) -> bool:
    """An amount said the other way round. A written minus or brackets ("adjusted with -15.00") say it comes
    back to the customer, whatever noun stands near it ("charge CH-50201")."""
    direction = "refund" if text[mention.start : mention.start + 1] in ("-", "−", "(") else mention.direction
    return fact.direction is not None and direction is not None and direction != fact.direction


# ---------------------------------------------------------------------------------------------- any value of the kind


def _any_value_spans(fact: Fact, text: str, id_pattern: str | None) -> list[tuple[int, int]]:
    if fact.kind in ("status", "phrase"):
        wordings = (fact.value, *fact.synonyms, *(fact.rivals if fact.kind == "status" else ()))
        return [span for wording in wordings for span in names_phrase(text, wording)]
    if fact.kind == "identifier":
        return names_identifier(text, fact.value) + _identifier_like(fact, text, id_pattern)
    if fact.kind == "card_ending":
        return [(m.start, m.end) for m in cued_card_endings_in(text)]
    return [(m.start, m.end) for m in _kind_mentions(fact.kind, text)]


def _identifier_like(fact: Fact, text: str, id_pattern: str | None) -> list[tuple[int, int]]:
    """Ids of the fact's shape: matches of ``id_pattern`` shaped like the value, or digit runs as long as it."""
    shape = _id_shape(fact.value)
    spans = [m.span() for m in re.finditer(id_pattern, text) if _id_shape(m.group()) == shape] if id_pattern else []
    if shape.strip("9") == "":
        runs = re.finditer(r"(?<![\w.,-])\d+(?:[ -]\d+)*(?![\w]|[.,]\d)", text)
        spans += [m.span() for m in runs if len(re.sub(r"\D", "", m.group())) == len(shape)]
    return spans


def _quote(text: str, start: int, end: int) -> str:
    """The sentence that tells, or the QUOTE_CHARS of it around the value when it is longer."""
    s_start, s_end = sentence_at(text, start)
    if s_end - s_start <= QUOTE_CHARS:
        return text[s_start:s_end]
    left = max(s_start, min((start + end - QUOTE_CHARS) // 2, s_end - QUOTE_CHARS))
    return text[left : left + QUOTE_CHARS]
