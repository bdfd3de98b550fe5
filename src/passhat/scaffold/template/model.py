"""What a {{name}} task file may say: who the customer is, and the details of each goal.

passhat's task model is generic (id, summary, instruction, goals with their outcome, ground-truth
actions, facts to tell). A domain adds its own fields by subclassing ``Customer`` (how its customers
identify themselves) and ``Goal`` (the details a customer gives about what they want), and narrows
``Task`` to them. Task files are validated against these models with unknown fields refused, so a typo
in a task file is an error naming the file and the field.

To make this your domain: put your customers' identifying details in ``Member`` (rename it), and in
``BookingGoal`` the details a customer states about a request (which record, what to change it to).
Everything the customer can say must be here: ``passhat check`` refuses a task whose ground truth uses
a value the customer never says.
"""

from __future__ import annotations

from pydantic import Field

from passhat.domains.model import Customer, Goal, Task


class Member(Customer):
    """A member of the studio; ``customer_id`` (from ``Customer``) is their member id."""

    first_name: str
    last_name: str
    email: str  # what they identify themselves with


class BookingGoal(Goal):
    """A request about one booking: its number (on the member's confirmation email) and the class, as they name it."""

    booking_id: str | None = None
    class_title: str | None = None


class StudioTask(Task):
    customer: Member
    goals: list[BookingGoal] = Field(min_length=1)
