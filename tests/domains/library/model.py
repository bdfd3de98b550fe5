"""The library's task file model: a member who identifies by card number and date of birth, and goals
about one title (a loan to renew, a hold to place or cancel, a question)."""

from __future__ import annotations

from pydantic import Field, field_validator

from passhat.domains.model import Customer, Goal, Task


class Patron(Customer):
    """Who the member is: ``customer_id`` is the record number (M-1001); they identify with the card and birthday."""

    first_name: str
    card_number: str  # the 12 digits on the card, without spaces
    birth_date: str  # YYYY-MM-DD

    @field_validator("card_number")
    @classmethod
    def _twelve_digits(cls, value: str) -> str:
        if not (value.isdigit() and len(value) == 12):
            raise ValueError("a card number is 12 digits, written without spaces")
        return value


class DeskGoal(Goal):
    """A goal about one title, as the member names it: its name, the format when it comes in several, and
    the branch a hold is to be picked up at. The member says each only if the request does or when asked."""

    title: str | None = None
    format: str | None = None
    branch: str | None = None


class DeskTask(Task):
    customer: Patron
    goals: list[DeskGoal] = Field(min_length=1)
