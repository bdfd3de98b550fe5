"""What a customer takes from an agent's message: a few kinds of thing a customer reacts to.

The scripted customer must understand *any* agent, not only ours, so this reads wording the way a
customer skims it: by cue phrases, sentence by sentence. A message can be several things at once
("Done! Anything else?"), so the reading is a set of flags rather than one label. Everything here is
domain-free; the domain contributes its action words, its id pattern and the cues of the details it asks for.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from passhat.dialogue.proposals import Commitment, action_pattern, bound_writes
from passhat.dialogue.questions import GO_AHEAD, asks_yes
from passhat.dialogue.text import cue, sentences

_HANDOFF = cue(
    r"transferr?(?:ing|ed)? you",
    r"transfer (?:this|your) (?:case|request|conversation)",
    r"connect(?:ing)? you (?:with|to)",
    r"hand(?:ing|ed)? (?:you )?(?:over|off) to",
    r"hand(?:ing|ed)? you (?:over|off)",
    r"hand(?:ing|ed)? you (?:across )?to",  # "Handing you to the nurse line now"
    r"pass(?:ing|ed)? you (?:on|over|along) to",
    r"escalat(?:e|ing|ed) (?:this|your)",
    r"escalated to (?:a |an |our |the )?(?:staff|human|person|colleague|team|specialist|supervisor|manager)",
    r"(?:case|request|ticket) (?:has been |was |is )?escalated",
    r"pass(?:ed|ing)? (?:your|the|this) (?:case|request) (?:on |over )?to",
    r"(?:a|an|our) (?:human|live) (?:agent|representative|colleague|teammate)",
    r"specialist will",
)
# A report headed by the hand-off itself ("Transferred to the controller.", "Escalated to staff."): only at a
# sentence's start, where "transferred to" cannot be money moving to a card.
_HANDED_OVER = re.compile(r"\W*(?:escalated|transferr?ed|handed (?:off|over)|passed (?:on|over)) to\b", re.I)
# The agent offering to act itself ("Shall I ...", "Can I go ahead and ..."): with an action, a request for a yes,
# even where it names a detail in words that elsewhere ask for it ("cancel order number 3042198").
_OFFER = cue(
    r"shall (?:i|we)\b",
    r"should (?:i|we)\b",
    r"(?:would|do) you (?:like|want) (?:me|us) to",
    r"(?:want|like) me to",
    r"would you (?:prefer|rather) (?:that )?(?:i|we)\b",
    r"(?:can|may) (?:i|we) (?:go ahead|proceed)",
    r"(?:ok|okay) to",
    r"is it (?:ok|okay|alright|fine) (?:if i|to)",
    r"would it be (?:ok|okay|alright|fine) (?:if (?:i|we)|to)",
    r"confirm\s*\?",  # "Cancel #R7928167 with the reason 'ordered by mistake' — confirm?"
    r"yes/no",
    r"yes or no",
    r"\(?y/n\)?",
)
# A request for the customer's leave with no action of the domain ("May I keep a transcript?", "OK to save this
# chat? y/n"): it asks for a yes all the same, though a yes to it agrees to no write.
_CONSENT = cue(
    r"may (?:i|we)\b", r"would you like\b", r"(?:ok|okay) to\b", r"would it be (?:ok|okay|alright|fine)", r"yes or no", r"y/n"
)
_WH_QUESTION = re.compile(r"\W*(?:(?:and|also|then|so),?\s+)?(?:what|which|who|whose|how|when|where)\b", re.I)  # asks, not offers
# "what amount should I short-pay it to?": the offer's own clause asks what, so it asks for a detail
_WH_CLAUSE = re.compile(r"\b(?:what|which|how much|how many)\b[^.?!,;:—–]{0,40}$", re.I)
# "To make sure I get it right, what amount should I short-pay it to": a clause opening with what/which asks, "?" or not
_WH_ASKS = re.compile(r"[,;:]\s*(?:what|which)\b[^.?!,;:]{0,40}\b(?:should|would|do|can|shall) (?:i|we|you)\b", re.I)
_CHOICE = re.compile(r"(?<!yes )\bor\b")  # "to your Visa or your gift card?": the customer must choose ("OR" is a state)
_READ_VERBS = r"(?:located|found|checked|verified|reviewed|pulled|looked|noted|received|authenticated|identified|confirmed)"
_REPORT = cue(
    r"(?<!nothing )(?<!no one )(?:has|have) (?:now )?(?:been|gone through)",  # not "Nothing has been changed"
    r"(?:i|we)'?(?:ve| have) (?:now |just |successfully )?"
    rf"(?!{_READ_VERBS}\b)(?:\w+ed|made|sent|put|set|gone ahead)",
    r"is now",
    r"are now",
    r"successfully",
    r"all set",
    rf"(?:is|are|'s|'re) (?:already|all) (?!{_READ_VERBS}\b)\w+ed\b",  # "Your check-up is already booked"
    rf"(?:you|it|that|they|we)(?:'re|'s) (?:now )?(?!{_READ_VERBS}\b)\w+ed\b",  # "✅ You're booked!", "it's renewed"
    r"(?:is|are|'s) (?:now )?confirmed (?:for|on|at)\b",  # "The booking with Dr Varga is confirmed for 2:30PM"
    r"(?:it'?s|that'?s|all) done",
    r"(?<!not )(?<!n't )(?<!never )\b(?:done|complete)\b(?:[.!]|\s*[—–:-])",
    r"(?<!not )(?<!n't )(?<!never )done\b[*_\s]*(?:\u2705|\u2714|\u2611|!|\n|$)",  # a heading or a line of its own: "### Done ✅", "**All done!**"
    rf"(?:is|are) (?!{_READ_VERBS}\b)\w+ed\b",
    r"went through",
    r"is complete",
    r"completed",
    r"processed",
    r"submitted",
    r"(?:was|were) (?:\w+ed)\b",
    r"you(?:'ll| will) (?:receive|get|see)",
    # a headline's bare participle: "approved INV-71020", "Workaround KE-11 applied to INC-1351"
    rf"(?<![?\w] )(?!{_READ_VERBS}\b)[a-z]+ed #?[a-z]{{1,6}}[-_]?\d",
    rf"\b[a-z]{{1,6}}-\d+ (?!{_READ_VERBS}\b)[a-z]+ed (?:to|on|for)\b",
)
_IRREGULAR_DONE = r"(?:sent|made|paid|held|given|taken|written)"  # "Notice sent to Ostrander Plastics."
# a heading's participle that names what is to come, not what was done: "### Proposed", "**Needed**"
_PLANNED = r"(?:need|used|proposed|planned|suggested|recommended|required|needed|expected|estimated|detailed|related)"
# A line that opens with what was done, markup aside: "**Workaround applied to INC-1301** ✅", "Complete — return
# requested for #R1.", "All booked, Jonas!", "Done.", "**Renewed** ✅", "### ✅ Classic cover applied" (a line that
# ends on its participle).
_LEAD_WORD = r"(?!(?:not|never|no|isn't|wasn't|aren't)\b)[\w'-]+\s+"  # a word before the participle that denies nothing
_REPORT_LINE = re.compile(
    rf"[\W_]*(?:done\b|complete\b(?=\s*[—–:.!-])|all (?!{_READ_VERBS}\b)\w+ed\b"
    rf"|(?:{_LEAD_WORD}){{0,2}}(?!{_READ_VERBS}\b)(?:[a-z]+ed|{_IRREGULAR_DONE}) (?:to|on|for|in full)\b"
    rf"|(?:{_LEAD_WORD}){{0,2}}(?!(?:{_READ_VERBS}|{_PLANNED})\b)[a-z]+ed[\W_]*$)",
    re.I,
)
# A report laid out as a table: a cell that checks off a step ("| Approve INV-71002 | ✅ approved, payable $1,112.00 |");
# a cross (❌) or a plan's participle is no report.
_CHECKED_CELL = re.compile(rf"[\u2705\u2714\u2611]\ufe0f?\s*[*_]*(?!(?:{_READ_VERBS}|{_PLANNED})\b)[a-z]+ed\b", re.I)
_FAILURE = cue(
    r"(?:an|the) error",
    r"went wrong",
    r"failed",
    r"did(?:n'?t| not) go through",
    r"was(?:n'?t| not) able to",
    r"could(?:n'?t| not) (?:be )?(?:complete|process|change|update|make|do)",
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
_UNSEEN = r"(?! (?:yet )?(?:confirm|say|tell|see|be sure)\b)"  # "I can't confirm it from here": not known, not refused
_CANT = r"(?:can'?t|cannot|can not)"
# "You can't do anything on that file": what the customer may do, with no particular action, tells their access
_NO_ACTION_NAMED = r"(?! (?:\w+ )?(?:anything|any|everything|nothing)\b)"
_REFUSAL = cue(
    rf"(?<!\byou ){_CANT}{_UNSEEN}",
    rf"(?<=\byou ){_CANT}{_UNSEEN}{_NO_ACTION_NAMED}",
    r"not something (?:i|we)(?:'m| am|'re| are)? ?(?:allowed|able|permitted) to",
    r"(?:isn'?t|is not) something (?:i|we) can",
    r"request declined",
    r"outside (?:of )?what (?:i|we) can",
    r"(?:does not|doesn'?t|no longer) appl(?:y|ies)",
    r"not entitled",
    r"unable to",
    r"not able to",
    r"(?:not|isn'?t|is not) possible",
    r"not allowed",
    r"not permitted",
    r"(?:isn'?t|aren'?t|wasn'?t) (?:allowed|permitted)",  # "Critical isn't allowed for 8 people"
    r"(?:policy|rules?) (?:does not|doesn'?t|do not|don'?t|won'?t) (?:allow|permit|let)",
    r"against (?:our|the) polic",
    r"not eligible",
    r"ineligible",
    r"won'?t be able",
    r"(?:can|could) only be",
    r"only\b[^.?!]{0,40}\bcan be",
    r"no longer (?:be )?(?:possible|allowed|eligible)",
    r"nothing (?:i|we) (?:can|could|am able to|are able to) do",  # "nothing I can do for Thea's records"
    # a refusal said as the rule that holds ("But the rule is firm: ...", "so not before 2025-12-15") or as the no itself
    r"(?:rule|policy|limit|deadline)s? (?:is|are|stays?|remains?) (?:firm|fixed|strict|final|non-negotiable)",
    rf"\bnot (?:before|until|earlier than|sooner than) (?:\d|the \d|{_MONTH}|{_WEEKDAY})",
    r"(?:the answer|that)(?:'s| is| has to be| must be| will have to be) (?:a )?no(?=\s*[.!,;:\u2014\u2013-]|\s*$| from\b| for (?:now|today|the moment)\b)",
    r"(?:i|we)(?:'m| am| are)? (?:going to )?(?:have|need) to (?:say no|decline|turn (?:it|this|that|you) down)",
)
# what a check looks for besides the record itself: "no possible duplicates found" reports a clean check
_CHECKED = r"(?:possible|other|further|additional|duplicates?|dupes?|issues?|problems?|errors?|conflicts?|discrepanc\w*|flags?|concerns?|warnings?|exceptions?)"
_NOT_FOUND = cue(
    r"(?:couldn'?t|could not|can'?t|cannot|unable to|wasn'?t able to|was not able to|weren'?t able to|did not|didn'?t) "
    r"(?:find|locate|match|see any)",
    r"no (?:account|order|record|customer|match|result)s? (?:was |were )?(?:found|matching|with|under|for)",
    r"not (?:be )?found",
    r"double[- ]check(?!ed)",  # "Could you double-check the number?", not "I've double-checked, and the rule is firm"
    r"does(?:n'?t| not) (?:match|seem to (?:exist|match))",
    r"no results",
    r"(?:not|n't) finding",
    r"nothing (?:came|comes|turned) up",
    # "No invoice INV-7106 on file.", "No charge CH-5010 found."; not a check that found nothing wrong ("no possible
    # duplicates found", "no issues found"): the record asked about was found
    rf"no (?!{_CHECKED}\b)\w+ (?:(?!{_CHECKED}\b)\S+ )?(?:was |is |were |are )?(?:found|on file)\b",
)
_CLOSING = cue(
    r"good ?bye",
    r"bye\b",
    r"have a (?:great|good|nice|wonderful|lovely) (?:day|one|evening|weekend|afternoon)",
    r"take care",
)
_ANYTHING_ELSE = cue(
    r"anything else",
    r"something else",
    r"any other",
    r"anything more",
    r"further (?:questions|assistance|help)",
    r"how (?:can|may) i (?:help|assist)",
    r"what can i (?:do|help)",
    r"help you with today",
    r"other questions",
)
_WORKING = cue(
    r"let me (?:check|look|see|pull|find|verify|review)",
    r"one moment",
    r"just a (?:moment|second|sec)",
    r"bear with me",
    r"please (?:wait|hold)",
    r"give me a (?:moment|second|sec)",
    r"i'?ll (?:check|look)",
    r"checking (?:on )?(?:that|this)",
    r"let me (?:process|take care of|handle|do|get|sort)",
)
_ASKING = cue(
    r"please (?:provide|share|give|tell|send|enter|confirm|let me know|specify|clarify)",
    r"(?:could|can|would) you",
    r"may i (?:have|get|ask)",
    r"can i (?:have|get)",
    r"i(?:'ll| will)? need",
    r"let me know",
    r"what(?:'s| is)",
    r"please (?:reply|read|check|double-check)",
    r"verify first",
    r"do you (?:have|know|remember)",
    r"(?:is|are) there (?:a|an|any)\b",  # a question by its word order, "?" or not: "And is there a day that suits you"
    # what would serve as an answer ("The order number or an item in it will do.", "your name and zip code work too"),
    # not a remark on something had ("I found the order number; that will do.")
    r"(?<!that )(?<!this )(?<!it )(?:will|would) (?:also )?do(?: too| as well| just as well| fine)?\s*[.!]*$",
    r"(?<!that )(?<!this )(?<!it )(?:works?|is fine|are fine) (?:too|as well|just as well|instead)\b",
    r"(?:can'?t|cannot|not sure|unsure|don'?t know)(?: \w+){0,2}? (?:tell|say|see|work out|know)\b[^.?!]*\b(?:which|what|who|whether)\b",
)
# "Which one would you like moved?", "Is it the one on 24 June or the one on 2 July?": a choice between the
# records the customer might mean, asked without naming what they are (the domain's ``Lexicon.which``).
_WHICH_ONE = cue(
    r"which (?:one|of (?:them|these|those|the two))\b",
    r"the (?:one|first|second|earlier|later)\b[^.?!]*\bor\b[^.?!]*\bthe (?:one|other|first|second|earlier|later)\b",
)
# A sentence with no verb of its own, no value and no label ("Order number and email.", "First, your employee
# number and work email, please."): a terse request for what it names.
_VERB = cue(
    r"(?:is|are|was|were|am|be|been|has|have|had|do|does|did|will|would|can|could|shall|should|may|might|must)\b",
    r"\w+(?:'s|'re|'ve|'ll|'d)\b",
    r"(?:i|we|it|they|he|she|there|thanks?)\b",
    r"\w+ed\b",
)
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


@dataclasses.dataclass(frozen=True)
class Lexicon:
    """What a domain adds to the reading of its conversations: its action words (regex fragments, every write
    tool's), the pattern of its entity ids in text, and per detail slot the wording of a question that asks for it."""

    action_words: tuple[str, ...]
    id_pattern: str
    cues: Mapping[str, re.Pattern[str]]
    which: str | None = None  # the slot "which one?" asks for: the kind of record a request is about
    refind: Callable[[str], str | None] | None = None  # the record slot a "not found" is about (None: who they are)
    nouns: Mapping[str, re.Pattern[str]] = dataclasses.field(default_factory=dict)  # per slot: other words naming one

    @functools.cached_property
    def actions(self) -> re.Pattern[str] | None:
        """The action words with the engine's synonyms, in one pattern."""
        return action_pattern(self.action_words)


@dataclasses.dataclass(frozen=True)
class Reading:
    """Everything a customer notices in one agent message."""

    handoff: bool = False
    proposal: bool = False  # asks the customer to confirm an action
    report: bool = False  # says something was done
    failure: bool = False  # says an attempted action did not go through
    refusal: bool = False
    not_found: bool = False
    asks: frozenset[str] = frozenset()  # the domain's slots asked for
    anything_else: bool = False
    closing: bool = False
    working: bool = False  # "let me check", nothing to answer yet
    question: bool = False  # any other question to the customer
    says: bool = False  # states something besides asking (an "anything else?" alone says nothing)
    stated: str = ""  # the sentences that state, not those that ask, offer or ask for a yes: where an answer is read
    done_text: str = ""  # the message cut where an offer begins ("say if you want it marked"): a write said done is in it
    ids: tuple[str, ...] = ()
    text: str = ""
    id_pattern: str | None = None

    def agreed(self, wanted: Sequence[Commitment], done: Sequence[Commitment] = (), own: Iterable[str] = ()) -> set[int]:
        """Which of the ``wanted`` writes a plain yes to this message agrees to (``done``: writes made before it,
        which it may report; ``own``: ids anyone may name, the customer's own)."""
        if not self.proposal:
            return set()
        return bound_writes(self.text, wanted, done, self.id_pattern, own)

    def reported(self, wanted: Sequence[Commitment], done: Sequence[Commitment] = (), own: Iterable[str] = ()) -> set[int]:
        """Which of the ``wanted`` writes this message says are done."""
        if not self.report:
            return set()
        said = bound_writes(self.text, wanted, done, self.id_pattern, own, reported=True)
        if not said or self.done_text == self.text:
            return said
        return said & bound_writes(self.done_text, wanted, done, self.id_pattern, own, reported=True)  # not what is only offered

    @property
    def informative(self) -> bool:
        """Plain information: something was told, nothing is asked or pending."""
        return self.says and not (
            self.proposal
            or self.asks
            or self.question
            or self.working
            or self.refusal
            or self.not_found
            or self.failure
            or self.handoff
        )

    @property
    def tells(self) -> bool:
        """Something told, whatever is offered or declined beside it ("Net: you get $8.62 back. Want me to place
        it?", "It ran out on 31 May, so I can't book for her."): a message an answer may be read in (in ``stated``).
        A question or a request for a detail waits for the customer, so it tells nothing yet."""
        return self.says and not (self.asks or self.question or self.working or self.not_found or self.failure or self.handoff)


def _sentences(text: str) -> list[str]:
    """Sentences as :func:`passhat.dialogue.text.sentences` cuts them: "Apt. 9" ends none, a bullet does."""
    return [text[start:end] for start, end in sentences(text)]


def _asks(sentence: str, acting: bool, lexicon: Lexicon, listed: bool = False) -> frozenset[str]:
    """Slots a sentence asks the customer for: only questions (with or without "?"), requests (said or terse),
    "I can't tell which" and the items of a list a request opens (``listed``: "To look into it I need:") ask, and
    not an offer that leaves nothing to choose ("Would you like me to email you a copy?"), nor a yes-question about an
    action (``acting``: the message names an action or an entity) that states its terms; "which one" asks for the
    domain's ``which`` slot."""
    asking = (
        "?" in sentence
        or _ASKING.search(sentence)
        or _WH_QUESTION.match(sentence)
        or _WH_ASKS.search(sentence)
        or _terse_request(sentence)
    )
    if not (asking or listed):
        return frozenset()
    named = _only_named(sentence, lexicon)
    if named:
        return named
    if acting and _yes_asked(sentence, lexicon):
        return frozenset()
    offer = _OFFER.search(sentence)
    if offer and not (_CHOICE.search(sentence) or _WH_QUESTION.match(sentence) or _WH_CLAUSE.search(sentence, 0, offer.start())):
        return frozenset()
    # "Which **payment method**": the cue is said under the markup; "Ticket #?": the sign says "number"
    unmarked = _NUMBER_SIGN.sub(" number", _EMPHASIS.sub("", sentence))
    slots = frozenset(slot for slot, asked in lexicon.cues.items() if asked.search(unmarked))
    if not slots and lexicon.which and _WHICH_ONE.search(sentence):
        return frozenset({lexicon.which})
    return slots


_WHICH_QUESTION = re.compile(r"\bwhich\b[^.?!\n]*\?", re.I)


def _which_of_named(before: str, sentence: str, slots: frozenset[str], lexicon: Lexicon) -> frozenset[str]:
    """ "Which one" asks for one of the things last named before it ("You have several orders on file. Which one is
    it?" asks for the order, whatever else a cue reads into "which one"), unless the rest of the sentence asks more."""
    which = _WHICH_ONE.search(sentence)
    if not slots or which is None:
        return slots
    rest = _EMPHASIS.sub("", sentence[: which.start()] + " " + sentence[which.end() :])
    also = {slot for slot, asked in lexicon.cues.items() if asked.search(rest)}
    # "Which tow do you mean? … your Plus plan ran from … Let me know which one": the question asked before says which
    if asked := [q.group() for q in _WHICH_QUESTION.finditer(before)]:
        earlier = frozenset(slot for slot, cued in lexicon.cues.items() if cued.search(asked[-1]))
        if earlier:
            return earlier | also
    kinds = {m.end(): slot for slot in lexicon.cues for m in re.finditer(rf"\b{re.escape(slot.rstrip('s'))}s?\b", before, re.I)}
    kinds |= {m.end(): slot for slot, noun in lexicon.nouns.items() for m in noun.finditer(before)}  # "two Visa cards"
    if not kinds:
        return slots
    return frozenset({kinds[max(kinds)]} | also)


def _only_named(sentence: str, lexicon: Lexicon) -> frozenset[str]:
    """The slot a terse question is nothing but the name of ("Hold reason?"): it asks for it, though its words open
    with an action ("hold"); a question that says more ("Hold INV-71011 for a duplicate?") proposes."""
    bare = _EMPHASIS.sub("", sentence).strip(" ?:.").strip()
    named = frozenset(slot for slot, asked in lexicon.cues.items() if (m := asked.match(bare)) and m.end() == len(bare))
    return named or _noun_question(bare, lexicon)


def _noun_question(bare: str, lexicon: Lexicon) -> frozenset[str]:
    """A question of two or three nouns that ends with a detail's name ("Account email?", "Work email?"): it asks
    for that detail, though its first word may be an action word elsewhere ("account"); one with an id, a value or
    a verb ("Cancel #R1?", "Account updated?") still proposes or asks for a yes."""
    if not 2 <= len(bare.split()) <= 3 or _VERB.search(bare) or re.search(r"\d|#", bare):
        return frozenset()
    return frozenset(
        slot for slot, asked in lexicon.cues.items() if any(m.end() == len(bare) and m.start() > 0 for m in asked.finditer(bare))
    )


_WH_WORD = re.compile(r"\b(?:what|which|who|whose|how|when|where|why)\b", re.I)


def _yes_asked(sentence: str, lexicon: Lexicon) -> bool:
    """A question that asks for a yes and for no detail ("Call off #R1, reason: no longer needed, $24.87 back to your
    card? y/n"): the terms it states are what the yes agrees to, not details asked for. A request ("could you..."),
    a wh-word or a choice ("to your Visa or your gift card?") still asks."""
    said = GO_AHEAD.sub(" ", sentence)  # "I just need your go-ahead: ..." asks for the yes, not for a detail
    asking = _ASKING.search(said) or _WH_WORD.search(said) or _CHOICE.search(said)
    return not asking and asks_yes(sentence, lexicon.actions)


_NUMBER_SIGN = re.compile(r"(?<=[A-Za-z])\s*#(?![\w#-])")  # "Ticket #?", "Employee # and email", not "#R1" or "### Done"
_EMPHASIS = re.compile(r"\*+|`+|(?<!\w)_+|_+(?!\w)")


def _opens_request(sentence: str) -> bool:
    """A line that opens a list of what the customer is asked for: "To look into it I need:", "Two quick questions:"."""
    bare = _EMPHASIS.sub("", sentence)  # "__Verification first:__": the label under its markup
    return bare.rstrip().endswith(":") and bool(_ASKING.search(bare) or _LIST_OF_ASKS.search(bare) or _HEADING_ASKS.search(bare))


_HEADING = re.compile(r"\s*#{1,6}\s")
# "please" that asks ("please verify yourself"), not one that only points at what follows ("Please note:")
_HEADING_ASKS = re.compile(
    r"\bplease\b(?! (?:note|be aware|remember|keep in mind|see)\b)|\bverif(?:y|ication)\b|\bneeded\b|\bneed from you\b", re.I
)


def _asking_heading(sentence: str) -> bool:
    """A heading that asks and opens the list under it ("### First, please verify yourself", "### Quick verification
    first", "### Still needed to verify you"): its noun bullets ("- **Your date of birth**") ask for those details.
    A heading that reports ("### Verified ✅") or names a topic ("### Why I can't send it back") opens no request."""
    return bool(_HEADING.match(sentence)) and bool(_HEADING_ASKS.search(sentence))


_LIST_OF_ASKS = re.compile(r"question|\b(?:quick|few|two|three|couple of) (?:things|details)\b", re.I)  # "Two quick things:"
_LEAD_IN = re.compile(r"\W*(?:first|next|also|then|lastly|finally)\s*[:,]\s*", re.I)  # "First: employee no. + email, please."


_HINT = re.compile(r"\([^()]*\)")
# a step the customer is told to take ("Open your authenticator app.", "Try signing in again."): an instruction, not a
# terse request for the detail it happens to name
_INSTRUCTION = re.compile(
    r"\W*(?:open|try|tap|click|go|restart|reboot|resync|sign|log|use|follow|select|press|turn|keep|wait|visit|bring|"
    r"install|reset|clear|close|unplug|plug|hold)\b",
    re.I,
)

# a status that a terse report says of where something goes ("Return instructions coming by email.", "Refund arriving
# in 3-5 days.", "Refund goes to the gift card"): it moves somewhere, so it names no detail asked ("billing zip, please")
_UNDER_WAY = re.compile(
    r"\b[a-z]+ing (?:by|to|in|from|on|at|via|through|within|soon|shortly|now|today|tomorrow|next|your way|separately)\b"
    r"|\b(?:goes|comes|arrives|lands|ships|heads|stays|remains|returns|moves|posts)\b",
    re.I,
)


def _terse_request(sentence: str) -> bool:
    """A short sentence with no verb, value or label, ended like a sentence (a heading such as "**Order
    details**" is not one); a hint in brackets is not part of it ("Order number and email (e.g. #W1234567).")."""
    sentence = _HINT.sub(" ", sentence)
    if lead := _LEAD_IN.match(sentence):
        sentence = sentence[lead.end() :]
    if _INSTRUCTION.match(sentence):
        return False
    if _UNDER_WAY.search(sentence):
        return False
    words = re.findall(r"[A-Za-z']+", sentence)
    ended = sentence.rstrip("*_` ").endswith((".", "!")) or "please" in sentence.lower()
    return ended and 0 < len(words) <= 12 and not (_VERB.search(sentence) or re.search(r"\d|:\s*\S", sentence))


# "if you hold paperwork, I can hand you over to our records office": a hand-off offered, not made
_COULD = re.compile(r"\b(?:(?:i|we)(?: \w+)? (?:can|could)(?!n?'t|not)|if you)\b[^.?!]*$", re.I)


def _handed_off(body: str) -> bool:
    """Whether the message hands the customer over: a hand-off said, not one it only could make."""
    return any(not _COULD.search(body, 0, m.start()) for m in _HANDOFF.finditer(body))


def _asked_again(parts: list[str], asked: list[frozenset[str]], lexicon: Lexicon) -> frozenset[str]:
    """ "I couldn't find invoice INV-7103. Could you double-check the number?": a request that names no detail, after
    a lookup that found nothing, asks again for what the lookup was for (the record the domain's kit reads in it, else
    the details its sentence names); "Shall I hold it instead?" asks for a yes, not for the record again."""
    missing = [s for s in parts if _NOT_FOUND.search(s)]
    again = any(
        not slots and ("?" in s or _ASKING.search(s)) and not asks_yes(s, lexicon.actions)
        for s, slots in zip(parts, asked, strict=True)
    )
    if not again:
        return frozenset()
    found = {lexicon.refind(s) for s in missing} - {None} if lexicon.refind else set()
    return frozenset(found or {slot for slot, cued in lexicon.cues.items() if any(cued.search(s) for s in missing)})


def _reports(body: str, said: list[str]) -> bool:
    """Whether the message says something was done: a cue anywhere in what it states, a line opening with it, or a
    table cell that checks a step off."""
    return bool(_REPORT.search(body)) or any(_REPORT_LINE.match(_EMPHASIS.sub("", s)) or _CHECKED_CELL.search(s) for s in said)


# a sentence that is all courtesy or progress while the agent works, answering nothing: "Thanks for your patience!",
# "I'll be right back.", "I'm checking your order now." ("Thanks, it's pending." answers)
_WHILE_WORKING = re.compile(
    r"\W*(?:(?:thanks?|thank you)(?: so| very)?(?: much)?(?: for (?:your |the )?(?:patience|waiting|wait|bearing with me))?"
    r"|(?:i |we )?appreciate (?:your|the) patience"
    r"|(?:i'?ll|i will|we'?ll|we will) be (?:right )?back(?: with you)?(?: in a (?:moment|second|sec|minute))?"
    r"|(?:this|it) (?:should|will|won'?t|shouldn'?t) (?:only )?take (?:long|a (?:moment|second|sec|minute))"
    r"|(?:i'?m|i am|we'?re|we are) (?:now |just )?(?:looking|checking|pulling|searching|reviewing)\b[^.?!:;,\u2014\u2013]*"
    r")\W*",
    re.I,
)


def _still_working(said: list[str]) -> bool:
    """Whether the agent is still at work: it says so ("let me check", "one moment") and says nothing after that but
    more of the same. A turn's messages reach the customer joined, so "Thank you, one moment." followed by the answer
    ("It's with the endpoint group, status assigned.") has answered."""
    last = max((i for i, s in enumerate(said) if _WORKING.search(s)), default=None)
    return last is not None and all(_WHILE_WORKING.fullmatch(s) for s in said[last + 1 :])


# what the agent only offers or could do, from where it says so: "Status not changed — say if you want it marked",
# "If you have new paperwork, I can hand you to our records office" (not "I can confirm it's cancelled")
_ONLY_OFFERED = cue(
    r"if you(?:'d)? (?:want|like|prefer|wish|already|have|need)\b",
    r"(?:say|tell me|let me know|just ask) if\b",
    r"(?<!you )(?:i|we) (?:can|could)(?!n'?t| not)(?! (?:confirm|see|tell|say)\b)\b",
)


def _without_offers(text: str) -> str:
    """The message with each sentence cut where an offer in it begins: what it may report done."""
    kept, at = [], 0
    for start, end in sentences(text):
        offer = _ONLY_OFFERED.search(text, start, end)
        if offer:
            kept.append(text[at : offer.start()])
            at = end
    return "".join([*kept, text[at:]])


def read_message(text: str, lexicon: Lexicon) -> Reading:
    """Read one agent message in a domain's terms (its ``lexicon``).

    A proposal is a request for confirmation together with an action (an action word or an entity id
    anywhere in the message). A sentence that asks for a detail ("could you confirm your email?") is
    an ask, not a proposal; an "anything else?" sentence is neither.
    """
    id_pattern = lexicon.id_pattern
    original, text = text, text.translate(_QUOTES)
    ids = tuple(dict.fromkeys(m.group(0) for m in re.finditer(id_pattern, text)))
    parts = _sentences(text)
    open_parts = [s for s in parts if _ANYTHING_ELSE.search(s) and ("?" in s or "let me know" in s.lower())]
    rest = [s for s in parts if s not in open_parts]
    has_action = bool(ids) or bool(lexicon.actions and lexicon.actions.search(text))
    leads = [_opens_request(s) or _asking_heading(s) for s in rest]
    asked = [_asks(s, has_action, lexicon, any(leads[:i])) for i, s in enumerate(rest)]
    asked = [_which_of_named(" ".join(rest[:i]), s, slots, lexicon) for i, (s, slots) in enumerate(zip(rest, asked, strict=True))]
    asks = frozenset().union(*asked)
    confirming = [s for s, slots in zip(rest, asked, strict=False) if not slots and asks_yes(s, lexicon.actions)]
    leave = [
        s
        for s, slots in zip(rest, asked, strict=False)
        if not slots and _CONSENT.search(s) and "?" in s and not _WH_QUESTION.match(s)
    ]
    confirming += [s for s in leave if s not in confirming]
    proposal = bool(confirming) and (has_action or bool(leave))
    body = " ".join(s for s in rest if s not in confirming)
    not_found = bool(_NOT_FOUND.search(body))
    asks |= _asked_again(rest, asked, lexicon) if not_found else frozenset()
    handed = any(_HANDED_OVER.match(s) for s in rest if s not in confirming)
    handoff = (_handed_off(body) or handed) and not proposal
    question = any("?" in s for s in rest) and not (proposal or asks)
    return Reading(
        handoff=handoff,
        proposal=proposal,
        report=_reports(body, [s for s in rest if s not in confirming]) or handoff,  # a hand-off needs no yes: said, it is made
        failure=bool(_FAILURE.search(body)) and not not_found,
        # a refusal stands beside a question for the alternative's details ("…a cancellation isn't possible. Would you like
        # to return items, and which ones?"), not in the asking sentence itself ("I can't tell which one: AP-1 or AP-2?")
        refusal=not not_found
        and any(_REFUSAL.search(s) for s, slots in zip(rest, asked, strict=True) if not slots and s not in confirming),
        not_found=not_found,
        asks=asks,
        anything_else=bool(open_parts),
        closing=bool(_CLOSING.search(text)) and "?" not in text,
        working=_still_working([s for s in rest if s not in confirming]) and not (proposal or asks or question),
        question=question,
        says=any("?" not in s for s in rest),
        done_text=_without_offers(text),
        stated=" ".join(s for s, slots in zip(rest, asked, strict=True) if "?" not in s and not slots and s not in confirming),
        ids=ids,
        text=original,
        id_pattern=id_pattern,
    )
