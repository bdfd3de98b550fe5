"""A run's configuration: what was evaluated, under which seed. Stored with the run, so resume needs nothing else."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from passhat.grade import Mode
from passhat.llm import Price


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
    faults: dict[str, float] = {}  # fault class -> rate per tool call (passhat.faults)
    guard: list[str] = []  # guards switched on (passhat.guard)
    # models (llm: agents and customers); keys are read from the environment and never stored here
    agent_base_url: str | None = None
    user_base_url: str | None = None
    agent_temperature: float | None = Field(None, ge=0)
    user_temperature: float | None = Field(None, ge=0)
    no_policy: bool = False
    max_connections: int = Field(8, ge=1)
    request_timeout: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0)
    retry_backoff: float = Field(1.0, ge=0)
    cache: str | None = None
    prices: dict[str, Price] = {}
