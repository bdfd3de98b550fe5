"""Trials in worker processes (``--workers N``): every core busy, this process the one writer of the store.

Each worker is a process of its own (started by a fork server, or spawned where there is none: never a
fork of this possibly threaded process) with its own event loop, backend template, model clients and
agent and customer factories, all built before its first trial. This process keeps the plan: it hands each
worker trials' keys, stores the records that come back in the order they come, and hands out the next
trials; early stop decides, here, whether a trial is handed out at all. So resume, early stop and the audit
trail work exactly as in one process, and a trial's record is the same wherever it ran (it depends on its
seed only).

Limits are split, not multiplied: ``--concurrency`` is the total of conversations in flight, and each
worker gets a share of ``--max-connections`` per endpoint, so the limits hold across workers. There are
never more workers than either limit allows (a worker with no share would idle). A worker holds as many
trials again as its conversations, waiting: when a conversation ends, the next starts at once, and the
ended one is graded after (its record, and with it the next key, comes back only then).

A worker that dies (killed, out of memory, a crash in native code): a fresh worker takes its place and runs
again each trial it held, up to ``RETRIES`` times; one still unfinished is stored as an infra error (retried
on resume, never scored): never lost, never counted twice. When this process dies, its workers see their
pipe close and exit.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING

from passhat.llm import role_models, scrub
from passhat.run.config import RunConfig
from passhat.run.judged import AuditRecords, infra_error_record, trial_judge
from passhat.run.trial import TrialSpec
from passhat.store import TrialRecord
from passhat.users.personas import resolve_personas

if TYPE_CHECKING:
    from passhat.run.runner import TrialSink

TrialKey = tuple[str, str, int, int]  # task id, persona, trial, seed: what a worker is sent of a spec
STOP = None  # sent to a worker: finish (or drop) what is in flight and exit
JOIN_SECONDS = 5.0  # how long a stopped worker may take to exit before it is terminated
RETRIES = 2  # times a trial whose worker died is run again before it is stored as an infra error


def share(total: int, parts: int) -> list[int]:
    """total split into parts as evenly as possible (the first ones get the remainder)."""
    return [total // parts + (i < total % parts) for i in range(parts)]


def worker_count(config: RunConfig, workers: int, concurrency: int) -> int:
    """Workers that can each have a trial in flight and, when the run calls models, a connection."""
    limit = min(workers, concurrency)
    return min(limit, config.max_connections) if role_models(config) else limit


@dataclasses.dataclass(frozen=True)
class WorkerSetup:
    """What a worker process needs beyond its configuration: this process's environment (API keys, the
    config folder), working folder and import path, so that it resolves agents, domains and keys alike."""

    config: RunConfig
    environ: dict[str, str]
    cwd: str
    sys_path: list[str]
    conversations: int | None = None  # its share of --concurrency (None: as many as it is given trials)


def _context() -> BaseContext:
    """A fork server where the platform has one (its workers start in milliseconds, passhat imported once);
    spawn elsewhere. Never a plain fork: this process may run threads (an HTTP agent's, a model SDK's)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


@dataclasses.dataclass
class Worker:
    process: BaseProcess
    conn: Connection
    held: int  # trials it may hold: its conversations, and as many waiting
    in_flight: dict[tuple[str, str, int], TrialSpec] = dataclasses.field(default_factory=dict)


