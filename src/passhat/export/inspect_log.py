"""A stored run as an Inspect AI eval log (the `.json` format), which `inspect view` browses and
``inspect_ai.log.read_eval_log`` loads.

The mapping: a scenario (task × persona) is an Inspect sample, its trials are the sample's epochs, the
run's configuration is the eval's metadata. A judged trial has a ``reward`` score (its failure signature as
the explanation, the graders' findings as metadata) and one score per grader (``state``, ``output``,
``trajectory``); a trial that could not be judged (an infra error, a user simulator error) is a sample
error, which Inspect too leaves out of every metric. The eval's ``reward`` metrics are passhat's own:
the average reward and pass^k / pass@k at k = the trials per scenario.

The log is written without inspect-ai (not a dependency of passhat). Its reader takes the header (results
included) from the keys before ``samples``, and those figures need every trial; so the samples are
spooled to a temporary file as the trials stream in, then the header and the spooled samples are written
out. Memory holds one trial and the per-trial outcomes, whatever the size of the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import passhat
from passhat.export.inspect_messages import chat_messages, last_agent_text
from passhat.metrics import TrialResult, summarize
from passhat.metrics.summary import Scenario, is_judged
from passhat.run_config import RunConfig
from passhat.store import TrialRecord

LOG_VERSION = 2  # the version of Inspect's log schema this file follows
GRADERS = {"state": "state_ok", "output": "output_ok", "trajectory": "trajectory_ok"}  # score name -> grade key
LISTED_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")  # how Inspect's log names start
Usage = dict[str, Any]  # Inspect's ModelUsage: input_tokens, output_tokens, total_tokens, total_cost


def write_inspect_log(path: Path, run_id: str, created: float, config: RunConfig, trials: Iterable[TrialRecord]) -> int:
    """Write the run's eval log to ``path`` (replaced whole or not at all), reading ``trials`` once, in any
    order; returns the number of samples (trials) written."""
    model = config.agent.removeprefix("llm:")  # Inspect names models provider/model
    planned = config.planned_trials()
    tally = Tally()
    with tempfile.TemporaryFile(dir=path.parent) as spool:
        for trial in trials:
            spool.write(b"," * bool(tally.outcomes) + json.dumps(inspect_sample(trial, model)).encode())
            tally.add(trial)
        header = {
            "version": LOG_VERSION,
            "status": _status(config, sum(planned.values()), tally),
            "eval": _eval_spec(run_id, created, config, model, list(planned)),
            "plan": _plan(config),
            "results": _results(sum(planned.values()), tally),
            "stats": tally.stats(),
            "invalidated": False,
            "tags": [],
            "metadata": {},
        }
        with _replaced(path) as out:
            out.write(json.dumps(header)[:-1].encode() + b', "samples": [')  # the header object, left open
            spool.seek(0)
            shutil.copyfileobj(spool, out)
            out.write(b"]}")
    return len(tally.outcomes)


def inspect_log_name(run_id: str, created: float, config: RunConfig) -> str:
    """The file name Inspect gives a log (its creation time, task and id, each without "_"): `inspect view` lists
    the .json logs of a folder only when their names start with such a time, and its parser reads the task id
    up to the first "-" of the last part, so the id there is the eval's task id, which has none."""
    when = datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%dT%H-%M-%S-00-00")
    return "_".join(re.sub(r"[_/:+]", "-", part) for part in (when, _task(config))) + f"_{inspect_task_id(run_id)}.json"


def inspect_task_id(run_id: str) -> str:
    """The run's id as Inspect's task id: without the "-" and "_" that Inspect's file names use as separators."""
    return re.sub(r"[-_/:+]", "", run_id) or "run"


def listed_by_inspect_view(name: str) -> bool:
    """Inspect lists every .eval log of a folder, and a .json log only under a name of the shape it gives its own."""
    return name.endswith(".eval") or (LISTED_NAME.match(name) is not None and name.endswith(".json"))


def sample_id(task_id: str, persona: str) -> str:
    return f"{task_id}/{persona}"


