"""Human runs: runs whose customers are people, one trial per session, several sessions at once.

A human run is a run like any other (a run folder, a results store, a configuration with ``user = "human"``),
opened by the first session of its domain and filled by people, each session one trial of the scenario its person
picked: the next trial index of that scenario, its seed derived as any trial's. The trial is judged by the run's
``TrialJudge`` (the same environment, guards, graders and record as a simulated trial) with the session's person as
its customer. A session left idle past the timeout is stored as abandoned: an unjudged trial, never scored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from passhat.agents import resolve_agent
from passhat.agents.base import AgentFactory
from passhat.customers.human import HumanCustomer
from passhat.customers.personas import PERSONAS
from passhat.domains.model import Domain
from passhat.errors import UserError
from passhat.llm import ModelHub
from passhat.run.judged import TrialJudge, replay_ground_truths
from passhat.run.preflight import load_checked_domain
from passhat.run.runner import passhat_version
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec
from passhat.run_config import RunConfig, task_fingerprint
from passhat.store import ResultStore, TrialRecord
from passhat.vocabulary import HUMAN

# (action, by, **details): where a session's actions are recorded with the person's account. Blocking (it may wait
# for a lock that a request holds while it hands the person's words to the event loop), so it is called in a worker
# thread, never in the loop: there it would wait for that request, and the request for the loop.
Trail = Callable[..., None]


@dataclasses.dataclass
class HumanSession:
    """One person's trial: who plays it, which trial it is, the person's customer and, once over, its stored record
    (whose events hold the whole conversation, the agent's words after the person's last too: a hand-off's)."""

    id: str
    account: str
    run_id: str
    domain: Domain
    spec: TrialSpec
    customer: HumanCustomer
    record: TrialRecord | None = None
    playing: asyncio.Task[None] | None = None

    @property
    def state(self) -> str:
        """talking (the trial is on), graded, abandoned (the person let it idle) or unjudged (the agent's service or
        the harness failed): the last two stored without a grade."""
        if self.record is None:
            return "talking"
        if self.record.reward is None:
            return "abandoned" if self.customer.idled else "unjudged"
        return "graded"


@dataclasses.dataclass(frozen=True)
class _HumanRun:
    """One domain's human run: its store, configuration, model clients (for an llm: agent) and agent factory."""

    store: ResultStore
    config: RunConfig
    hub: ModelHub
    make_agent: AgentFactory


class HumanRuns:
    """The human runs a server holds open: one per domain, in the runs folder ``out``, all against the agent ``agent``."""

    def __init__(self, out: Path, agent: str, idle_timeout: float, trail: Trail, seed: int = 0):
        self.out, self.agent, self.idle_timeout, self.seed = Path(out), agent, idle_timeout, seed
        self._trail = trail
        resolve_agent(agent)  # only checked here: a bad --agent is refused before the server starts
        self._runs: dict[str, _HumanRun] = {}
        self._taken: set[tuple[str, str, str, int]] = set()  # (run, task, persona, trial) of the sessions under way
        self.sessions: dict[str, HumanSession] = {}

    async def start(self, account: str, domain_name: str, task_id: str, persona: str) -> HumanSession:
        """A new session of the scenario, its trial under way; UserError naming what is unknown. Await it in the
        event loop the trials are to run in."""
        domain = load_checked_domain(domain_name)
        task = domain.tasks.get(task_id)
        if task is None:
            raise UserError(f"there is no task {task_id!r} in domain {domain_name!r}.")
        if persona not in PERSONAS:
            raise UserError(f"unknown persona {persona!r}; choose from {', '.join(PERSONAS)}.")
        run = self._run(domain)
        replay_ground_truths(domain, [task])  # what its grading needs, worked out before the person begins
        trial = self._next_trial(run.store, task_id, persona)
        try:  # recorded before it starts: a trail that cannot record it refuses it
            details = {"run": run.store.run_id, "task": task_id, "persona": persona, "trial": trial}
            await asyncio.to_thread(self._trail, "human_trial_started", account, **details)
        except BaseException:
            self._taken.discard((run.store.run_id, task_id, persona, trial))
            raise
        spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(self.seed, task_id, persona, trial))
        customer = HumanCustomer(self.idle_timeout)
        session = HumanSession(secrets.token_urlsafe(16), account, run.store.run_id, domain, spec, customer)
        self.sessions[session.id] = session
        judge = TrialJudge(domain, run.config, run.make_agent, customer.factory())
        session.playing = asyncio.get_running_loop().create_task(self._play(session, run.store, judge))
        return session

    async def _play(self, session: HumanSession, store: ResultStore, judge: TrialJudge) -> None:
        """Judge the session's trial with its person as the customer, store it and record how it ended."""
        spec = session.spec
        try:
            row, _ = await judge.judge(spec)  # a human run has no audit guard: its trail is the runs folder's
            store.record(row)
            session.record = next(store.records([row.key]))
        finally:
            self._taken.discard((session.run_id, spec.task.id, spec.persona.name, spec.trial))
            session.customer.ended = True
        await asyncio.to_thread(
            self._trail, "human_trial_stored", session.account, run=store.run_id, task=spec.task.id,
            persona=spec.persona.name, trial=spec.trial, state=session.state, reward=row.reward,
        )  # fmt: skip

    def _run(self, domain: Domain) -> _HumanRun:
        """The domain's human run, created at its first session (its model clients in the running event loop)."""
        if domain.name not in self._runs:
            config = RunConfig(
                domain=domain.name, agent=self.agent, user=HUMAN, personas=list(PERSONAS), tasks=list(domain.tasks),
                trials=1, seed=self.seed, tasks_fingerprint=task_fingerprint(domain.tasks.values()),
                passhat_version=passhat_version(),
            )  # fmt: skip
            run_id = f"human-{domain.name}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
            store = ResultStore.create(self.out / run_id, run_id, config.model_dump(mode="json"))
            hub = ModelHub.from_config(config)
            self._runs[domain.name] = _HumanRun(store, config, hub, resolve_agent(self.agent, hub))
        return self._runs[domain.name]

    def _next_trial(self, store: ResultStore, task_id: str, persona: str) -> int:
        """The scenario's first trial index neither stored (an abandoned trial too) nor under way in another session,
        taken for this one."""
        used = {r.trial for r in store.trial_rows() if (r.task_id, r.persona) == (task_id, persona)}
        used |= {k[3] for k in self._taken if k[:3] == (store.run_id, task_id, persona)}
        trial = next(i for i in range(len(used) + 1) if i not in used)
        self._taken.add((store.run_id, task_id, persona, trial))
        return trial

    def session(self, session_id: str, account: str) -> HumanSession:
        """The account's session of that id; UserError when there is none (another person's is none too)."""
        found = self.sessions.get(session_id)
        if found is None or found.account != account:
            raise UserError("there is no such session of yours; start one from the tester page.")
        return found

    async def aclose(self) -> None:
        """Close every run's store and model clients (sessions still talking are cut: their trials are not stored; a
        stored one's trail record is waited for)."""
        playing = [s.playing for s in self.sessions.values() if s.playing is not None]
        for session in self.sessions.values():
            if session.playing is not None and session.record is None:
                session.playing.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        for run in self._runs.values():
            run.store.close()
            await run.hub.aclose()
        self._runs.clear()
