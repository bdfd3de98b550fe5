"""Regions of an agent's message that are data rather than words to the customer.

An agent that pastes a tool's JSON, recites every number it read, or recites a whole row in any format
(key: value lines, a markdown table, prose naming every column) "says" every fact among them without
telling the customer any. A fact found only inside such a region is not told. A correct answer with a
few values in sentences ("Your gift card balance is $52.40.") is no dump, nor is a report of the agent's
own findings or of the writes it made, even in its results' words.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation

from passhat.dialogue.text import plain, sentences
from passhat.dialogue.values import dates_in, names_phrase, same_date

Span = tuple[int, int]

COPIED_RUN = 8  # tokens copied verbatim from a tool result that make a dump
_COPIED_DATA_TOKENS = 2  # ... of which at least this many are data (a copied sentence of prose is no dump)
_RECITAL = 4  # values in a row with nothing but separators between them
_DATA_SHARE = 0.5  # a message whose tokens are more than this share data ...
_DATA_TOKENS = 6  # ... and at least this many, is a dump as a whole
ROW_SHARE = 0.9  # a row whose values the message says this share of (nearly every column) is recited ...
ROW_VALUES = 6  # ... when they are at least this many
_SMALL = 10  # integers below this say nothing of a row: "1" is in every message
_ROW_GAP = 200  # characters between two values of a row that keep one recital going (a table header between)


def dump_spans(text: str, seen: Sequence[str] = (), id_pattern: str | None = None, own: Sequence[str] = ()) -> list[Span]:
    """Spans of ``text`` that are data dumps: JSON-like regions, runs of ``key: value`` pairs, runs of
    at least eight tokens copied from one of ``seen`` (tool results the agent read), a row of ``seen`` with
    nearly every value said, bare recitals of values, or the whole message or a sentence of it when most
    of its tokens are data (numbers, ids matching ``id_pattern``, JSON punctuation, snake_case words).
    ``own``: the agent's writes, their arguments and results: a report of them, even in their words and
    every one of their values, is the agent's own account of what it did."""
    return list(_dumps(plain(text), tuple(seen), id_pattern, tuple(own)))


@functools.lru_cache(maxsize=1024)
def _dumps(text: str, seen: tuple[str, ...], id_pattern: str | None, own: tuple[str, ...]) -> tuple[Span, ...]:
    """Cached: a grader asks once per fact about the same messages."""
    copied = _copied_runs(text, _seen_grams(seen) - _seen_grams(own))
    spans = _json_regions(text) + _key_value_runs(text) + copied + _row_recitals(text, seen) + _recitals(text)
    # a message, or one sentence of it, that is mostly data: a courteous "Anything else?" does not hide a recital
    spans += [(start, end) for start, end in [(0, len(text)), *sentences(text)] if _mostly_data(text[start:end], id_pattern)]
    return tuple(_merged(spans))


def in_dump(start: int, end: int, dumps: Sequence[Span]) -> bool:
    """Whether the span [start, end) overlaps one of ``dumps``."""
    return any(s < end and start < e for s, e in dumps)


_JSON_KEY = re.compile(r"[\"'][^\"'\n]{1,60}[\"']\s*:")
_CLOSER = {"{": "}", "[": "]"}


def _json_regions(text: str) -> list[Span]:
    """Balanced {...} / [...] regions holding a quoted key; an unclosed one runs to the end."""
    spans = []
    i = 0
    while i < len(text):
        if text[i] in _CLOSER:
            end = _closing(text, i)
            if _JSON_KEY.search(text, i, end):
                spans.append((i, end))
                i = end
                continue
        i += 1
    return spans


def _closing(text: str, open_at: int) -> int:
    stack: list[str] = []
    in_string = False
    i = open_at
    while i < len(text):
        ch = text[i]
        if in_string:
            i += 1 if ch == "\\" else 0  # an escaped character does not end the string
            in_string = ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return len(text)


