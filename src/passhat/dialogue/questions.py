"""What a yes answers: the questions of a message that ask for one, and the offers they point back to.

A customer's yes answers the question it follows, not every action the message mentions. "I could put it on
hold, but shall I leave it as it is?" asks about leaving it; "may I keep this transcript?" asks about a
transcript; "Proposed: short-pay INV-1 and post it. Shall I go ahead?" points back to the offer before it, but
not to the findings recapped above that. The reader (whether a message asks for a yes), the scripted customer,
the confirmation guard and the graders (what a yes binds) all take the answered part from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from passhat.dialogue.text import cue, negated_at, question_start, reported_at, sentences

CONFIRM_QUESTION = cue(
    r"shall i",
    r"should i",
    r"would you like (?:me )?to",
    r"would you (?:prefer|rather) (?:that )?(?:i|we)\b",
    r"do you want (?:me )?to",
    r"want me to",
    r"like me to",
    r"can i (?:go ahead|proceed)",
    r"may i (?:go ahead|proceed)",
    r"is (?:that|this|everything) (?:ok|okay|correct|right|alright)",
    r"(?:does|do) (?:that|this|these|it)(?: all)? (?:sound|look|work)",
    r"confirm",
    r"proceed",
    r"go ahead",
    r"yes or no",
    r"are you sure",
    r"(?:ok|okay) to",
    r"(?:correct|right|accurate)\s*\?",
    r"would you like (?:that|this)\b",
    r"(?:would|will|does) (?:that|this) (?:work|help|be (?:ok|okay|alright|fine))",
    r"sounds? good",
    r"(?:ok|okay|alright|all right|good to go)\s*\?\s*$",  # "I'll short-pay INV-1 and email Northmoor. OK?"
    r"(?<![\w ])yes(?: to (?:both|all(?: (?:two|three|four|five))?|these|everything|that|this|it))?\s*\?\s*$",  # "Yes to both?"
)
# a request for the yes itself, worded as a request ("I just need your go-ahead", "Could you confirm you'd like me to
# go ahead with these steps."): its "need" or "could you" asks for no detail
GO_AHEAD = cue(
    r"(?:need|have|get|with) your (?:ok|okay|go-ahead|go ahead|approval|consent|yes)\b",
    r"(?:could|can|would|will) you (?:please )?confirm (?:(?:that )?you(?:'d| would) like|(?:that )?(?:i|we) (?:should|may|can)|you want)",
)
CONFIRM_REQUEST = cue(
    r"please confirm",
    r"(?:reply|answer|respond|say) (?:with )?['\"*_]*yes",
    r"yes or no",
    r"yes/no",
    r"\(?y/n\)?",
    r"let me know if (?:you'?d like|you want) me to",
    r"(?:a|your) (?:yes|go-ahead|go ahead|ok|okay)(?: from you)? and (?:i'?ll|i will|i can)\b",  # "a yes from you and I'll adjust it"
    r"if (?:yes|so),? (?:just )?say so\b|say (?:so|yes|the word) and (?:i'?ll|i will)\b",  # "If yes, just say so and I'll cancel it."
    r"(?<!n't )(?<!not )(?<!cannot )(?<!unable to )confirm (?:that|this|and)",  # "I can't confirm that ..." asks nothing
    r"(?<!need )(?<!have )(?<!able )to confirm",  # "To confirm: ...", not "I need to confirm who I'm speaking with"
    GO_AHEAD.pattern,
)
# Words that, left over once the cue of a request for a yes is taken out, say nothing of their own: the question
# points back at what came before ("Shall I go ahead?", "Does that work for you?", "OK to proceed with all of it?").
_POINTING = frozenset(
    "go ahead proceed with do that this it these those them all both everything now then for you me i we us please so "
    "ok okay alright fine good sound sounds look looks right correct work works is are does the as above described "
    "proposed planned outlined want like would shall should can may could to and yes no y n confirm make changes "
    "change plan steps be if happy ready just one of on also get going same here there alternative option suggestion "
    "instead request proposal action actions first second tell what or let know reply otherwise different say just "
    "any wording changed change changes edit edits tweak anything else two three four five six seven eight nine ten "
    "send submit a an d ll s re ve not so".split()  # "send": "Shall I send it?" under a notice drafted above
)
_DECLARED = re.compile(r"\b(?:i|we)(?:'ll|\s+will|\s+(?:am|are)\s+going\s+to|'m\s+going\s+to)\b", re.I)
# a tag that turns a stated action into a question: "Hold INV-1 for a duplicate \u2014 yes?"; "Is INV-1 the one, right?"
# asks about a fact (see :func:`asks_yes`)
_TAG = re.compile(r"(?<=\w)\s*[,\u2014\u2013-]+\s*(?:yes|right|ok|okay)\s*\?\s*$", re.I)
_FACT_QUESTION = re.compile(r"\W*(?:is|are|was|were|do|does|did|has|have|had)\b", re.I)
_OPEN_QUESTION = re.compile(r"\W*(?:how|what|which|when|where|who)\b", re.I)  # "How would you like to proceed?"
_MARKUP = re.compile(r"[*_`>#]+")
_QUOTED_LINE = re.compile(r"[ \t]*>")
# a sentence that declines or negates ("I can't approve it: $3,870.00 is over your limit") states no term of the
# alternative asked about after it
_DECLINING = re.compile(
    r"n't\b|\b(?:not|no|never|cannot|unable|afraid)\b|\bsorry\b(?![,\s—–-]*i\s+mean)", re.I
)  # "sorry, I meant" corrects


def asks_yes(sentence: str, actions: re.Pattern[str] | None = None) -> bool:
    """Whether a sentence asks the customer for a yes: a request to confirm, a question with a confirming cue (not
    an open question: "How would you like to proceed?"), or a question that opens with an action (``actions``: the action words), said as a bare imperative ("Escalate
    INV-1?", "Apply Classic to CH-2, refund $46.25? y/n")."""
    if CONFIRM_REQUEST.search(sentence):
        return True
    if "?" not in sentence or _OPEN_QUESTION.match(_MARKUP.sub("", sentence)) or _either_or(sentence, actions):
        return False
    bare = _MARKUP.sub("", sentence).lstrip()
    tagged = bool(_TAG.search(sentence)) and not _FACT_QUESTION.match(bare)
    return bool(CONFIRM_QUESTION.search(sentence)) or tagged or bool(actions and actions.match(bare))


_OR = re.compile(r"\bor\b", re.I)


def _either_or(sentence: str, actions: re.Pattern[str] | None) -> bool:
    """A question that offers two actions joined by "or" asks the customer to choose, not for a yes: "Short-pay or
    hold instead?", "Shall I cancel it, or reschedule it?" propose neither (a yes could mean either)."""
    found = list(actions.finditer(sentence)) if actions else []
    return any(_OR.search(sentence, a.end(), b.start()) for a, b in zip(found, found[1:], strict=False))


def answered(text: str, actions: re.Pattern[str] | None = None) -> list[tuple[int, int]]:
    """Spans of ``text`` a yes to it answers: each part that asks for a yes; when that part only points back
    ("Shall I go ahead?", "Shall I apply it?"), also the sentences before it in its paragraph (in the paragraph
    before, when it stands alone) and those before that name an action (a recap of findings in a paragraph of its own is context);
    when it names an action of its own ("Shall I apply Classic to CH-1?"), also the sentences before it in its paragraph,
    which state that action's terms ("Refund: $37.50 to your Visa."), unless they decline or negate. Whatever is asked, a yes also
    accepts what is said after the first question ("Shall I X? I'll also cancel Y.") and what the agent declares
    it will do. With no request for a yes, the questions it asks; with no question, all of it."""
    spans = sentences(text)
    asking = [(_asking_start(text, s, e, actions), e) for s, e in spans if asks_yes(text[s:e], actions)]
    offers = [(s, e) for s, e in asking if not _ANYTHING_ELSE.search(text, s, e)]
    asking = offers or asking  # "Is there anything else you'd like me to check?" beside an offer: the offer is asked
    yes_asked = bool(asking)  # "Anything else?" asks for no yes, so points back at nothing
    if not asking:
        asking = [(question_start(text, s), e) for s, e in spans if "?" in text[s:e]]
    if not asking:
        return [(0, len(text))]
    out = [(s, e) for s, e in spans if (s >= asking[0][0] and not _aside(text[s:e], actions)) or _DECLARED.search(text, s, e)]
    for start, end in asking:
        if yes_asked and _points_back(text[start:end], actions, text[:start]):
            paragraph = _pointed_at(text, start)
            own = [(s, e) for s, e in spans if paragraph <= s and e <= start]
            # the offer is in its paragraph (earlier ones recap); a quoted text (a notice drafted above) is wording, no offer
            # ("No audit note or notifications. Shall I go ahead with all three?" states what is not done: the list above it is the offer)
            stated = any(_offers(text, s, e, actions) and not _QUOTED_LINE.match(text, s) for s, e in own)
            before = [(s, e) for s, e in spans if e <= start and (s >= paragraph or not stated and _acts(text[s:e], actions))]
            out += [
                (s, e) for s, e in before if not (_reports(text, s, e, actions) or _declined_for(text, (s, e), before, actions))
            ]
            out += _said_before_in_sentence(text, spans, start, actions)
        elif _acts(text[start:end], actions):  # "Refund: $37.50 to your Visa. Shall I apply Classic to CH-1?"
            paragraph = _pointed_at(text, start)
            own = text.rfind("\n\n", 0, start) + 1
            if paragraph < own and not _acts(text[paragraph:own], actions):
                paragraph = own  # a question standing alone after a list of records with no action says its own terms
            out += [
                (s, e)
                for s, e in spans
                if paragraph <= s and e <= start and not (_reports(text, s, e, actions) or _DECLINING.search(text, s, e))
            ]
        out.append((start, end))
    return sorted(set(out))


def _said_before_in_sentence(
    text: str, spans: list[tuple[int, int]], start: int, actions: re.Pattern[str] | None
) -> list[tuple[int, int]]:
    """The part of the sentence before a question that points back ("Dr Varga has a slot on 17 June at 2:30 pm; shall
    I book it for you?"), unless it declines or reports."""
    s, _ = next(((s, e) for s, e in spans if s <= start < e), (start, start))
    if s == start or _DECLINING.search(text, s, start) or _reports(text, s, start, actions):
        return []
    return [(s, start)]


_ANYTHING_ELSE = re.compile(r"\b(?:anything|something) else\b", re.I)


def _aside(sentence: str, actions: re.Pattern[str] | None) -> bool:
    """A question after the one for the yes that asks for no yes of its own ("And is there anything else I can check?",
    "And is the Amex ending in 9921 still the right card?"): another question, whose words are no term of the offer."""
    return "?" in sentence and (not asks_yes(sentence, actions) or bool(_ANYTHING_ELSE.search(sentence)))


# the agent declining an action itself ("I'm afraid I can't cancel it", "**Not possible:** ..."), not any negation
REFUSING = re.compile(
    r"\b(?:can'?t|cannot|can not|unable to|won'?t be able|not (?:possible|allowed|able|permitted|eligible)|afraid"
    r"|nothing (?:i|we) (?:can|could|am able to) do)\b",
    re.I,
)


def _declined_for(text: str, sentence: tuple[int, int], before: list[tuple[int, int]], actions: re.Pattern[str] | None) -> bool:
    """A sentence that declines ("I can't cancel it: AP-1 is tomorrow") with an alternative offered after it ("What I
    can do instead is cancel AP-2. Would you like me to do that?"): the yes answers the alternative, not the refusal."""
    s, e = sentence
    if not REFUSING.search(text, s, e):
        return False
    return any(s2 > s and _acts(text[s2:e2], actions) and not REFUSING.search(text, s2, e2) for s2, e2 in before)


def _asking_start(text: str, start: int, end: int, actions: re.Pattern[str] | None) -> int:
    """Where a sentence that asks for a yes starts asking: its question part ("..., but shall I leave it?") when
    that part holds the request, else the whole sentence ("OK to apply it to CH-1 (May 30, 2025) and ...?")."""
    part = question_start(text, start)
    return part if part == start or asks_yes(text[part:end], actions) else start


def within(spans: Iterable[tuple[int, int]], start: int) -> bool:
    return any(s <= start < e for s, e in spans)


def _pointed_at(text: str, start: int) -> int:
    """Where the paragraph a question at ``start`` points back to begins: its own, or the one before it when the
    question is a paragraph of its own ("- Apply Classic ...\n- Refund $46.25 ...\n\nShall I go ahead?")."""
    own = text.rfind("\n\n", 0, start)
    if own < 0 or text[own:start].strip():
        return own + 1
    return text.rfind("\n\n", 0, own) + 1


def _reports(text: str, start: int, end: int, actions: re.Pattern[str] | None) -> bool:
    """Whether every action the sentence names is said as done ("Done: INV-1 is on hold. Shall I add a note?"):
    what was done is not what the question offers."""
    found = list(actions.finditer(text, start, end)) if actions else []
    return bool(found) and all(reported_at(text, m.start(), m.end()) for m in found)


def _acts(sentence: str, actions: re.Pattern[str] | None) -> bool:
    return bool(actions and actions.search(sentence))


def _offers(text: str, start: int, end: int, actions: re.Pattern[str] | None) -> bool:
    """Whether ``text[start:end]`` names an action of the writes un-negated ("No audit note" names none)."""
    return bool(actions) and any(not negated_at(text, m.start(), m.end()) for m in actions.finditer(text, start, end))


def _points_back(part: str, actions: re.Pattern[str] | None, before: str = "") -> bool:
    """Whether a request for a yes says nothing of its own but its action ("Shall I go ahead?", "Shall I apply it?"),
    or a verb said ``before`` it put back on "it" ("- **Apply the workaround of KE-32 to INC-1221.** Shall I apply
    it?", "Please reply yes and I'll apply it now."): a verb the message has not said ("Shall I email it?", "Or shall I
    leave it as it is?") is news."""
    left = CONFIRM_QUESTION.sub(" ", CONFIRM_REQUEST.sub(" ", part.lower()))
    left = _REPEATED.sub(lambda m: " " if re.search(rf"\b{m.group(1)}", before, re.I) else m.group(), left)
    words = re.findall(r"[a-z]+", _without_actions(left, actions))
    rest = [w for w in words if w not in _POINTING and w not in _ACTION_NOUNS]
    return not rest or len(rest) == 1 and bool(_PRONOUNS & set(words)) and re.search(rf"\b{rest[0]}\b", before, re.I) is not None


_PRONOUNS = frozenset({"it", "that", "this", "them", "these", "those"})


_REPEATED = re.compile(r"\b([a-z]{3,})(?= (?:it|that|this|them|both)\b)")  # "apply it": the verb, before its pronoun


# money put back, said to point back at the offer that moves it ("Shall I go ahead with that refund?") whatever the
# write's own action word; a noun made from an action word ("that adjustment", "the cancellation") is that action
_ACTION_NOUNS = frozenset({"refund", "refunds"})


def _without_actions(text: str, actions: re.Pattern[str] | None) -> str:
    """``text`` with every action said taken out to the end of its word: "that adjustment" leaves "that", not "that
    ment" (the words match from a word start and may stop inside one)."""
    if actions is None:
        return text
    return re.sub(r"\x00\w*", " ", actions.sub("\x00", text))
