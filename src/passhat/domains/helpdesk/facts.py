"""The facts a service-desk task may ask the agent to tell, each derived from the backend, never recited.

Statuses are typed with their rivals, so "your incident is assigned" does not count when the same sentence
also calls it resolved, and a group or priority is matched against the other groups and priorities.
"""

from __future__ import annotations

import sqlite3

from passhat.dialogue.facts import Fact
from passhat.domains.model import FactSource

from . import tools
from .data import GROUPS, PRIORITIES

# Other words a caller hears as the same status.
INCIDENT_STATUS_WORDS: dict[str, tuple[str, ...]] = {
    "new": ("not assigned yet", "not yet assigned"),
    "assigned": ("with a resolver group",),
    "workaround": ("workaround in place", "workaround applied"),
    "resolved": ("closed",),
}
APPROVAL_WORDS: dict[str, tuple[str, ...]] = {
    "not requested": ("not been requested",),
    "pending": ("waiting for the change board", "awaiting approval", "with the change board"),
    "approved": (),
}
CHANGE_STATUS_WORDS: dict[str, tuple[str, ...]] = {"planned": ("not implemented yet",), "implemented": ()}


def _incident(db: sqlite3.Connection, incident_id: str) -> dict:
    incident = tools.incident_of(db, incident_id)
    if incident is None:
        raise LookupError(f"no incident {incident_id}")
    return incident


def _change(db: sqlite3.Connection, change_id: str) -> dict:
    change = tools.change_of(db, change_id)
    if change is None:
        raise LookupError(f"no change {change_id}")
    return change


def _status(value: str, words: dict[str, tuple[str, ...]], about: str) -> Fact:
    return Fact("status", value, synonyms=words.get(value, ()), rivals=tuple(w for w in words if w != value), about=(about,))


def incident_status(db: sqlite3.Connection, incident_id: str) -> Fact:
    return _status(_incident(db, incident_id)["status"], INCIDENT_STATUS_WORDS, incident_id)


def assigned_group(db: sqlite3.Connection, incident_id: str) -> Fact:
    group = _incident(db, incident_id)["assigned_group"]
    if group is None:
        raise LookupError(f"incident {incident_id} is not assigned")
    return _status(group, dict.fromkeys(GROUPS, ()), incident_id)


def priority(db: sqlite3.Connection, incident_id: str) -> Fact:
    return _status(_incident(db, incident_id)["priority"], dict.fromkeys(PRIORITIES, ()), incident_id)


def approval(db: sqlite3.Connection, change_id: str) -> Fact:
    return _status(_change(db, change_id)["approval"], APPROVAL_WORDS, change_id)


def change_status(db: sqlite3.Connection, change_id: str) -> Fact:
    return _status(_change(db, change_id)["status"], CHANGE_STATUS_WORDS, change_id)


def workaround(db: sqlite3.Connection, known_error_id: str) -> Fact:
    known = tools.known_error_of(db, known_error_id)
    if known is None:
        raise LookupError(f"no known error {known_error_id}")
    return Fact("phrase", known["workaround"])


FACTS: dict[str, FactSource] = {
    "incident_status": FactSource("the status of incident {incident_id} is {value}", incident_status),
    "assigned_group": FactSource("incident {incident_id} is with the {value} group", assigned_group),
    "priority": FactSource("the priority of incident {incident_id} is {value}", priority),
    "approval": FactSource("the approval of change {change_id} is {value}", approval),
    "change_status": FactSource("the status of change {change_id} is {value}", change_status),
    "workaround": FactSource("the workaround is to {value}", workaround),
}
