"""What an acceptance record holds of a stored run, and how a record re-derived later differs from the signed one.

A record is plain JSON: digests that pin what was evaluated (the agent's code or endpoint settings, the domain's
files, each task's definition, the customer simulator and its personas, each stored trial), the run's settings,
and the figures exactly as `passhat report --json` writes them (built by the same function, so a record never
states a figure the report would not). Verifying re-derives the same document from the run and the files as they
are now; every path where the two differ is named.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from passhat.customers.personas import PERSONAS
from passhat.domains import domain_home, load_domain, task_file
from passhat.errors import UserError
from passhat.metrics.gate import Gate
from passhat.report import build_report
from passhat.report.json_report import report_json
from passhat.run.runner import passhat_version
from passhat.run.stored import gate_section, gated_tasks, task_tags
from passhat.run_config import RunConfig, stored_config, task_fingerprint
from passhat.store import ResultStore

KIND = "passhat acceptance record"  # every record says what it is: its seal can never pass for an audit entry's
FORMAT = 1
REFERENCE_AGENTS = Path(__file__).resolve().parent.parent / "agents" / "reference.py"
# fields of the run's configuration that say where an agent or a customer simulator is reached and how it is asked
AGENT_FIELDS = ("agent", "agent_base_url", "agent_temperature", "no_policy")
SIMULATOR_FIELDS = ("user", "user_base_url", "user_temperature")
STANDING = ("complete", "planned_trials", "stored_trials", "early_stopped", "caveats")
# what is not re-derived: when the record was made, and by which passhat (a note if it differs, never a failure)
NOT_DERIVED = frozenset({"certified_at", "passhat_version"})
SUMMARIES = frozenset({"tasks.fingerprint", "trials.count", "trials.sha256"})  # digests of parts named one by one
MAX_LISTED = 20  # differences of one kind named before "and N more"
DigestKind = Literal["module file", "endpoint settings", "passhat reference agent"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_digest(value: Any) -> str:
    return sha256(json.dumps(value, sort_keys=True, default=str).encode())


class NotCertifiable(Exception):
    """The gate was not met (or is undecided): no record is written. Carries the decision for the verdict."""

    def __init__(self, decision: Any):
        super().__init__(decision.reason)
        self.decision = decision


def record_of(store: ResultStore, gate: Gate, require_met: bool) -> dict[str, Any]:
    """The acceptance record of a stored run under ``gate`` (unsigned). require_met: refuse (NotCertifiable) a run
    the gate does not accept, as `certify` does; `verify` re-derives whatever the run now says."""
    config = stored_config(store)
    if config.imported is not None:
        raise UserError(
            f"run {store.run_id!r} was imported from {config.imported.source} (`passhat import`): an "
            "acceptance record pins the passhat domain, task files and customer simulator a run was judged with, and "
            "another harness judged this one; its report, compare and gate still apply."
        )
    decision, section = gate_section(gate, store.trial_rows(), config)
    if require_met and decision.meets is not True:
        raise NotCertifiable(decision)
    report = build_report(store, task_tags(config, _domain_gone), None, gated_tasks(config), section)
    document = json.loads(b"".join(report_json(report)))
    return {
        "kind": KIND,
        "format": FORMAT,
        "run_id": store.run_id,
        "run_created": store.created,
        "certified_at": time.time(),
        "passhat_version": passhat_version(),
        "agent": agent_identity(config),
        "domain": domain_identity(config.domain, config.tasks_dir),
        "tasks": task_identity(config),
        "simulator": simulator_identity(config),
        "seed": config.seed,
        "mode": config.mode,
        "guards": config.guard,
        "faults": config.faults,
        "config": store.config,  # as stored, keys of older passhats left out: the signed record pins the store's own
        "trials": trial_identity(store),
        "gate": document.get("gate"),
        "standing": {key: document.get(key) for key in STANDING},
        "figures": document["metrics"],
    }


def _domain_gone(why: str) -> None:
    raise UserError(f"no record of a run whose domain is gone: {why}")


def agent_identity(config: RunConfig) -> dict[str, Any]:
    """The agent's reference, and a digest of what passhat can read of it: a python: agent's module file, a
    reference agent's code, or else (a model, a service) the settings it was reached with."""
    spec = config.agent.strip()
    settings = {key: getattr(config, key) for key in AGENT_FIELDS}
    kind: DigestKind
    if spec.startswith("python:"):
        path = _module_file(spec.removeprefix("python:").partition(":")[0])
        if path is None:
            raise UserError(f"the run's agent {spec!r} cannot be found to take a digest of its module file; run passhat "
                            "where the agent's module is importable, as the run was.")  # fmt: skip
        kind, of, digest = "module file", str(path), _file_digest(path)
    elif spec.startswith("reference:"):
        kind, of, digest = "passhat reference agent", str(REFERENCE_AGENTS), sha256(REFERENCE_AGENTS.read_bytes() + spec.encode())
    else:
        kind, of, digest = "endpoint settings", ", ".join(AGENT_FIELDS), json_digest(settings)
    return {"reference": spec, "settings": settings, "digest": {"kind": kind, "of": of, "sha256": digest}}


