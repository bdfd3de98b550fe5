"""A run: every trial of every scenario, concurrently, each stored as soon as it finishes.

Trials are independent and seeded by what they are, so a resumed run, or one with another
concurrency, produces the same per-trial results as an uninterrupted one. With the audit guard, a
trial and its audit entries are committed together (see ``passhat.run.audit_trail``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import resolve_personas
from passhat.domains import load_domain
from passhat.domains.model import Domain, Task
from passhat.errors import UserError
from passhat.faults import parse_faults
from passhat.grade import GroundTruthError
from passhat.guard import parse_guards
from passhat.guard.audit import signing_key
from passhat.llm import role_models
from passhat.run.audit_trail import RunTrail
from passhat.run.early_stop import EarlyStop
from passhat.run.executors import Executor
from passhat.run.judged import AuditRecords, replay_ground_truths, trial_judge
from passhat.run.preflight import load_checked_domain
from passhat.run.seeding import trial_seed
from passhat.run.trial import HELD_PER_CONVERSATION, TrialSpec
from passhat.run.workers import WorkerPool, worker_count
from passhat.run_config import RunConfig, task_fingerprint
from passhat.store import EncodedTrial, ResultStore

OnTrial = Callable[[EncodedTrial], None]
OnSkip = Callable[[], None]


def select_tasks(domain: Domain, ids: list[str] | None) -> list[Task]:
    """The tasks of these ids in their order, each once; no ids is every task of the domain."""
    if not ids:
        return list(domain.tasks.values())
    ids = list(dict.fromkeys(ids))  # a repeated id is one scenario, not two (the store has one key per trial)
    unknown = [i for i in ids if i not in domain.tasks]
    if unknown:
        raise UserError(
            f"unknown task id {', '.join(map(repr, unknown))} in --tasks for domain {domain.name!r}; "
            f"`passhat tasks --domain {domain.name}` lists them."
        )
    return [domain.tasks[i] for i in ids]


def plan_trials(config: RunConfig, done: set[tuple[str, str, int]]) -> list[TrialSpec]:
    """The trials of the run not yet judged, in a fixed order."""
    domain = load_domain(config.domain, config.tasks_dir)
    specs = []
    personas = {p.name: p for p in resolve_personas(",".join(config.personas))}.values()  # each once
    for task in select_tasks(domain, config.tasks):
        for persona in personas:
            for i in range(config.trials):
                if (task.id, persona.name, i) not in done:
                    specs.append(TrialSpec(task, persona, i, trial_seed(config.seed, task.id, persona.name, i)))
    return specs


def validate_ground_truth(domain: Domain, tasks: list[Task]) -> None:
    """A task whose ground truth does not replay is a broken task file: stop before any trial."""
    try:
        replay_ground_truths(domain, tasks)
    except GroundTruthError as exc:
        raise UserError(f"{exc}. Fix the task file; `passhat check --domain {domain.name}` lists every problem.") from None


class TrialSink:
    """Where the run's trials go, in the one process that writes the store: it decides whether a spec still
    runs (early stop), then stores each finished trial with its audit entries and tells the progress bar."""

    def __init__(
        self, store: ResultStore, trail: RunTrail | None, early_stop: EarlyStop | None, on_trial: OnTrial | None,
        on_skip: OnSkip | None,
    ):  # fmt: skip
        self._store, self._trail, self._early_stop = store, trail, early_stop
        self._on_trial, self._on_skip = on_trial, on_skip

    def admits(self, spec: TrialSpec) -> bool:
        """Whether this trial is to run now; one early stop leaves out is counted as skipped."""
        if self._early_stop and self._early_stop.settled((spec.task.id, spec.persona.name)):
            self._early_stop.skip()
            if self._on_skip:
                self._on_skip()
            return False
        return True

    def store(self, record: EncodedTrial, audit_records: AuditRecords) -> None:
        self.count(record)
        self.write(record, audit_records)

    def count(self, record: EncodedTrial) -> None:
        """Early stop hears of a finished trial (before it is written, so a caller can hand out the next one)."""
        if self._early_stop:
            self._early_stop.record(record.to_result())

    def write(self, record: EncodedTrial, audit_records: AuditRecords) -> None:
        if self._trail:
            self._trail.record(record, audit_records)  # the trial and its audit entries: one transaction
        else:
            self._store.record(record)
        if self._on_trial:
            self._on_trial(record)


async def execute(
    config: RunConfig,
    store: ResultStore,
    concurrency: int,
    on_trial: OnTrial | None = None,
    early_stop: EarlyStop | None = None,
    on_skip: OnSkip | None = None,
    workers: int = 1,
    executor: Executor = "local",
    ray_address: str | None = None,
) -> int:
    """Run every missing trial (all but those early_stop settles first); returns how many ran.

    At most ``concurrency`` trials are in flight in all; ``workers`` > 1 runs them in that many worker
    processes (``passhat.run.workers``), or with ``executor`` "ray" in that many Ray actors on the cluster at
    ``ray_address`` (``passhat.run.ray_executor``), this process staying the one writer of the store. on_trial is
    called with each stored trial, on_skip once for each trial early_stop leaves out, so the two together
    account for every planned trial (a progress bar's total).
    """
    domain = load_domain(config.domain, config.tasks_dir)
    config = config.model_copy(update={"run_folder": str(store.path.parent.resolve())})  # where the inbox operator files
    specs = plan_trials(config, store.completed_keys())
    if early_stop:
        specs = early_stop.order(specs)
    validate_ground_truth(domain, list({s.task.id: s.task for s in specs}.values()))
    trail = RunTrail(store, signing_key()) if "audit" in config.guard else None  # repairs what a kill left
    sink = TrialSink(store, trail, early_stop, on_trial, on_skip)
    try:
        workers = min(worker_count(config, workers, concurrency), len(specs))
        if executor == "ray" and workers:
            from passhat.run.ray_executor import RayPool  # Ray is an optional extra

            await RayPool(config, workers, concurrency, ray_address).run(specs, sink)
        elif workers > 1:
            await WorkerPool(config, workers, concurrency).run(specs, sink)
        else:
            await _in_process(config, specs, sink, concurrency)
    finally:
        if trail:
            trail.close()
    return len(specs) - (early_stop.skipped if early_stop else 0)


async def _in_process(config: RunConfig, specs: list[TrialSpec], sink: TrialSink, concurrency: int) -> None:
    """Loops pulling specs in order from one iterator, ``concurrency`` conversations at once and as many trials
    waiting as a worker holds (see ``passhat.run.workers``): memory bounded by the trials in flight, not by the
    run's size (no coroutine per planned trial)."""
    pending = iter(specs)
    conversations = max(1, min(concurrency, len(specs)))
    async with trial_judge(config, conversations) as judge:

        async def pull() -> None:
            for spec in pending:  # shared: each spec is taken once, in the planned order
                if sink.admits(spec):
                    sink.store(*await judge.judge(spec))

        await asyncio.gather(*(pull() for _ in range(HELD_PER_CONVERSATION * conversations)))


def passhat_version() -> str:
    """The version of the code running the trials (stored with a run; --resume compares it)."""
    import passhat

    return passhat.__version__


def resume_check(config: RunConfig, run_name: str) -> list[str]:
    """Refuse (UserError) to resume a run whose tasks or passhat version changed since it started; the
    warnings to print when the store is too old to tell."""
    fresh = "start a fresh run (the same flags and a new --run-id, without --resume) to evaluate the current {}"
    if config.imported is not None:
        raise UserError(
            f"run {run_name!r} was imported from {config.imported.source} by `passhat import`: another harness judged "
            "its trials, so passhat has none to run; import the source again under a new --run-id instead."
        )
    if config.tasks_fingerprint is None or config.passhat_version is None:
        return [
            f"run {run_name!r} was stored by an older passhat without a fingerprint of its tasks and version: "
            "resuming without checking that they are unchanged."
        ]
    if config.passhat_version != passhat_version():
        raise UserError(
            f"run {run_name!r} was started with passhat {config.passhat_version}, this is passhat {passhat_version()}: "
            f"its stored trials and the missing ones would come from different code; {fresh.format('code')}."
        )
    domain = load_checked_domain(config.domain, config.tasks_dir)
    gone = [t for t in dict.fromkeys(config.tasks) if t not in domain.tasks]
    if gone:
        raise UserError(
            f"task {', '.join(map(repr, gone))} of run {run_name!r} no longer exists in domain {config.domain!r}; "
            f"{fresh.format('tasks')}."
        )
    if task_fingerprint(select_tasks(domain, config.tasks)) != config.tasks_fingerprint:
        raise UserError(
            f"the task definitions of run {run_name!r} ({len(set(config.tasks))} tasks of domain {config.domain!r}) "
            f"changed since it started: its stored trials and the missing ones would grade different tasks; "
            f"{fresh.format('tasks')}."
        )
    return []


def new_config(**options: object) -> RunConfig:
    """A RunConfig from CLI options, with names checked (domain, personas, tasks, agent, user)."""
    domain = load_checked_domain(str(options["domain"]), options.get("tasks_dir"))  # type: ignore[arg-type]
    # names given twice count once; a list with no name in it (",") means the default, every one
    persona_names = [p.strip() for p in str(options.pop("personas") or "").split(",") if p.strip()]
    personas = list(dict.fromkeys(p.name for p in resolve_personas(",".join(persona_names) or "all")))
    task_ids = [t.strip() for t in str(options.pop("tasks") or "").split(",") if t.strip()]
    selected = select_tasks(domain, task_ids)
    tasks = [t.id for t in selected]
    options["tasks_fingerprint"] = task_fingerprint(selected)
    options["passhat_version"] = passhat_version()
    options["faults"] = parse_faults(str(options.get("faults") or ""))
    options["guard"] = parse_guards(str(options.get("guard") or "off"))
    if "audit" in options["guard"]:
        signing_key()  # a missing or unusable audit key stops the run before its folder is made
    resolve_agent(str(options["agent"]), with_policy=not options.get("no_policy"))
    resolve_user(str(options["user"]))
    config = RunConfig(personas=personas, tasks=tasks, **options)  # type: ignore[arg-type]
    role_models(config)  # model names, base URLs, keys and SDKs: checked before the run is created
    return config
