"""The benefits domain: a motor club's member desk, where members ask for their plan's benefit on a callout
charged in full, a late fee waived or their membership renewed; money moves through the payment provider,
and large or disputed refunds wait for a person's approval."""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import ALL_COLUMNS, Domain, PersonalData

from . import conversation, data, injection
from .facts import FACTS
from .kit import KIT
from .model import BenefitTask
from .rules import GATES, RULES
from .tools import TOOLS

HERE = Path(__file__).parent

DOMAIN = Domain(
    name="benefits",
    description="A motor club's member desk: plan benefits applied to callout charges, late-fee waivers, renewals; "
    "refunds through the payment provider, large or disputed ones approved by a person.",
    schema_sql=(HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=4417,
    tools=TOOLS,
    policy=(HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(HERE / "tasks", BenefitTask),
    task_model=BenefitTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    ignored_columns={"cases": frozenset({"summary"})},  # the internal note is written for staff, never compared
    gates=GATES,
    proposal_terms=conversation.proposal_terms,
    facts=FACTS,
    personal_data=(
        PersonalData("members", "id", (ALL_COLUMNS, "first_name || ' ' || last_name", "member_number", "email")),
        PersonalData("memberships", "member_id", (ALL_COLUMNS,)),
        PersonalData("payment_methods", "member_id", (ALL_COLUMNS,)),
        PersonalData("charges", "member_id", (ALL_COLUMNS, "id")),
        PersonalData("adjustments", "(SELECT member_id FROM charges WHERE charges.id = adjustments.charge_id)", (ALL_COLUMNS,)),
        PersonalData("cases", "member_id", (ALL_COLUMNS,)),
    ),
    names_entity=conversation.names_entity,
    injection=injection.INJECTION,
)
