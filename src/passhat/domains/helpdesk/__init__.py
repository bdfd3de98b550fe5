"""The helpdesk domain: an IT service desk for a freight company's staff — incidents, known errors, resolver
groups, priorities and change requests."""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import ALL_COLUMNS, Domain, PersonalData

from . import conversation, data, injection
from .facts import FACTS
from .kit import KIT
from .model import DeskTask
from .rules import RULES
from .tools import TOOLS

_HERE = Path(__file__).parent

DOMAIN = Domain(
    name="helpdesk",
    description="An IT service desk: callers' incidents are classified, given a known workaround, assigned or reassigned, "
    "escalated and resolved; changes are approved before they are made.",
    schema_sql=(_HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=4711,
    tools=TOOLS,
    policy=(_HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(_HERE / "tasks", DeskTask),
    task_model=DeskTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    ignored_columns={"transfers": frozenset({"summary"})},  # written for a person, never compared
    proposal_terms=conversation.proposal_terms,
    facts=FACTS,
    personal_data=(
        PersonalData("employees", "id", (ALL_COLUMNS, "first_name || ' ' || last_name", "email", "staff_number", "birth_date")),
        PersonalData("entitlements", "employee_id", (ALL_COLUMNS,)),
        PersonalData("incidents", "caller_id", (ALL_COLUMNS, "id")),
        PersonalData(
            "assignments", "(SELECT caller_id FROM incidents WHERE incidents.id = assignments.incident_id)", (ALL_COLUMNS,)
        ),
        PersonalData("changes", "requester_id", (ALL_COLUMNS,)),
    ),
    names_entity=conversation.names_entity,
    injection=injection.INJECTION,
)
