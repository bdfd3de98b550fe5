"""Where a mention sits in an agent's words: its sentence, its clause, and whether it is denied,
set aside, hedged or asked about.

Graders must not sign a fact the agent only denied ("it is not delivered"), only offered as an
alternative to something else ("instead of cancelling"), only guessed at ("about $332"), or only
asked about ("is your order delivered?"). These are judged on the words around a span, with a
clause as the scope: a negation in another clause ("I can't cancel it because it was delivered")
does not reach the mention.
"""

from __future__ import annotations

import functools
import re

# Words after which a full stop does not end a sentence (titles, Latin, units, list markers).
_KEEP_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof jr sr vs etc e.g i.e approx no nos apt ste inc ltd co est jan feb mar apr jun jul aug sep sept "
    "oct nov dec".split()
)
# Street abbreviations end a sentence only when a capitalised word that is not a unit designator follows (a.m. and
# p.m. when any capitalised word follows).
_STREET_ABBREVIATIONS = frozenset("st ave rd blvd ln dr ct pl ter pkwy hwy cir sq".split())
_HALF_DAYS = frozenset({"a.m", "p.m"})  # "at 2:00 p.m. for $12.50" goes on; "at 2 p.m. See you then." ends
_UNIT_WORD = re.compile(r"(?:apt|apartment|unit|suite|ste|#)", re.I)

_SENTENCE_END = re.compile(
    r"[.!?]+[\"'”’)\]]*(?=\s|$)"  # terminal punctuation followed by space or the end
    r"|\n"  # a line break
    r"|(?<=\S)[ \t]+(?=[•▪‣◦][ \t])"  # an inline bullet
    r"|(?<=[^\s\d])[ \t]+(?=\(?\d{1,2}\)[ \t])"  # an inline numbered item "1) ..."
)
_LEADING_MARKER = re.compile(r"(?:[-*•▪‣◦]|\(?\d{1,2}[.)])[ \t]+")