def inspect_sample(trial: TrialRecord, model: str) -> dict[str, Any]:
    """One trial as one epoch of its scenario's sample."""
    opening = next((e["text"] for e in trial.events if e["kind"] == "user"), "")
    sample: dict[str, Any] = {
        "id": sample_id(trial.task_id, trial.persona),
        "epoch": trial.trial + 1,  # Inspect counts epochs from 1
        "input": opening,
        "target": "",
        "messages": chat_messages(trial.events),
        "output": _output(model, last_agent_text(trial.events)),
        "metadata": {
            "task_id": trial.task_id,
            "persona": trial.persona,
            "trial": trial.trial,
            "seed": trial.seed,
            "end": next((e["text"] for e in reversed(trial.events) if e["kind"] == "end"), None),
        },
        "started_at": _iso(trial.started),
        "completed_at": _iso(trial.finished),
        "total_time": round(trial.finished - trial.started, 6),
        **_usage(trial.usage),
        "store": {},
        "events": [],  # the transcript is in messages; Inspect's own events (model calls, spans) are not recorded
        "attachments": {},
    }
    operator = [e for e in trial.events if e["kind"] == "guard"]  # tickets resolved after the conversation
    if operator:
        sample["metadata"]["operator"] = operator
    if is_judged(trial.to_result()):
        sample["scores"] = _scores(trial)
    else:
        sample["error"] = _error(trial)
    return sample


def _output(model: str, completion: str) -> dict[str, Any]:
    """The agent's last message as the sample's output: the completion, and the one choice `inspect view` shows."""
    choices = [{"message": {"role": "assistant", "content": completion}, "stop_reason": "stop"}] if completion else []
    return {"model": model, "choices": choices, "completion": completion}


def _scores(trial: TrialRecord) -> dict[str, Any]:
    """The reward, with why it failed, and a score per grader (each graded in every mode, counted as the mode says)."""
    grade = trial.grade
    reward = {
        "value": trial.reward,
        "explanation": trial.signature or "passed",
        "metadata": {"signature": trial.signature, **grade.get("details", {})},
        "history": [],
    }
    graders = {name: {"value": int(grade[key]), "history": []} for name, key in GRADERS.items() if key in grade}
    return {"reward": reward, **graders}


def _error(trial: TrialRecord) -> dict[str, str]:
    """Inspect's sample error for a trial that could not be judged: why, and the traceback if there is one."""
    if trial.infra_error is not None:
        lines = trial.infra_error.strip().splitlines() or ["infra error"]
        message, traceback = f"infra_error: {lines[-1]}", trial.infra_error
    else:
        message, traceback = "user_simulator_error: the simulated customer broke its instruction; not judged", ""
    return {"message": message, "traceback": traceback, "traceback_ansi": traceback}


def _usage(usage: dict[str, Any]) -> dict[str, dict[str, Usage]]:
    """The trial's model calls as Inspect counts them: by role (agent, user) and by model."""
    by_role = {role: _model_usage(figures) for role, figures in usage.items()}
    by_model: dict[str, Usage] = {}
    for role, figures in usage.items():
        name = str(figures.get("model", role))
        by_model[name] = _sum(by_model[name], by_role[role]) if name in by_model else by_role[role]
    return {"model_usage": by_model, "role_usage": by_role}


def _model_usage(figures: dict[str, Any]) -> Usage:
    tokens_in, tokens_out = int(figures.get("input_tokens", 0)), int(figures.get("output_tokens", 0))
    cost = None if figures.get("unpriced_calls") else figures.get("cost_usd")  # an unpriced call's cost is unknown
    return {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out, "total_cost": cost}


def _sum(a: Usage, b: Usage) -> Usage:
    cost = None if a["total_cost"] is None or b["total_cost"] is None else a["total_cost"] + b["total_cost"]
    return {key: a[key] + b[key] for key in ("input_tokens", "output_tokens", "total_tokens")} | {"total_cost": cost}


