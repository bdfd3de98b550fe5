"""A public library's member desk: members renew loans, place and cancel holds, and ask about due dates,
late fees and their place in a queue; a dispute goes to a librarian.

Written only against passhat's public domain contract, as a team would write its own domain.
"""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import Domain, PersonalData

from . import conversation, data
from .facts import FACTS
from .kit import KIT
from .model import DeskTask
from .rules import RULES
from .tools import TOOLS

HERE = Path(__file__).parent

DOMAIN = Domain(
    name="library",
    description="A public library's member desk: renewals, holds, due dates and late fees.",
    schema_sql=(HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=1893,
    tools=TOOLS,
    policy=(HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(HERE / "tasks", DeskTask),
    task_model=DeskTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    ignored_columns={"referrals": frozenset({"summary"})},  # written for a person, never compared
    proposal_terms=conversation.proposal_terms,
    facts=FACTS,
    personal_data=(
        PersonalData("members", "id", ("first_name || ' ' || last_name", "email", "card_number", "birth_date")),
        PersonalData("loans", "member_id", ("id",)),
    ),
    names_entity=conversation.names_entity,
)
