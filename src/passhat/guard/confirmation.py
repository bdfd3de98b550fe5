"""Bound confirmation: a write goes through only on the customer's yes to a proposal of that very write.

The same test the trajectory grader applies after the fact (``dialogue.proposals.binding``, a re-ask by
``dialogue.reasks``), applied
before the write: the customer's yes still stands, and the agent's message it answers proposes this
action, names every term the write commits the customer to, and states nothing the write does not do.
The guard sees one call at a time, so a proposal bundling several writes must still not state anything
beyond *this* write's terms; the grader, which sees the whole batch, is the more lenient of the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.dialogue import Message, answered_proposal
from passhat.dialogue.proposals import Commitment, Term
from passhat.dialogue.reasks import reasked_binding, standing_proposal
from passhat.dialogue.values import ValueKind, canonical
from passhat.domains.model import Action, Domain
from passhat.env.tools import ToolSpec, error


def commitment_for(spec: ToolSpec, args: dict[str, Any], db: Any = None, domain: Domain | None = None) -> Commitment:
    """What a yes to this call agrees to, on the backend as it is before the call.

    The domain says it when it can (``Domain.proposal_terms``); otherwise every confirm key's value is
    a term of the argument's declared kind (a date or a time of day in any usual form, an amount), an
    undeclared number an amount, anything else an id.
    """
    if domain is not None and domain.proposal_terms is not None:
        terms = domain.proposal_terms(db, Action(tool=spec.name, args=args))
    else:
        terms = [t for k in spec.meta.confirm_keys for t in _terms_of(k, args.get(k), spec.meta.kinds.get(k))]
    return Commitment(spec.name, spec.meta.confirm_words, tuple(terms))


def _terms_of(key: str, value: Any, kind: ValueKind | None) -> list[Term]:
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _terms_of(key, v, kind)]
    if kind is None and isinstance(value, (int, float)) and not isinstance(value, bool):
        kind = "money"
    if kind in ("money", "date", "time"):
        return [Term(kind, str(canonical(kind, value)).lstrip("-"), key)]
    return [Term("id", str(value), key)]


def unconfirmed(
    commitment: Commitment, messages: Sequence[Message], id_pattern: str | None = None, made: Sequence[Commitment] = ()
) -> dict[str, Any] | None:
    """The error result telling the agent to ask first, or None when the write is confirmed; ``made``: the
    writes this conversation already made, which a proposal may report before it proposes this one."""
    answered = answered_proposal(messages)
    why = "the customer has not said yes to a proposal of it"
    if answered is not None:
        standing = standing_proposal(messages, answered[0], id_pattern)
        bound = reasked_binding(answered[1], standing, commitment, [commitment], id_pattern, context=made)
        if bound.ok:
            return None
        why = f"the proposal the customer said yes to does not bind it: {bound.explain()}"
    terms = ", ".join(str(t) for t in commitment.terms if t.required) or "its details"
    return error(
        "confirmation_required",
        f"{commitment.tool} was not carried out: {why}. Describe this exact action to the customer ({terms}), "
        "ask them to confirm, and call it again only after their explicit yes.",
    )