def _module_file(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin and Path(spec.origin).is_file() else None


def _file_digest(path: Path) -> str:
    try:
        return sha256(path.read_bytes())
    except OSError as exc:
        raise UserError(f"cannot read {path} to take its digest: {exc.strerror or exc}.") from None


def domain_identity(domain: str, tasks_dir: str | None) -> dict[str, Any]:
    """A digest of the domain's files other than its task files (digested one by one under ``tasks``); for a domain
    with no folder of its own (a lone installed module), of its schema and policy."""
    loaded = load_domain(domain, tasks_dir)
    home = domain_home(loaded)
    files = sorted(p for p in home.rglob("*") if _domain_file(p)) if home else []
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(home)).encode() + b"\0" + bytes.fromhex(_file_digest(path)))  # type: ignore[arg-type]
    if not files:
        digest.update(loaded.schema_sql.encode() + b"\0" + loaded.policy.encode())
    return {"reference": domain, "tasks_dir": tasks_dir, "files": len(files), "sha256": digest.hexdigest()}


def _domain_file(path: Path) -> bool:
    return path.is_file() and path.suffix not in (".yaml", ".pyc") and "__pycache__" not in path.parts


def task_identity(config: RunConfig) -> dict[str, Any]:
    """Each of the run's tasks' definition digest, and the fingerprint over them all that the run stored when it
    started: a record is only made of a run whose tasks are still the ones it ran."""
    loaded = load_domain(config.domain, config.tasks_dir).tasks
    tasks = [loaded[t] for t in config.tasks if t in loaded]
    return {
        "fingerprint": task_fingerprint(tasks),
        "fingerprint_at_run": config.tasks_fingerprint,
        "each": {t: json_digest(loaded[t].model_dump(mode="json")) if t in loaded else None for t in config.tasks},
    }


def simulator_identity(config: RunConfig) -> dict[str, Any]:
    """The customer simulator's settings and each persona's definition."""
    personas = {p: json_digest(dataclasses.asdict(PERSONAS[p])) if p in PERSONAS else None for p in config.personas}
    return {**{key: getattr(config, key) for key in SIMULATOR_FIELDS}, "personas": personas}


def trial_identity(store: ResultStore) -> dict[str, Any]:
    """Each stored trial's digest (the one its audit trail seals), by task/persona/trial, and one over them all."""
    _, digests = store.audit_state()
    each = {"/".join(map(str, key)): digests[key] for key in sorted(digests)}
    return {"count": len(each), "sha256": json_digest(each), "each": each}


@dataclasses.dataclass(frozen=True)
class Suite:
    """What must be the same for two runs' figures to be compared: the domain, the tasks' definitions and the
    customer simulator. A record pins each task and persona and the domain's files; a run alone, only the
    fingerprint over its selected tasks (None in stores of older passhats)."""

    domain: str
    simulator: dict[str, Any]
    tasks: tuple[str, ...]
    fingerprint: str | None
    each: Mapping[str, Any] | None = None  # a record's per-task digests
    domain_digest: str | None = None
    personas: Mapping[str, Any] | None = None

    @classmethod
    def of_config(cls, config: RunConfig) -> Suite:
        simulator = {key: getattr(config, key) for key in SIMULATOR_FIELDS}
        return cls(config.domain, simulator, tuple(config.tasks), config.tasks_fingerprint)

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> Suite:
        """A record's suite; a field of the wrong shape is a UserError (the record is damaged)."""
        try:
            simulator, domain, tasks = record["simulator"], record["domain"], record["tasks"]
            return cls(str(domain["reference"]), {key: simulator[key] for key in SIMULATOR_FIELDS}, tuple(tasks["each"]),
                       tasks["fingerprint"], dict(tasks["each"]), domain["sha256"], dict(simulator["personas"]))  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(
                f"the record of run {record.get('run_id')!r} lacks its suite ({exc!r}); the file is damaged."
            ) from None


