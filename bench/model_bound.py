"""Model-bound runs: what passhat costs beside the model, and how close it comes to the model's own pace.

A local chat-completions server (its own process, asyncio, so hundreds of requests waiting out their
latency cost it nothing) plays both the agent and the customer of every trial in one shape: three
customer turns and one read tool call, i.e. six model calls (customer, agent's tool call, agent,
customer, agent, customer who ends). passhat runs on the CLI, exactly as a user runs it, with
``--workers`` given; the CPU time counted is that of passhat and every process it starts (its worker
processes and the fork server that starts them: a subreaper collects them when passhat has exited),
never the server's; peak RSS is that of the largest of them.

Prints one table, one set of rows per ``--workers`` value (default 2, then 1):
- CPU per trial at zero latency: of each whole run (start-up and the report included), and per extra
  trial between consecutive run sizes (``--sizes``, trials per scenario of retail-001 to 047: 1, 10 by default,
  i.e. 235 and 2,350 trials; add 32 for 7,520; the trials counted are those the store holds), with the passhat
  process's own share (with workers, the writer's);
- throughput at concurrency 1/16/64/256 with 200 ms per model call, against the ideal
  ``concurrency / (calls per trial × latency)``, over the span the server saw (first request to last
  answer: start-up and the report are not the model-bound part), each run 10 rounds of trials (10 ×
  concurrency: with 235 trials a round could run part-empty, which no harness could help), with the
  requests in flight on average and each one's time in the server (by Little's law the rate is their
  ratio over the calls per trial: what falls short of the ideal was lost either to requests not yet sent
  or to the server's own lag);
- with ``--ray 64,256`` (the ``ray`` extra installed), the same throughput rows with ``--executor ray``: passhat
  starts a local Ray instance and runs the trials in ``--workers`` actors (Ray's start is outside the span);
- the machine's load average at the end: other work on the machine slows every row but the CPU ones.

Run: ``.venv/bin/python bench/model_bound.py`` (``--quick`` for shorter throughput runs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import math
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass

CALLS_PER_TRIAL = 6
PR_SET_CHILD_SUBREAPER = 36  # prctl(2) option (Linux)
TASKS = 47  # the CPU rows' tasks, retail-001 to retail-047: with 5 personas, 235 trials per trial of each scenario
PERSONAS = 5
ROUNDS = 10  # trials per slot of --concurrency in a throughput row: 12 s at 200 ms per call
CUSTOMER_LINES = [
    "Hi, I have a question about my recent order.",
    "Thanks. Could you check that once more?",
    "Great, thank you. ###SATISFIED###",
]


# --- the server ------------------------------------------------------------------------------------


def answer(request: dict) -> dict:
    """The next message of the 3-turn one-tool shape, read off the request: the agent's requests carry
    tools, the customer's do not (its own earlier messages are the assistant's in its transcript)."""
    messages = request.get("messages", [])
    if not request.get("tools"):
        said = sum(m.get("role") == "assistant" for m in messages)
        message = {"role": "assistant", "content": CUSTOMER_LINES[min(said, len(CUSTOMER_LINES) - 1)]}
    elif not any(m.get("role") == "tool" for m in messages):
        call = {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "#R0000001"}'}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    else:
        message = {"role": "assistant", "content": "I have looked into it; everything is in order."}
    return {
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": request.get("model", "m"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050},
    }  # fmt: skip


# The server's view of a run: first request in, last answer out, and the integral over time of the requests
# in flight (Little's law: their mean over the span, against the concurrency asked, says whether time went
# to requests the harness had not sent yet or to the server itself).
SPAN = {"requests": 0, "first": 0.0, "last": 0.0, "in_flight": 0, "area": 0.0, "since": 0.0}


def count_in_flight(change: int) -> None:
    now = time.monotonic()
    if SPAN["since"]:
        SPAN["area"] += SPAN["in_flight"] * (now - SPAN["since"])
    SPAN["in_flight"] += change
    SPAN["since"] = now


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, latency: float) -> None:
    """HTTP/1.1 with keep-alive: one POST after another on the same connection; GET answers with SPAN."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = json.loads(await reader.readexactly(length)) if length else {}
            if head.startswith(b"GET"):
                payload = json.dumps({**SPAN, "cpu_s": time.process_time()}).encode()
            else:
                SPAN["first"] = SPAN["first"] or time.monotonic()
                count_in_flight(+1)
                await asyncio.sleep(latency)
                payload = json.dumps(answer(body)).encode()
                SPAN["requests"] += 1
                SPAN["last"] = time.monotonic()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(payload), payload)
            )
            await writer.drain()
            if not head.startswith(b"GET"):
                count_in_flight(-1)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(latency: float) -> None:
    server = await asyncio.start_server(lambda r, w: handle(r, w, latency), "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


@dataclass
class Server:
    """The server process at one latency."""

    latency: float

    def __enter__(self) -> Server:
        self._proc = subprocess.Popen([sys.executable, __file__, "--serve", str(self.latency)], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self._proc.stdout.readline().strip()}/v1"  # type: ignore[union-attr]
        return self

    def span(self) -> dict[str, float]:
        """Requests served, and the monotonic times of the first request and the last answer."""
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/span") as response:
            return json.loads(response.read())

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.wait()


# --- the measurements ------------------------------------------------------------------------------


def measure(args: list[str]) -> None:
    """Run ``args`` and print, as JSON, the CPU time and peak RSS of it and every process it started.

    This process is made a subreaper, so that the processes passhat leaves behind when it exits (the fork
    server, which reaps the worker processes) are handed to it rather than to init; it waits for them all,
    and then its children's usage covers passhat, the fork server and every worker, and nothing else.
    """
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    passhat = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, own = os.wait4(passhat.pid, 0)  # the passhat process alone: the fork server is not its to wait for
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"exit": os.waitstatus_to_exitcode(status), "cpu_s": usage.ru_utime + usage.ru_stime,
                      "parent_cpu_s": own.ru_utime + own.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024}))  # fmt: skip


