"""The motor club's task file model: a member who identifies by membership number and last name, and goals
about one charge, a plan or a renewal."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from passhat.domains.model import Customer, Goal, Task


class ClubMember(Customer):
    """Who the member is: ``customer_id`` is the record number (M-3001); they identify with the number on their
    membership card and their last name."""

    first_name: str
    last_name: str
    member_number: str  # NW and seven digits, as printed on the card

    @field_validator("member_number")
    @classmethod
    def _card_number(cls, value: str) -> str:
        if not re.fullmatch(r"NW\d{7}", value):
            raise ValueError("a membership number is NW and seven digits, e.g. NW5102231")
        return value


class BenefitGoal(Goal):
    """A goal as the member puts it: the charge on their receipt, the plan they name (which they may believe
    wrongly), and how they name the card or credit money goes to or comes from. Each is said only if the
    request does, or when asked."""

    charge: str | None = None  # CH-50101
    plan: str | None = None  # Plus
    payment: str | None = None  # "my Visa ending in 4821", "club credit"


class BenefitTask(Task):
    customer: ClubMember
    goals: list[BenefitGoal] = Field(min_length=1)