def cue(*phrases: str) -> re.Pattern[str]:
    """One pattern for a set of cue phrases (regex fragments), each matched from a word boundary, any case."""
    return re.compile(r"\b(?:" + "|".join(phrases) + r")", re.I)


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences of ``text``, trimmed; newlines, bullets and numbered items end one too."""
    return list(_sentence_spans(plain(text)))


def plain(text: str) -> str:
    """``text`` with typographic apostrophes made plain, offsets unchanged (every rule reads "n't")."""
    return text.replace("\u2019", "'").replace("\u2018", "'")


@functools.lru_cache(maxsize=512)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    start = 0
    for end in _sentence_ends(text):
        spans.extend(_trimmed(text, start, end))
        start = end
    spans.extend(_trimmed(text, start, len(text)))
    return tuple(spans)


def _sentence_ends(text: str) -> list[int]:
    ends = []
    for m in _SENTENCE_END.finditer(text):
        if m.group().startswith(".") and not _ends_at_period(text, m.start(), m.end()):
            continue
        if _QUOTE_GOES_ON.match(text, m.end()) and m.group()[-1] in '"”':
            continue  # 'Shall I email the vendor: "... a credit note." now?': the quote ends, the question goes on
        ends.append(m.end())
    return ends


# after a quoted sentence, a short lower-case tail that ends the question: "...a credit note." now?
_QUOTE_GOES_ON = re.compile(r"[ \t]+[a-z][^.?!\n\"”]{0,30}[?!]")


def _ends_at_period(text: str, dot: int, after: int) -> bool:
    word = re.search(r"([\w.]+)$", text[:dot])
    if not word:
        return True
    token = word.group(1).lower().rstrip(".")
    line_start = text.rfind("\n", 0, dot) + 1
    if token.isdigit() and not text[line_start : word.start()].strip():
        return False  # "1. First item" at the start of a line
    if token in _KEEP_ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
        return False
    if token in _STREET_ABBREVIATIONS or token in _HALF_DAYS:
        following = text[after:].lstrip()
        return bool(following) and following[0].isupper() and not (token in _STREET_ABBREVIATIONS and _UNIT_WORD.match(following))
    return True


def _trimmed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    marker = _LEADING_MARKER.match(text, start, end)
    if marker:
        start = marker.end()
    while end > start and text[end - 1].isspace():
        end -= 1
    return [(start, end)] if end > start else []


def sentence_at(text: str, pos: int) -> tuple[int, int]:
    """The sentence span containing ``pos`` (the nearest one before it when ``pos`` is between two)."""
    found = (0, len(text))
    for start, end in _sentence_spans(plain(text)):
        if start <= pos:
            found = (start, end)
        if pos < end:
            break
    return found


_PRONOUN_SUBJECT = r"(?:it|it's|its|they|they're|we|we've|we'll|you|you're|i|i'm|i've|there|this|that|he|she|your)\b"
_CLAUSE_BREAK_WORDS = (
    r"(?:but|because|since|although|though|while|whereas|which|unless|however|therefore|otherwise)\b|yet(?=\s*,)"
    r"|so\b(?!\s+(?:far|much|many|long|that)\b)|that(?:'s\b|\s+(?:is|has|was|have|are|were)\b)"
    rf"|(?:as|and|or)\s+(?={_PRONOUN_SUBJECT})"
)
_CLAUSE_BREAK = re.compile(rf",\s|;|—|–|\s-\s|\b(?={_CLAUSE_BREAK_WORDS})", re.I)
_COLON = re.compile(r":(?!\d)")


def clause_at(text: str, pos: int) -> tuple[int, int]:
    """The clause around ``pos``: its sentence cut at , ; : dashes and at subordinating words."""
    return _clause(text, pos, split_colon=True)


def clause_at_keeping_labels(text: str, pos: int) -> tuple[int, int]:
    """Like :func:`clause_at` but a colon does not cut, so a label stays with its value ("Refund: $8.62")."""
    return _clause(text, pos, split_colon=False)


def _clause(text: str, pos: int, split_colon: bool) -> tuple[int, int]:
    text = plain(text)
    s_start, s_end = sentence_at(text, pos)
    start, end = s_start, s_end
    for b in _clause_breaks(text, s_start, s_end, split_colon):
        if b <= pos:
            start = b
        else:
            end = b
            break
    return start, end


def _clause_breaks(text: str, s_start: int, s_end: int, split_colon: bool) -> list[int]:
    breaks = [m.start() if m.group() == "" else m.end() for m in _CLAUSE_BREAK.finditer(text, s_start, s_end)]
    if split_colon:
        breaks += [m.end() for m in _COLON.finditer(text, s_start, s_end)]
    return sorted(set(breaks))


_NEGATOR = re.compile(
    r"\b(?:not|never|no|neither|nor|none|nothing|cannot|without)\b|n't\b"
    r"|\b(?:do|does|did|is|was|are|were|has|have|had|ca|wo|could|would|should)nt\b",
    re.I,
)
_NOT_A_NEGATION = re.compile(
    r"\s+(?:only|just|merely|simply|problem|worries|doubt|matter|later than|sooner than|earlier than|more than|less than)\b",
    re.I,
)
_YES_OR_NO = re.compile(r"\byes\s*(?:/|or)\s*$", re.I)
_INTERJECTION_NO = re.compile(rf"\s*(?:no|nope)\s+(?={_PRONOUN_SUBJECT}|the\b|that's\b)", re.I)
_DETERMINER = re.compile(r"\b(?:a|an|the|this|that|these|those|your|its|their|our|my|any|such)\s+$", re.I)
FUNCTION_WORDS = frozenset(  # words that follow an adjective without making it attributive ("delivered and ...")
    "and or but is are was were be been being has have had do does did will would can could should may might must "
    "on in at by to for with from of as since yet now already so because not no nor than then today yesterday "
    "tomorrow too also still just again".split()
)
_DENIED_AFTER = re.compile(
    r"\s*(?:(?:is|was|are|were|'s|would be|will be)\s*(?:not|n't|never)|isn't|wasn't|aren't|weren't)\s+"
    r"(?:quite\s+|really\s+)?(?:the\s+|a\s+|an\s+)?(?:correct|right|accurate|true|valid|actual|final|amount|total|figure"
    r"|price|balance|number|date|status|case|what|it)\b"
    r"|\s*(?:is|was|are|were|'s)\s+(?:incorrect|wrong|inaccurate|a mistake|an error|mistaken)\b",
    re.I,
)


def negated_at(text: str, start: int, end: int, spare_modifiers: bool = True) -> bool:
    """Whether a negation in the mention's clause governs the mention ``text[start:end]``.

    The mention's own words never negate it ("no longer needed"). A negated verb does not reach a word
    used attributively after a determiner ("I can't cancel a delivered order" still says delivered),
    but it does reach an amount ("I can't refund the $8.62"), and, with ``spare_modifiers=False``, any word
    (an action: "I can't change the payment method" offers no payment change).
    """
    text = plain(text)
    c_start, c_end = clause_at(text, start)
    before = text[c_start:start]
    if _DENIED_AFTER.match(text, end, c_end):
        return True
    negator = _governing_negator(_unquoted(before))
    if negator is None:
        return False
    between = before[negator.end() :]
    if _aside_opened(between):
        return False
    return not (spare_modifiers and _attributive_after_verb(text, start, end, between))


# what may stand between a negation and the thing it says is not there: words of having, showing, finding or being
_ABSENCE_LINK = re.compile(
    r"(?:[\s*_]+|\b(?:any|a|an|the|one|been|be|being|currently|presently|yet|ever|actually|really|have|has|had|hold"
    r"|holds|held|show|shows|showing|list|lists|listed|record|records|recorded|contain|contains|find|found|see|carry"
    r"|carries|include|includes|exist|exists|there|is|are|was|were|of|on\s+file|appear|appears|mention|mentions)\b"
    r"|'s\b|'re\b)*",
    re.I,
)
_NOT_OF_ABSENCE = frozenset({"without", "nor", "neither", "nothing", "none"})


def absent_at(text: str, start: int, end: int) -> bool:
    """Whether the mention's clause says the thing ``text[start:end]`` is not there: a negation reaches it through
    words of having, showing, finding or being only ("it doesn't record any authorization", "there's no
    authorization on file", "you aren't authorized", "Basic, which isn't a paid plan", "no record of an
    authorization"). The negation of another act says nothing of it ("I can't share it without authorization",
    "I can't say whether there is an authorization"), nor does a negation negated ("not no membership")."""
    text = plain(text)
    c_start, _ = clause_at(text, start)
    before = _unquoted(text[c_start:start])
    negator = _governing_negator(before)
    if negator is None or negator.group().lower() in _NOT_OF_ABSENCE:
        return False
    prior = _governing_negator(before[: negator.start()])
    if prior is not None and _ABSENCE_LINK.fullmatch(before, prior.end(), negator.start()):
        return False
    return bool(_ABSENCE_LINK.fullmatch(before, negator.end()))


_ASIDE = re.compile(r"\(([^()]*)$")
_ASIDE_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|can|could|will|would|must|should|may|might|does|do|did|\w{2,}ed|\w{2,}es)\b"
    r"|'s\b",
    re.I,
)


def _aside_opened(between: str) -> bool:
    """Whether the mention sits in a bracketed aside opened after the negation that says something of its own: "Can't
    approve it ($3,870.00 is over your approval limit)", "no paid plan (your membership is the free Basic plan)" state
    the reason plainly. A bracket that only glosses the refused thing ("can't refund it (the $8.62)") has no verb."""
    aside = _ASIDE.search(between)
    return aside is not None and bool(_ASIDE_VERB.search(aside.group(1)))


_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|(?<!\w)'[^'\n]*'(?!\w)")


def _unquoted(before: str) -> str:
    """``before`` with closed quotations blanked (same length): words quoted are named, not said."""
    return _QUOTED.sub(lambda m: " " * len(m.group()), before)


def _governing_negator(before: str) -> re.Match[str] | None:
    last = None
    for m in _NEGATOR.finditer(before):
        if _NOT_A_NEGATION.match(before, m.end()):
            continue
        if m.group().lower() == "no" and _INTERJECTION_NO.match(before, m.start()) and not before[: m.start()].strip():
            continue
        if m.group().lower() == "no" and _YES_OR_NO.search(before, 0, m.start()):
            continue  # "(yes/no)", "yes or no": the answer asked for, not a negation
        last = m
    return last


def _attributive_after_verb(text: str, start: int, end: int, between: str) -> bool:
    """ "can't cancel a delivered order": a determiner, then the mention used as an adjective of a noun."""
    if text[start : start + 1].isdigit() or text[start : start + 1] in "$€£-−(":
        return False  # an amount a negated verb refuses is refused
    determiner = _DETERMINER.search(between)
    if determiner is None or not between[: determiner.start()].strip():
        return False  # "not a delivered order", "no refund": the negation is the determiner's own
    following = re.match(r"\s+([A-Za-z]+)", text[end:])
    return bool(following) and following.group(1).lower() not in FUNCTION_WORDS


# Said as done rather than offered: "has been cancelled", "was returned", "I've updated the address", "we cancelled it".
_DONE_PASSIVE = re.compile(r"\b(?:has|have|had|'ve)\s+(?:\w+ly\s+|now\s+|already\s+|just\s+|also\s+)?been\b", re.I)
_DONE_BEFORE = re.compile(
    r"(?:\b(?:was|were|is|are|has|have|had)|'s|'ve|\b(?:i|we)(?:'ve|\s+have|\s+had)?)"
    r"\s+(?:\w+ly\s+|now\s+|already\s+|just\s+|also\s+)?$",
    re.I,
)
_DONE_BY_US = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have|\s+had)?\s+(?:\w+ly\s+|now\s+|already\s+|just\s+|also\s+)?"
    r"(?!(?:located|found|checked|verified|reviewed|pulled|looked|noted|noticed|received|authenticated|identified"
    r"|confirmed|prepared|understood|need|used|proceed)\b)\w+ed\b",
    re.I,
)


def reported_at(text: str, start: int, end: int) -> bool:
    """Whether the mention's clause says it is already done: "order #R1 has been cancelled", "your speakers
    were exchanged", "I've updated the shipping address" — a report, not an offer ("shall I cancel it?",
    "it would be cancelled") nor a condition ("once it's cancelled, ...")."""
    text = plain(text)
    c_start, c_end = clause_at(text, start)
    if _CONDITION_BEFORE.search(text, c_start, start):
        return False
    word = re.match(r"\w*", text[end:])
    participle = text[start : end + (word.end() if word else 0)].lower().endswith(("ed", "en"))
    if participle and _DONE_BEFORE.search(text, c_start, start):
        return True
    return bool(_DONE_PASSIVE.search(text, c_start, c_end) or _DONE_BY_US.search(text, c_start, start))


_OPEN_QUOTE = "[\"'“‘(]?"  # a quoted mention: "instead of 'no longer needed'"
_CONTRAST_BEFORE = re.compile(
    r"\b(?:instead\s+of|rather\s+than|as\s+opposed\s+to|in\s+place\s+of|other\s+than|without|except(?:\s+for)?|apart\s+from)"
    rf"\s+(?:[\w'-]+\s+){{0,4}}{_OPEN_QUOTE}$",
    re.I,
)
_NOT_BEFORE = re.compile(rf"\bnot\s+(?:[\w'-]+\s+){{0,3}}{_OPEN_QUOTE}$", re.I)
_BUT_AFTER = re.compile(r"[,\s]+but\b(?!\s+also\b)", re.I)


def contrasted_at(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is named as what is *not* proposed: "instead of cancelling",
    "rather than a return", "not a refund but an exchange" (the refund)."""
    text = plain(text)
    s_start, s_end = sentence_at(text, start)
    before = text[s_start:start]
    if _CONTRAST_BEFORE.search(before):
        return True
    return bool(_NOT_BEFORE.search(before)) and bool(_BUT_AFTER.search(text[end:s_end]))


