"""The service desk's task file model: an employee who identifies by staff number and date of birth, and
goals about one incident or one change request, with the details the caller gives about it."""

from __future__ import annotations

from pydantic import Field, field_validator

from passhat.domains.model import Customer, Goal, Task

from .data import Category, Group, Priority


class Caller(Customer):
    """Who calls: ``customer_id`` is the directory record (U-2001); they identify with badge and birthday."""

    first_name: str
    staff_number: str  # the six digits on the staff badge, without spaces
    birth_date: str  # YYYY-MM-DD

    @field_validator("staff_number")
    @classmethod
    def _six_digits(cls, value: str) -> str:
        if not (value.isdigit() and len(value) == 6):
            raise ValueError("a staff number is 6 digits, written without spaces")
        return value


class DeskGoal(Goal):
    """A goal about one incident or change, as the caller names it: its number, the symptom they see, and what
    they ask for (a group, a priority, a category). The caller says each only if the request does or when asked."""

    incident: str | None = None
    change: str | None = None
    symptom: str | None = None
    group: Group | None = None
    priority: Priority | None = None
    category: Category | None = None


class DeskTask(Task):
    customer: Caller
    goals: list[DeskGoal] = Field(min_length=1)
