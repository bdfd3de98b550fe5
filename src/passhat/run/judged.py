"""What a process needs to judge trials of a run: its domain, model clients, agent and customer factories.

The run's own process (``--workers 1``) and every worker process build one of these each, so a trial is
judged by the same code wherever it runs, and its record depends only on its spec and the configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

from passhat.agents import resolve_agent
from passhat.agents.base import AgentFactory
from passhat.customers import resolve_user
from passhat.customers.base import UserFactory
from passhat.customers.paraphrase import with_opening
from passhat.domains import load_domain
from passhat.domains.model import Domain, Task
from passhat.grade import required_facts
from passhat.grade.steps import task_plan
from passhat.guard.inbox import Inbox, InboxStore
from passhat.llm import ModelHub, metering, scrub
from passhat.metrics.consistency import conversation_of_events
from passhat.run.trial import Pacing, TrialSpec, TurnBounds, run_trial, unjudged
from passhat.run_config import RunConfig
from passhat.store import EncodedTrial, TrialRecord
from passhat.trajectory import INFRA_ERROR, Event

AuditRecords = list[dict[str, Any]]


class TrialJudge:
    """Runs and judges one trial at a time (many concurrently), with one process's factories."""

    def __init__(
        self, domain: Domain, config: RunConfig, make_agent: AgentFactory, make_user: UserFactory, inbox: Inbox | None = None,
        conversations: int | None = None,
    ):  # fmt: skip
        """``conversations``: how many trials may be talking at once, paced as Pacing says (None: as many as
        are judged, unpaced)."""
        self.domain, self.config, self.inbox = domain, config, inbox
        self._make_agent, self._make_user = make_agent, make_user
        self._pacing = Pacing(asyncio.Semaphore(conversations)) if conversations else None

    async def judge(self, spec: TrialSpec) -> tuple[EncodedTrial, AuditRecords]:
        """The trial's row, encoded here (where it ran), and its audit entries; a harness or infra failure is an
        infra-error row."""
        config = self.config
        key = {"task_id": spec.task.id, "persona": spec.persona.name, "trial": spec.trial, "seed": spec.seed}
        started = time.time()
        with metering() as meter:  # counts this trial's model calls, even those of a trial that fails
            try:
                bounds = TurnBounds(config.max_tool_calls_per_turn, config.max_argument_bytes, config.max_message_bytes)
                make_user = with_opening(self._make_user, spec.trial, config.paraphrase)
                out = await run_trial(
                    self.domain, spec, self._make_agent, make_user, config.mode, config.max_turns, config.faults,
                    config.guard, bounds, self.inbox, self._pacing,
                )  # fmt: skip
            except Exception as exc:  # an infra or harness failure: stored with its events, retried on resume, never scored
                message, events = unjudged(exc)
                return infra_error_trial(spec, scrub(message), started, meter.to_json(), events), []
        events = [e.to_dict() for e in out.events]
        return TrialRecord(
            **key,
            reward=out.grade.reward,
            signature=out.grade.signature,
            infra_error=None,
            events=events,
            grade=out.grade.to_dict(),
            started=started,
            finished=time.time(),
            usage=meter.to_json(),
            steps={**out.steps.to_json(), "conversation": conversation_of_events(events).to_json()},  # read by reports
        ).encoded(), out.audit


def infra_error_trial(
    spec: TrialSpec, message: str, started: float, usage: dict[str, Any] | None = None, events: list[Event] | None = None
) -> EncodedTrial:
    """A trial that could not be judged: stored with what happened until then (``events``), retried on resume, never
    scored."""
    return TrialRecord(
        task_id=spec.task.id,
        persona=spec.persona.name,
        trial=spec.trial,
        seed=spec.seed,
        reward=None,
        signature=INFRA_ERROR,
        infra_error=message,
        events=[e.to_dict() for e in events or ()],
        grade={},
        started=started,
        finished=time.time(),
        usage=usage or {},
    ).encoded()


def replay_ground_truths(domain: Domain, tasks: Iterable[Task]) -> None:
    """Replay each task's acceptable outcomes, derive the facts they require and the plans trials are marked
    along (kept for the process). GroundTruthError: a task file whose ground truth does not replay."""
    for task in tasks:
        for outcome in task.acceptable:
            required_facts(domain, task, outcome.label)
            task_plan(domain, task, outcome.label)


@contextlib.asynccontextmanager
async def trial_judge(config: RunConfig, conversations: int | None = None) -> AsyncIterator[TrialJudge]:
    """This process's judge for the run, everything its trials share built first (so that no trial waits for
    it); its model clients are closed on exit. Enter it inside the event loop that runs the trials (the clients
    belong to it). ``conversations``: see TrialJudge."""
    domain = load_domain(config.domain, config.tasks_dir)
    replay_ground_truths(domain, (domain.tasks[t] for t in config.tasks))
    hub = ModelHub.from_config(config)  # the run's model clients, if its agent or customer is a model
    try:
        make_agent = resolve_agent(config.agent, hub, with_policy=not config.no_policy)
        with _inbox(config) as inbox:
            yield TrialJudge(domain, config, make_agent, resolve_user(config.user, hub), inbox, conversations)
    finally:
        await hub.aclose()


@contextlib.contextmanager
def _inbox(config: RunConfig) -> Iterator[Inbox | None]:
    """With the inbox operator, the inbox of the runs folder holding the run (one connection per process)."""
    if config.operator != "inbox":
        yield None
        return
    assert config.run_folder is not None, "the runner sets the run's folder"
    folder = Path(config.run_folder)
    with InboxStore.open(folder.parent) as store:
        yield Inbox(store, "run", folder.name, config.operator_timeout)
