"""Inspect AI eval logs (``.eval`` and ``.json``), read by inspect-ai's own ``read_eval_log``.

Each sample is a scenario's task (persona ``default``, unless the sample's metadata names a ``persona`` and its
``task_id``, as passhat's own export writes them), each epoch a trial. The reward is one score of the sample, the one
``--score`` names (by default the log's only one): a value of 1, True or Inspect's CORRECT ("C") is a pass, any other
number or letter a fail. A sample that ended in an error, or that lacks the score, could not be judged: an infra
error, counted apart. The messages are the transcript, the models' usage the agent's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    iso_time,
    role_usage,
)
from passhat.safe_files import cut, shown
from passhat.store import TrialRecord
from passhat.trajectory import INFRA_ERROR

if TYPE_CHECKING:  # inspect-ai is imported when a log is read: it is an optional dependency
    from inspect_ai.log import EvalLog, EvalSample

SUFFIXES = (".eval", ".json")
MAX_EPOCH = 10**9
PASSING = (1, True, "C")  # a score value that is a pass (Inspect's CORRECT is "C"); 1.0 == 1 == True


def read_inspect(path: Path, score: str | None) -> Imported:
    """The run an Inspect eval log makes, its reward the score ``score`` names (None: the log's only score)."""
    log = _read_log(path)
    samples = list(log.samples or [])
    name = _score_name(path, samples, score)
    spec = log.eval
    described = Described(
        "inspect", f"inspect:{spec.task}", f"inspect:{spec.model}", "inspect", score=name,
        writer=f"inspect_ai {spec.packages.get('inspect_ai', '(version not recorded)')}",
    )  # fmt: skip
    return imported_run(_trials(path, samples, name), described, path, _digest(path), f"the Inspect log {path}")


def _read_log(path: Path) -> EvalLog:
    """The log as inspect-ai reads it; a file it cannot read is a UserError naming the file."""
    if path.suffix not in SUFFIXES or not path.is_file():
        raise UserError(f"{path} is not an Inspect eval log: give a .eval or .json log file (--format inspect).")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise UserError("--format inspect reads logs with inspect-ai, which is not installed: pip install inspect-ai.") from None
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - the reader is another project's; whatever it raises, the file is not a log it reads
        raise UserError(
            f"{path} is not an Inspect eval log inspect-ai can read ({type(exc).__name__}: {cut(str(exc), 160)}); "
            f"{NOTHING_WRITTEN}."
        ) from None


def _digest(path: Path) -> str:
    """A digest of the log's bytes (read whole, within the bounds of any file passhat reads)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _score_name(path: Path, samples: Sequence[EvalSample], score: str | None) -> str:
    names = sorted({name for sample in samples for name in (sample.scores or {})})
    if score is not None:
        if score not in names:
            raise UserError(
                f"--score {shown(score)}: the Inspect log {path} has no such score; its scores: {', '.join(names) or 'none'}."
            )
        return score
    if len(names) != 1:
        some = f"scores {', '.join(map(shown, names))}: choose one with --score NAME" if names else "no score: score it first"
        raise UserError(f"the Inspect log {path} has {some}; {NOTHING_WRITTEN}.")
    return names[0]


def _trials(path: Path, samples: Sequence[EvalSample], name: str) -> Iterator[Located]:
    for sample in samples:
        where = f"{path}: sample {shown(sample.id)} epoch {sample.epoch}"
        yield Located(where, _record(sample, name, where))


def _record(sample: EvalSample, name: str, where: str) -> TrialRecord:
    metadata = sample.metadata or {}
    task, persona = str(sample.id), DEFAULT_PERSONA
    if isinstance(metadata.get("task_id"), str) and isinstance(metadata.get("persona"), str):  # passhat's own export
        task, persona = metadata["task_id"], metadata["persona"]
    if not task or len(task) > 200 or not 1 <= sample.epoch <= MAX_EPOCH:
        raise UserError(
            f"{where}: a sample id of 1–200 characters and an epoch from 1 to {MAX_EPOCH:,} are needed; {NOTHING_WRITTEN}."
        )
    value = sample.scores[name].value if name in (sample.scores or {}) else None
    infra = _unjudged(sample, name, value)
    reward = None if infra else int(value in PASSING)
    events = chat_events([_message(m) for m in sample.messages])
    grade = {"imported": {"format": "inspect", "score": name, "value": _plain(value), "scores": _scores(sample)}}
    started = iso_time(sample.started_at)
    return TrialRecord(
        task, persona, sample.epoch - 1, sample.epoch - 1, reward, INFRA_ERROR if infra else None, infra, events,
        grade, started, started + (sample.total_time or 0.0), _usage(sample),
    )  # fmt: skip


def _unjudged(sample: EvalSample, name: str, value: Any) -> str | None:
    """Why the sample could not be judged (an error, no such score, a value that is no verdict), or None."""
    if sample.error is not None:
        return f"Inspect: {cut(sample.error.message, 500)}"
    if value is None:
        return f"Inspect: the sample has no {name!r} score"
    if not isinstance(value, str | int | float) or (isinstance(value, float) and value != value):
        return f"Inspect: the {name!r} score is {shown(value)}, no pass or fail"
    return None


def _message(message: Any) -> ChatMessage:
    """An Inspect chat message as a transcript message (text, tool calls, a tool result and whether it failed)."""
    calls = [{"id": c.id, "name": c.function, "arguments": c.arguments} for c in getattr(message, "tool_calls", None) or ()]
    return ChatMessage.model_validate({
        "role": message.role, "content": message.text, "tool_calls": calls or None,
        "tool_call_id": getattr(message, "tool_call_id", None), "error": getattr(message, "error", None) is not None,
    })  # fmt: skip


def _scores(sample: EvalSample) -> dict[str, Any]:
    return {name: _plain(score.value) for name, score in (sample.scores or {}).items()}


def _plain(value: Any) -> Any:
    """A score value as JSON holds it (Inspect's values are JSON already; anything else as its repr)."""
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return shown(value)


def _usage(sample: EvalSample) -> dict[str, Any]:
    usages = sample.model_usage or {}
    if not usages:
        return {}
    costs = [u.total_cost for u in usages.values()]
    cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
    calls = sum(m.role == "assistant" for m in sample.messages)
    tokens_in = sum(u.input_tokens for u in usages.values())
    tokens_out = sum(u.output_tokens for u in usages.values())
    return {"agent": role_usage(", ".join(usages), calls, tokens_in, tokens_out, cost)}
