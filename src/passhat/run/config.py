"""A run's configuration: what was evaluated, under which seed. Stored with the run, so resume needs nothing else."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from passhat.grade import Mode


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str = "retail"
    agent: str = "reference:flaky"
    user: str = "scripted"
    personas: list[str]
    tasks: list[str]
    trials: int = Field(8, ge=1, le=1000)
    seed: int = 0
    mode: Mode = "strict"
    max_turns: int = Field(30, ge=1)
