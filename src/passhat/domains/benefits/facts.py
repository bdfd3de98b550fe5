"""The facts a motor club task may ask the agent to tell, each derived from the backend, never recited.

Each returns a typed ``Fact`` so the graders match it by meaning: an amount with its direction (a refund
is no charge), a plan against its rival plans, a date in any usual wording.
"""

from __future__ import annotations

import sqlite3

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource
from passhat.domains.toolkit import one, rows

from . import tools


def _charge(db: sqlite3.Connection, charge_id: str) -> dict:
    charge = tools.charge_of(db, charge_id)
    if charge is None:
        raise LookupError(f"no charge {charge_id}")
    return charge


def refunded(db: sqlite3.Connection, charge_id: str) -> Fact:
    """What the charge's adjustments gave back, in all."""
    charge = _charge(db, charge_id)
    return Fact("money", f"{charge['refunded']:.2f}", direction="refund", about=(charge["id"],))


def refund_due(db: sqlite3.Connection, charge_id: str, plan: str) -> Fact:
    """What applying the plan's benefit to the charge would give back now."""
    charge = _charge(db, charge_id)
    return Fact("money", f"{max(tools.benefit_refund(db, charge, plan), 0.0):.2f}", direction="refund", about=(charge["id"],))


def member_pays(db: sqlite3.Connection, charge_id: str, plan: str) -> Fact:
    """What the callout costs the member under the plan."""
    charge = _charge(db, charge_id)
    return Fact("money", f"{tools.member_pays(db, charge, plan):.2f}", about=(charge["id"],))


def plan_on(db: sqlite3.Connection, member_id: str, day: str) -> Fact:
    """The plan the member held on a day ("none" when they held none). Other plans are no rivals: a sentence may
    name one for another reason ("you were on Classic; Premier costs $219.00 a year")."""
    if one(db, "SELECT id FROM members WHERE id = ?", member_id) is None:
        raise LookupError(f"no member {member_id}")
    held = tools.period_on(db, member_id, day)
    return Fact("status", held["name"] if held else "none")


def paid_through(db: sqlite3.Connection, member_id: str) -> Fact:
    """The last day of the member's latest paid membership."""
    paid = rows(
        db,
        "SELECT m.ends FROM memberships m JOIN plans p ON p.id = m.plan_id WHERE m.member_id = ? AND p.price > 0 ORDER BY m.ends DESC",
        member_id,
    )
    if not paid:
        raise LookupError(f"member {member_id} never held a paid plan")
    return Fact("date", paid[0]["ends"])


def club_credit(db: sqlite3.Connection, member_id: str) -> Fact:
    credit = one(db, "SELECT balance FROM payment_methods WHERE member_id = ? AND kind = 'club_credit'", member_id)
    if credit is None:
        raise LookupError(f"member {member_id} has no club credit")
    return Fact("money", f"{credit['balance']:.2f}")


def yearly_dues(db: sqlite3.Connection, plan: str) -> Fact:
    found = one(db, "SELECT price FROM plans WHERE id = ?", plan)
    if found is None:
        raise LookupError(f"no plan {plan}")
    return Fact("money", f"{found['price']:.2f}")


FACTS: dict[str, FactSource] = {
    "refunded": FactSource("charge {charge_id} was adjusted with {value}", refunded),
    "refund_due": FactSource("applying the {plan} benefit to charge {charge_id} would give you {value}", refund_due),
    "member_pays": FactSource("under the {plan} plan, charge {charge_id} costs you {value}", member_pays),
    "plan_on": FactSource("on {day} your plan was {value}", plan_on),
    "paid_through": FactSource("your membership is paid through {value}", paid_through),
    "club_credit": FactSource("your club credit balance is {value}", club_credit),
    "yearly_dues": FactSource("the {plan} plan's yearly dues are {value}", yearly_dues),
}
