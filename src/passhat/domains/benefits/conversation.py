"""How the motor club is talked about: ids in text, how a write is proposed and what a yes to it agrees to,
the reads before a write, who a member's words identify, and the plausible wrong versions of a write.

Members read charge references off their receipts, name plans by name ("Plus") and cards by brand and
ending ("my Visa ending in 4821"), never by id. Everything here reads the backend, never writes it.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from passhat.dialogue.proposals import Term, named
from passhat.domains.model import Action, Call, Customer, NearMiss
from passhat.domains.toolkit import one, rows

from .data import CALLOUTS, PLAN_IDS, PLANS
from .model import ClubMember
from .rules import GATES, RULES
from .tools import TOOLS, benefit_refund, charge_of, covered, member_pays, method_of, method_words, renewal_period

# Members (M-3001), charges (CH-50101), payment methods (PM-30011) and membership periods (MS-4001), as written in text.
ID_PATTERN = r"(?<![\w-])(?:M-\d{4}|CH-\d{5}|PM-\d{5}|MS-\d{4})(?![\w-])"

_WORDS = {fn.__name__: fn.__passhat_tool__.confirm_words for fn in TOOLS}
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "adjust": _WORDS["apply_plan_benefit"],
    "waive": _WORDS["waive_late_fee"],
    "renew": _WORDS["renew_membership"],
    "info": (),
    "transfer": ("escalat", "staff", "case"),
}

_NUMBER = re.compile(r"(?<![\w-])NW[ -]?\d{3}[ -]?\d{4}(?![\w-])", re.I)


def authenticate(identity: Customer, text: str) -> Action | None:
    """The identity lookup the member's words allow: their membership number and their last name, both said."""
    assert isinstance(identity, ClubMember)
    number = _NUMBER.search(text)
    if number is None or not re.search(rf"(?<!\w){re.escape(identity.last_name)}(?!\w)", text, re.I):
        return None
    return Action(tool="find_member", args={"member_number": number.group(), "last_name": identity.last_name})


def _money(amount: float) -> str:
    return f"${amount:.2f}"


def _service(charge: dict[str, Any]) -> str:
    return f"{charge['service'].replace('_', ' ')} on {charge['service_date']}"


def _plan_name(plan: str) -> str:
    return PLANS.get(plan, (plan, 0.0))[0]


def _method(db: sqlite3.Connection, method_id: str) -> str:
    method = method_of(db, method_id)
    return method_words(method) if method else f"payment method {method_id}"


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """One sentence proposing a write, naming the charge or the plan, how much moves and to or from which card."""
    a, tool = action.args, action.tool
    charge = charge_of(db, a.get("charge_id", ""))
    if tool == "apply_plan_benefit" and charge:
        plan = str(a.get("plan"))
        return (
            f"apply the {_plan_name(plan)} plan's benefit, which covers {covered(db, plan, charge['service'])}% of the fee, "
            f"to charge {charge['id']} ({_service(charge)}) and refund {_money(benefit_refund(db, charge, plan))} to "
            f"{_method(db, a.get('payment_method_id', ''))}"
        )
    if tool == "waive_late_fee" and charge:
        owed = round(charge["amount"] - charge["refunded"], 2)
        return (
            f"waive the late fee of charge {charge['id']} ({charge['service_date']}) and refund "
            f"{_money(owed)} to {_method(db, a.get('payment_method_id', ''))}"
        )
    if tool == "renew_membership":
        plan = str(a.get("plan"))
        starts, ends = renewal_period(db, a.get("member_id", ""))
        return (
            f"renew your membership on the {_plan_name(plan)} plan for a year, from {starts} to {ends}, and charge the "
            f"yearly dues of {_money(PLANS.get(plan, ('', 0.0))[1])} to {_method(db, a.get('payment_method_id', ''))}"
        )
    if tool == "escalate_to_staff":
        return f"escalate your case to our staff with this note: {a.get('summary')}"
    return f"call {tool} with {a}"


def proposal_terms(db: sqlite3.Connection, action: Action) -> list[Term]:
    """What a yes to ``action`` agrees to: the charge, the plan, the card or credit, and the amount that moves
    (required); the fee and what was charged (optional, a proposal may state them) and what the member pays under
    the plan (optional, said as what the member pays: "you'd pay $37.50" beside a refund of $37.50 is that share)."""
    a, tool = action.args, action.tool
    charge = charge_of(db, a.get("charge_id", ""))
    method = _payment_term(db, a.get("payment_method_id", ""), "refunded to" if tool != "renew_membership" else "paid with")
    if tool == "apply_plan_benefit":
        plan = str(a.get("plan"))
        terms = [Term("id", a.get("charge_id", ""), "charge"), Term("phrase", _plan_name(plan), "plan"), method]
        if charge:
            terms += [
                Term("money", f"{benefit_refund(db, charge, plan):.2f}", "refund", direction="refund"),
                Term("money", f"{member_pays(db, charge, plan):.2f}", "member pays", required=False, direction="charge"),
                Term("money", f"{charge['fee']:.2f}", "fee", required=False),
                Term("money", f"{charge['amount']:.2f}", "charged", required=False),
            ]
        return terms
    if tool == "waive_late_fee":
        terms = [Term("id", a.get("charge_id", ""), "late fee"), method]
        if charge:
            terms.append(Term("money", f"{charge['amount'] - charge['refunded']:.2f}", "refund", direction="refund"))
        return terms
    if tool == "renew_membership":
        plan = str(a.get("plan"))
        return [
            Term("phrase", _plan_name(plan), "plan"),
            method,
            Term("money", f"{PLANS.get(plan, ('', 0.0))[1]:.2f}", "dues", direction="charge"),
        ]
    return []