_APPROXIMATOR = re.compile(
    r"(?:\babout|\baround|\broughly|\bapproximately|\bapprox\.?|\bnearly|\balmost|\bclose\s+to|\bsomething\s+like|\bup\s+to"
    r"|\bmaybe|\bpossibly|\bperhaps|\bprobably|\blikely|\bestimated|\bbetween|~"
    r"|\bover|\bunder|\babove|\bbelow|\bat\s+least|\bat\s+most|\bmore\s+than|\bless\s+than|\bfewer\s+than|\bexceed\w*)"
    rf"\s*(?:[\w'-]+\s+)?{_OPEN_QUOTE}$",
    re.I,
)
_DEFINITE_AFTER = re.compile(rf"\s(?:the|its|your|their|our|this|that)\s+{_OPEN_QUOTE}$", re.I)
_LIMIT_BEFORE = re.compile(r"\b(?:allow|permit|cover|cap|limit)(?:s|ed|ing)?\s+$", re.I)


def _named_bound(before: str, approximator: re.Match[str]) -> bool:
    """A comparison word that bounds nothing: before a definite value ("more than the $25.00 its tolerance allows"
    names that amount, it does not estimate it), or after a verb of limit ("the tolerance allows up to $27.36"
    says the limit exactly)."""
    return bool(_DEFINITE_AFTER.search(approximator.group())) or (
        approximator.group().lower().startswith(("up to", "at most"))
        and bool(_LIMIT_BEFORE.search(before, 0, approximator.start()))
    )


