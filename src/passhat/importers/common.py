"""What every importer shares: the source read within bounds, chat messages as passhat events, a role's model usage,
the run's configuration from its trials, and writing the run.

A run is written into a hidden folder next to where it belongs and renamed into place once its store is closed, so
a failure on the way (a full disk, Ctrl-C) leaves no half-imported run that `passhat runs` would list.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import secrets
import shutil
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from passhat.errors import UserError
from passhat.file_writes import LOCK_FILE
from passhat.grade import Mode
from passhat.run.runner import passhat_version
from passhat.run_config import ImportedFrom, ImportFormat, RunConfig
from passhat.safe_files import cut, read_text_file, shown
from passhat.store import ResultStore, TrialRecord

MAX_SOURCE_BYTES = 1 << 30  # 1 GiB: a τ²-bench results file with full transcripts runs to a few hundred MB
MAX_TRIALS = 1000  # a run's most trials per scenario (RunConfig.trials)
DEFAULT_PERSONA = "default"  # the persona of trials whose source names none
NOTHING_WRITTEN = "nothing was imported"


@dataclasses.dataclass(frozen=True)
class Source:
    """A source file's text, its path as given and the digest of what was read."""

    path: Path
    text: str
    sha256: str


def read_source(path: Path, what: str) -> Source:
    """The text of ``path`` (a regular UTF-8 file of at most MAX_SOURCE_BYTES); ``what`` names it in errors."""
    text = read_text_file(path, what, limit=MAX_SOURCE_BYTES)
    return Source(path, text, hashlib.sha256(text.encode()).hexdigest())


def parse_json(text: str, what: str) -> Any:
    """One JSON document; malformed, nested past the parser's recursion limit or with an integer Python refuses, it
    is a UserError naming ``what`` (a file and line)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise UserError(f"{what} nests JSON values too deeply to read; {NOTHING_WRITTEN}.") from None
    except ValueError as exc:  # JSONDecodeError, and an integer of more digits than Python converts
        raise UserError(f"{what} is not valid JSON ({cut(str(exc), 120)}); {NOTHING_WRITTEN}.") from None


UNION_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "none"})  # pydantic's names of a union's members


def validation_problem(exc: ValidationError) -> str:
    """The first problem pydantic found, as "field `a.b`: what is wrong", its input quoted short; the fields are named
    as the file spells them (pydantic adds the union member it tried: ``task_id.constrained-str``)."""
    fields = [_field(error["loc"]) for error in exc.errors()]
    first = exc.errors()[0]
    more = len(set(fields)) - 1
    if not fields[0]:  # a check of the whole row: its message says what is wrong
        return str(first["msg"]).removeprefix("Value error, ")
    return f"field `{fields[0]}`: {first['msg']} (got {shown(first.get('input'))})" + (f", and {more} more" if more else "")


def _field(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc if isinstance(p, int) or (p.isidentifier() and p not in UNION_TAGS)]
    return ".".join(cut(p, 40) for p in parts)


class ChatToolCall(BaseModel):
    """A tool call as chat-completions APIs and τ²-bench write it (``arguments`` an object or its JSON text)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    id: str = ""
    name: str
    arguments: Any = None


class ChatMessage(BaseModel):
    """A message of a transcript: user, assistant (its text and tool calls), tool (a result, ``error`` when the call
    failed) or system (not part of the conversation passhat grades, left out)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None
    id: str | None = None  # τ²-bench names a tool result's call by ``id``
    error: bool = False
    requestor: Literal["user", "assistant"] = "assistant"  # τ²-bench: whose tool a result answers (the customer has tools too)


def chat_events(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The transcript as passhat's events (trajectory.Event.to_dict): the customer's and the agent's words, and each
    tool call with the result the agent saw, in the tool result contract's shapes."""
    events: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}  # call id -> its event, awaiting its result
    for message in messages:
        if message.role == "user" and message.content:
            events.append({"kind": "user", "text": message.content})
        elif message.role == "assistant":
            if message.content:
                events.append({"kind": "agent", "text": message.content})
            for call in message.tool_calls or ():
                event = {"kind": "tool", "call_id": call.id, "name": call.name, "args": call.arguments, "result": None}
                calls[call.id] = event
                events.append(event)
        elif message.role == "tool" and message.requestor == "assistant":  # the customer's own tools are not the agent's
            call_id = message.tool_call_id or message.id or ""
            event = calls.pop(call_id, None)
            if event is None:  # a result of no call in the transcript: kept, nameless
                event = {"kind": "tool", "call_id": call_id, "name": None, "args": None, "result": None}
                events.append(event)
            event["result"] = _tool_result(message.content or "", message.error)
    return events


def _tool_result(content: str, error: bool) -> dict[str, Any]:
    if error:
        return {"status": "error", "error": {"type": "tool_error", "message": content, "retryable": False}}
    return {"status": "ok", "data": content}


