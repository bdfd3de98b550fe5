"""τ²-bench results: a ``results.json`` (one file holding the run's info, its tasks and every simulation), or the
folder layout (``results.json`` without the simulations, beside a ``simulations/`` folder of one file each).

Each simulation is a trial of its task (persona ``default``: τ²-bench's customer is part of the task). The reward is
τ²-bench's own, a pass when it is 1 as τ²-bench counts it; a simulation that ended in an infrastructure error is an
infra error, left out of every figure as τ²-bench leaves it out, so passhat's pass^k is τ²-bench's. The reward
breakdown, the checks, the termination reason and the raw reward are kept with the trial; the agent's and the
customer's costs and tokens are its model usage; the messages are its transcript. τ²-bench does not write its version
into its results: the run records the git commit it does write, and which generation of the results format it is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from passhat.errors import UserError
from passhat.importers.common import (
    DEFAULT_PERSONA,
    NOTHING_WRITTEN,
    ChatMessage,
    Described,
    Imported,
    Located,
    Source,
    chat_events,
    imported_run,
    iso_time,
    parse_json,
    read_source,
    role_usage,
    validation_problem,
)
from passhat.safe_files import shown
from passhat.store import TrialRecord
from passhat.trajectory import INFRA_ERROR, Signature

RESULTS_FILE, SIMULATIONS_DIR = "results.json", "simulations"
INFRASTRUCTURE_ERROR = "infrastructure_error"
SUCCESS_TOLERANCE = 1e-6  # τ²-bench's own: a reward within this of 1 is a success
# τ²-bench's termination reasons that name a failure passhat has a signature for; the others (the customer or the
# agent stopped, a timeout, the customer simulator's error) leave the failure unclassified, its reason kept
SIGNATURES: dict[str, Signature] = {
    "max_steps": "max_turns",
    "too_many_errors": "tool_error_unrecovered",
    "agent_error": "agent_error",
    "context_window_exceeded": "context_overflow",
}
Text = Annotated[str, Field(max_length=200)]
M = TypeVar("M", bound=BaseModel)


class Party(BaseModel):
    """The agent's or the customer simulator's description in the run's info."""

    model_config = ConfigDict(extra="ignore")

    implementation: Text
    llm: Text | None = None


class Environment(BaseModel):
    model_config = ConfigDict(extra="ignore")

    domain_name: Text


class Info(BaseModel):
    model_config = ConfigDict(extra="ignore")

    git_commit: Text = "unknown"
    agent_info: Party
    user_info: Party
    environment_info: Environment


