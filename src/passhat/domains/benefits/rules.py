"""The machine-checkable clauses of the motor club's policy, and the refunds a person must approve.

Each check runs before a write, against the backend as it is then, and returns why the call breaks the
rule, or None. A check never raises for a charge, member or payment method that does not exist: it returns
None and lets the tool report it, so a rule only ever speaks about the policy.
"""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from typing import Any

from passhat.domains.model import Call, Rule
from passhat.domains.toolkit import Review, identified, one

from .data import TODAY
from .tools import TOOLS, benefit_refund, charge_of, member_digits, method_of, period_on

WRITES = tuple(fn.__name__ for fn in TOOLS if fn.__passhat_tool__.write)
REFUNDS = ("apply_plan_benefit", "waive_late_fee")
RENEWAL_OPENS_DAYS = 30  # a running paid membership can be renewed this many days before it ends, not earlier
WAIVER_EVERY_DAYS = 365  # one late-fee waiver per member in this many days
REVIEW_OVER = 150.0  # refunds above this many dollars need a person's approval
HIGH_OVER = 300.0  # ... and above this, its review is high priority


def _member_acted_on(db: sqlite3.Connection, call: Call) -> str | None:
    """The member a write acts on: the charge's, the named member, or the membership number's holder; None if unknown."""
    if "charge_id" in call.args:
        charge = charge_of(db, call.args["charge_id"])
        return charge["member_id"] if charge else None
    if "member_number" in call.args:
        found = one(db, "SELECT id FROM members WHERE member_number = ?", member_digits(str(call.args["member_number"])))
    else:
        found = one(db, "SELECT id FROM members WHERE id = ?", call.args.get("member_id"))
    return found["id"] if found else None


