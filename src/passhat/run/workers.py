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
pipe close and exit at once, finishing nothing (no one is left to store it).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import gc
import multiprocessing
import os
import signal
import struct
import sys
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING

from passhat.customers.personas import resolve_personas
from passhat.llm import role_models, scrub
from passhat.run.judged import AuditRecords, infra_error_trial, trial_judge
from passhat.run.trial import HELD_PER_CONVERSATION, TrialSpec
from passhat.run_config import RunConfig
from passhat.store import EncodedTrial

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
    keys: Connection  # where this process sends the worker trials' keys
    records: Connection  # where the worker's records come back (closed at its death)
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
            await _readable(worker.records)
            records, died = _received(worker.records)
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
            worker.keys.send((spec.task.id, spec.persona.name, spec.trial, spec.seed))
            worker.in_flight[(spec.task.id, spec.persona.name, spec.trial)] = spec

    def _start(self, index: int) -> Worker:
        config = self._config.model_copy(update={"max_connections": max(1, self._connections[index])})
        their_keys, keys = self._context.Pipe(duplex=False)
        records, their_records = self._context.Pipe(duplex=False)
        setup = WorkerSetup(config=config, conversations=self._conversations[index], **self._setup)
        name = f"passhat-worker-{index}"
        process = self._context.Process(target=worker_main, args=(their_keys, their_records, setup), name=name, daemon=True)
        process.start()
        their_keys.close()
        their_records.close()  # only the worker holds its end: its death closes the pipe
        worker = Worker(process, keys, records, HELD_PER_CONVERSATION * self._conversations[index])
        self._live.append(worker)
        return worker

    def _bury(self, worker: Worker, sink: TrialSink) -> None:
        worker.keys.close()
        worker.records.close()
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
            sink.store(infra_error_trial(spec, reason, time.time()), [])
        worker.in_flight.clear()

    def _stop_all(self) -> None:
        """Tell every worker to stop, then wait; one that does not exit in time is terminated. Trials still in
        flight (after Ctrl-C) are dropped: they were never stored, so resume runs them."""
        for worker in self._live:
            try:
                worker.keys.send(STOP)
            except OSError:
                pass  # already gone
        deadline = time.monotonic() + JOIN_SECONDS
        for worker in self._live:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join()
            worker.keys.close()
            worker.records.close()
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


def _received(conn: Connection) -> tuple[list[tuple[EncodedTrial, AuditRecords]], bool]:
    """Every record the worker has sent so far (one at least is waiting), and whether its pipe has closed."""
    records = []
    try:
        records.append(conn.recv())
        while conn.poll():
            records.append(conn.recv())
    except (EOFError, OSError):
        return records, True
    return records, False


def worker_main(keys: Connection, records: Connection, setup: WorkerSetup) -> None:
    """A worker process: judge the trials whose keys it reads, send each record back, until told to stop or until
    the run's process is gone. Ctrl-C is the run's process's to handle: the worker ignores it and is stopped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(setup.environ)
    os.chdir(setup.cwd)
    sys.path[:] = setup.sys_path
    asyncio.run(_serve(keys, records, setup.config, setup.conversations))


async def _serve(keys: Connection, records: Connection, config: RunConfig, conversations: int | None) -> None:
    personas = {p.name: p for p in resolve_personas(",".join(config.personas))}
    running: set[asyncio.Task[None]] = set()
    _, outbox = await asyncio.get_running_loop().connect_write_pipe(_Outbox, records)
    async with trial_judge(config, conversations) as judge:
        gc.freeze()  # the process is the run's: what every trial shares stays out of the collector's scans (half its time)

        async def judged(key: TrialKey) -> None:
            task_id, persona, trial, seed = key
            spec = TrialSpec(judge.domain.tasks[task_id], personas[persona], trial, seed)
            try:
                outbox.put(await judge.judge(spec))
            except Exception:  # a record that cannot be sent: the run's process must still hear of the trial
                outbox.put((infra_error_trial(spec, scrub(traceback.format_exc(limit=8)), time.time()), []))

        while True:
            await _readable(keys)
            try:
                key = keys.recv()
            except (EOFError, OSError):  # the run's process is gone: nobody is left to store a record, so
                os._exit(0)  # no trial in flight is worth finishing, nor any cleanup (it took seconds)
            if key is STOP:
                break
            _keep(running, asyncio.create_task(judged(key)))
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    await outbox.flushed()


class _Outbox(asyncio.Protocol):
    """The pipe records go back on, written by the event loop as the pipe takes them, what it cannot take yet
    waiting in the transport's buffer: a worker's trials never stall on a writer busy storing, and no thread
    contends with them for the interpreter. Framed as ``Connection.send`` frames (the run's process reads
    with ``Connection.recv``)."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._lost = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:  # the run's process is gone, or flushed() closed it
        if not self._lost.done():
            self._lost.set_result(None)

    def put(self, outcome: tuple[EncodedTrial, AuditRecords]) -> None:
        data = ForkingPickler.dumps(outcome)  # here, so that a record that cannot be pickled raises here
        size = len(data)
        header = struct.pack("!i", size) if size <= 0x7FFFFFFF else struct.pack("!iQ", -1, size)
        assert self._transport is not None
        self._transport.writelines((header, data))

    async def flushed(self) -> None:
        """Every record put written, then the pipe closed."""
        assert self._transport is not None
        self._transport.close()
        await self._lost


def _keep(tasks: set[asyncio.Task[None]], task: asyncio.Task[None]) -> None:
    """Hold a reference to a running task until it is done (the event loop keeps only weak ones)."""
    tasks.add(task)
    task.add_done_callback(tasks.discard)