class WorkerPool:
    def __init__(self, config: RunConfig, count: int, concurrency: int):
        """``count`` workers (at most worker_count()) sharing ``concurrency`` and --max-connections."""
        self._conversations = share(concurrency, count)
        self._connections = share(config.max_connections, count)
        self._config = config
        self._context = _context()
        self._setup = {"environ": dict(os.environ), "cwd": os.getcwd(), "sys_path": list(sys.path)}
        self._live: list[Worker] = []
        self._again: list[TrialSpec] = []  # trials a dead worker held, to be run again first
        self._deaths: collections.Counter[tuple[str, str, int]] = collections.Counter()  # of the workers holding each

    async def run(self, specs: list[TrialSpec], sink: TrialSink) -> None:
        """Every spec sink admits, judged in the workers and stored by sink as it comes back."""
        pending = iter(specs)
        try:
            await asyncio.gather(*(self._drive(i, pending, sink) for i in range(len(self._conversations))))
        finally:
            self._stop_all()

    async def _drive(self, index: int, pending: Iterator[TrialSpec], sink: TrialSink) -> None:
        """Keep worker ``index`` supplied until the plan runs out, replacing it if it dies. Finished trials' slots
        are refilled before their records are written: the worker's next trials need not wait on the disk."""
        worker = self._start(index)
        self._supply(worker, pending, sink)
        while worker.in_flight:
            await _readable(worker.conn)
            records, died = _received(worker.conn)
            for record, _ in records:
                del worker.in_flight[record.key]
                sink.count(record)
            if died:  # what it held is run again or stored as infra errors, never lost; a fresh worker takes its place
                self._bury(worker, sink)
                worker = self._start(index)
            self._supply(worker, pending, sink)
            for record, audit in records:
                sink.write(record, audit)

    def _supply(self, worker: Worker, pending: Iterator[TrialSpec], sink: TrialSink) -> None:
        """Fill the worker's free slots with the trials to run again, then from the plan, which every worker
        shares: each spec is handed out once (again only when the worker holding it died)."""
        while len(worker.in_flight) < worker.held:
            spec = self._again.pop() if self._again else next((s for s in pending if sink.admits(s)), None)
            if spec is None:
                return
            worker.conn.send((spec.task.id, spec.persona.name, spec.trial, spec.seed))
            worker.in_flight[(spec.task.id, spec.persona.name, spec.trial)] = spec

    def _start(self, index: int) -> Worker:
        config = self._config.model_copy(update={"max_connections": max(1, self._connections[index])})
        ours, theirs = self._context.Pipe()
        setup = WorkerSetup(config=config, conversations=self._conversations[index], **self._setup)
        process = self._context.Process(target=worker_main, args=(theirs, setup), name=f"passhat-worker-{index}", daemon=True)
        process.start()
        theirs.close()  # only the worker holds its end: its death closes the pipe
        worker = Worker(process, ours, 2 * self._conversations[index])
        self._live.append(worker)
        return worker

    def _bury(self, worker: Worker, sink: TrialSink) -> None:
        worker.conn.close()
        worker.process.join()
        self._live.remove(worker)
        for key, spec in worker.in_flight.items():
            self._deaths[key] += 1
            if self._deaths[key] <= RETRIES:
                self._again.append(spec)
                continue
            reason = (
                f"the worker process running this trial died (exit code {worker.process.exitcode}) before it finished, "
                f"after {RETRIES} retries"
            )
            sink.store(infra_error_record(spec, reason, time.time()), [])
        worker.in_flight.clear()

    def _stop_all(self) -> None:
        """Tell every worker to stop, then wait; one that does not exit in time is terminated. Trials still in
        flight (after Ctrl-C) are dropped: they were never stored, so resume runs them."""
        for worker in self._live:
            try:
                worker.conn.send(STOP)
            except OSError:
                pass  # already gone
        deadline = time.monotonic() + JOIN_SECONDS
        for worker in self._live:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join()
            worker.conn.close()
        self._live.clear()


async def _readable(conn: Connection) -> None:
    """Wait, in the event loop, until conn has something to read (or its other end closed)."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(conn.fileno(), lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(conn.fileno())


def _received(conn: Connection) -> tuple[list[tuple[TrialRecord, AuditRecords]], bool]:
    """Every record the worker has sent so far (one at least is waiting), and whether its pipe has closed."""
    records = []
    try:
        records.append(conn.recv())
        while conn.poll():
            records.append(conn.recv())
    except (EOFError, OSError):
        return records, True
    return records, False


def worker_main(conn: Connection, setup: WorkerSetup) -> None:
    """A worker process: judge the trials it is sent, send each record back, until told to stop or until the
    run's process is gone. Ctrl-C is the run's process's to handle: the worker ignores it and is stopped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(setup.environ)
    os.chdir(setup.cwd)
    sys.path[:] = setup.sys_path
    asyncio.run(_serve(conn, setup.config, setup.conversations))


async def _serve(conn: Connection, config: RunConfig, conversations: int | None) -> None:
    personas = {p.name: p for p in resolve_personas(",".join(config.personas))}
    running: set[asyncio.Task[None]] = set()
    with _Outbox(conn) as outbox:
        async with trial_judge(config, conversations) as judge:

            async def judged(key: TrialKey) -> None:
                task_id, persona, trial, seed = key
                spec = TrialSpec(judge.domain.tasks[task_id], personas[persona], trial, seed)
                try:
                    outbox.put(await judge.judge(spec))
                except Exception:  # a record that cannot be sent: the run's process must still hear of the trial
                    outbox.put((infra_error_record(spec, scrub(traceback.format_exc(limit=8)), time.time()), []))

            while True:
                await _readable(conn)
                try:
                    key = conn.recv()
                except (EOFError, OSError):  # the run's process is gone: nobody is left to store a record
                    key = STOP
                if key is STOP:
                    break
                _keep(running, asyncio.create_task(judged(key)))
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)


class _Outbox:
    """Records on their way to the run's process, sent by a thread of their own: when that process is busy
    storing and the pipe is full, the worker's trials go on rather than wait with it."""

    def __init__(self, conn: Connection):
        self._conn = conn
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._send, name="passhat-outbox", daemon=True)

    def put(self, outcome: tuple[TrialRecord, AuditRecords]) -> None:
        self._queue.put(ForkingPickler.dumps(outcome))  # here, so that a record that cannot be pickled raises here

    def _send(self) -> None:
        while (data := self._queue.get()) is not None:
            try:
                self._conn.send_bytes(data)
            except OSError:  # the run's process is gone
                return

    def __enter__(self) -> _Outbox:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._queue.put(None)  # every record put before is sent first
        self._thread.join()


def _keep(tasks: set[asyncio.Task[None]], task: asyncio.Task[None]) -> None:
    """Hold a reference to a running task until it is done (the event loop keeps only weak ones)."""
    tasks.add(task)
    task.add_done_callback(tasks.discard)
