"""A model's conversation as it grows, each message kept both as it is and as the JSON text a request sends.

An agent's transcript starts with its instructions and the domain's policy (several KB) and only ever grows,
so each message is written as JSON once, when it is added, and a request's messages are those texts joined:
no call writes a message a second time. The messages a conversation opens with are the same in many trials
of a run (the agent's instructions and policy: 7.6 KB of retail text, 70 µs to write), so their text is
remembered. Providers that translate messages (Anthropic, litellm) and the response cache read the messages
themselves. A message is not changed once added.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

from passhat.llm.model import Message


def dumps(value: Any) -> str:
    """Compact JSON text; ASCII, so text that is not valid Unicode (a lone surrogate) still goes out escaped."""
    return json.dumps(value, separators=(",", ":"))


@functools.lru_cache(maxsize=1024)  # a run opens with one system message per agent, and one per task and persona
def _opening_text(fields: tuple[tuple[str, str], ...]) -> str:
    return dumps(dict(fields))


class Conversation:
    def __init__(self, opening: Iterable[dict[str, str]] = ()):
        """``opening``: messages of text only (a system prompt, a first user message), whose text is remembered."""
        self.messages: list[Message] = []
        self._texts: list[str] = []
        for message in opening:
            self.messages.append(message)
            self._texts.append(_opening_text(tuple(message.items())))

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._texts.append(dumps(message))

    def extend(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.append(message)

    def json(self) -> str:
        """The messages as a JSON array."""
        return "[" + ",".join(self._texts) + "]"