class Tally:
    """What the header needs from every trial, gathered as they stream past."""

    def __init__(self) -> None:
        self.outcomes: list[TrialResult] = []
        self.graders: dict[str, list[int]] = defaultdict(list)  # score name -> the judged trials' values
        self.started: float | None = None
        self.finished: float | None = None
        self.usage: dict[str, dict[str, Usage]] = {"model_usage": {}, "role_usage": {}}

    def add(self, trial: TrialRecord) -> None:
        outcome = trial.to_result()
        self.outcomes.append(outcome)
        if is_judged(outcome):
            for name, key in GRADERS.items():
                if key in trial.grade:
                    self.graders[name].append(int(trial.grade[key]))
        self.started = min(trial.started, self.started or trial.started)
        self.finished = max(trial.finished, self.finished or trial.finished)
        for kind, counts in _usage(trial.usage).items():
            for name, usage in counts.items():
                self.usage[kind][name] = _sum(self.usage[kind][name], usage) if name in self.usage[kind] else usage

    def stats(self) -> dict[str, Any]:
        return {
            "started_at": _iso(self.started),
            "completed_at": _iso(self.finished),
            **self.usage,
            "connection_limit_history": [],
        }


def _eval_spec(run_id: str, created: float, config: RunConfig, model: str, scenarios: list[Scenario]) -> dict[str, Any]:
    return {
        "eval_id": run_id,
        "run_id": run_id,
        "created": _iso(created),
        "task": _task(config),
        "task_id": inspect_task_id(run_id),
        "task_version": 0,
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {
            "name": _task(config).removeprefix("passhat/"),
            "samples": len(scenarios),
            "sample_ids": [sample_id(*s) for s in scenarios],
        },
        "solver": config.agent,
        "model": model,
        "model_base_url": config.agent_base_url,
        "model_generate_config": _generate_config(config),
        "model_args": {},
        "config": {"epochs": config.trials},
        "packages": {"passhat": passhat.__version__},
        "metadata": config.model_dump(mode="json"),  # the stored configuration, older passhats' keys filled in
    }


def _task(config: RunConfig) -> str:
    """passhat/<domain>; a domain folder's stored path ends in the domain's name."""
    return f"passhat/{Path(config.domain).name}"


def _plan(config: RunConfig) -> dict[str, Any]:
    """The agent as Inspect's one solver step, with the sampling temperature it was given."""
    params = {"user": config.user, "mode": config.mode}
    return {
        "name": "plan",
        "steps": [{"solver": config.agent, "params": params, "params_passed": params}],
        "config": _generate_config(config),
    }


def _generate_config(config: RunConfig) -> dict[str, Any]:
    """Inspect's GenerateConfig of the agent's model: the sampling temperature it was given, if any."""
    temperature = config.agent_temperature
    return {} if temperature is None else {"temperature": temperature}


def _results(planned: int, tally: Tally) -> dict[str, Any]:
    summary = summarize(tally.outcomes)
    judged = sum(map(is_judged, tally.outcomes))
    reward: dict[str, float] = {}
    if summary.avg_reward is not None:
        n = summary.trials_per_scenario
        reward = {"avg_reward": summary.avg_reward, f"pass^{n}": summary.pass_hat_k[n], f"pass@{n}": summary.pass_at_k[n]}
    scores = [_eval_score("reward", reward, judged, len(tally.outcomes) - judged)]
    for name, values in tally.graders.items():
        scores.append(_eval_score(name, {"mean": sum(values) / len(values)}, len(values), len(tally.outcomes) - len(values)))
    return {"total_samples": max(planned, len(tally.outcomes)), "completed_samples": judged, "scores": scores}


def _eval_score(name: str, metrics: dict[str, float], scored: int, unscored: int) -> dict[str, Any]:
    return {
        "name": name,
        "scorer": name,
        "params": {},
        "scored_samples": scored,
        "unscored_samples": unscored,
        "metrics": {metric: {"name": metric, "value": value, "params": {}} for metric, value in metrics.items()},
    }


def _status(config: RunConfig, planned: int, tally: Tally) -> str:
    """success when every planned trial is stored (one row per planned trial, judged or not), or early stopping
    left the rest out on purpose; cancelled for a run that was interrupted and not resumed."""
    return "success" if config.early_stop or len(tally.outcomes) >= planned else "cancelled"


def _iso(timestamp: float | None) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat() if timestamp is not None else ""


@contextlib.contextmanager
def _replaced(path: Path) -> Iterator[IO[bytes]]:
    """A new file that takes ``path``'s place when the block ends without an error, and is removed if it does
    not, so a failed export never leaves a truncated log behind. (A short name: any valid ``path`` fits.)"""
    tmp = path.parent / f".passhat-{secrets.token_hex(6)}.tmp"
    try:
        with open(tmp, "xb") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
