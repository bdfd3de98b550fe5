"""The intake desk's task file model: a caller who identifies by phone number and date of birth, and goals
about one patient (the caller, or someone they act for): an appointment, a copy of records, a question."""

from __future__ import annotations

from pydantic import Field, field_validator

from passhat.domains.model import Customer, Goal, Task


class Caller(Customer):
    """Who calls: ``customer_id`` is their file number (P-1001); they identify with their phone and birthday."""

    first_name: str
    last_name: str
    phone: str  # the ten digits on file, without punctuation
    birth_date: str  # YYYY-MM-DD

    @field_validator("phone")
    @classmethod
    def _ten_digits(cls, value: str) -> str:
        if not (value.isdigit() and len(value) == 10):
            raise ValueError("a phone number is 10 digits, written without punctuation")
        return value


class IntakeGoal(Goal):
    """A goal about one patient, in the caller's words: the patient's full name (when it is not the caller),
    the appointment's reference, the clinician's surname, a wanted date and time, which records and how they
    are delivered. The caller says each only if the request does or when asked."""

    patient: str | None = None
    appointment: str | None = None
    clinician: str | None = None
    date: str | None = None
    time: str | None = None
    records: str | None = None
    delivery: str | None = None


class IntakeTask(Task):
    customer: Caller
    goals: list[IntakeGoal] = Field(min_length=1)