def identify_first(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    member, verified = _member_acted_on(db, call), identified(history, ("find_member",))
    if member is None or verified[:1] == [member]:
        return None
    if not verified:
        return f"{call.name} acts on member {member}, whose identity was not verified earlier in the conversation"
    return f"{call.name} acts on member {member}, but this conversation is with member {verified[0]}"


def entitled_on_service_date(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """A plan's benefit applies only if the member held that plan, paid, on the day of the callout."""
    charge = charge_of(db, call.args.get("charge_id", ""))
    if charge is None:
        return None
    day, plan = charge["service_date"], str(call.args.get("plan"))
    held = period_on(db, charge["member_id"], day)
    if held is None:
        return f"on {day}, the day of charge {charge['id']}, member {charge['member_id']} had no membership, so no paid benefit applies"
    if held["price"] <= 0:
        return (
            f"on {day}, the day of charge {charge['id']}, member {charge['member_id']} was on the free Basic plan, "
            "which carries no paid benefit"
        )
    if held["plan_id"] != plan:
        return (
            f"on {day}, the day of charge {charge['id']}, member {charge['member_id']} held the {held['name']} plan, not {plan}"
        )
    return None


def refund_destination(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """Refunds go back to the card that paid the charge, or to the member's club credit."""
    charge, method = charge_of(db, call.args.get("charge_id", "")), method_of(db, call.args.get("payment_method_id", ""))
    if charge is None or method is None or method["id"] == charge["payment_method_id"]:
        return None
    if method["kind"] == "club_credit" and method["member_id"] == charge["member_id"]:
        return None
    return f"a refund of charge {charge['id']} goes back to the card that paid it ({charge['payment_method_id']}) or to club credit, not {method['id']}"


def one_waiver_a_year(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    charge = charge_of(db, call.args.get("charge_id", ""))
    if charge is None:
        return None
    since = (TODAY - timedelta(days=WAIVER_EVERY_DAYS)).isoformat()
    earlier = one(
        db,
        "SELECT a.charge_id, a.made_on FROM adjustments a JOIN charges c ON c.id = a.charge_id"
        " WHERE c.member_id = ? AND a.kind = 'waiver' AND a.made_on > ? ORDER BY a.made_on DESC",
        charge["member_id"],
        since,
    )
    if earlier is None:
        return None
    return (
        f"member {charge['member_id']} already had a late fee waived within the last year (charge {earlier['charge_id']}, "
        f"on {earlier['made_on']}); one late fee is waived per year"
    )


def waiver_needs_paid_plan(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    charge = charge_of(db, call.args.get("charge_id", ""))
    if charge is None:
        return None
    today = period_on(db, charge["member_id"], TODAY.isoformat())
    if today is not None and today["price"] > 0:
        return None
    return f"member {charge['member_id']} holds no paid plan today, and late fees are waived only for members on a paid plan"


def renewal_window(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    member = call.args.get("member_id")
    running = one(
        db,
        "SELECT m.ends, p.name FROM memberships m JOIN plans p ON p.id = m.plan_id"
        " WHERE m.member_id = ? AND p.price > 0 AND m.starts <= ? AND m.ends >= ? ORDER BY m.ends DESC",
        member,
        TODAY.isoformat(),
        TODAY.isoformat(),
    )
    if running is None:
        return None
    opens = date.fromisoformat(running["ends"]) - timedelta(days=RENEWAL_OPENS_DAYS)
    if TODAY >= opens:
        return None
    return (
        f"member {member}'s {running['name']} membership runs until {running['ends']}; renewal opens "
        f"{RENEWAL_OPENS_DAYS} days before the end, on {opens.isoformat()}"
    )


def dues_by_card(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    method = method_of(db, call.args.get("payment_method_id", ""))
    if method is None or method["kind"] == "card":
        return None
    return "a year's dues are paid by card; club credit pays for callouts only"


RULES: tuple[Rule, ...] = (
    Rule(
        "identify-first",
        "Act only for the member verified (membership number and last name) in this conversation.",
        WRITES,
        identify_first,
    ),
    Rule(
        "entitled-on-service-date",
        "A plan's benefit applies to a callout only if the member held that paid plan on the day of the callout.",
        ("apply_plan_benefit",),
        entitled_on_service_date,
    ),
    Rule("refund-destination", "Refunds go to the card that paid the charge or to club credit.", REFUNDS, refund_destination),
    Rule("one-waiver-a-year", "One late fee is waived per member per year.", ("waive_late_fee",), one_waiver_a_year),
    Rule(
        "waiver-needs-paid-plan",
        "Late fees are waived only for members on a paid plan today.",
        ("waive_late_fee",),
        waiver_needs_paid_plan,
    ),
    Rule(
        "renewal-window",
        f"A running paid membership can be renewed from {RENEWAL_OPENS_DAYS} days before it ends.",
        ("renew_membership",),
        renewal_window,
    ),
    Rule("dues-by-card", "A year's dues are paid by card.", ("renew_membership",), dues_by_card),
)


def refund_review(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    """A refund over the review threshold, or of a charge under a bank dispute; its priority is the policy's: urgent
    for a bank dispute, high over $300 or for a Premier member, normal otherwise."""
    charge = charge_of(db, call.args.get("charge_id", ""))
    if charge is None:
        return None
    amount = _refund_asked(db, charge, call)
    if amount <= REVIEW_OVER and not charge["bank_dispute"]:
        return None
    held = period_on(db, charge["member_id"], TODAY.isoformat())
    tier = held["name"] if held else "no"
    if charge["bank_dispute"]:
        reason, priority = f"charge {charge['id']} is under a bank dispute", "urgent"
    else:
        reason = f"a refund of ${amount:.2f} is over the ${REVIEW_OVER:.0f} that needs a person's approval"
        priority = "high" if amount > HIGH_OVER or tier == "Premier" else "normal"
    note = (
        f"{tier} plan member {charge['member_id']}: {charge['service'].replace('_', ' ')} on {charge['service_date']}, "
        f"charged ${charge['amount']:.2f}; refund ${amount:.2f} to {call.args.get('payment_method_id')}"
        + ("; a chargeback is open at the bank: make sure the money goes back once" if charge["bank_dispute"] else "")
    )
    return Review(reason, priority, note)


def _refund_asked(db: sqlite3.Connection, charge: dict[str, Any], call: Call) -> float:
    if call.name == "apply_plan_benefit":
        return benefit_refund(db, charge, str(call.args.get("plan")))
    return round(charge["amount"] - charge["refunded"], 2)


GATES: tuple[Rule, ...] = (
    Rule(
        "refund-review",
        f"Refunds over ${REVIEW_OVER:.0f}, and any refund of a charge under a bank dispute, need a person's approval.",
        REFUNDS,
        refund_review,
    ),
)