@dataclass(frozen=True)
class Measure:
    trials: int
    model_s: float  # from the first model request to the last answer: the run's model-bound part
    wall_s: float
    cpu_s: float  # passhat and its worker processes
    parent_cpu_s: float  # the passhat process alone: with workers, the one that hands out trials and stores them
    peak_rss_mib: float  # of the largest of those processes
    in_flight_s: float = 0.0  # the integral over the span of the model requests in flight (request-seconds)
    requests: int = 0

    @property
    def mean_in_flight(self) -> float:
        return self.in_flight_s / self.model_s

    @property
    def time_in_server(self) -> float:
        """Seconds from a request's arrival to its answer's sending, on average: the latency and the server's own lag."""
        return self.in_flight_s / self.requests


def run_passhat(
    latency: float, trials_per_scenario: int, concurrency: int, workers: int, tasks: str, executor: str = "local"
) -> Measure:
    """One run on the CLI, as a user runs it, against a server of its own; passhat's CPU time and peak RSS only (with
    ``executor`` "ray", of passhat's own process: the local Ray instance it starts runs its actors outside it)."""
    with Server(latency) as server, tempfile.TemporaryDirectory() as out:
        args = [sys.executable, "-m", "passhat.cli", "run", "--agent", "llm:openai/bench", "--user", "llm:openai/bench",
                "--agent-base-url", server.url, "--user-base-url", server.url, "--trials", str(trials_per_scenario),
                "--concurrency", str(concurrency), "--workers", str(workers), "--max-connections", "1024",
                "--out", out, "--run-id", "bench", "--max-retries", "0", "--tasks", tasks]  # fmt: skip
        if executor != "local":
            args += ["--executor", executor]
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
        started = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--measure", *args], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - started
        result = json.loads(done.stdout)
        if result["exit"] not in (0, 1):
            raise SystemExit(f"passhat failed: {done.stderr}")
        span = server.span()
        with contextlib.closing(sqlite3.connect(os.path.join(out, "bench", "results.sqlite"))) as store:
            trials = store.execute("SELECT count(*) FROM trials").fetchone()[0]  # what ran, not what was meant to
    return Measure(trials, span["last"] - span["first"], wall, result["cpu_s"], result["parent_cpu_s"], result["peak_rss_mib"],
                   span["area"], span["requests"])  # fmt: skip


