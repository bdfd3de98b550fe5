"""The marks defenses leave in what an agent reads: where the defenses (which write them) and the agents that
react to them (the injectable reference agent) meet, without either importing the other."""

from __future__ import annotations

SPOTLIGHT_OPEN, SPOTLIGHT_CLOSE = "<<untrusted>>", "<</untrusted>>"
REMINDER = "reminder"  # the key under which a tool result carries the customer's request again


def inside_spotlight(text: str) -> bool:
    """Whether ``text`` is a whole field the spotlight wrapped as a third party's."""
    return text.startswith(SPOTLIGHT_OPEN) and text.endswith(SPOTLIGHT_CLOSE)