_CONDITION_BEFORE = re.compile(
    r"\b(?:if|whether|unless|once|when|whenever|in\s+case|provided|assuming|as\s+soon\s+as"
    r"|before|after|(?:until|till)(?!\s+(?:the\s+|on\s+)?$))\b",  # "paid until October 19" ends a period: no condition
    re.I,
)
# what would be, were things otherwise: "If you had Plus, it would be covered in full", "Had you renewed, you'd pay $0"
_UNREAL_CONDITION = re.compile(
    r"\bif\b[^.?!;]{0,60}?\b(?:had|were)\b|\b(?:had|were)\s+(?:you|it|they|he|she|we)\b|\bunless\b", re.I
)
_WOULD = re.compile(r"\b(?:would|could|might)\b|'d\b", re.I)


def _counterfactual(text: str, start: int, c_start: int) -> bool:
    """A value said in the result clause of an unreal condition earlier in its sentence (the clause that holds it
    says "would"): what would be, not what is. "If you'd like, you'd pay nothing" is no such condition."""
    s_start, _ = sentence_at(text, start)
    return bool(_WOULD.search(text, c_start, start)) and bool(_UNREAL_CONDITION.search(text, s_start, c_start))


_ID_LIKE = re.compile(r"#?[A-Za-z]+[-_]?\d")
_BELIEF = re.compile(
    r"\b(?:i\s+think|i\s+believe|i\s+guess|i\s+suppose|i'm\s+not\s+sure|not\s+sure|might|may\s+be|may\s+have|could\s+be"
    r"|seems?\s+to|appears?\s+to|either)\b",
    re.I,
)
_OR_AFTER = re.compile(r"\s+or\s+(?!so\b)|\s*-?ish\b|\s+or\s+so\b", re.I)
_OR_BEFORE = re.compile(rf"\bor\s+(?:[\w'-]+\s+)?{_OPEN_QUOTE}$", re.I)


