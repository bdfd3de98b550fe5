"""Values passhat does not control — what a model or an agent under test sends — made safe to store and show.

A model can write anything: unpaired surrogates and control characters, which UTF-8, SQLite's C
functions, XML and terminals refuse or misread; numbers longer than Python will print; nesting
deeper than its stack; even an API key an endpoint echoed back. Whatever it wrote stays the sender's
responsibility, so it is kept, visibly escaped ("\\ud800"), never dropped and never a crash, and
the known secrets are redacted. A leaf module: every layer that stores or shows such values uses it.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

# Characters that are not text: C0 controls but tab, newline and return; DEL and C1 controls; surrogates;
# U+FFFE and U+FFFF. Without them a string is valid UTF-8, valid XML 1.0 and harmless on a terminal.
NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
STORED_DEPTH = 100  # deeper values are stored as a note: JSON encoders and HTML renderers recurse
LONGEST_INT_BITS = int(4000 / math.log10(2))  # 4,000 digits: Python prints at most 4,300 by default
REDACTED = "[redacted]"
_MIN_SECRET = 8  # shorter strings are not worth redacting and would mangle ordinary text
_secrets: set[str] = set()
_secrets_in_json: set[str] = set()  # the same, as json.dumps writes them inside a string


def add_secret(value: str) -> None:
    """Redact ``value`` from everything stored from now on (an API key this process has read)."""
    if len(value) >= _MIN_SECRET:
        _secrets.add(value)
        _secrets_in_json.add(json.dumps(value)[1:-1])


def redact(text: str) -> str:
    """``text`` with every known secret replaced by [redacted]."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def escape_char(char: str) -> str:
    """One character as a visible escape: U+D800 becomes the six characters \\ud800."""
    return f"\\u{ord(char):04x}"


def escape_text(text: str) -> str:
    """``text`` with every character that is not text written as a visible escape."""
    return NOT_TEXT.sub(_escape_match, text) if NOT_TEXT.search(text) else text


def _escape_match(match: re.Match[str]) -> str:
    return escape_char(match.group())


def storable(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` that json.dumps writes as strict JSON and every reader can show: strings
    escaped and redacted, non-finite numbers and integers too long to print as notes, nesting cut
    at STORED_DEPTH, anything that is not JSON as its escaped repr."""
    if isinstance(value, str):
        return redact(escape_text(value))
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= LONGEST_INT_BITS else f"[an integer too long to store: {value.bit_length()} bits]"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= STORED_DEPTH:
        return f"[nested deeper than {STORED_DEPTH} levels]"
    if isinstance(value, (list, tuple)):
        return [storable(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {_storable_key(k): storable(v, depth + 1) for k, v in value.items()}
    return storable(repr(value))


def storable_json(value: Any) -> str:
    """``json.dumps(storable(value), allow_nan=False)``, written by the C encoder alone when nothing in ``value``
    needs storable's care, which its output shows (a trial's record is mostly such text, and walking it in
    Python cost three times the encoding). One difference: a dict whose non-string key reads as another of
    its keys (``{1: a, "1": b}``) keeps both, where storable keeps the last; JSON readers keep the last too."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # not JSON, not finite, an integer too long to print
        return json.dumps(storable(value), allow_nan=False)
    if (
        any(len(backslashes) % 2 for backslashes in _ESCAPE.findall(text))
        or (len(text) >= _LONG_NUMBER and _DIGITS.search(text))
        or any(secret in text for secret in _secrets_in_json)
        or _deeper_than(text, STORED_DEPTH)
    ):
        return json.dumps(storable(value), allow_nan=False)
    return text


# What json.dumps writes (in ASCII) for a character storable escapes: \b, \f, the other controls, DEL and the C1
# controls, surrogates, U+FFFE and U+FFFF; an escape only when an odd run of backslashes leads it (\\b is a
# backslash and a b). Matching more (an astral character's surrogate pair) only sends a value the slow way; so
# does a run of digits as long as the shortest integer storable cuts (a separate search: in one alternation it
# costs twenty times as much).
_ESCAPE = re.compile(r"(\\+)(?:[bf]|u(?:00[01]|007f|00[89]|d[89a-f]|fff[ef]))")
_LONG_NUMBER = int(LONGEST_INT_BITS * math.log10(2))
_DIGITS = re.compile(rf"\d{{{_LONG_NUMBER}}}")
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _deeper_than(text: str, depth: int) -> bool:
    """Whether the JSON ``text`` nests containers more than ``depth`` levels deep."""
    if text.count("[") + text.count("{") <= depth:
        return False
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(1 if b in "[{" else -1 for b in brackets), default=0) > depth


def _storable_key(key: Any) -> str:
    """A dict key as json.dumps writes it (None, booleans and numbers as their JSON text)."""
    value = storable(key)
    return value if isinstance(value, str) else json.dumps(value)