class RewardInfo(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    reward: float
    reward_breakdown: dict[str, float] | None = None
    reward_basis: list[str] | None = None
    db_check: dict[str, Any] | None = None
    action_checks: list[dict[str, Any]] | None = None
    nl_assertions: list[dict[str, Any]] | None = None
    communicate_checks: list[dict[str, Any]] | None = None
    env_assertions: list[dict[str, Any]] | None = None


class Tau2Message(ChatMessage):
    """A τ²-bench message: a chat message with its model call's cost and token usage."""

    cost: float | None = None
    usage: dict[str, Any] | None = None


class Simulation(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    id: Text
    task_id: Annotated[str, Field(min_length=1, max_length=200)] | int
    trial: Annotated[int, Field(ge=0, le=10**9)] | None = None
    seed: Annotated[int, Field(ge=-(2**63), lt=2**63)] | None = None  # what SQLite's integers hold
    start_time: str | None = None
    duration: float = 0.0
    termination_reason: Text
    agent_cost: Annotated[float, Field(ge=0)] | None = None
    user_cost: Annotated[float, Field(ge=0)] | None = None
    reward_info: RewardInfo | None = None
    messages: list[Tau2Message] | None = None


def read_tau2(path: Path) -> Imported:
    """The run a τ²-bench results file, or a results folder, makes."""
    meta_path, sims_dir = _paths(path)
    meta = read_source(meta_path, f"the τ²-bench results file {meta_path}")
    document = parse_json(meta.text, f"the τ²-bench results file {meta_path}")
    if not isinstance(document, dict) or "info" not in document:
        raise UserError(
            f"{meta_path} is not a τ²-bench results file: it has no `info` object (does --format match the file?); "
            f"{NOTHING_WRITTEN}."
        )
    info = _validated(Info, document["info"], f"{meta_path}: field `info`")
    raw_sims, digest = _simulations(document, meta, sims_dir)
    tasks = document.get("tasks") if isinstance(document.get("tasks"), list) else []
    described = Described(
        "tau2", f"tau2:{info.environment_info.domain_name}", _party(info.agent_info), _party(info.user_info), mode="tau",
        writer=f"tau2-bench, git commit {info.git_commit} ({_generation(document, sims_dir)})",
        tasks_fingerprint=hashlib.sha256(json.dumps(tasks, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest(),
    )  # fmt: skip
    located = list(_trials(raw_sims, (info.agent_info.llm, info.user_info.llm)))
    return imported_run(located, described, path, digest, f"the τ²-bench results {path}")


def _paths(path: Path) -> tuple[Path, Path]:
    """The results file and the simulations folder beside it, as τ²-bench lays them out."""
    if path.is_dir():
        if not (path / RESULTS_FILE).is_file():
            raise UserError(
                f"{path} holds no {RESULTS_FILE}: give a τ²-bench results file or the folder `tau2 run --save-to` wrote."
            )
        return path / RESULTS_FILE, path / SIMULATIONS_DIR
    return path, path.parent / SIMULATIONS_DIR


def _simulations(document: dict[str, Any], meta: Source, sims_dir: Path) -> tuple[list[tuple[str, Any]], str]:
    """Each simulation's raw JSON with where it was read, and a digest of every byte read: the results file's
    simulations, or, in the folder layout, one file each (sorted by name, as τ²-bench reads them)."""
    digest = hashlib.sha256(meta.sha256.encode())
    if sims_dir.is_dir() and not document.get("simulations"):
        sims = []
        for sim_path in sorted(sims_dir.glob("*.json")):
            sim = read_source(sim_path, f"the τ²-bench simulation file {sim_path}")
            digest.update(sim.sha256.encode())
            sims.append((str(sim_path), parse_json(sim.text, f"the τ²-bench simulation file {sim_path}")))
        return sims, digest.hexdigest()
    raw = document.get("simulations")
    if not isinstance(raw, list):
        raise UserError(f"{meta.path}: field `simulations` is {shown(raw)}, not a list of simulations; {NOTHING_WRITTEN}.")
    return [(f"{meta.path}: simulation {i}", sim) for i, sim in enumerate(raw)], meta.sha256


def _trials(raw_sims: list[tuple[str, Any]], models: tuple[str | None, str | None]) -> Iterator[Located]:
    numbered: dict[str, int] = {}  # a file without trial numbers: each task's simulations in order
    for where, raw in raw_sims:
        sim = _validated(Simulation, raw, where)
        task = str(sim.task_id)
        trial = sim.trial if sim.trial is not None else numbered.get(task, 0)
        numbered[task] = trial + 1
        yield Located(where, _record(sim, task, trial, models))


def _record(sim: Simulation, task: str, trial: int, models: tuple[str | None, str | None]) -> TrialRecord:
    judged = sim.termination_reason != INFRASTRUCTURE_ERROR and sim.reward_info is not None
    reward = None
    if judged and sim.reward_info is not None:
        reward = int(abs(sim.reward_info.reward - 1) <= SUCCESS_TOLERANCE)
    infra = None if judged else f"τ²-bench: {'no reward recorded' if sim.reward_info is None else sim.termination_reason}"
    signature = INFRA_ERROR if infra else SIGNATURES.get(sim.termination_reason) if reward == 0 else None
    messages = sim.messages or []
    grade = {
        "imported": {
            "format": "tau2", "simulation": sim.id, "termination_reason": sim.termination_reason,
            "reward": sim.reward_info.reward if sim.reward_info else None,
            "reward_info": sim.reward_info.model_dump(exclude_none=True) if sim.reward_info else None,
        }
    }  # fmt: skip
    started = iso_time(sim.start_time)
    return TrialRecord(
        task, DEFAULT_PERSONA, trial, sim.seed or 0, reward, signature, infra, chat_events(messages), grade, started,
        started + max(sim.duration, 0.0), _usage(messages, sim, models),
    )  # fmt: skip


def _usage(messages: list[Tau2Message], sim: Simulation, models: tuple[str | None, str | None]) -> dict[str, Any]:
    """The agent's and the customer's model calls (``models``: their models): each message a model wrote carries its
    usage; the costs are the simulation's totals."""
    usage = {}
    sides = (("agent", "assistant", sim.agent_cost, models[0]), ("user", "user", sim.user_cost, models[1]))
    for role, speaker, cost, model in sides:
        calls = [m.usage for m in messages if m.role == speaker and m.usage]
        if calls or cost:
            tokens_in = sum(_tokens(u, "prompt_tokens") for u in calls)
            tokens_out = sum(_tokens(u, "completion_tokens") for u in calls)
            usage[role] = role_usage(model, len(calls), tokens_in, tokens_out, cost)
    return usage


def _tokens(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and 0 <= value < 10**15 else 0


def _party(party: Party) -> str:
    return f"tau2:{party.implementation}" + (f":{party.llm}" if party.llm else "")


def _generation(document: dict[str, Any], sims_dir: Path) -> str:
    """Which results format wrote the file, from what it holds (τ²-bench 1.0 added the simulation index and the
    folder layout)."""
    if "simulation_index" in document or sims_dir.is_dir():
        return "the results format of tau2-bench 1.0 or later"
    return "the results format of tau2-bench before 1.0"


def _validated(model: type[M], raw: Any, where: str) -> M:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise UserError(f"{where}: {validation_problem(exc)}; {NOTHING_WRITTEN}.") from None
    except RecursionError:
        raise UserError(f"{where} nests values too deeply to read; {NOTHING_WRITTEN}.") from None
