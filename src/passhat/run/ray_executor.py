"""Trials as Ray actor calls (``--executor ray``): a cluster's cores busy, this process the one writer of the store.

The trials run in Ray actors rather than plain Ray tasks: an actor is a worker process that keeps what a trial
needs but does not change from trial to trial (the domain and its backend template, the model clients and their
connection pools, the agent and customer factories), built once on its first trial, where a task would rebuild
it for every trial. Each actor is an async actor with its own event loop, judging its share of ``--concurrency``
at once, like a ``--workers`` process. This process keeps the plan, exactly as with workers: it hands each actor
a trial's key at a time, stores each record as its call's result arrives, and decides early stopping here,
so resume, early stop and the audit trail work as in one process, and a trial's record is the same wherever it
ran (its seed decides it).

An actor that dies (killed, out of memory, its node lost) is restarted by Ray, and each trial it had in flight
is run again, up to ``RETRIES`` times; one that still fails is stored as an infra error (retried on resume, never
scored). Each trial is one Ray call whose one result is stored once: never lost, never counted twice (and the
store refuses a second judged record of a trial). Trials still in flight when the run is interrupted are never
stored: resume runs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.customers.personas import resolve_personas
from passhat.errors import UserError
from passhat.llm import scrub
from passhat.run.judged import AuditRecords, TrialJudge, infra_error_trial, trial_judge
from passhat.run.trial import HELD_PER_CONVERSATION, TrialSpec
from passhat.run.workers import RETRIES, TrialKey, WorkerSetup, share
from passhat.store import EncodedTrial

if TYPE_CHECKING:
    from passhat.run.runner import TrialSink
    from passhat.run_config import RunConfig

CLOSE_SECONDS = 5.0  # how long the actors may take to close their model clients at the end of a run


class TrialActor:
    """One Ray worker process judging trials (made a Ray actor by RayPool): the run's environment applied, its
    judge built on the first trial, inside the actor's event loop (its model clients belong to that loop)."""

    def __init__(self, setup: WorkerSetup):
        # The run's environment (API keys, passhat's settings) over the worker's, Ray's own settings left to Ray.
        os.environ.update({k: v for k, v in setup.environ.items() if not k.startswith("RAY_")})
        if os.path.isdir(setup.cwd):  # on another node the run's folder may not exist
            os.chdir(setup.cwd)
        sys.path[:0] = [p for p in setup.sys_path if p not in sys.path]  # where the run found its agent's module
        self._config, self._conversations = setup.config, setup.conversations
        self._personas = {p.name: p for p in resolve_personas(",".join(setup.config.personas))}
        self._exits = contextlib.AsyncExitStack()
        self._judge: asyncio.Task[TrialJudge] | None = None

    async def judge(self, key: TrialKey) -> tuple[EncodedTrial, AuditRecords]:
        if self._judge is None:  # one build, awaited by every trial that arrives meanwhile
            self._judge = asyncio.ensure_future(self._exits.enter_async_context(trial_judge(self._config, self._conversations)))
        judge = await self._judge
        task_id, persona, trial, seed = key
        return await judge.judge(TrialSpec(judge.domain.tasks[task_id], self._personas[persona], trial, seed))

    async def close(self) -> None:
        """Close the model clients (and the answer cache) before the actor is killed."""
        await self._exits.aclose()


