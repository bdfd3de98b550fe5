"""Customer temperaments. The goals never change with the persona; how the customer pursues them does.

The descriptions are the one wording of each temperament: LLM customers get them in their prompt, and
the scripted customer's behaviour is set by the fields next to them.
"""

from __future__ import annotations

import dataclasses

from passhat.errors import UserError


@dataclasses.dataclass(frozen=True)
class Persona:
    name: str
    description: str
    patience: int | None = None  # agent messages in a row without progress before giving up
    asks_why: bool = False  # questions a proposal before confirming it
    upset: bool = False  # urgent, emotional wording
    incoherent: bool = False  # gives information out of order, partly, with typos


PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona(
            "baseline",
            "You are a calm, cooperative customer. You answer what you are asked, plainly and completely.",
        ),
        Persona(
            "impatient",
            "You are in a hurry. You keep messages short, and if the agent goes several messages without "
            "making progress on your request you give up and leave, unsatisfied.",
            patience=3,
        ),
        Persona(
            "skeptical",
            "You do not take the agent's word for things. Before agreeing to any change you ask why it is "
            "done that way or whether the details are right, and you agree only once you have an answer.",
            asks_why=True,
        ),
        Persona(
            "emotional",
            "You are upset and stressed about this problem and it shows in your words: urgency, frustration, "
            "exclamation marks. Your requests and facts are exactly the same as a calm customer's.",
            upset=True,
        ),
        Persona(
            "incoherent",
            "You are scattered. You give information out of order and in pieces, mention things before you "
            "are asked, make typos, and sometimes get a detail wrong before correcting yourself.",
            incoherent=True,
        ),
    )
}


def resolve_personas(spec: str) -> list[Persona]:
    """``all`` or a comma list of names, as given to ``--personas``."""
    names = list(PERSONAS) if spec.strip() == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in PERSONAS]
    if unknown or not names:
        raise UserError(
            f"unknown persona {', '.join(map(repr, unknown)) or '(none given)'} in --personas; "
            f"choose from {', '.join(PERSONAS)} or 'all'."
        )
    return [PERSONAS[n] for n in names]