_STRONG_PAIR = re.compile(
    r"(?:\"[^\"\n]{1,40}\"|'[^'\n]{1,40}'|\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\s*[:=]\s*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]*[^\s,;.!?])"
    r"|\b[a-z][a-z0-9]*=[^\s,;]*[^\s,;.!?]"
)
_PAIR_GAP = 60
_SENTENCE_BREAK = re.compile(r"[!?]|\.(?:\s|$)")


def _key_value_runs(text: str) -> list[Span]:
    """Runs of two or more ``snake_key: value`` / ``"key": value`` / ``key=value`` pairs close together."""
    spans = []
    run: list[re.Match[str]] = []
    for pair in _STRONG_PAIR.finditer(text):
        if run and (pair.start() - run[-1].end() > _PAIR_GAP or _SENTENCE_BREAK.search(text, run[-1].end(), pair.start())):
            spans += [(run[0].start(), run[-1].end())] if len(run) >= 2 else []
            run = []
        run.append(pair)
    spans += [(run[0].start(), run[-1].end())] if len(run) >= 2 else []
    return spans


_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[A-Za-z0-9_]+")


def _tokens(text: str) -> Iterator[tuple[str, int, int]]:
    """Normalised tokens with offsets: lower case, numbers by value ("332.20" and "332.2" are one token)."""
    for m in _TOKEN.finditer(text):
        token = m.group().lower()
        if token[0].isdigit():
            try:
                token = format(Decimal(token.replace(",", "")).normalize(), "f")
            except InvalidOperation:
                pass
        yield token, m.start(), m.end()


def _is_data(token: str) -> bool:
    return any(c.isdigit() for c in token) or "_" in token