class RayPool:
    def __init__(self, config: RunConfig, count: int, concurrency: int, address: str | None):
        """Up to ``count`` actors (at most worker_count(), and at most the cluster's CPUs) sharing ``concurrency``
        and --max-connections; ``address`` None: Ray's default (RAY_ADDRESS, or a new local instance)."""
        self._config, self._count, self._concurrency, self._address = config, count, concurrency, address
        self._setup = {"environ": dict(os.environ), "cwd": os.getcwd(), "sys_path": list(sys.path)}

    async def run(self, specs: list[TrialSpec], sink: TrialSink) -> None:
        """Every spec sink admits, judged by the actors and stored by sink as each result is ready."""
        if self._address or os.environ.get("RAY_ADDRESS"):  # joining a cluster: before Ray reads its configuration
            _authenticate_as_the_cluster_does()
        import ray

        ours = _connect(ray, self._address)
        actors: list[Any] = []
        finished = False
        try:
            count = max(1, min(self._count, int(ray.cluster_resources().get("CPU", self._count))))
            conversations = share(self._concurrency, count)
            actors = [self._start(ray, index, count, conversations[index]) for index in range(count)]
            await self._drive(ray, actors, [HELD_PER_CONVERSATION * c for c in conversations], iter(specs), sink)
            finished = True
        finally:
            if finished:  # an interrupted run does not wait for its actors: what was in flight is dropped
                with contextlib.suppress(ray.exceptions.RayError):
                    ray.get([actor.close.remote() for actor in actors], timeout=CLOSE_SECONDS)
            for actor in actors:
                ray.kill(actor, no_restart=True)
            if ours:
                ray.shutdown()

    def _start(self, ray: Any, index: int, count: int, conversations: int) -> Any:
        """Actor ``index`` of ``count``, restarted by Ray whenever it dies, its calls then run again. Like a worker it
        holds as many trials again as its conversations, waiting (see ``passhat.run.workers``)."""
        connections = share(self._config.max_connections, count)[index]
        config = self._config.model_copy(update={"max_connections": max(1, connections)})
        actor = ray.remote(TrialActor).options(
            num_cpus=1, max_restarts=-1, max_task_retries=RETRIES, max_concurrency=HELD_PER_CONVERSATION * conversations
        )
        return actor.remote(WorkerSetup(config=config, conversations=conversations, **self._setup))

    async def _drive(self, ray: Any, actors: list[Any], slots: list[int], pending: Iterator[TrialSpec], sink: TrialSink) -> None:
        """Keep every actor supplied with up to its slots of trials, one lane per slot awaiting its trial's result (a
        result wakes its own lane: nothing scans the calls in flight) and handing out the next trial before storing
        the result, so that trial need not wait on the disk."""

        async def lane(actor: Any) -> None:
            call = _submit(actor, pending, sink)
            while call is not None:
                outcome = await _judged(ray, *call)
                sink.count(outcome[0])
                call = _submit(actor, pending, sink)
                sink.write(*outcome)

        await asyncio.gather(*(lane(actor) for actor, held in zip(actors, slots, strict=True) for _ in range(held)))


def _submit(actor: Any, pending: Iterator[TrialSpec], sink: TrialSink) -> tuple[Any, TrialSpec] | None:
    """The next trial sink admits, handed to ``actor``: its Ray call and its spec (None: the plan has run out)."""
    spec = next((spec for spec in pending if sink.admits(spec)), None)
    return None if spec is None else (actor.judge.remote((spec.task.id, spec.persona.name, spec.trial, spec.seed)), spec)


async def _judged(ray: Any, call: Any, spec: TrialSpec) -> tuple[EncodedTrial, AuditRecords]:
    """The trial's row, or an infra-error row when Ray could not run it (its actor died RETRIES + 1 times)."""
    try:
        outcome: tuple[EncodedTrial, AuditRecords] = await call
        return outcome
    except ray.exceptions.RayError as exc:
        detail = (str(exc).strip().splitlines() or [""])[0][:500]
        reason = f"the Ray worker running this trial failed ({type(exc).__name__}, after {RETRIES} retries): {detail}"
        return infra_error_trial(spec, scrub(reason), time.time()), []


AUTH_MODE, AUTH_TOKEN_SOURCES = "RAY_AUTH_MODE", ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def _authenticate_as_the_cluster_does() -> None:
    """Connect in token mode when a token is at hand and RAY_AUTH_MODE says nothing.

    Since Ray 2.59 ``ray start --head`` starts a cluster with token authentication on (its token in
    ~/.ray/auth_token), while a client joins with it off unless RAY_AUTH_MODE=token is set, and then fails with
    "Authentication token is missing or incorrect". A cluster without authentication accepts a client in token
    mode too, so giving the token whenever there is one costs nothing. Set before Ray is imported: it reads its
    configuration then.
    """
    has_token = any(os.environ.get(name) for name in AUTH_TOKEN_SOURCES) or (Path.home() / ".ray" / "auth_token").is_file()
    if AUTH_MODE not in os.environ and has_token:
        os.environ[AUTH_MODE] = "token"


def _connect(ray: Any, address: str | None) -> bool:
    """Connect to the cluster at ``address`` (or Ray's default); True when this call started Ray here, so the run
    shuts it down. A caller that already started Ray (a test, a notebook) keeps its instance."""
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, logging_level=logging.WARNING, **({} if address else {"include_dashboard": False}))
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = f"--ray-address {address}" if address else "a local Ray instance"
        token = " (a cluster with token authentication needs its token: RAY_AUTH_TOKEN, or ~/.ray/auth_token)" if address else ""
        raise UserError(
            f"--executor ray: cannot connect to {where} ({exc}){token}; start a cluster with `ray start --head` and "
            "give its address, or drop --ray-address to start a local one."
        ) from None
    return True
