"""Typed values in an agent's words: amounts of money, card endings, dates, numbers, ids, streets, phrases.

A grader compares what the agent *said* with a fact by meaning: "USD332.20", "332,20 $" and "three
hundred thirty-two dollars and twenty cents" all say 332.20, while the digits of an id such as "#R3042198", a
postcode or a date say no amount at all. Each finder returns spans, so the words around a value can be
judged (negation, direction, attribution) by :mod:`passhat.dialogue.text`.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, TypeVar, get_args

from text_to_num import text2num

from passhat.dialogue.text import clause_at_keeping_labels, plain

Direction = Literal["refund", "charge"]  # which way money moves, seen from the customer
# What a tool argument holds, so two calls are compared by what the backend stores (:func:`canonical`).
ValueKind = Literal["id", "code", "phone", "email", "money", "date", "time"]
VALUE_KINDS: tuple[ValueKind, ...] = get_args(ValueKind)
FactKind = Literal["money", "card_ending", "date", "time", "status", "identifier", "number", "phrase"]


@dataclasses.dataclass(frozen=True)
class Mention:
    """One value said in a text: its kind, canonical value and span (and, for money, direction and currency)."""

    kind: FactKind
    value: str  # canonical: money "332.20"; card_ending "8069"; date "2026-03-04" ("--03-04" without a year); number "3"
    start: int
    end: int
    direction: Direction | None = None  # money only: "refund" (to the customer), "charge" (from the customer)
    currency: str | None = None  # money only: "USD", "EUR", ... when stated
    weekday: int | None = None  # date only: the weekday said with it (0 is Monday)
    step: str | None = None  # money only: the rounding step of an amount said rounded ("$1.8k": "100"), else exact


# ---------------------------------------------------------------------------------------------- number words

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = "hundred thousand million billion".split()
_NUMBER_WORD = "|".join(sorted(_UNITS + _TENS + _SCALES, key=len, reverse=True))
_NUMBER_WORD_RUN = re.compile(
    rf"\b(?:a\s+(?=(?:hundred|thousand|million)\b))?(?:{_NUMBER_WORD})"
    rf"(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b",
    re.I,
)
_PRONOUN_ONE = re.compile(r"\b(?:the|this|that|which|no|any|every|each|some|someone|anyone)\s+$", re.I)


def _number_words(text: str) -> list[tuple[int, int, int]]:
    """(start, end, value) of each number said in words; a run that is no single number ("one two")
    is read as the longest numbers it starts with."""
    found = []
    for run in _NUMBER_WORD_RUN.finditer(text):
        words = list(re.finditer(r"[A-Za-z]+", run.group()))
        i = 0
        while i < len(words):
            for j in range(len(words), i, -1):
                if words[j - 1].group().lower() == "and":
                    continue
                start, end = run.start() + words[i].start(), run.start() + words[j - 1].end()
                value = _words_value(text[start:end])
                if value is not None:
                    found.append((start, end, value))
                    i = j
                    break
            else:
                i += 1
    return found


def small_number_spellings(word: str) -> tuple[str, ...]:
    """A number under twenty as a word and as digits, when ``word`` is one ("five" and "5"), else just the word: a
    phrase told with its count in the other spelling ("for 5 seconds" for "for five seconds") says the same."""
    low = word.lower()
    if low in _UNITS:
        return (low, str(_UNITS.index(low)))
    return (low, _UNITS[int(low)]) if low.isdigit() and int(low) < len(_UNITS) else (low,)


def _words_value(words: str) -> int | None:
    spoken = re.sub(r"^a\s+", "one ", words.lower())
    if spoken in ("and", "a"):
        return None
    try:
        return int(text2num(spoken, "en"))
    except ValueError:
        return None


_ORDINAL_WORDS = dict(
    zip(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
        "fifteenth sixteenth seventeenth eighteenth nineteenth".split(),
        range(1, 20),
        strict=False,
    )
)
_ORDINAL_WORDS |= {"twentieth": 20, "thirtieth": 30}
_ORDINAL_WORDS |= {
    f"{tens}-{unit}": base + n
    for tens, base in (("twenty", 20), ("thirty", 30))
    for unit, n in list(_ORDINAL_WORDS.items())[:9]
    if base + n <= 31
}


# ---------------------------------------------------------------------------------------------- money

_CURRENCY_SIGNS = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "usd$": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "bucks": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "ca$": "CAD",
    "c$": "CAD",
    "cad": "CAD",
    "a$": "AUD",
    "aud": "AUD",
    "¥": "JPY",
    "jpy": "JPY",
    "chf": "CHF",
}
_PREFIX = r"(?:US\$|USD\s?\$?|CA\$|C\$|A\$|\$|€|£|¥|(?:EUR|GBP|CAD|AUD|JPY|CHF)\s?)"
_SUFFIX = r"(?:\$|€|£|USD\b|EUR\b|GBP\b|CAD\b|AUD\b|JPY\b|CHF\b|(?:US\s+)?dollars?\b|euros?\b|pounds?\b|bucks\b|cents?\b)"
_AMOUNT = (
    r"(?P<num>\d{1,3}(?:\.\d{3})+,\d{2}"  # 1.204,50
    r"|\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?"  # 1,204.50
    r"|\d+(?:[.,]\d{1,2})?)"  # 1204.5, 332,20
)
_SIGN = r"[-−]"
_SCALE = r"(?P<scale>\s?(?:k|mn|m|bn|b|thousand|million|billion)\b)"  # "$1.8k", "2 million dollars"
_SCALES_BY_WORD = {"k": 10**3, "thousand": 10**3, "m": 10**6, "mn": 10**6, "million": 10**6, "b": 10**9, "bn": 10**9}
_SCALES_BY_WORD["billion"] = 10**9
_DIGIT_MONEY = re.compile(
    rf"(?P<open>\(\s?)?(?P<sign1>{_SIGN})?(?:(?P<pre>{_PREFIX})\s?)?(?P<sign2>{_SIGN})?{_AMOUNT}{_SCALE}?"
    rf"(?:\s?(?P<post>{_SUFFIX}))?(?P<close>\s?\))?",
    re.I,
)
_GLUED_AFTER = re.compile(r"[.,]\d|[-/:]\d|\w")  # "332.205", "2026-03", "10:30", "4th"
_UNIT_AFTER = re.compile(
    r"\s?(?:%|(?:am|pm|a\.m\.|p\.m\.|percent|kg|lbs?|oz|g|cm|mm|km|miles?|mi|inch(?:es)?|hours?|hrs?|minutes?|days?|weeks?"
    r"|months?|years?|stars?|points?|items?|orders?|units?)\b)",
    re.I,
)
_CUE_REFUND = re.compile(
    r"\b(?:refund(?:s|ed|ing|able)?|back|credit(?:s|ed|ing)?(?!\s+card)|reimburs\w*|return(?:ed)?\s+to\s+you"
    r"|you(?:'ll|\s+will|\s+would|\s+should|\s+can)?\s+(?:get|receive)|cheaper|less(?!\s+than)|owed\s+to\s+you|rebate"
    r"|(?:give|pay|send)(?:s|ing)?\s+you|we\s+owe\s+you"
    r"|waiv(?:e|es|ed|ing)|forgiv(?:e|es|en|ing)|writ(?:e|es|ten|ing)\s+off)\b",  # a charge let go is money not taken
    re.I,
)
_CUE_CHARGE = re.compile(
    r"\b(?:charg(?:e|es|ed|ing)|pa(?:y|ys|id|ying)(?!\s+you\b)|(?<!we\s)owe[sd]?(?!\s+to\s+you)|costs?\s+you|bill(?:s|ed|ing)?"
    r"|debit(?:s|ed|ing)?(?!\s+card)|additional|extra|more(?!\s+than)|collect(?:s|ed|ing)?|due(?!\s+to\b))\b",
    re.I,
)


# start, end, amount, currency, written with a sign, rounding step (None: exact)
_Amount = tuple[int, int, Decimal, str | None, bool, Decimal | None]


def money_in(text: str) -> list[Mention]:
    """Every amount of money said in ``text``, with its direction and currency when said.

    A bare integer is no amount ("3 items"); a bare number with two decimals is one ("332.20"). An amount said
    scaled ("$1.8k", "2 million dollars") or after "about" ("about $1,800") is rounded: its ``step`` is the place
    of its last digit, and it says any amount within half a step (:func:`same_amount`).
    """
    return list(_money_in(plain(text)))


@functools.lru_cache(maxsize=4096)
def _money_in(text: str) -> tuple[Mention, ...]:
    """Cached: one message is read by the customer, the guard and the graders, for every term and fact."""
    candidates = _digit_money(text) + _worded_money(text)
    return tuple(
        Mention(
            "money",
            _cents(amount),
            start,
            end,
            _direction(text, start, end, signed),
            currency,
            step=_step_said(text, start, amount, step),
        )
        for start, end, amount, currency, signed, step in _longest_first(candidates)
    )


def _digit_money(text: str) -> list[_Amount]:
    found = []
    times = {m.start() for m in _clock_beside_date(text, _AFTER_DATE)}
    for m in _DIGIT_MONEY.finditer(text):
        start, end = m.start(), m.end()
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_#/@.:-"):
            continue
        if m.group("open") and not m.group("close"):
            start = m.start("sign1") if m.group("sign1") else m.start("pre") if m.group("pre") else m.start("num")
        pre, post, num = (m.group("pre") or "").strip().lower(), (m.group("post") or "").lower(), m.group("num")
        after = (m.end("scale") if m.group("scale") else m.end("num")) if not m.group("close") else end
        if not post and (_GLUED_AFTER.match(text, after) or (not pre and _UNIT_AFTER.match(text, after))):
            continue
        if m.group("scale") and not (pre or post):
            continue  # "2 million" with no currency is a count
        currency = _CURRENCY_SIGNS.get(pre) or _CURRENCY_SIGNS.get(re.sub(r"^us\s+", "", post))
        amount = _parse_amount(num, stated_currency=bool(pre or post))
        if amount is None:
            continue
        step = None
        if m.group("scale"):
            scale = _SCALES_BY_WORD[m.group("scale").strip().lower()]
            step = Decimal(scale) / 10 ** len(num.partition(".")[2])
            amount *= scale
        if post.startswith("cent"):
            amount, currency = amount / 100, "USD"
        elif not (pre or post) and (not re.fullmatch(r"[\d,]*\.\d{2}", num) or m.start("num") in times):
            continue  # a bare number is an amount only with two decimals, and not as a time ("at 10.30", "July 3, 10.00")
        signed = bool(m.group("sign1") or m.group("sign2") or (m.group("open") and m.group("close")))
        found.append((start, end, amount, currency, signed, step))
    return found


_ROUNDED = re.compile(
    r"(?:\babout|\baround|\broughly|\bapproximately|\bapprox\.?|\bcirca|\bsome|\bnearly|\balmost|\bjust\s+(?:over|under)|~)\s*$",
    re.I,
)


def rounding_word(text: str, start: int) -> tuple[int, int] | None:
    """Where the word saying that the amount starting at ``start`` is rounded stands ("about", "~"), if one does."""
    said = _ROUNDED.search(plain(text), 0, start)
    return said.span() if said else None


def unrounded(text: str, said: Mention) -> str:
    """``text`` with the word saying that an amount is rounded blanked (offsets kept): "about $1,800" states 1,800
    to its step, so "about" is no hedge of it."""
    word = rounding_word(text, said.start) if said.kind == "money" and said.step else None
    return text if word is None else text[: word[0]] + " " * (word[1] - word[0]) + text[word[1] :]


def _step_said(text: str, start: int, amount: Decimal, step: Decimal | None) -> str | None:
    """The rounding step of an amount: a scaled form's, or after "about" the place of its last non-zero digit
    ("about $1,800": 100; "about $1,792.40": 0.10)."""
    if step is None and _ROUNDED.search(text, 0, start):
        digits = format(amount.normalize(), "f")
        whole, _, cents = digits.partition(".")
        step = Decimal(10) ** (len(whole) - len(whole.rstrip("0"))) if not cents else Decimal(10) ** -len(cents)
    return None if step is None else format(step.normalize(), "f")


def same_amount(said: Mention, stored: Decimal | str | float) -> bool:
    """Whether an amount said is a stored amount: the same to the cent, or within half its step when said rounded
    ("$1.8k" is 1,792.00; "about $1,800" is 1,750 to 1,850, not 1,700)."""
    value, held = Decimal(said.value), Decimal(str(stored)).quantize(Decimal("0.01"))
    if said.step is None:
        return value == held
    return abs(value - held) * 2 <= Decimal(said.step)


def _parse_amount(num: str, stated_currency: bool) -> Decimal | None:
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d{2}|\d+,\d{2}", num):
        if not stated_currency:
            return None  # "3,20" with no currency is a list or a typo, not an amount
        num = num.replace(".", "").replace(",", ".")
    elif "," in num and not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?", num):
        return None
    try:
        return Decimal(num.replace(",", ""))
    except InvalidOperation:
        return None


_DOLLARS_WORD = re.compile(r"\s+(?:US\s+)?(?P<unit>dollars?|euros?|pounds?|bucks)\b", re.I)
_CENTS_WORD = re.compile(r"\s+cents?\b", re.I)
_CENTS_JOIN = re.compile(r"\s*,?\s*(?:and\s+)?", re.I)
_SPOKEN_CENTS_END = re.compile(r"\s*(?:[.,;:!?()\u2014\u2013]|$|\s(?:to|for|on|back|in|is|was|will|as|from|and|or|but)\b)", re.I)


def _worded_money(text: str) -> list[_Amount]:
    """ "332 dollars and 20 cents", "eight dollars and sixty-two cents", "twenty cents"."""
    atoms = sorted(
        [(s, e, Decimal(v)) for s, e, v in _number_words(text)]
        + [(m.start(), m.end(), Decimal(m.group())) for m in re.finditer(r"(?<![\w.,$€£-])\d+(?![\w.,]\d|\w)", text)]
    )
    by_start = {s: (e, v) for s, e, v in atoms}
    found = []
    for start, end, value in atoms:
        unit = _DOLLARS_WORD.match(text, end)
        if unit:
            amount, stop = value, unit.end()
            join = _CENTS_JOIN.match(text, stop)
            cents_atom = by_start.get(join.end()) if join else None
            if cents_atom and cents_atom[1] < 100 and _CENTS_WORD.match(text, cents_atom[0]):
                amount += cents_atom[1] / 100
                stop = _CENTS_WORD.match(text, cents_atom[0]).end()
            elif cents_atom and 0 < cents_atom[1] < 100 and _SPOKEN_CENTS_END.match(text, cents_atom[0]):
                amount += cents_atom[1] / 100  # "twenty-two dollars forty"
                stop = cents_atom[0]
            found.append((start, stop, amount, _CURRENCY_SIGNS[unit.group("unit").lower()], False, None))
        elif _CENTS_WORD.match(text, end) and value < 100:
            found.append((start, _CENTS_WORD.match(text, end).end(), value / 100, "USD", False, None))
    return found


_Found = TypeVar("_Found", bound=tuple)  # (start, end, ...)


def _longest_first(found: list[_Found]) -> list[_Found]:
    """The items that do not overlap, a longer one winning ("332 dollars and 20 cents" over "20 cents"), in text order."""
    chosen: list[_Found] = []
    for item in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
        if all(item[1] <= c[0] or item[0] >= c[1] for c in chosen):
            chosen.append(item)
    return sorted(chosen, key=lambda f: f[0])


def _cents(amount: Decimal) -> str:
    return str(amount.quantize(Decimal("0.01")))


_THING_CHARGED = re.compile(r"(?:charge|bill|debit)s?", re.I)
_PAID_BEFORE = re.compile(
    r"\byou\s+(?:have\s+|had\s+|originally\s+|already\s+)?(?:paid|spent)\b|\byou\s+were\s+(?:charged|billed)\b", re.I
)


# a credit money is paid out of ("$79.00 from your club credit"): where it comes from, not money coming back
_PAID_FROM = re.compile(r"\b(?:from|out\s+of|using)\s+(?:your\s+|the\s+)?(?:[\w-]+\s+)?credit\b", re.I)


def _direction(text: str, start: int, end: int, signed: bool) -> Direction | None:
    """The nearest refund or charge word in the amount's clause decides; a sign or brackets mean a refund, and
    beside a signed amount "charge" names what is adjusted ("your charge: -$15.00"), not a way money moves; a credit
    paid from ("from your club credit") is a source, not money coming back.
    "The $276.78 you paid" names the amount by how it was paid before, not its way: beside a refund word, it
    comes back ("the $276.78 you paid comes back to you")."""
    c_start, c_end = clause_at_keeping_labels(text, start)
    cues = {
        direction: [m for m in cue.finditer(text, c_start, c_end) if not (start <= m.start() < end)]
        for direction, cue in (("refund", _CUE_REFUND), ("charge", _CUE_CHARGE))
    }
    if signed:  # "charge CH-50201 adjusted with -15.00": the thing adjusted, not the way; the sign says it
        cues["charge"] = [m for m in cues["charge"] if not _THING_CHARGED.fullmatch(m.group())]
    cues["charge"] = [m for m in cues["charge"] if not _owed_as(m, cues["refund"], text)]
    sources = [m.span() for m in _PAID_FROM.finditer(text, c_start, c_end)]
    cues["refund"] = [m for m in cues["refund"] if not any(s <= m.start() < e for s, e in sources)]
    paid = _PAID_BEFORE.match(text, end + len(re.match(r"\s*(?:that\s+|which\s+)?", text[end:]).group()))
    if paid and cues["refund"]:
        cues["charge"] = [m for m in cues["charge"] if not paid.start() <= m.start() < paid.end()]
    distances: dict[Direction, int] = {}
    for direction, found in cues.items():
        gaps = [start - m.end() for m in found if m.end() <= start] + [m.start() - end for m in found if m.start() >= end]
        if gaps:
            distances[direction] = min(gaps)
    if not distances:
        return "refund" if signed else None
    if len(distances) == 2 and distances["refund"] == distances["charge"]:
        return None
    return min(distances, key=distances.__getitem__)


_OWED = re.compile(r"due|owe[sd]?|owing", re.I)


def _owed_as(word: re.Match[str], refunds: list[re.Match[str]], text: str) -> bool:
    """ "Due" or "owed" right after a refund word ("Refund due: $240.00", "credit owed") says the refund is owed,
    not which way money moves: the noun before it does ("amount due" is still a charge)."""
    return bool(_OWED.fullmatch(word.group())) and any(
        r.end() <= word.start() and not text[r.end() : word.start()].strip() for r in refunds
    )


def parse_money(value: str) -> Decimal | None:
    """A fact's canonical amount ("332.20", "$1,204.50") as a Decimal; None when it is no amount."""
    cleaned = re.sub(r"[^\d.,]", "", value)
    return _parse_amount(cleaned, stated_currency=False) if cleaned else None


