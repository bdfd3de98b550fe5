"""The payables task file model: an AP clerk who identifies by employee number and work email, and goals
about invoices in the exception queue (a decision, a posting, a status, a note, a notification, a question)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from passhat.domains.model import Customer, Goal, Task

HoldReason = Literal["price variance", "quantity short", "duplicate", "missing receipt"]
QueueStatus = Literal["ready for payment", "vendor query", "with controller"]
Recipient = Literal["vendor", "clerk"]


class Clerk(Customer):
    """Who the clerk is: ``customer_id`` is the clerk record (CL-101); they identify with badge number and email."""

    first_name: str
    employee_number: str  # E-40173, as printed on the badge
    email: str  # the clerk's work email


class QueueGoal(Goal):
    """A goal about one invoice of the queue, as the clerk names it: its number, and what the clerk wants
    recorded (a hold reason, an adjusted amount, a status, who is told). The clerk says each only if the
    request does or when asked."""

    invoice: str | None = None  # INV-71001
    reason: HoldReason | None = None
    amount: str | None = None  # an adjusted amount, e.g. "1220.00"
    status: QueueStatus | None = None
    recipients: list[Recipient] = Field(default_factory=list)


class QueueTask(Task):
    customer: Clerk
    goals: list[QueueGoal] = Field(min_length=1)
