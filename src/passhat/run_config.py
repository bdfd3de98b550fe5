"""A run's configuration: what was evaluated, under which seed. Stored with the run, so resume needs nothing else.

Every reader of a stored run reads its configuration through RunConfig (stored_config, parse_config), never by string
key: a key added later has its default here, so the stores of older passhats still open, and a configuration that
is not one is a damaged store, said once, naming the file."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from passhat.domains import DEFAULT_DOMAIN
from passhat.domains.model import Task
from passhat.errors import UserError
from passhat.grade import Mode
from passhat.guard.operators import OperatorKind
from passhat.llm import Price
from passhat.openings import MAX_PARAPHRASES
from passhat.store import ResultStore

if TYPE_CHECKING:  # the metrics load numpy: every command reads a run configuration, few compute a figure
    from passhat.metrics.summary import Scenario

ImportFormat = Literal["jsonl", "tau2", "inspect"]


class ImportedFrom(BaseModel):
    """Where an imported run's trials came from (`passhat import`): they were judged by another harness, so the run
    has nothing to resume, and its tags come from the source, not from a passhat domain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: ImportFormat
    source: str  # the file or folder imported, as an absolute path
    sha256: str  # a digest of the bytes read, so a record of the run pins what it came from
    writer: str | None = None  # the program (and version) that wrote the source, when the source says
    score: str | None = None  # the score read as the reward (an Inspect log's --score)
    plan: list[tuple[str, str, int]]  # (task, persona, trials in the source): an import's plan is what the source held
    tags: dict[str, list[str]] = {}  # each task's tags, as the source gives them


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str = DEFAULT_DOMAIN  # a built-in or installed domain's name, or a domain folder's absolute path
    tasks_dir: str | None = None  # the absolute path of the folder of task files added to the domain's (--tasks-dir)
    agent: str = "reference:flaky"
    user: str = "scripted"
    personas: list[str]
    tasks: list[str]
    trials: int = Field(8, ge=1, le=1000)
    seed: int = 0
    mode: Mode = "strict"
    max_turns: int = Field(30, ge=1)
    # what one answer of the agent may carry (run.trial.TurnBounds); stores of older passhats get the defaults
    max_tool_calls_per_turn: int = Field(32, ge=1)
    max_argument_bytes: int = Field(64 * 1024, ge=1)
    max_message_bytes: int = Field(64 * 1024, ge=1)
    # paraphrased openings (passhat.openings): trial i's scripted customer says its request in wording variant
    # i mod (paraphrase + 1), 0 being the task's own; 0, and stores of older passhats: every trial in the task's words
    paraphrase: int = Field(0, ge=0, le=MAX_PARAPHRASES)
    faults: dict[str, float] = {}  # fault class -> rate per tool call (passhat.faults)
    guard: list[str] = []  # guards switched on (passhat.guard)
    # who decides the human gate's tickets: simulated, or people in the runs folder's inbox (passhat.guard.inbox),
    # each trial's end waiting up to operator_timeout seconds for their decisions
    operator: OperatorKind = "simulated"
    operator_timeout: float = Field(600.0, gt=0)
    # the run's folder, set by the runner from its store for the inbox operator; never stored, so a runs folder
    # moved between a run and its resume files into its own inbox
    run_folder: str | None = Field(None, exclude=True)
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
    # the gate ("k=8,min=0.9[,persona=P]") whose early stop left planned trials out; None: every trial ran
    early_stop: str | None = None
    # the gate the run was last judged against (--gate), so the runs list shows its verdict; None: no gate given
    gate: str | None = None
    # what the trials were run with, so --resume can refuse to mix old and new; None in stores of older passhats
    tasks_fingerprint: str | None = None
    passhat_version: str | None = None
    imported: ImportedFrom | None = None  # set by `passhat import`; None for a run passhat ran

    def planned_trials(self) -> dict[Scenario, int]:
        """Every scenario the run plans (tasks × personas) with its n trials; an imported run's plan is what its
        source held, scenario by scenario (a source need not hold every task with every persona)."""
        if self.imported is not None:
            return {(task, persona): n for task, persona, n in self.imported.plan}
        return {(task, persona): self.trials for task in self.tasks for persona in self.personas}


def task_fingerprint(tasks: Iterable[Task]) -> str:
    """One hash over the selected tasks' full definitions (in the run's order): any edit changes it."""
    digest = hashlib.sha256()
    for task in tasks:
        digest.update(task.id.encode())
        digest.update(hashlib.sha256(task.model_dump_json().encode()).digest())
    return digest.hexdigest()[:16]


def stored_config(store: ResultStore) -> RunConfig:
    """The store's configuration as a RunConfig; one edited into something invalid is a UserError naming the file."""
    return parse_config(store.config, store.path)


def parse_config(config: Mapping[str, Any], where: Path | str) -> RunConfig:
    """A stored configuration (read from ``where``) as a RunConfig; keys missing from an older passhat's store take
    their defaults, and anything else that does not fit is a UserError naming the file: the store is damaged."""
    try:
        return RunConfig.model_validate(config)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())
        raise UserError(
            f"{where} holds an incomplete or invalid run configuration ({problems}); it was edited by hand or "
            "written by an incompatible passhat: start a fresh run with `passhat run`."
        ) from None
