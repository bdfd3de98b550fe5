"""The retail domain: an online shop's customers, orders, returns and exchanges."""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import ALL_COLUMNS, Domain, PersonalData
from passhat.domains.retail import conversation, data, injection
from passhat.domains.retail.facts import FACTS
from passhat.domains.retail.kit import KIT
from passhat.domains.retail.model import RetailTask
from passhat.domains.retail.rules import GATES, RULES
from passhat.domains.retail.tools import TOOLS

_HERE = Path(__file__).parent

DOMAIN = Domain(
    name="retail",
    description="An online shop: customers look up, cancel and change orders, and return or exchange delivered items.",
    schema_sql=(_HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=20240917,
    tools=TOOLS,
    policy=(_HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(_HERE / "tasks", RetailTask),
    task_model=RetailTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    ignored_columns={"handoffs": frozenset({"summary"})},  # free text written for a human, never compared
    gates=GATES,
    proposal_terms=conversation.proposal_terms,
    facts=FACTS,
    personal_data=(
        PersonalData("customers", "id", (ALL_COLUMNS, "first_name || ' ' || last_name", "email", "address1")),
        PersonalData("orders", "customer_id", (ALL_COLUMNS, "id", "address1")),
        PersonalData("payment_methods", "customer_id", (ALL_COLUMNS,)),
        PersonalData("order_items", "(SELECT customer_id FROM orders WHERE orders.id = order_items.order_id)", (ALL_COLUMNS,)),
        PersonalData("payments", "(SELECT customer_id FROM orders WHERE orders.id = payments.order_id)", (ALL_COLUMNS,)),
        PersonalData("shipments", "(SELECT customer_id FROM orders WHERE orders.id = shipments.order_id)", (ALL_COLUMNS,)),
    ),
    names_entity=conversation.names_entity,
    injection=injection.INJECTION,
)
