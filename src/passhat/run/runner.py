"""A run: every trial of every scenario, concurrently, each stored as soon as it finishes.

Trials are independent and seeded by what they are, so a resumed run, or one with another
concurrency, produces the same per-trial results as an uninterrupted one.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable

from passhat.agents import resolve_agent
from passhat.domains import load_domain
from passhat.domains.model import Domain, Task
from passhat.errors import UserError
from passhat.faults import parse_faults
from passhat.grade import GroundTruthError, expected_environment
from passhat.guard import AuditLog, parse_guards
from passhat.llm import ModelHub, metering, role_models, scrub
from passhat.run.config import RunConfig
from passhat.run.early_stop import EarlyStop
from passhat.run.seeding import trial_seed
from passhat.run.trial import AgentFactory, TrialSpec, UserFactory, run_trial
from passhat.store import ResultStore, TrialRecord
from passhat.users import resolve_user
from passhat.users.personas import resolve_personas

OnTrial = Callable[[TrialRecord], None]


def select_tasks(domain: Domain, ids: list[str] | None) -> list[Task]:
    if not ids:
        return list(domain.tasks.values())
    unknown = [i for i in ids if i not in domain.tasks]
    if unknown:
        raise UserError(
            f"unknown task id {', '.join(map(repr, unknown))} in --tasks for domain {domain.name!r}; "
            f"`passhat tasks --domain {domain.name}` lists them."
        )
    return [domain.tasks[i] for i in ids]


def plan_trials(config: RunConfig, done: set[tuple[str, str, int]]) -> list[TrialSpec]:
    """The trials of the run not yet judged, in a fixed order."""
    domain = load_domain(config.domain)
    specs = []
    for task in select_tasks(domain, config.tasks):
        for persona in resolve_personas(",".join(config.personas)):
            for i in range(config.trials):
                if (task.id, persona.name, i) not in done:
                    specs.append(TrialSpec(task, persona, i, trial_seed(config.seed, task.id, persona.name, i)))
    return specs


def validate_ground_truth(domain: Domain, tasks: list[Task]) -> None:
    """A task whose ground truth does not replay is a broken task file: stop before any trial."""
    for task in tasks:
        try:
            expected_environment(domain, task)
        except GroundTruthError as exc:
            raise UserError(f"{exc}. Fix the task file; `passhat check --domain {domain.name}` lists every problem.") from None


async def execute(
    config: RunConfig, store: ResultStore, concurrency: int, on_trial: OnTrial | None = None,
    early_stop: EarlyStop | None = None,
) -> int:
    """Run every missing trial (all but those early_stop settles first); returns how many ran."""
    domain = load_domain(config.domain)
    specs = plan_trials(config, store.completed_keys())
    if early_stop:
        specs = early_stop.order(specs)
    validate_ground_truth(domain, list({s.task.id: s.task for s in specs}.values()))
    gate = asyncio.Semaphore(max(1, concurrency))
    hub = ModelHub.from_config(config)  # the run's model clients, if its agent or customer is a model
    make_agent = resolve_agent(config.agent, hub, with_policy=not config.no_policy)
    make_user = resolve_user(config.user, hub)
    audit = AuditLog(store.path.parent) if "audit" in config.guard else None  # the run's hash-chained trail

    async def one(spec: TrialSpec) -> None:
        async with gate:
            if early_stop and early_stop.settled((spec.task.id, spec.persona.name)):
                return early_stop.skip()
            record, audit_records = await _judged_trial(domain, spec, config, make_agent, make_user)
            store.record(record)
            if audit is not None:  # after the trial is stored: a crash in between loses entries, never doubles them
                audit.extend(audit_records)
            if early_stop:
                early_stop.record(record.to_outcome())
            if on_trial:
                on_trial(record)

    try:
        await asyncio.gather(*(one(s) for s in specs))
    finally:
        await hub.aclose()
    return len(specs) - (early_stop.skipped if early_stop else 0)


async def _judged_trial(
    domain: Domain, spec: TrialSpec, config: RunConfig, make_agent: AgentFactory, make_user: UserFactory
) -> tuple[TrialRecord, list[dict[str, Any]]]:
    key = {"task_id": spec.task.id, "persona": spec.persona.name, "trial": spec.trial, "seed": spec.seed}
    started = time.time()
    with metering() as meter:  # counts this trial's model calls, even those of a trial that fails
        try:
            out = await run_trial(
                domain, spec, make_agent, make_user, config.mode, config.max_turns, config.faults, config.guard
            )
        except Exception:  # an infra or harness failure: stored, retried on resume, never scored
            return TrialRecord(
                **key, reward=None, signature="infra_error", infra_error=scrub(traceback.format_exc(limit=8)),
                events=[], grade={}, started=started, finished=time.time(), usage=meter.to_json(),
            ), []
    return TrialRecord(
        **key, reward=out.grade.reward, signature=out.grade.signature, infra_error=None,
        events=[e.to_dict() for e in out.events], grade=out.grade.to_dict(), started=started, finished=time.time(),
        usage=meter.to_json(),
    ), out.audit


def new_config(**options: object) -> RunConfig:
    """A RunConfig from CLI options, with names checked (domain, personas, tasks, agent, user)."""
    domain = load_domain(str(options["domain"]))
    personas = [p.name for p in resolve_personas(str(options.pop("personas")))]
    task_ids = [t.strip() for t in str(options.pop("tasks") or "").split(",") if t.strip()]
    tasks = [t.id for t in select_tasks(domain, task_ids)]
    options["faults"] = parse_faults(str(options.get("faults") or ""))
    options["guard"] = parse_guards(str(options.get("guard") or "off"))
    resolve_agent(str(options["agent"]), with_policy=not options.get("no_policy"))
    resolve_user(str(options["user"]))
    config = RunConfig(personas=personas, tasks=tasks, **options)  # type: ignore[arg-type]
    role_models(config)  # model names, base URLs, keys and SDKs: checked before the run is created
    return config

