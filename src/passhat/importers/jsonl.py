"""The documented JSONL of trials (docs/integrations.md): one JSON object a line, for any harness's results.

    {"task": "refund-1", "trial": 0, "reward": 1}
    {"task": "refund-1", "trial": 1, "reward": 0, "persona": "impatient", "tags": ["refunds"],
     "termination": "max_steps", "cost_usd": 0.012, "input_tokens": 5400, "output_tokens": 310, "model": "gpt-4.1",
     "messages": [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}]}
    {"task": "refund-1", "trial": 2, "infra_error": "HTTP 503 from the model API"}

Fields are checked as the row is read; an unknown one is refused (a misspelt ``reward`` would otherwise read as a
row without one). Blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, model_validator

from passhat.errors import UserError
from passhat.importers.common import (
    DEFAULT_PERSONA,
    NOTHING_WRITTEN,
    ChatMessage,
    Described,
    Imported,
    Located,
    chat_events,
    imported_run,
    parse_json,
    read_source,
    role_usage,
    validation_problem,
)
from passhat.store import TrialRecord
from passhat.trajectory import INFRA_ERROR, Signature

Name = Annotated[str, Field(min_length=1, max_length=200)]
Count = Annotated[StrictInt, Field(ge=0, le=10**15)]


class Row(BaseModel):
    """One trial: ``reward`` 1 (passed) or 0 (failed), or ``infra_error`` (it could not be judged) instead."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    task: Name
    trial: Annotated[StrictInt, Field(ge=0, le=10**9)]
    reward: Literal[0, 1, True, False] | None = None  # 1.0 and 0.0 read as 1 and 0
    persona: Name = DEFAULT_PERSONA
    tags: list[Name] = []
    infra_error: Annotated[str, Field(min_length=1)] | None = None
    termination: str | None = None
    signature: Signature | None = None  # why it failed, in passhat's failure signatures
    cost_usd: Annotated[float, Field(ge=0)] | None = None
    input_tokens: Count = 0
    output_tokens: Count = 0
    model_calls: Count | None = None
    model: str | None = None
    messages: list[ChatMessage] = []

    @model_validator(mode="after")
    def _judged_or_not(self) -> Row:
        if self.infra_error is None and self.reward is None:
            raise ValueError("a row needs a reward (0 or 1), or an infra_error saying why the trial could not be judged")
        if self.infra_error is not None and self.reward is not None:
            raise ValueError("a row with an infra_error has no reward: the trial could not be judged")
        if self.signature is not None and self.reward != 0:
            raise ValueError("only a failed trial (reward 0) has a failure signature")
        return self

    def record(self) -> TrialRecord:
        events = chat_events(self.messages)
        usage = {}
        if self.cost_usd is not None or self.input_tokens or self.output_tokens or self.model_calls:
            calls = self.model_calls if self.model_calls is not None else sum(e["kind"] == "agent" for e in events)
            usage["agent"] = role_usage(self.model, calls, self.input_tokens, self.output_tokens, self.cost_usd)
        grade: dict[str, Any] = {"imported": {"format": "jsonl", "termination": self.termination}}
        reward = None if self.reward is None else int(self.reward)
        signature = self.signature or (INFRA_ERROR if self.infra_error else None)
        return TrialRecord(
            self.task, self.persona, self.trial, self.trial, reward, signature, self.infra_error, events, grade,
            0.0, 0.0, usage,
        )  # fmt: skip


def read_jsonl(path: Path) -> Imported:
    """The run a JSONL file of trials makes; the first malformed line is a UserError naming the file, line and field."""
    source = read_source(path, f"the JSONL file {path}")
    tags: dict[str, set[str]] = {}
    located = list(_rows(source.text, path, tags))
    described = Described("jsonl", "jsonl", "imported", "imported", tags={t: sorted(v) for t, v in tags.items()})
    return imported_run(located, described, path, source.sha256, f"the JSONL file {path}")


def _rows(text: str, path: Path, tags: dict[str, set[str]]) -> Iterator[Located]:
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: JSON text may hold U+2028
        if not line.strip():
            continue
        where = f"{path} line {number}"
        raw = parse_json(line, where)
        if not isinstance(raw, dict):
            raise UserError(
                f"{where} is not a JSON object but {type(raw).__name__}; each line holds one trial. {NOTHING_WRITTEN.capitalize()}."
            )
        try:
            row = Row.model_validate(raw)
        except ValidationError as exc:
            raise UserError(f"{where}: {validation_problem(exc)}; {NOTHING_WRITTEN}.") from None
        tags.setdefault(row.task, set()).update(row.tags)
        yield Located(where, row.record())