# ---------------------------------------------------------------------------------------------- dates

_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_ORDINAL = "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True))
_DAY = rf"(?P<day>\d{{1,2}}(?:st|nd|rd|th)?|{_ORDINAL})"
_YEAR = r"(?:,?\s+(?P<year>(?:19|20)\d{2}))?"
_DATE_FORMS = [
    re.compile(r"(?<![\d/.-])(?P<year>\d{4})[-/](?P<month>\d{1,2})[-/](?P<day>\d{1,2})(?![\d/])"),
    re.compile(r"(?<![\d/.-])(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4}|\d{2})(?![\d/])"),
    re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_DAY}\b{_YEAR}(?!\d)", re.I),
    re.compile(rf"\b(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}{_YEAR}(?!\d)", re.I),
]


_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY_BEFORE = re.compile(
    r"\b(?P<weekday>mon|tue|wed|thu|fri|sat|sun)(?:day|s|sday|nesday|rsday|urday)?\.?,?\s+(?:the\s+)?$", re.I
)


def dates_in(text: str) -> list[Mention]:
    """Every calendar date said in ``text``: ISO, US numeric (month/day/year), or with a month's name.

    A weekday said with it ("Monday 16 June") is kept, so a date without its year can be checked against
    the year the conversation is about (:func:`names_date`); a weekday that the stated year contradicts
    ("Tuesday 16 June 2025", a Monday) leaves no date: which of the two the agent meant is unknown."""
    return list(_dates_in(plain(text)))


