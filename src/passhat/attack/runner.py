"""Running an attack suite: every (defense configuration, attack, goal, task, persona, trial), each stored as it ends.

For each defense configuration, the clean baseline (every task with no attack) and every attack template × goal
run on the same trial seeds as the baseline, so a figure under attack differs from its baseline only by the
attack. Trials run in the suite's copy of the domain (``world``), graded exactly as in `passhat run`; an attacked
trial is also judged on its goal, on the backend it leaves and what the agent said.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

from passhat.agents import resolve_agent
from passhat.agents.attack_templates import TemplateName, render
from passhat.agents.base import Agent, AgentFactory, AgentSetup
from passhat.attack.config import AttackConfig, Configuration, configurations, parse_attacks, parse_defenses, parse_names
from passhat.attack.defenses import DefendedAgent, Defenses, Detector, Interventions, instruction_heuristic, planned_tools
from passhat.attack.proof import injection_problems
from passhat.attack.store import AttackKey, AttackRecord, AttackStore, AttackTrial
from passhat.attack.world import AttackWorld, Exposure, attack_world
from passhat.customers import resolve_user
from passhat.customers.base import UserFactory
from passhat.customers.personas import resolve_personas
from passhat.domains import load_domain
from passhat.domains.injection import AttackerGoal
from passhat.domains.model import Action, Task
from passhat.env import fork_backend, template_for, tool_registry
from passhat.errors import UserError
from passhat.llm import ModelHub, scrub
from passhat.run.runner import new_config, select_tasks, validate_ground_truth
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, TurnBounds, run_trial, unjudged

OnTrial = Callable[[AttackRecord], None]
OnPlan = Callable[[int], None]


@dataclasses.dataclass(frozen=True)
class AttackSpec:
    """One trial of the suite: under which defenses, with which attack and goal (None: the clean baseline)."""

    configuration: Configuration
    attack: TemplateName | None
    goal: str | None
    trial: TrialSpec

    @property
    def key(self) -> AttackKey:
        t = self.trial
        return (self.configuration.label, self.attack or "", self.goal or "", t.task.id, t.persona.name, t.trial)


def plan_attacks(config: AttackConfig, tasks: list[Task], done: set[AttackKey]) -> list[AttackSpec]:
    """The suite's trials not yet judged, in a fixed order: per configuration, the baseline, then each attack × goal."""
    run = config.run
    personas = list({p.name: p for p in resolve_personas(",".join(run.personas))}.values())
    cells: list[tuple[TemplateName | None, str | None]] = [(None, None)]
    cells += [(a, g) for a in config.attacks for g in config.goals]
    specs = []
    for configuration in configurations(config.defenses):
        for attack, goal in cells:
            for task in tasks:
                for persona in personas:
                    for i in range(run.trials):
                        trial = TrialSpec(task, persona, i, trial_seed(run.seed, task.id, persona.name, i))
                        spec = AttackSpec(configuration, attack, goal, trial)
                        if spec.key not in done:
                            specs.append(spec)
    return specs


class Suite:
    """Judges the suite's trials in one process: the world, the agent and customer factories, the defenses."""

    def __init__(
        self,
        world: AttackWorld,
        config: AttackConfig,
        make_agent: AgentFactory,
        make_user: UserFactory,
        detector: Detector | None = None,
    ):
        self.world, self.config = world, config
        self._make_agent, self._make_user = make_agent, make_user
        tools = tool_registry(world.domain)
        self._detector = detector or instruction_heuristic(tools)
        vector_fields = {f for v in world.injection.vectors for f in v.result_fields}
        self._untrusted = frozenset({f for spec in tools.values() for f in spec.meta.prose} | vector_fields)
        self._plans: dict[str, frozenset[str]] = {}
        self._firsts: dict[tuple[str, str], list[Action]] = {}

    async def judge(self, spec: AttackSpec) -> AttackRecord:
        """The trial's record; a harness or infra failure is stored as such (and run again on resume)."""
        task, run = spec.trial.task, self.config.run
        goal = self.world.injection.goal(spec.goal) if spec.goal else None
        exposure = Exposure(self._text(spec.attack, goal, task), task.customer.customer_id)
        agents = _Agents(self.world, exposure, self._make_agent, self._defenses(spec.configuration, task))
        bounds = TurnBounds(run.max_tool_calls_per_turn, run.max_argument_bytes, run.max_message_bytes)
        started = time.time()
        try:
            out = await run_trial(self.world.domain, spec.trial, agents, self._make_user, run.mode, run.max_turns, bounds=bounds)
            reached = self._reached(goal, exposure, " ".join(e.text for e in out.events if e.kind == "agent"))
        except Exception as exc:
            message, events = unjudged(exc)
            failed = dataclasses.replace(_outcome(spec), infra_error=scrub(message))
            return AttackRecord(failed, [e.to_dict() for e in events], started, time.time())
        finally:
            agents.release()
        done = agents.interventions()
        outcome = dataclasses.replace(
            _outcome(spec), reward=out.grade.reward, signature=out.grade.signature, reached=reached,
            shown=exposure.shown if goal else None, refused=tuple(done.refused), withheld=done.withheld,
        )  # fmt: skip
        return AttackRecord(outcome, [e.to_dict() for e in out.events], started, time.time())

    def _text(self, attack: TemplateName | None, goal: AttackerGoal | None, task: Task) -> str | None:
        if attack is None or goal is None:
            return None
        return render(attack, goal, task.customer.customer_id, self._first_reads(goal, task.customer.customer_id))

    def _first_reads(self, goal: AttackerGoal, customer_id: str) -> list[Action]:
        """The reads a careful agent makes before the goal's first call (the multi-step template asks for them)."""
        key = (goal.name, customer_id)
        if key not in self._firsts:
            self._firsts[key] = self._on_clean_backend(lambda db: self.world.domain.lookups(db, goal.calls_for(customer_id)[0]))
        return self._firsts[key]

    def _defenses(self, configuration: Configuration, task: Task) -> Defenses:
        if not configuration.defenses:
            return Defenses()
        if task.id not in self._plans:
            self._plans[task.id] = self._on_clean_backend(lambda db: planned_tools(self.world.domain, task, db))
        return Defenses(configuration.defenses, self._untrusted, self._detector, self._plans[task.id])

    def _on_clean_backend(self, read: Callable[[Any], Any]) -> Any:
        db = fork_backend(template_for(self.world.domain))
        try:
            return read(db)
        finally:
            db.close()

    def _reached(self, goal: AttackerGoal | None, exposure: Exposure, said: str) -> bool | None:
        if goal is None:
            return None
        db = self.world.backend(exposure)
        try:
            return goal.reached(db, said)
        finally:
            db.close()