def hedged_at(text: str, start: int, end: int, alternatives: bool = True) -> bool:
    """Whether the mention is offered as one of several, as an estimate or bound, or under a condition:
    "either X or Y", "X or Y", "about/around/roughly/maybe X", "I think X", "over X", "if/once/whether X".

    ``alternatives=False`` leaves "X or Y" unhedged, for values that are a list of options ("the reason
    'no longer needed' or 'ordered by mistake'") rather than one value (an addition to the interface).
    """
    text = plain(text)
    c_start, c_end = clause_at(text, start)
    before = text[c_start:start]
    approximator = _APPROXIMATOR.search(before)
    if approximator and not (
        (approximator.group().lower().startswith(("about", "around")) and _ID_LIKE.match(text, start))
        or _named_bound(before, approximator)
    ):
        return True
    if _CONDITION_BEFORE.search(before) or _counterfactual(text, start, c_start):
        return True
    if not alternatives:
        return bool(_BELIEF.search(re.sub(r"\beither\b", "      ", before, flags=re.I)))
    if _BELIEF.search(before) or _OR_BEFORE.search(before):
        return True
    return bool(_OR_AFTER.match(text, end, c_end))


_QUESTION_OPENER = re.compile(
    r"\s*(?:(?:but|and|or|so|then|otherwise)\s+)?(?:is|are|was|were|do|does|did|can|could|would|will|should|shall|have|has|had|may|might|what|which|when|where"
    r"|who|whom|whose|why|how|isn't|aren't|wasn't|don't|doesn't|didn't|won't|wouldn't|shouldn't)\b",
    re.I,
)


