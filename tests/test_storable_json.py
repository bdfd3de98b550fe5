"""storable_json writes what json.dumps(storable(value)) writes, taking the C encoder's output as it is only when
nothing in the value needs storable's care: every kind of care is a value here, alone and buried in a record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.untrusted import LONGEST_INT_BITS, STORED_DEPTH, add_secret, storable, storable_json

SECRET = "sk-storable-json-test-key-0123456789"
add_secret(SECRET)


def slow(value: Any) -> str:
    return json.dumps(storable(value), allow_nan=False)


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


NEEDING_CARE = {
    "a control character": "bell \x07 here",
    "a backspace (written \\b)": "back\bspace",
    "a form feed (written \\f)": "form\x0cfeed",
    "DEL": "del \x7f",
    "a C1 control": "next line \x85",
    "a lone surrogate": "half \ud800",
    "U+FFFF": "not a character \uffff",
    "a secret": f"the key is {SECRET}",
    "a secret as a key": {SECRET: 1},
    "an integer too long to store": 1 << (LONGEST_INT_BITS + 1),
    "an integer just long enough to store": (1 << LONGEST_INT_BITS) - 1,
    "an integer longer than Python prints": 10**5000,
    "infinity": float("inf"),
    "not a number": float("nan"),
    "an object JSON has no form for": object(),
    "bytes": b"raw",
    "a tuple key": {(1, 2): "x"},
    "nesting past the bound": nested(STORED_DEPTH + 1),
    "an empty list past the bound": nested(STORED_DEPTH, []),
}

TAKEN_AS_IS = {
    "plain text": "Your order #W123 ships tomorrow.",
    "a tab, a newline, a return": "a\tb\nc\r",
    "a backslash before b (a regex)": r"\bto\b",
    "three backslashes then a backspace": "\\\\\\\b",
    "an astral character": "thanks \U0001f600",
    "non-ASCII text": "Müller, 東京",
    "a long number in a string": "1" * 5000,
    "nesting at the bound": nested(STORED_DEPTH),
    "deep nesting in a string": "[" * 500,
    "numbers": [0, -1, 1.5, 1e300, True, None],
    "number keys": {1: "a", 2.5: "b", False: "c", None: "d"},
    "a tuple": (1, "two"),
}


@pytest.mark.parametrize("value", [*NEEDING_CARE.values(), *TAKEN_AS_IS.values()], ids=[*NEEDING_CARE, *TAKEN_AS_IS])
def test_every_value_is_written_as_storable_writes_it(value: Any) -> None:
    assert storable_json(value) == slow(value)
    record = {"events": [{"text": "hello", "args": {"x": value}}], "grade": {"reward": 1}}  # buried in a record
    assert storable_json(record) == slow(record)


def test_what_storable_changes_is_changed_in_the_text() -> None:
    assert SECRET not in storable_json(NEEDING_CARE["a secret"])
    assert storable_json("half \ud800") == '"half \\\\ud800"'  # visibly escaped, readable back as text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.sampled_from([SECRET, "\b", "\\b", "\ud83d"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=8) | st.sampled_from([SECRET, "\x00"]), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_any_value_with_text_keys_is_written_the_same(value: Any) -> None:
    assert storable_json(value) == slow(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(-3, 3) | st.text(alphabet="-0123", max_size=2) | st.booleans(), st.integers()))
def test_a_non_text_key_reads_back_as_storable_stores_it(value: dict[Any, int]) -> None:
    """The one difference: {1: a, "1": b} keeps both in the text; a JSON reader keeps the last, as storable does."""
    assert json.loads(storable_json(value)) == json.loads(slow(value))