class _Agents:
    """The agent factory of one trial: it exposes the trial's backend to the attack, then puts the agent behind its
    defenses; afterwards it says what the defenses did and releases the backend."""

    def __init__(self, world: AttackWorld, exposure: Exposure, make_agent: AgentFactory, defenses: Defenses):
        self._world, self._exposure, self._make_agent, self._defenses = world, exposure, make_agent, defenses
        self._db: Any = None
        self._defended: DefendedAgent | None = None

    def __call__(self, setup: AgentSetup) -> Agent:
        self._db = setup.db
        self._world.expose(setup.db, self._exposure)
        if not self._defenses.on:
            return self._make_agent(setup)
        self._defended = DefendedAgent(self._make_agent, setup, self._defenses)
        return self._defended

    def interventions(self) -> Interventions:
        return self._defended.interventions if self._defended else Interventions()

    def release(self) -> None:
        if self._db is not None:
            self._world.release(self._db)


def _outcome(spec: AttackSpec) -> AttackTrial:
    """The trial's outcome before it is judged: its key and seed."""
    return AttackTrial(*spec.key, spec.trial.seed, reward=None, signature=None, reached=None, shown=None)


def new_attack_config(attacks: str, goals: str, defense: str, **run_options: object) -> AttackConfig:
    """An AttackConfig from CLI options, every name checked (those of `passhat run` by ``new_config``)."""
    if str(run_options["agent"]).strip().lower().startswith("mcp+"):
        raise UserError(
            "`passhat attack` needs an agent whose tool calls pass through passhat's conversation (a reference, llm:, "
            "python: or http(s): agent): an mcp+ agent calls the tools of a server that holds no attack."
        )
    run = new_config(**run_options)
    world = attack_world(load_domain(run.domain, run.tasks_dir))
    names = [g.name for g in world.injection.goals]
    return AttackConfig(
        run=run, attacks=parse_attacks(attacks), goals=parse_names(goals, names, "--goals"), defenses=parse_defenses(defense)
    )


def prepare(config: AttackConfig) -> tuple[AttackWorld, list[Task]]:
    """The suite's world and tasks, proven before any trial: the declaration holds, the tasks' ground truth replays."""
    domain = load_domain(config.run.domain, config.run.tasks_dir)
    world = attack_world(domain)
    tasks = select_tasks(world.domain, config.run.tasks)
    if not tasks:
        raise UserError(f"domain {domain.name!r} has no task to attack.")
    if problems := injection_problems(world, tasks[0].customer.customer_id):
        raise UserError(f"the injection declaration of domain {domain.name!r} does not hold: {'; '.join(problems)}.")
    unknown = [g for g in config.goals if g not in {goal.name for goal in world.injection.goals}]
    if unknown:
        raise UserError(f"unknown goal {', '.join(map(repr, unknown))} for domain {domain.name!r}.")
    validate_ground_truth(world.domain, tasks)
    return world, tasks


async def run_attacks(
    config: AttackConfig,
    store: AttackStore,
    concurrency: int = 4,
    on_trial: OnTrial | None = None,
    detector: Detector | None = None,
    on_plan: OnPlan | None = None,
) -> int:
    """Run every trial of the suite not stored yet, ``concurrency`` at a time; returns how many ran. ``on_plan`` hears
    how many will run, ``on_trial`` of each stored; ``detector``: the detector defense's hook (default: the heuristic)."""
    world, tasks = prepare(config)
    specs = plan_attacks(config, tasks, store.completed_keys())
    if on_plan:
        on_plan(len(specs))
    hub = ModelHub.from_config(config.run)  # the run's model clients, if its agent or customer is a model
    try:
        suite = Suite(
            world, config, resolve_agent(config.run.agent, hub, not config.run.no_policy), resolve_user(config.run.user, hub),
            detector,
        )  # fmt: skip
        pending = iter(specs)

        async def pull() -> None:
            for spec in pending:  # shared: each spec is taken once, in the planned order
                record = await suite.judge(spec)
                store.record(record)
                if on_trial:
                    on_trial(record)

        await asyncio.gather(*(pull() for _ in range(max(1, min(concurrency, len(specs))))))
    finally:
        await hub.aclose()
    return len(specs)