def cpu_rows(sizes: list[int], workers: int) -> list[tuple[str, str]]:
    """CPU per trial at zero latency: of each whole run, and per extra trial between consecutive sizes."""
    runs = [run_passhat(0.0, size, 64, workers, retail_tasks(TASKS)) for size in sizes]
    rows = []
    for m in runs:
        rows.append((f"whole run of {m.trials:,} trials, --workers {workers} (CPU incl. start-up and report)",
                     f"{m.cpu_s:.1f} s, {m.cpu_s / m.trials * 1e3:.2f} ms/trial, peak RSS {m.peak_rss_mib:.0f} MiB"))  # fmt: skip
    for a, b in zip(runs, runs[1:], strict=False):
        extra = b.trials - a.trials
        rows.append((f"harness CPU per trial, {a.trials:,} to {b.trials:,} trials, --workers {workers} (marginal)",
                     f"{(b.cpu_s - a.cpu_s) / extra * 1e3:.2f} ms, of which the passhat process "
                     f"{(b.parent_cpu_s - a.parent_cpu_s) / extra * 1e3:.2f} ms"))  # fmt: skip
    return rows


def throughput_row(latency: float, concurrency: int, workers: int, quick: bool, executor: str = "local") -> tuple[str, str]:
    """A run of whole rounds (``ROUNDS × concurrency`` trials: some of the 47 tasks × 5 personas × a number of
    trials), so that its ideal span is ``ROUNDS`` trials' worth of model calls and no round runs part-empty."""
    ideal = concurrency / (CALLS_PER_TRIAL * latency)
    scenarios = (ROUNDS // 2 if quick else ROUNDS) * concurrency // PERSONAS
    tasks = math.gcd(scenarios, 32)  # a number of tasks that divides the scenarios, at most 32 of the 47
    m = run_passhat(latency, scenarios // tasks, concurrency, workers, retail_tasks(tasks), executor)
    rate = m.trials / m.model_s
    how = f"--workers {workers}" + (f" --executor {executor}" if executor != "local" else "")
    cpu = "CPU" if executor == "local" else "CPU of passhat's process alone"  # Ray's own processes are not its children
    return (f"concurrency {concurrency}, {how}, {latency * 1e3:.0f} ms/call ({m.trials:,} trials)",
            f"{rate:.1f} trials/s of ideal {ideal:.1f} ({rate / ideal:.0%}), {cpu} {m.cpu_s / m.trials * 1e3:.2f} ms/trial; "
            f"{m.mean_in_flight:.0f} requests in flight on average, {m.time_in_server * 1e3:.0f} ms each in the server")  # fmt: skip


def retail_tasks(count: int) -> str:
    """--tasks for the first ``count`` retail tasks."""
    return ",".join(f"retail-{i:03d}" for i in range(1, count + 1))


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call in the throughput rows")
    parser.add_argument("--quick", action="store_true", help="shorter throughput runs")
    parser.add_argument("--sizes", type=numbers, default=[1, 10], help="trials per scenario of the CPU rows (235 trials each)")
    parser.add_argument("--workers", type=numbers, default=[2, 1], help="--workers of the runs, one set of rows each")
    parser.add_argument("--concurrency", type=numbers, default=[1, 16, 64, 256], help="trials in flight, one throughput row each")
    parser.add_argument(
        "--ray", type=numbers, default=[], help="concurrencies of throughput rows with --executor ray (extra: ray)"
    )
    options = parser.parse_args()
    if options.serve is not None:
        asyncio.run(serve(options.serve))
        return
    if options.measure is not None:
        measure(options.measure)
        return
    run_passhat(0.0, 1, 16, 1, retail_tasks(1))  # warm: imports compiled, caches on disk
    rows: list[tuple[str, str]] = []
    for workers in options.workers:
        rows += cpu_rows(options.sizes, workers)
        rows += [throughput_row(options.latency, c, workers, options.quick) for c in options.concurrency]
        rows += [throughput_row(options.latency, c, workers, options.quick, "ray") for c in options.ray]
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end, "
          f"Python {sys.version.split()[0]}; shape: 3 customer turns, 1 read tool call, {CALLS_PER_TRIAL} model calls")  # fmt: skip
    print("| what | figure |\n| --- | --- |")
    for what, figure in rows:
        print(f"| {what} | {figure} |")


if __name__ == "__main__":
    main()
