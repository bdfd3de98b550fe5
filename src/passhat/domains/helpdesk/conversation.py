"""How the service desk is talked about: ids in text, how a write is proposed and what a yes to it agrees to,
the reads before a write, who a caller's words identify, and the plausible wrong versions of a write.

Callers know their incidents and changes by number (from the portal's e-mails), known errors by the symptom
they see, and the group that should have an incident by the device or system it is about. Everything here
reads the backend, never writes it.
"""

from __future__ import annotations

import re
import sqlite3

from passhat.dialogue.proposals import Term
from passhat.dialogue.values import names_phrase
from passhat.domains.model import Action, Customer, NearMiss
from passhat.domains.toolkit import rows

from .data import CATEGORIES, GROUPS, PRIORITIES
from .tools import TOOLS, change_of, incident_of, known_error_of, rejecting_groups, staff_digits

# Employees (U-2001), incidents (INC-1011), changes (CHG-5151), configuration items (CI-403), known errors (KE-11).
ID_PATTERN = r"(?<![\w-])(?:U-\d{4}|INC-\d{4}|CHG-\d{4}|CI-\d{3,4}|KE-\d{2})(?![\w-])"

_WORDS = {fn.__name__: fn.__passhat_tool__.confirm_words for fn in TOOLS}
PROPOSAL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "classify": _WORDS["classify_incident"],
    "workaround": _WORDS["apply_workaround"],
    "assign": _WORDS["assign_incident"],
    "escalate": _WORDS["escalate_incident"],
    "resolve": _WORDS["resolve_incident"],
    "approval": _WORDS["request_approval"],
    "change": _WORDS["request_approval"] + _WORDS["apply_change"],  # a change is approved, then implemented
    "fix": _WORDS["apply_workaround"] + _WORDS["assign_incident"],
    "info": (),
    "transfer": ("transfer", "specialist", "security team"),
}

_BADGE = re.compile(r"(?<![\d-])\d{3}[ -]?\d{3}(?![\d-])")
_ISO_DATE = re.compile(r"(?<![\d-])\d{4}-\d{2}-\d{2}(?![\d-])")


def authenticate(identity: Customer, text: str) -> Action | None:
    """The identity lookup the caller's words allow: a staff number and a date of birth, both as written."""
    badge, born = _BADGE.search(text), _ISO_DATE.search(text)
    if badge is None or born is None:
        return None
    return Action(tool="find_employee", args={"staff_number": staff_digits(badge.group()), "birth_date": born.group()})


def describe_action(db: sqlite3.Connection, action: Action) -> str:
    """One sentence proposing a write, naming the incident or change and every detail it sets."""
    a, tool = action.args, action.tool
    iid, cid = a.get("incident_id", ""), a.get("change_id", "")
    if tool == "classify_incident":
        return f"classify incident {iid} as a {a.get('category')} fault"
    if tool == "apply_workaround":
        known = known_error_of(db, a.get("known_error_id", ""))
        symptom = f" ({known['symptom']})" if known else ""
        return f"apply the workaround of known error {a.get('known_error_id')}{symptom} to incident {iid}"
    if tool == "assign_incident":
        verb = "reassign" if rejecting_groups(db, iid) else "assign"
        return f"{verb} incident {iid} to the {a.get('group')} group"
    if tool == "escalate_incident":
        return f"raise the priority of incident {iid} to {a.get('priority')}"
    if tool == "resolve_incident":
        return f"resolve and close incident {iid}"
    change = change_of(db, cid)
    what = f" ({change['description']})" if change else ""
    if tool == "request_approval":
        return f"request approval for change {cid}{what}"
    if tool == "apply_change":
        return f"implement change {cid}{what}"
    if tool == "transfer_to_specialist":
        return f"transfer you to a security specialist with this summary: {a.get('summary')}"
    return f"call {tool} with {a}"


def proposal_terms(db: sqlite3.Connection, action: Action) -> list[Term]:
    """What a yes to ``action`` agrees to: the incident or change, and the category, known error, group or
    priority it sets."""
    a, tool = action.args, action.tool
    if "change_id" in a:
        return [Term("id", a["change_id"], "change")]
    if "incident_id" not in a:
        return []
    terms = [Term("id", a["incident_id"], "incident")]
    if tool == "apply_workaround":
        known = known_error_of(db, a.get("known_error_id", ""))
        spoken = (Term("phrase", known["symptom"], "known error"),) if known else ()
        terms.append(Term("id", a.get("known_error_id", ""), "known error", alternatives=spoken))
    for arg, values in (("category", CATEGORIES), ("group", GROUPS), ("priority", PRIORITIES)):
        if arg in a:  # another value of the closed set said beside it conflicts: "… as network. Shall I make it hardware?"
            terms.append(Term("phrase", str(a[arg]), arg, unlike=tuple(v for v in values if v != a[arg])))
    return terms