def _payment_term(db: sqlite3.Connection, method_id: str, role: str) -> Term:
    """A card by its id, its ending, or its brand when the member has only one card of that brand; club credit by name."""
    method = method_of(db, method_id)
    if method is None:
        return Term("id", method_id, role)
    if method["kind"] == "club_credit":
        return Term("id", method["id"], role, alternatives=(Term("phrase", "club credit", role),))
    alternatives = [Term("card_ending", method["last_four"], role)]
    same_brand = one(
        db, "SELECT COUNT(*) AS n FROM payment_methods WHERE member_id = ? AND brand = ?", method["member_id"], method["brand"]
    )
    if same_brand and same_brand["n"] == 1:
        alternatives.append(Term("phrase", f"{method['brand']} card", role))
    return Term("id", method["id"], role, alternatives=tuple(alternatives))


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``: the charge and what the plan would give back,
    or the plans and their dues."""
    a = action.args
    if action.tool == "apply_plan_benefit":
        return [
            Action(tool="get_charge", args={"charge_id": a["charge_id"]}),
            Action(tool="quote_adjustment", args={"charge_id": a["charge_id"], "plan": a["plan"]}),
        ]
    if action.tool == "waive_late_fee":
        return [Action(tool="get_charge", args={"charge_id": a["charge_id"]})]
    if action.tool == "renew_membership":
        return [Action(tool="get_member", args={"member_id": a["member_id"]}), Action(tool="get_plans", args={})]
    return []


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    """Plausible wrong versions of a write that the backend and the policy accept: another of the member's charges,
    another plan to renew on, the money sent to (or taken from) another of the member's cards or credit. Only the
    comparison of backends can catch them, so the human gate's operator carries them out like the right call.
    (Another plan's benefit is no near miss: only the plan held on the callout's day is allowed.)"""
    a = action.args
    if action.tool == "renew_membership":
        other_plan = next(p for p in PLAN_IDS[1:] if p != a.get("plan"))
        misses = [NearMiss("another plan", Action(tool=action.tool, args={**a, "plan": other_plan}), "wrong_arguments")]
        member = a.get("member_id")
    else:
        charge = charge_of(db, a.get("charge_id", ""))
        if charge is None:
            return []
        misses, member = _other_charge(db, action, charge), charge["member_id"]
    misses += _other_method(db, action, member)
    return [miss for miss in misses if not _breaks_policy(db, miss.call)]


def _breaks_policy(db: sqlite3.Connection, action: Action) -> bool:
    call = Call(action.tool, dict(action.args))
    return any(rule.check(db, call, []) for rule in RULES if action.tool in rule.tools and rule.id != "identify-first")


def _other_charge(db: sqlite3.Connection, action: Action, charge: dict[str, Any]) -> list[NearMiss]:
    """The same refund of the member's first other charge of its kind (a callout, a late fee) that still has money to
    give back and goes through at once (no gate holds it: a ticket is no write yet)."""
    kinds = ("late_fee",) if action.tool == "waive_late_fee" else CALLOUTS
    for other in rows(db, "SELECT * FROM charges WHERE member_id = ? AND id != ? ORDER BY id", charge["member_id"], charge["id"]):
        moved = Action(tool=action.tool, args={**action.args, "charge_id": other["id"]})
        if other["service"] in kinds and _still_refundable(db, other, moved) and not _reviewed(db, moved):
            return [NearMiss("another charge", moved, "wrong_entity_write")]
    return []


def _reviewed(db: sqlite3.Connection, action: Action) -> bool:
    return any(gate.check(db, Call(action.tool, dict(action.args)), []) for gate in GATES if action.tool in gate.tools)


def _still_refundable(db: sqlite3.Connection, charge: dict[str, Any], action: Action) -> bool:
    if one(db, "SELECT charge_id FROM adjustments WHERE charge_id = ?", charge["id"]):
        return False
    if action.tool == "apply_plan_benefit":
        return benefit_refund(db, charge, str(action.args.get("plan"))) > 0
    return charge["amount"] - charge["refunded"] > 0


def _other_method(db: sqlite3.Connection, action: Action, member_id: str | None) -> list[NearMiss]:
    """The member's first other card or club credit."""
    a = action.args
    other = one(
        db,
        "SELECT id FROM payment_methods WHERE member_id = ? AND id != ? ORDER BY kind, id",
        member_id,
        a.get("payment_method_id"),
    )
    if other is None:
        return []
    moved = Action(tool=action.tool, args={**a, "payment_method_id": other["id"]})
    return [NearMiss("another payment method", moved, "wrong_arguments")]


def names_entity(db: sqlite3.Connection, value: str, said: str) -> bool:
    """Whether the member's words name ``value``: a card by its ending (or its brand, when they have one card of
    it), their club credit by name."""
    if method_of(db, value) is None:
        return False
    term = _payment_term(db, value, "")
    return any(named(said, alt) for alt in term.alternatives)
