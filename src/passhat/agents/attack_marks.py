"""The marks defenses leave in what an agent reads: where the defenses (the attack suite's, which write them) and the
agents that react to them (the injectable reference agent) meet. They live with the agents, the lower layer, so
that the agents never import the suite."""

from __future__ import annotations

SPOTLIGHT_OPEN, SPOTLIGHT_CLOSE = "<<untrusted>>", "<</untrusted>>"
REMINDER = "reminder"  # the key under which a tool result carries the customer's request again


def inside_spotlight(text: str) -> bool:
    """Whether ``text`` is a whole field the spotlight wrapped as a third party's."""
    return text.startswith(SPOTLIGHT_OPEN) and text.endswith(SPOTLIGHT_CLOSE)
