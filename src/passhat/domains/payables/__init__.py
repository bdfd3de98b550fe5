"""The payables domain: an accounts-payable agent works the exception queue of invoices that did not pass
the three-way match, with an AP clerk — variance, tolerance, duplicates, a decision, the ledger posting,
the queue status, the audit trail and the notices, in chains of up to eighteen dependent steps."""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import ALL_COLUMNS, Domain, PersonalData

from . import conversation, data, injection
from .facts import FACTS
from .kit import KIT
from .model import QueueTask
from .rules import GATES, RULES, works_for
from .tools import TOOLS

_HERE = Path(__file__).parent

DOMAIN = Domain(
    name="payables",
    description="An accounts-payable exception queue: three-way match, tolerances, duplicates, decisions and postings.",
    schema_sql=(_HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=7316,
    tools=TOOLS,
    policy=(_HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(_HERE / "tasks", QueueTask),
    task_model=QueueTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    # written for a person, never compared
    ignored_columns={
        "audit_notes": frozenset({"note"}),
        "notifications": frozenset({"message"}),
        "handoffs": frozenset({"summary"}),
    },
    gates=GATES,
    proposal_terms=conversation.proposal_terms,
    facts=FACTS,
    personal_data=(
        PersonalData("clerks", "id", (ALL_COLUMNS, "first_name || ' ' || last_name", "email", "employee_number")),
        PersonalData("invoices", "company", (ALL_COLUMNS,)),
        PersonalData(
            "invoice_lines", "(SELECT company FROM invoices WHERE invoices.id = invoice_lines.invoice_id)", (ALL_COLUMNS,)
        ),
        PersonalData("purchase_orders", "company", (ALL_COLUMNS,)),
        PersonalData(
            "receipts", "(SELECT company FROM purchase_orders WHERE purchase_orders.id = receipts.po_id)", (ALL_COLUMNS,)
        ),
    ),
    owns=works_for,
    names_entity=conversation.names_entity,
    injection=injection.INJECTION,
)
