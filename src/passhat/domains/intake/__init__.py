"""The intake domain: a family clinic's administrative intake desk. Callers book, move and cancel appointments,
ask for copies of records and are handed to staff; who may act for a patient is what the file records."""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import ALL_COLUMNS, Domain, PersonalData

from . import conversation, data, injection
from .facts import FACTS
from .kit import KIT
from .model import IntakeTask
from .rules import GATES, RULES, acts_for
from .tools import TOOLS

_HERE = Path(__file__).parent

DOMAIN = Domain(
    name="intake",
    description="A clinic's intake desk: appointments, copies of records and hand-offs to staff, for the patient "
    "or whoever the file says may act for them; never anything clinical.",
    schema_sql=(_HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=61709,
    tools=TOOLS,
    policy=(_HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(_HERE / "tasks", IntakeTask),
    task_model=IntakeTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    ignored_columns={"handoffs": frozenset({"summary"})},  # written for a person, never compared
    gates=GATES,
    proposal_terms=conversation.proposal_terms,
    facts=FACTS,
    personal_data=(
        PersonalData("people", "id", (ALL_COLUMNS, "first_name || ' ' || last_name", "phone", "birth_date")),
        PersonalData("appointments", "patient_id", (ALL_COLUMNS,)),
        PersonalData("service_records", "patient_id", (ALL_COLUMNS,)),
    ),
    owns=acts_for,
    names_entity=conversation.names_entity,
    injection=injection.INJECTION,
)
