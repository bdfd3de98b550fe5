"""A short re-ask of a proposal still standing, and what a yes to it agrees to.

A careful agent proposes in full, the customer asks "why?", and the agent explains and asks again in short:
"Shall I go ahead with the four steps: approve at $864.60, post, mark ready for payment, and add the audit
note?". The full proposal still stands — the customer did not turn it down and no other record came up — so
the yes to the re-ask agrees to it. The re-ask must still offer the write's action and state nothing the
writes do not do: one that changes a term is a new proposal, judged alone. The graders, the confirmation guard
and the scripted customer all read a re-ask by these two functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from passhat.dialogue import Message, is_affirmative
from passhat.dialogue.proposals import Binding, Commitment, binding

_TURNED_DOWN = re.compile(r"^\W*(?:no|nope|nah|wrong|not)\b", re.I)


def standing_proposal(messages: Sequence[Message], yes: int, id_pattern: str | None, own: Iterable[str] = ()) -> str | None:
    """The proposal still standing that the agent's last message before ``messages[yes]`` re-asks, or None (``yes``
    may be ``len(messages)``: the customer is about to answer).

    The agent message before the re-ask stands when the customer neither agreed to it (that yes was its answer) nor
    turned it down since, and every record named after it, up to the yes, is one it names (or the customer's own): a
    re-ask after another invoice came up may be about that one."""
    agent = [j for j in range(yes) if messages[j][0] == "agent"]
    if len(agent) < 2 or not id_pattern:
        return None
    earlier, reask = agent[-2], agent[-1]
    between = [text for role, text in messages[earlier + 1 : reask] if role == "user"]
    if any(is_affirmative(text) or _TURNED_DOWN.match(text) for text in between):
        return None
    named = _records(messages[earlier][1], id_pattern) | _records(" ".join(own), id_pattern)
    later = set().union(*(_records(text, id_pattern) for _, text in messages[earlier + 1 : yes]))
    return messages[earlier][1] if later <= named else None


def _records(text: str, id_pattern: str) -> set[str]:
    """The record ids a text names, as ids are compared (no case, no leading '#')."""
    return {m.group(0).lower().lstrip("#") for m in re.finditer(id_pattern, text)}


def reasked_binding(
    reask: str,
    earlier: str | None,
    write: Commitment,
    batch: Sequence[Commitment] = (),
    id_pattern: str | None = None,
    own: Iterable[str] = (),
    context: Sequence[Commitment] = (),
) -> Binding:
    """Whether a yes to ``reask`` binds ``write``: the re-ask binds it alone, or it re-asks (offers the action and
    states nothing the writes do not do) the ``earlier`` proposal still standing, which binds it."""
    own = tuple(own)
    now = binding(reask, write, batch, id_pattern, own, context)
    if now.ok or now.unproposed or now.conflicting or earlier is None:
        return now
    before = binding(earlier, write, batch, id_pattern, own, context)
    return before if before.ok else now
