"""The machine-checkable clauses of the service desk's policy.

Each check runs before a write, against the backend as it is then, and returns why the call breaks the
rule, or None. A check never raises for an incident, change or known error that does not exist: it
returns None and lets the tool report it, so a rule only ever speaks about the policy.

That a standard change is implemented only after its approval was requested is a matter of sequence, not of
the backend's state (requesting approval and implementing touch different columns): tasks declare it as a
required ordering, which the graders check on the trial's calls.
"""

from __future__ import annotations

import sqlite3

from passhat.domains.model import Call, Rule
from passhat.domains.toolkit import identified, one

from .data import PRIORITIES
from .tools import (
    TOOLS,
    change_of,
    entitled,
    highest_allowed_priority,
    incident_of,
    known_error_of,
    rejecting_groups,
    staff_digits,
)

WRITES = tuple(fn.__name__ for fn in TOOLS if fn.__passhat_tool__.write)


def _employee_acted_on(db: sqlite3.Connection, call: Call) -> str | None:
    """Whose record a write acts on: the incident's caller, the change's requester, or the badge's holder."""
    args = call.args
    if "incident_id" in args:
        incident = incident_of(db, args["incident_id"])
        return incident["caller_id"] if incident else None
    if "change_id" in args:
        change = change_of(db, args["change_id"])
        return change["requester_id"] if change else None
    found = one(db, "SELECT id FROM employees WHERE staff_number = ?", staff_digits(str(args.get("staff_number", ""))))
    return found["id"] if found else None


def identify_first(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    employee, verified = _employee_acted_on(db, call), identified(history, ("find_employee",))
    if employee is None or verified[:1] == [employee]:
        return None
    if not verified:
        return f"{call.name} acts on a ticket of employee {employee}; only the caller's own tickets can be changed, once verified"
    return f"{call.name} acts on a ticket of employee {employee}; only the caller's own tickets can be changed, and this call is with {verified[0]}"


def workaround_fits(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    incident, known = incident_of(db, call.args.get("incident_id", "")), known_error_of(db, call.args.get("known_error_id", ""))
    if incident is None or known is None:
        return None
    if known["retired"]:
        return f"known error {known['id']} ({known['symptom']}) is retired: its workaround no longer applies to any incident"
    if known["ci_kind"] != incident["ci_kind"]:
        return f"known error {known['id']} is filed for {known['ci_kind']} items, but incident {incident['id']} is about a {incident['ci_kind']}"
    return None


def no_rejecting_group(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    incident_id, group = str(call.args.get("incident_id", "")).strip(), call.args.get("group")
    if group not in rejecting_groups(db, incident_id):
        return None
    return f"the {group} group already rejected incident {incident_id}, and an incident is never sent back to a group that rejected it"


def priority_rules(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    incident, wanted = incident_of(db, call.args.get("incident_id", "")), call.args.get("priority")
    if incident is None or wanted not in PRIORITIES:
        return None
    allowed = highest_allowed_priority(incident)
    if PRIORITIES.index(wanted) <= PRIORITIES.index(allowed):
        return None
    critical = "a business-critical system" if incident["critical"] else "a system that is not business-critical"
    users = incident["users_affected"]
    return (
        f"incident {incident['id']} is about {critical} with {users} {'person' if users == 1 else 'people'} affected, so the "
        f"priority rules allow {allowed} priority at most, not {wanted}"
    )


def major_incident(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    incident = incident_of(db, call.args.get("incident_id", ""))
    if incident is None or incident["priority"] != "critical":
        return None
    return f"incident {incident['id']} is a critical major incident, which only the major incident manager can resolve"


def entitled_service(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    change = change_of(db, call.args.get("change_id", ""))
    if change is None or entitled(db, change["requester_id"], change["service"]):
        return None
    return (
        f"employee {change['requester_id']} is not entitled to the {change['service']} service that change {change['id']} needs"
    )


def board_approval(db: sqlite3.Connection, call: Call, history: list[Call]) -> str | None:
    change = change_of(db, call.args.get("change_id", ""))
    if change is None or change["kind"] != "normal" or change["approval"] == "approved":
        return None
    return f"change {change['id']} is a normal change and the change board has not approved it ({change['approval']})"


RULES: tuple[Rule, ...] = (
    Rule(
        "identify-first",
        "Act only on the records of the caller verified (staff number and date of birth) in this call.",
        WRITES,
        identify_first,
    ),
    Rule(
        "workaround-fits",
        "Apply only a current known error's workaround, filed for the incident's kind of item.",
        ("apply_workaround",),
        workaround_fits,
    ),
    Rule("no-rejecting-group", "Never assign an incident to a group that rejected it.", ("assign_incident",), no_rejecting_group),
    Rule("priority-rules", "Raise a priority only as far as the priority rules allow.", ("escalate_incident",), priority_rules),
    Rule("major-incident", "The desk does not resolve a critical incident.", ("resolve_incident",), major_incident),
    Rule(
        "entitled-service",
        "A change needs the requester's entitlement to its service.",
        ("request_approval", "apply_change"),
        entitled_service,
    ),
    Rule(
        "board-approval",
        "A normal change is implemented only after the change board approved it.",
        ("apply_change",),
        board_approval,
    ),
)