def is_question(text: str, start: int, end: int) -> bool:
    """Whether the part of the sentence holding the span asks rather than states.

    "Your refund is $8.62, is there anything else?" states the amount: only the clause from the
    question's opening word to the question mark asks. With no opening word ("It was delivered,
    right?") the whole sentence asks.
    """
    q_start = _question_part_start(plain(text), start)
    return q_start is not None and q_start <= start


def question_start(text: str, pos: int) -> int:
    """Where the asking part of the sentence at ``pos`` starts: "I could hold it, but shall I leave it?" asks
    from "but shall"; a sentence that asks from no opening word, or asks nothing, from its start."""
    found = _question_part_start(plain(text), pos)
    return sentence_at(text, pos)[0] if found is None else found


def _question_part_start(text: str, pos: int) -> int | None:
    s_start, s_end = sentence_at(text, pos)
    if not text[s_start:s_end].rstrip("\"'”’) ").endswith("?"):
        return None
    for c_start in reversed([s_start, *_clause_breaks(text, s_start, s_end, split_colon=True)]):
        if _QUESTION_OPENER.match(text, c_start, s_end):
            return c_start
    return s_start


_OFFER = re.compile(
    r"\s*(?:would\s+you\s+like(?:\s+(?:me|us))?\s+to|shall\s+(?:i|we)|should\s+(?:i|we)|do\s+you\s+want(?:\s+(?:me|us))?\s+to"
    r"|(?:may|can|could)\s+(?:i|we)|is\s+it\s+(?:ok|okay|alright|all\s+right|fine)\s+(?:if|to)"
    r"|would\s+it\s+be\s+(?:ok|okay|alright|all\s+right|fine)\s+(?:if|to))\b",
    re.I,
)
_CONDITION = re.compile(r"\b(?:whether|if)\b", re.I)


def is_offer(text: str, start: int, end: int) -> bool:
    """Whether the span is inside a question that offers an action and states its terms
    ("Shall I refund $8.62 to your Visa?"): such a question tells the customer what it names,
    unless the span is under "whether/if" ("Shall I check whether it was delivered?").

    An addition to the interface: graders treat an offer's terms as said, other questions' not.
    """
    text = plain(text)
    q_start = _question_part_start(text, start)
    if q_start is None or q_start > start:
        return False
    if not (_OFFER.match(text, q_start) or _put_for_a_yes(text, q_start, start)):
        return False
    return not _CONDITION.search(text, q_start, start)


_YES_NO_AFTER = re.compile(r"[^\S\n]*[(\[]?\s*(?:y/n|yes\s*/\s*no|yes\s+or\s+no)\b", re.I)


def _put_for_a_yes(text: str, q_start: int, pos: int) -> bool:
    """A question that opens with no asking word and is followed by a yes/no prompt is a proposal stated for a yes
    ("Apply Classic to CH-50201, refund $46.25 to club credit? y/n"): it says its terms. "Is it delivered? y/n" asks."""
    _, s_end = sentence_at(text, pos)
    return not _QUESTION_OPENER.match(text, q_start) and bool(_YES_NO_AFTER.match(text, s_end))