def role_usage(model: str | None, calls: int, input_tokens: int, output_tokens: int, cost_usd: float | None) -> dict[str, Any]:
    """One role's model usage as the store keeps it (metrics.usage); a cost the source does not give is unknown,
    not zero: its calls count as unpriced."""
    return {
        "model": model or "unknown", "calls": calls, "cached_calls": 0, "input_tokens": input_tokens,
        "output_tokens": output_tokens, "cost_usd": cost_usd or 0.0,
        "unpriced_calls": max(calls, 1) if cost_usd is None else 0, "latency_s": [],
    }  # fmt: skip


def iso_time(text: str | None) -> float:
    """A source's ISO 8601 time as a timestamp; 0 (unknown) when absent or unreadable: only the report's times
    read it, never a figure."""
    try:
        return datetime.fromisoformat(text).timestamp() if text else 0.0
    except (ValueError, OverflowError, OSError):
        return 0.0


@dataclasses.dataclass(frozen=True)
class Located:
    """A trial read from a source, and where it was read (``"results.json, simulation 3"``), for the errors."""

    where: str
    trial: TrialRecord


@dataclasses.dataclass(frozen=True)
class Described:
    """What a source says of the run as a whole: passhat's words for its suite, agent and customer simulator."""

    format: ImportFormat
    domain: str
    agent: str
    user: str
    mode: Mode = "strict"
    writer: str | None = None
    score: str | None = None
    tags: Mapping[str, list[str]] = dataclasses.field(default_factory=dict)
    tasks_fingerprint: str | None = None  # a digest of the source's task definitions, when it holds them


@dataclasses.dataclass(frozen=True)
class Imported:
    """A source read whole and checked: the run's configuration and its trials, ready to store."""

    config: RunConfig
    trials: list[TrialRecord]


def imported_run(located: Iterable[Located], described: Described, source: Path, sha256: str, what: str) -> Imported:
    """The run the trials make: its plan is each scenario's trials as the source holds them. A trial given twice, a
    scenario of more trials than a run holds, or no trial at all is a UserError naming ``what``."""
    first: dict[tuple[str, str, int], str] = {}
    trials: list[TrialRecord] = []
    for item in located:
        if item.trial.key in first:
            task, persona, trial = item.trial.key
            raise UserError(
                f"{item.where}: trial {trial} of task {shown(task)} (persona {shown(persona)}) was already given at "
                f"{first[item.trial.key]}; each (task, persona, trial) appears once. {NOTHING_WRITTEN.capitalize()}."
            )
        first[item.trial.key] = item.where
        trials.append(item.trial)
    if not trials:
        raise UserError(f"{what} holds no trial; {NOTHING_WRITTEN}.")
    plan = collections.Counter((t.task_id, t.persona) for t in trials)
    (task, persona), most = plan.most_common(1)[0]
    if most > MAX_TRIALS:
        raise UserError(
            f"{what}: task {shown(task)} (persona {shown(persona)}) has {most:,} trials, more than the {MAX_TRIALS} a "
            f"passhat run holds per scenario; {NOTHING_WRITTEN}."
        )
    tasks = sorted({t for t, _ in plan})
    return Imported(_config(described, source, sha256, plan, tasks), trials)


def _config(described: Described, source: Path, sha256: str, plan: Mapping[tuple[str, str], int], tasks: list[str]) -> RunConfig:
    fingerprint = described.tasks_fingerprint or hashlib.sha256(json.dumps(tasks).encode("utf-8", "surrogatepass")).hexdigest()
    imported = ImportedFrom(
        format=described.format, source=str(source.resolve()), sha256=sha256, writer=described.writer,
        score=described.score, plan=[(t, p, n) for (t, p), n in sorted(plan.items())],
        tags={task: sorted(tags) for task, tags in described.tags.items()},
    )  # fmt: skip
    return RunConfig(
        domain=described.domain, agent=described.agent, user=described.user, tasks=tasks,
        personas=sorted({p for _, p in plan}), trials=max(plan.values()), mode=described.mode,
        tasks_fingerprint=fingerprint[:16], passhat_version=passhat_version(), imported=imported,
    )  # fmt: skip


def write_run(out: Path, run_id: str, imported: Imported) -> Path:
    """Store the imported run as ``out/run_id`` through the results store's writer, and return its folder. The run
    appears whole or not at all; its writer lock goes with the writer (an imported run is never written again)."""
    final = out / run_id
    if final.exists() or final.is_symlink():
        raise UserError(
            f"a run {shown(run_id)} already exists in {out} (--run-id); choose another run id. {NOTHING_WRITTEN.capitalize()}."
        )
    staging = out / f".{run_id}.importing-{secrets.token_hex(4)}"
    try:
        with ResultStore.create(staging, run_id, imported.config.model_dump(mode="json")) as store:
            for trial in imported.trials:
                store.record(trial)
        (staging / LOCK_FILE).unlink(missing_ok=True)
        staging.rename(final)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(f"cannot write the run {final}: {exc.strerror or exc}; {NOTHING_WRITTEN}.") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final