@functools.lru_cache(maxsize=4096)
def _dates_in(text: str) -> tuple[Mention, ...]:
    found = []
    for form in _DATE_FORMS:
        for m in form.finditer(text):
            value = _iso_date(m)
            if value is not None:
                found.append((m.start(), m.end(), value))
    out = []
    for start, end, value in _longest_first(found):
        said = _WEEKDAY_BEFORE.search(text, max(0, start - 16), start)
        weekday = _WEEKDAYS.index(said.group("weekday").lower()) if said else None
        if weekday is not None and not value.startswith("--") and datetime.date.fromisoformat(value).weekday() != weekday:
            continue
        out.append(Mention("date", value, said.start() if said else start, end, weekday=weekday))
    return tuple(out)


def _iso_date(m: re.Match[str]) -> str | None:
    month_text, day_text, year_text = m.group("month"), m.group("day").lower(), m.group("year")
    if month_text == "may":
        return None  # the verb ("you may 2 ..."); the month is written "May"
    month = int(month_text) if month_text.isdigit() else _MONTHS[month_text[:3].lower()]
    day = _ORDINAL_WORDS.get(day_text) or int(re.sub(r"\D", "", day_text))
    year = int(year_text) if year_text else None
    if year is not None and year < 100:
        year += 2000
    try:
        datetime.date(year or 2000, month, day)  # 2000 is a leap year, so "Feb 29" without a year stands
    except ValueError:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