def suite_difference(a: Suite, b: Suite) -> str | None:
    """How two suites differ, in words (None: the same, as far as what each pins tells)."""
    if a.simulator != b.simulator:
        changed = ", ".join(
            f"{key} {a.simulator[key]!r} vs {b.simulator[key]!r}" for key in a.simulator if a.simulator[key] != b.simulator[key]
        )
        return f"the customer simulator differs ({changed})"
    if a.domain != b.domain:
        return f"the domain differs ({a.domain!r} vs {b.domain!r})"
    if a.domain_digest and b.domain_digest and a.domain_digest != b.domain_digest:
        return f"the domain's files differ (digest {a.domain_digest[:16]} vs {b.domain_digest[:16]})"
    if a.each is not None and b.each is not None:
        changed = sorted(t for t in set(a.each) & set(b.each) if a.each[t] != b.each[t])
        personas = sorted(p for p in set(a.personas or {}) & set(b.personas or {}) if a.personas[p] != b.personas[p])  # type: ignore[index]
        if changed:
            return f"the task set differs: the definition of {', '.join(changed[:5])} is not the same in both"
        if personas:
            return f"the customer simulator differs: persona {', '.join(personas)} is defined otherwise"
    elif a.tasks == b.tasks and a.fingerprint and b.fingerprint and a.fingerprint != b.fingerprint:
        return f"the task set differs: the same tasks with other definitions (fingerprint {a.fingerprint} vs {b.fingerprint})"
    return None


def differences(signed: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """Every place where the record re-derived now differs from the signed one, named for a person: a task file, a
    stored trial, a figure, a setting."""
    old, new = dict(_flat(signed)), dict(_flat(now))
    found: dict[str, list[str]] = {}
    for path in sorted(set(old) | set(new)):
        if path.split(".")[0] in NOT_DERIVED or path in SUMMARIES or old.get(path, _MISSING) == new.get(path, _MISSING):
            continue
        kind, text = _described(path, old.get(path, _MISSING), new.get(path, _MISSING), now)
        found.setdefault(kind, []).append(text)
    listed = []
    for texts in found.values():
        listed.extend(texts[:MAX_LISTED])
        if len(texts) > MAX_LISTED:
            listed.append(f"and {len(texts) - MAX_LISTED} more of that kind")
    return listed


class _Missing:
    def __repr__(self) -> str:
        return "absent"


_MISSING = _Missing()


def _flat(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, leaf) of a JSON document; a list is a leaf (its items have no names to give)."""
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _flat(item, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def _described(path: str, was: Any, now_value: Any, now: Mapping[str, Any]) -> tuple[str, str]:
    """(kind of difference, its sentence)."""
    head, _, rest = path.partition(".")
    if path.startswith("tasks.each."):
        task = path.removeprefix("tasks.each.")
        state = "is gone" if now_value is None or now_value is _MISSING else "changed since it was certified"
        return "task", f"{_task_named(task, now.get('domain', {}))} {state}"
    if path.startswith("trials.each."):
        trial = path.removeprefix("trials.each.")
        state = "is gone" if now_value is _MISSING else "was added" if was is _MISSING else "changed"
        return "trial", f"stored trial {trial} {state}"
    if head == "figures":
        return "figure", f"figure {rest}: certified {_shown(was)}, re-derived {_shown(now_value)}"
    return head, f"{path}: certified {_shown(was)}, now {_shown(now_value)}"


def _task_named(task: str, domain: Mapping[str, Any]) -> str:
    """A task by its file (in the run's --tasks-dir, else in the domain's folder), or by its id if neither has it."""
    folders = [Path(domain["tasks_dir"])] if domain.get("tasks_dir") else []
    if "reference" in domain:
        folders.append(domain_home(load_domain(domain["reference"])))
    path = next((found for folder in folders if folder and (found := task_file(folder, task))), None)
    return f"task file {path}" if path else f"task {task!r}"


def _shown(value: Any) -> str:
    text = repr(value) if value is _MISSING else json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."