def lookups(db: sqlite3.Connection, action: Action) -> list[Action]:
    """The reads a careful agent makes before proposing ``action``: the incident (with its item and known errors,
    or the item's owner group), or the change."""
    a = action.args
    if "change_id" in a:
        return [Action(tool="get_change", args={"change_id": a["change_id"]})]
    if "incident_id" not in a:
        return []
    reads = [Action(tool="get_incident", args={"incident_id": a["incident_id"]})]
    incident = incident_of(db, a["incident_id"])
    if incident is not None and action.tool == "apply_workaround":
        reads.append(Action(tool="search_known_errors", args={"ci_id": incident["ci_id"]}))
    if incident is not None and action.tool == "assign_incident":
        reads.append(Action(tool="get_config_item", args={"ci_id": incident["ci_id"]}))
    return reads


def near_misses(db: sqlite3.Connection, action: Action) -> list[NearMiss]:
    """Plausible wrong versions of a write that the backend accepts: another of the caller's open incidents or
    changes, a sibling known error, another group, category or priority."""
    a, tool = action.args, action.tool
    if "change_id" in a:
        return [
            NearMiss("another change", Action(tool=tool, args={"change_id": c}), "wrong_entity_write")
            for c in _other_changes(db, a["change_id"])[:1]
        ]
    incident = incident_of(db, a.get("incident_id", ""))
    if incident is None:
        return []
    out = [
        NearMiss("another incident", Action(tool=tool, args={**a, "incident_id": other}), "wrong_entity_write")
        for other in _other_incidents(db, incident)[:1]
    ]
    return out + [
        NearMiss(label, Action(tool=tool, args={**a, **changed}), "wrong_arguments")
        for label, changed in _sibling(db, incident, action)
    ]


def _sibling(db: sqlite3.Connection, incident: dict, action: Action) -> list[tuple[str, dict]]:
    """The same write on the same incident with one detail wrong, where the backend takes it."""
    a, tool = action.args, action.tool
    if tool == "classify_incident":
        return [("another category", {"category": next(c for c in CATEGORIES if c != a["category"])})]
    if tool == "assign_incident":
        refused = {a["group"], *rejecting_groups(db, incident["id"])}
        return [("another group", {"group": next(g for g in GROUPS if g not in refused)})]
    if tool == "escalate_incident":
        higher = [p for p in PRIORITIES[PRIORITIES.index(incident["priority"]) + 1 :] if p != a["priority"]]
        return [("another priority", {"priority": p}) for p in higher[:1]]
    if tool == "apply_workaround":
        siblings = rows(
            db,
            "SELECT id FROM known_errors WHERE ci_kind = ? AND id != ? AND retired = 0 ORDER BY id",
            incident["ci_kind"],
            a.get("known_error_id"),
        )
        return [("another known error", {"known_error_id": k["id"]}) for k in siblings[:1]]
    return []


def _other_incidents(db: sqlite3.Connection, incident: dict) -> list[str]:
    found = rows(
        db,
        "SELECT id FROM incidents WHERE caller_id = ? AND id != ? AND status != 'resolved' ORDER BY id",
        incident["caller_id"],
        incident["id"],
    )
    return [r["id"] for r in found]


def _other_changes(db: sqlite3.Connection, change_id: str) -> list[str]:
    change = change_of(db, change_id)
    if change is None:
        return []
    found = rows(
        db,
        "SELECT id FROM changes WHERE requester_id = ? AND id != ? AND status = 'planned' ORDER BY id",
        change["requester_id"],
        change["id"],
    )
    return [r["id"] for r in found]


def names_entity(db: sqlite3.Connection, value: str, said: str) -> bool:
    """Whether the caller's words name ``value``: a known error by its symptom, a resolver group by an incident
    of theirs that the group owns (the caller names the device or system; the desk knows who supports it)."""
    known = known_error_of(db, value)
    if known is not None:
        return bool(names_phrase(said, known["symptom"]))
    if value in GROUPS:
        named = [incident_of(db, i) for i in re.findall(ID_PATTERN, said) if i.startswith("INC-")]
        return any(incident is not None and incident["owner_group"] == value for incident in named)
    return False