def same_date(said: str, fact: str) -> bool:
    """Whether a said date (maybe without a year, "--03-04") is the fact's date."""
    return said == fact or (said.startswith("--") and fact[-6:] == said[1:])


def names_date(text: str, iso: str) -> list[tuple[int, int]]:
    """Where ``text`` says the date ``iso`` in any usual form; without its year only on the weekday that date
    falls on, when one is said ("Monday 16 June" names 2025-06-16, "Friday 16 June" does not)."""
    day = _iso_day(iso)
    return [
        (m.start, m.end)
        for m in dates_in(text)
        if day is not None and same_date(m.value, day.isoformat()) and m.weekday in (None, day.weekday())
    ]


def _iso_day(iso: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(iso.strip())
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------- times of day

_MERIDIEM = r"(?P<mer>[ap])\.?\s?m\b\.?"
_DAYPART = r"(?P<part>in\s+the\s+(?:morning|afternoon|evening))"  # not "this morning": "we received 2 this morning"
_HOUR_WORDS = {w: n for n, w in enumerate(_UNITS[:13]) if n}
_HOUR_WORD = "|".join(sorted(_HOUR_WORDS, key=len, reverse=True))
_MINUTE_WORDS = {"quarter past": 15, "half past": 30, "quarter to": -15, "twenty past": 20, "ten past": 10, "five past": 5}
_TIME_FORMS = [
    # "2pm", "2:00 pm", "10.30 a.m.", "2 in the afternoon"
    re.compile(
        rf"(?<![\w:.,$€£-])(?P<h>1[0-2]|0?[1-9])(?:[:.](?P<m>[0-5]\d))?\s?(?:{_MERIDIEM}|\s{_DAYPART}|\s?o'?clock\b)", re.I
    ),
    # "14:00", "9:30", "09:30", "10h30", the time of "2025-06-18T10:30"
    re.compile(r"(?:(?<=\dT)|(?<![\w:.,/$€£-]))(?P<h>[01]?\d|2[0-3])[:h](?P<m>[0-5]\d)(?::[0-5]\d)?(?![\w:]|[.,]\d)", re.I),
    # "half past ten", "quarter to eleven in the morning", "ten o'clock"
    re.compile(
        rf"\b(?:(?P<words>{'|'.join(_MINUTE_WORDS)})\s+)?(?P<hw>{_HOUR_WORD})(?:\s+o'?clock)?"
        rf"(?:\s+{_DAYPART}|\s?{_MERIDIEM})?(?![\w-])",
        re.I,
    ),
    re.compile(r"\b(?P<noon>noon|midday|midnight)\b", re.I),
]
# "at 10.30", "11.00 on Mon Jun 16": a time written with a dot only where a time is due (else it is an amount)
_DOT_TIME = re.compile(r"(?<![\w:.,/$€£-])(?P<h>[01]?\d|2[0-3])\.(?P<m>[0-5]\d)(?![\w:]|[.,]\d)")
_BEFORE_TIME = re.compile(r"\s*,?\s*(?:at|@)\s+", re.I)
_AFTER_TIME = re.compile(r"\s*,?\s*on\s+", re.I)
_AFTER_DATE = re.compile(r"\s*,?\s*(?:at|@)\s+|\s*,\s*", re.I)  # where a clock-like number is no amount
_AT_HOUR = re.compile(r"\s*,?\s*(?:at|@)\s+(?P<h>1\d|2[0-3]|0?[1-9])(?![\w:%-]|[.,]\d|\s?(?:%|percent|am|pm|a\.m|p\.m)\b)", re.I)


def times_in(text: str) -> list[Mention]:
    """Every time of day said in ``text``, as "HH:MM" on the 24-hour clock: "14:00", "2pm", "2:00 p.m.",
    "half past two in the afternoon", "noon". A time that could be either half of the day ("10:30", "half past
    ten", "ten o'clock") is "~10:30": morning as written, or the same time after noon (:func:`same_time`).
    A bare hour is a time only right after a date ("Monday 16 June at 10")."""
    return list(_times_in(plain(text)))


@functools.lru_cache(maxsize=4096)
def _times_in(text: str) -> tuple[Mention, ...]:
    found = []
    for form in _TIME_FORMS:
        for m in form.finditer(text):
            value = _clock(m)
            if value is not None:
                found.append((m.start(), m.end(), value))
    days = dates_in(text)
    for date in days:
        if at := _AT_HOUR.match(text, date.end):
            found.append((at.start("h"), at.end(), _clock(at)))
    found += [(m.start(), m.end(), _clock(m)) for m in _dot_times(text)]
    return tuple(Mention("time", v, s, e) for s, e, v in _longest_first(found))


def _dot_times(text: str) -> list[re.Match[str]]:
    """Times written with a dot ("10.30"), only beside a date: "June 17 at 10.30", "11.00 on Mon Jun 16".
    Elsewhere "10.30" is an amount ("priced at 12.50"); beside a date it is none (:func:`money_in` leaves it out), nor
    is it right after a date and a comma ("July 3, 2025, 10.00"), which may be either and so is neither."""
    return _clock_beside_date(text, _BEFORE_TIME)


def _clock_beside_date(text: str, before_time: re.Pattern[str]) -> list[re.Match[str]]:
    """Clock-like dot numbers after a date and ``before_time``, or before "on" and a date."""
    days = dates_in(text)
    after_day = {before.end() for d in days if (before := before_time.match(text, d.end))}
    starts = {d.start for d in days}
    out = []
    for m in _DOT_TIME.finditer(text):
        after = _AFTER_TIME.match(text, m.end())
        if m.start() in after_day or (after and after.end() in starts):
            out.append(m)
    return out


def _clock(m: re.Match[str]) -> str | None:
    """A match of a time form as "HH:MM", "~HH:MM" when it could be either half of the day."""
    named = m.groupdict()
    if named.get("noon"):
        return "00:00" if named["noon"].lower() == "midnight" else "12:00"
    hour = int(named["h"]) if named.get("h") else _HOUR_WORDS[named["hw"].lower()]
    minute = int(named.get("m") or 0)
    if words := named.get("words"):
        minute = _MINUTE_WORDS[words.lower()]
        if minute < 0:
            hour, minute = (hour - 1) or 12, 60 + minute
    elif named.get("hw") and not (named.get("mer") or named.get("part") or "clock" in m.group().lower()):
        return None  # "ten" alone is a number
    meridiem = (named.get("mer") or "").lower() or _daypart_meridiem(named.get("part"))
    if meridiem:
        hour = hour % 12 + (12 if meridiem == "p" else 0)
        return f"{hour:02d}:{minute:02d}"
    written_24h = named.get("h", "").startswith("0") or hour == 0 or hour > 12
    return f"{hour:02d}:{minute:02d}" if written_24h else f"~{hour:02d}:{minute:02d}"


def _daypart_meridiem(part: str | None) -> str:
    return "" if not part else "a" if "morning" in part.lower() else "p"


def same_time(said: str, fact: str) -> bool:
    """Whether a said time is the fact's ("HH:MM"): the same, or either half of the day for "~HH:MM"."""
    fact = canonical_time(fact) or fact
    if not said.startswith("~"):
        return said == fact
    hour, minute = said[1:].split(":")
    return fact in (f"{int(hour) % 12:02d}:{minute}", f"{int(hour) % 12 + 12:02d}:{minute}", said[1:])


def names_time(text: str, time: str) -> list[tuple[int, int]]:
    """Where ``text`` says the time of day ``time`` ("HH:MM") in any usual form."""
    return [(m.start, m.end) for m in times_in(text) if same_time(m.value, time)]


def canonical_time(value: str) -> str | None:
    """A time written alone as "HH:MM" ("9:30" -> "09:30", "2:00 pm" -> "14:00"); None if it is no time."""
    found = times_in(value)
    if len(found) != 1 or value[: found[0].start].strip() or value[found[0].end :].strip(" ."):
        return None
    return found[0].value.lstrip("~")


# ---------------------------------------------------------------------------------------------- card endings

_CARD_CUE = (
    r"(?:ending|ends|end)(?:\s+(?:in|with|on))?\s*[:#]?\s*"
    r"|last\s+(?:four|4)(?:\s+digits)?(?:\s+(?:are|is|of|being))?\s*[:#]?\s*"
    r"|(?:(?:[xX•·●∙]{1,4}|\*{3,4})[- ]?){1,4}|(?:\.{3}|…)\s?"  # a mask, not markdown bold ("**Address:**\n2210")
    r"|(?:visa|mastercard|master\s?card|amex|american\s+express|discover|(?:credit\s+|debit\s+)?card)\s*[-–:#]?\s*"
)
_CUED_ENDING = re.compile(rf"(?<![A-Za-z0-9_])(?:{_CARD_CUE})(?P<digits>\d{{4}})(?![\d\w]|[.,]\d)", re.I)
_BARE_FOUR = re.compile(r"(?<![\w#$€£.,/:\-])(?<!\d\s)(\d{4})(?![\w]|[.,/:\-]?\d|\s\d)")


def card_endings_in(text: str) -> list[Mention]:
    """Every card's last four digits said in ``text``: "ending in 8069", "x8069", "Amex-8069", "****8069",
    and a bare "8069" that is no year, amount, date or part of a longer number. "card_8069" is an id."""
    return _card_endings(plain(text), bare=True)


def _card_endings(text: str, bare: bool) -> list[Mention]:
    return list(_cached_card_endings(text, bare))


@functools.lru_cache(maxsize=4096)
def _cached_card_endings(text: str, bare: bool) -> tuple[Mention, ...]:
    taken = [(m.start, m.end) for m in money_in(text) + dates_in(text) + times_in(text)]
    found = {}
    for m in _CUED_ENDING.finditer(text):
        if _inside(m.start("digits"), m.end(), taken):
            continue
        found[m.start("digits")] = Mention("card_ending", m.group("digits"), m.start("digits"), m.end())
    if bare:
        for m in _BARE_FOUR.finditer(text):
            year_like = 1900 <= int(m.group(1)) <= 2099
            if m.start() not in found and not year_like and not _inside(m.start(), m.end(), taken):
                found[m.start()] = Mention("card_ending", m.group(1), m.start(), m.end())
    return tuple(sorted(found.values(), key=lambda mention: mention.start))


def cued_card_endings_in(text: str) -> list[Mention]:
    """Card endings said as such ("ending in 8069"), without bare four-digit numbers."""
    return _card_endings(plain(text), bare=False)


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


# ---------------------------------------------------------------------------------------------- plain numbers

_DIGIT_NUMBER = re.compile(r"(?<![\w#$€£.,/:@-])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w]|[.,/:-]\d)")


def numbers_in(text: str) -> list[Mention]:
    """Plain numbers, in digits or words ("3 items", "three items"); not the digits of ids, amounts, dates or times."""
    text = plain(text)
    taken = [(m.start, m.end) for m in money_in(text) + dates_in(text) + times_in(text)]
    found = []
    for m in _DIGIT_NUMBER.finditer(text):
        if not _inside(m.start(), m.end(), taken):
            found.append(Mention("number", canonical_number(m.group()), m.start(), m.end()))
    for start, end, value in _number_words(text):
        if text[start:end].lower() == "one" and _PRONOUN_ONE.search(text[:start]):
            continue  # "the one ending in 8069"
        if not _inside(start, end, taken):
            found.append(Mention("number", str(value), start, end))
    return sorted(found, key=lambda mention: mention.start)


def canonical_number(value: str) -> str:
    """ "1,204" -> "1204", "3.0" -> "3", "2.50" -> "2.5"."""
    number = Decimal(value.replace(",", ""))
    return format(number.normalize(), "f") if number != number.to_integral() else str(int(number))


# ---------------------------------------------------------------------------------------------- ids, streets, phrases


def names_identifier(text: str, value: str) -> list[tuple[int, int]]:
    """Where ``text`` names the id ``value`` in any usual form, as a whole token.

    Digits-only ids also match grouped ("8336 9864 9358", "8336-9864-9358", a phone number "(413) 555-0108",
    "413.555.0108", "+1 413 555 0108"); other ids match with or
    without "#" and separators, in any case ("#R3042198": "R3042198", "r-3042198"), or by their
    trailing run of at least five digits alone ("invoice 3042198"). Never inside a longer token.
    """
    text = plain(text)
    core = re.sub(r"[^0-9A-Za-z]", "", value)
    if not core:
        return []
    if core.isdigit():
        return _grouped_digits(text, core)
    segments = re.findall(r"[A-Za-z]+|\d+", value)
    body = r"[-_ \u00a0\u2010\u2011\u2013]?".join(re.escape(s) for s in segments)  # hyphens and spaces of any typography
    spans = [m.span() for m in re.finditer(rf"(?<![\w#-])#?{body}(?![\w]|-\w)", text, re.I)]
    trailing = re.search(r"\d+$", core)
    if trailing and len(trailing.group()) >= 5:
        spans += [span for span in _grouped_digits(text, trailing.group()) if not _inside(span[0], span[1], spans)]
    return sorted(spans)


_DIGIT_GROUPS = re.compile(  # "(413) 555.0108", "413\u2011555\u20110108"
    r"(?<![\w.,(-])(?:#|\(|\+)?\d+(?:(?:\)\s?|[ .\u00a0\u2010\u2011\u2013-])\d+)*(?![\w]|[.,]\d)"
)


def _grouped_digits(text: str, digits: str) -> list[tuple[int, int]]:
    spans = []
    for run in _DIGIT_GROUPS.finditer(text):
        groups = list(re.finditer(r"\d+", run.group()))
        for i in range(len(groups)):
            joined = ""
            for j in range(i, len(groups)):
                joined += groups[j].group()
                if joined == digits:
                    spans.append((run.start() + (groups[i].start() if i else 0), run.start() + groups[j].end()))
                if len(joined) >= len(digits):
                    break
    return spans


def names_person(text: str, name: str) -> list[tuple[int, int]]:
    """Where ``text`` names the person ``name`` ("Lena Eklund"): in full in any case, by the initial of the first name
    ("L. Eklund", "L Eklund"), with a middle initial ("Lena M. Eklund"), or surname first ("Eklund, Lena", "Eklund, L.").
    A surname alone, even with a title ("Ms Eklund": a family shares it), or another initial names no one."""
    words = re.findall(r"[^\W\d_]+(?:['-][^\W\d_]+)*", name)
    if len(words) < 2:
        return names_phrase(text, name)
    first, last = re.escape(words[0]), re.escape(words[-1])
    given = rf"(?:{first}|{first[0]}\.?)"
    middle = "".join(rf"(?:\s+(?:{re.escape(w)}|{re.escape(w[0])}\.?))?" for w in words[1:-1]) or r"(?:\s+[a-z]\.)?"
    forms = rf"{given}{middle}\s+{last}|{last},\s*{given}"
    return [m.span() for m in re.finditer(rf"(?<![\w-])(?:{forms})(?![\w-])", plain(text), re.I)]


_STREET_WORDS = {
    "street": "st",
    "avenue": "ave",
    "av": "ave",
    "road": "rd",
    "drive": "dr",
    "boulevard": "blvd",
    "court": "ct",
    "place": "pl",
    "lane": "ln",
    "way": "wy",
    "trail": "trl",
    "crescent": "cres",
    "alley": "aly",
    "terrace": "ter",
    "parkway": "pkwy",
    "highway": "hwy",
    "circle": "cir",
    "square": "sq",
    "north": "n",
    "south": "s",
    "east": "e",
    "west": "w",
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
    "suite": "#",
    "ste": "#",
    "apartment": "#",
    "apt": "#",
    "unit": "#",
    "no": "#",
    "number": "#",
}
_STREET_TOKEN = re.compile(r"#|[A-Za-z0-9]+")


def names_street(text: str, street: str) -> list[tuple[int, int]]:
    """Where ``text`` names the street line ``street``, with the usual abbreviations ("Ln." for Lane,
    "#9" / "Unit 9" for "Apt 9"), in any case. A different house number or street type does not match."""
    wanted = [t for t, _, _ in _street_tokens(street)]
    said = _street_tokens(plain(text))
    spans = []
    for i in range(len(said) - len(wanted) + 1):
        if wanted and [t for t, _, _ in said[i : i + len(wanted)]] == wanted:
            spans.append((said[i][1], said[i + len(wanted) - 1][2]))
    return spans


def _street_tokens(text: str) -> list[tuple[str, int, int]]:
    tokens: list[tuple[str, int, int]] = []
    for m in _STREET_TOKEN.finditer(text):
        token = _STREET_WORDS.get(m.group().lower(), m.group().lower())
        if token == "#" and tokens and tokens[-1][0] == "#":
            tokens[-1] = ("#", tokens[-1][1], m.end())  # "Apt #9"
            continue
        tokens.append((token, m.start(), m.end()))
    return tokens


_UNIT = re.compile(
    r"(?:\b(?:apt|apartment|unit|suite|ste)\b\.?\s*#?|(?<![\w#])#)\s?(?:\d[A-Za-z0-9-]{0,5}|[A-Za-z]\d{0,4})\b", re.I
)


def units_in(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names an apartment, unit or suite ("Apt 9", "Unit 210", "Suite 4B", "#9"), the part of
    a street line that :func:`names_street` matches as "#9". "#R3042198" is an id, not a unit."""
    return [m.span() for m in _UNIT.finditer(plain(text))]


_PHRASE_GAP = r"[\s\-_\"'“”‘’/:*`]+"  # ":" too, so a time ("11:00") is a phrase like any other; "*" and "`": markdown


def names_phrase(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where ``text`` says ``phrase`` as whole words: any case, quotes and hyphens ignored, plurals and
    the doubled-l spelling ("canceled") allowed. "deliver" does not say "delivered"."""
    words = re.findall(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?", plain(phrase))
    if not words:
        return []
    body = _PHRASE_GAP.join(_inflected(w) for w in words)
    return [m.span() for m in re.finditer(rf"(?<![\w-]){body}(?![\w-])", plain(text), re.I)]


def _inflected(word: str) -> str:
    """A word with its plural or possessive, and "cancelled" ~ "canceled"."""
    stem = re.sub(r"(?<=e)l{1,2}(?=(?:ed|ing)$)", "l{1,2}", re.escape(word.lower()))
    if re.search(r"[^su]s$", stem):
        return rf"(?:{stem}|{stem[:-1]})"  # "items" also says "item"
    return rf"{stem}(?:s|es|'s)?"


# ---------------------------------------------------------------------------------------------- canonical values


def canonical(kind: ValueKind, value: Any) -> Any:
    """``value`` as a backend stores a value of its kind, so that two calls are equal when they store the same thing:
    ``id`` any case, spaces around ("inv-71014" is INV-71014); ``code`` its letters and digits ("NW 1234-56");
    ``phone`` its digits, without the country code 1 before ten digits ("(413) 555-0108", "+1 413 555 0108");
    ``email`` any case; ``money`` to the cent (1523.2, "1,523.20", "$1523.20"); ``date`` ISO from any usual form
    with its year ("June 18, 2025"); ``time`` "HH:MM" ("9:30", "2:00 pm"). A list is compared item by item; a value
    that is not of the kind (an amount in words, a date without its year) stays as it is, unequal to any other."""
    if isinstance(value, (list, tuple)):
        return [canonical(kind, v) for v in value]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    return _CANONICAL[kind](value)


def _canonical_phone(value: str | float) -> str:
    digits = re.sub(r"\D", "", str(value))
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


def _canonical_money(value: str | float) -> Any:
    amount = parse_money(str(value)) if isinstance(value, str) else Decimal(str(value))
    return value if amount is None else _cents(amount)


def _canonical_date(value: str | float) -> Any:
    said = dates_in(str(value))
    whole = len(said) == 1 and not str(value)[: said[0].start].strip() and not str(value)[said[0].end :].strip(" .")
    return said[0].value if whole and not said[0].value.startswith("--") else value


_CANONICAL: dict[ValueKind, Any] = {
    "id": lambda v: str(v).strip().upper(),
    "code": lambda v: re.sub(r"[^0-9A-Za-z]", "", str(v)).upper(),
    "phone": _canonical_phone,
    "email": lambda v: str(v).strip().lower(),
    "money": _canonical_money,
    "date": _canonical_date,
    "time": lambda v: canonical_time(str(v)) or v,
}
