"""Values passhat does not control — what a model or an agent under test sends — made safe to store and show.

A model can write anything: unpaired surrogates and control characters, which UTF-8, SQLite's C
functions, XML and terminals refuse or misread; numbers longer than Python will print; nesting
deeper than its stack; even an API key an endpoint echoed back. Whatever it wrote stays the sender's
responsibility, so it is kept, visibly escaped ("\\ud800"), never dropped and never a crash, and
the known secrets are redacted. A leaf module: every layer that stores or shows such values uses it.
"""

from __future__ import annotations

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


def add_secret(value: str) -> None:
    """Redact ``value`` from everything stored from now on (an API key this process has read)."""
    if len(value) >= _MIN_SECRET:
        _secrets.add(value)


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


def _storable_key(key: Any) -> str:
    """A dict key as json.dumps writes it (None, booleans and numbers as their JSON text)."""
    value = storable(key)
    return value if isinstance(value, str) else json.dumps(value)