@functools.lru_cache(maxsize=64)
def _seen_grams(seen: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """Every run of COPIED_RUN consecutive tokens in the tool results."""
    grams: set[tuple[str, ...]] = set()
    for result in seen:
        words = [t for t, _, _ in _tokens(_flattened(result))]
        grams.update(tuple(words[i : i + COPIED_RUN]) for i in range(len(words) - COPIED_RUN + 1))
    return frozenset(grams)


def _copied_runs(text: str, grams: frozenset[tuple[str, ...]]) -> list[Span]:
    """Runs of at least COPIED_RUN tokens that appear in this order in one tool result, holding data."""
    if not grams:
        return []
    said = list(_tokens(text))
    covered = [False] * len(said)
    for i in range(len(said) - COPIED_RUN + 1):
        if tuple(t for t, _, _ in said[i : i + COPIED_RUN]) in grams:
            covered[i : i + COPIED_RUN] = [True] * COPIED_RUN
    spans = []
    i = 0
    while i < len(said):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j < len(said) and covered[j]:
            j += 1
        if sum(_is_data(t) for t, _, _ in said[i:j]) >= _COPIED_DATA_TOKENS:
            spans.append((said[i][1], said[j - 1][2]))
        i = j
    return spans


def _flattened(result: str) -> str:
    """A tool result's keys and values in order, as text (JSON escapes undone); the text itself if not JSON."""
    try:
        data = json.loads(result)
    except (ValueError, TypeError):
        return result
    parts: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                parts.append(str(key))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif node is not None:
            parts.append(str(node))

    walk(data)
    return " ".join(parts)


def _row_recitals(text: str, results: tuple[str, ...]) -> list[Span]:
    """Stretches of the message that say nearly every value of one row of the results, in whatever format:
    runs of the row's values with at most _ROW_GAP characters between one and the next."""
    spans = []
    words = {w for t, _, _ in _tokens(text) for w in (t, t.rstrip("s"))}  # "items" may say "item"
    for row in _rows(results):
        if sum(_may_be_said(words, value) for value in row) < max(ROW_VALUES, ROW_SHARE * len(row)):
            continue  # most rows share few words with a message: no need to look for each value
        said = sorted((start, end, i) for i, value in enumerate(row) for start, end in _said_at(text, value))
        run: list[tuple[int, int, int]] = []
        for mention in [*said, None]:
            if mention is None or (run and mention[0] - max(e for _, e, _ in run) > _ROW_GAP):
                values = len({i for _, _, i in run})
                if values >= ROW_VALUES and values >= ROW_SHARE * len(row):
                    spans.append((run[0][0], max(e for _, e, _ in run)))
                run = []
            if mention is not None:
                run.append(mention)
    return spans


@functools.lru_cache(maxsize=64)
def _rows(results: tuple[str, ...]) -> tuple[tuple[str | Decimal, ...], ...]:
    """Each JSON object of the results with every telling value beneath it (text, numbers, not flags), each
    once, when it has at least ROW_VALUES: a record is recited whole with its nested parts ("the address",
    "the items"); a small result (a quote: plan, share, amounts) told whole is an answer, not a recital."""
    found = []

    def walk(node: object) -> list[str | Decimal]:
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        if not children:
            value = _row_value(node)
            return [] if value is None else [value]
        values = list(dict.fromkeys(v for child in children for v in walk(child)))  # each value once
        if isinstance(node, dict) and len(values) >= ROW_VALUES:
            found.append(tuple(values))
        return values

    for result in results:
        try:
            walk(json.loads(result))
        except (ValueError, TypeError):
            continue
    return tuple(found)


def _row_value(value: object) -> str | Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = Decimal(str(value))
        return number if abs(number) >= _SMALL or number != number.to_integral_value() else None
    return value if isinstance(value, str) and len(value.strip()) >= 2 else None


def _may_be_said(words: set[str], value: str | Decimal) -> bool:
    """A cheap necessary condition for ``_said_at``: the value's tokens are all among the message's (a date
    said in words aside, which is let through)."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") in words
    tokens = [t for t, _, _ in _tokens(value)]
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is not None or all(t.rstrip("s") in words for t in tokens)


def _said_at(text: str, value: str | Decimal) -> list[Span]:
    """Where the message says a row's value: a number by value in any format, a date in any usual wording,
    text as its words, an email or web address as written."""
    if isinstance(value, Decimal):
        return [(s, e) for t, s, e in _tokens(text) if t[0].isdigit() and Decimal(t) == value]
    found = names_phrase(text, value)
    if re.search(r"[@.]\w", value):
        found += [(m.start(), m.end()) for m in re.finditer(re.escape(value), text, re.I)]
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        found += [(m.start, m.end) for m in dates_in(text) if same_date(m.value, value)]
    return found


_VALUE = re.compile(r"(?<![\w.])[-−]?[$€£]?\d[\d,]*(?:\.\d+)?(?!\w|\.\d)")
_SEPARATORS = re.compile(r"(?:\s|,|;|/|\||&|\band\b)*", re.I)


def _recitals(text: str) -> list[Span]:
    """At least _RECITAL numbers in a row with only separators between ("332.2, 150.1, 182.1 and 8.62")."""
    spans = []
    run: list[re.Match[str]] = []
    for value in _VALUE.finditer(text):
        if run and not _SEPARATORS.fullmatch(text, run[-1].end(), value.start()):
            spans += [(run[0].start(), run[-1].end())] if len(run) >= _RECITAL else []
            run = []
        run.append(value)
    spans += [(run[0].start(), run[-1].end())] if len(run) >= _RECITAL else []
    return spans


_MESSAGE_TOKEN = re.compile(r"[{}\[\]\"]|[^\s{}\[\]\"]+")
_SNAKE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
_FORMATTED_MONEY = re.compile(r"[-−(]?(?:US)?[$€£]\d")


def _mostly_data(text: str, id_pattern: str | None) -> bool:
    """Whether more than half of the message's tokens (and at least six) are data. Amounts written for a
    reader ("$150.10") are words here, so a short itemised answer is not a dump."""
    tokens = [t.strip(".,;:!?()") or t for t in _MESSAGE_TOKEN.findall(text)]
    ids = re.compile(id_pattern) if id_pattern else None
    data = sum(_is_message_data(t, ids) for t in tokens)
    return data >= _DATA_TOKENS and data > _DATA_SHARE * len(tokens)


def _is_message_data(token: str, ids: re.Pattern[str] | None) -> bool:
    if token in '{}[]"' or _SNAKE.fullmatch(token) or (ids is not None and ids.fullmatch(token)):
        return True
    return any(c.isdigit() for c in token) and not _FORMATTED_MONEY.match(token)


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
