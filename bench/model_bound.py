"""Model-bound runs: what passhat costs beside the model, and how close it comes to the model's own pace.

A local chat-completions server (its own process, asyncio, so hundreds of requests waiting out their
latency cost it nothing) plays both the agent and the customer of every trial in one shape: three
customer turns and one read tool call, i.e. six model calls (customer, agent's tool call, agent,
customer, agent, customer who ends). passhat runs as a child process on the CLI, exactly as a user
runs it, and only that child's CPU time and peak RSS are counted (``os.wait4``), never the server's.

Prints one table:
- harness CPU per trial: the CPU of a run of 2,350 trials less that of a run of 235, per extra trial
  (start-up and the report are fixed costs, left out), at zero latency;
- throughput at concurrency 1/16/64/256 with 200 ms per model call, against the ideal
  ``concurrency / (calls per trial × latency)``, over the span the server saw (first request to last
  answer: start-up and the report are not the model-bound part);
- peak RSS against run size.

Run: ``.venv/bin/python bench/model_bound.py`` (``--quick`` for a shorter pass).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass

CALLS_PER_TRIAL = 6
TRIALS_PER_TASK_SET = 235  # retail: 47 tasks × 5 personas, one trial each
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


SPAN = {"requests": 0, "first": 0.0, "last": 0.0}  # the server's view of a run: first request in, last answer out


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
                payload = json.dumps(SPAN).encode()
            else:
                SPAN["first"] = SPAN["first"] or time.monotonic()
                await asyncio.sleep(latency)
                payload = json.dumps(answer(body)).encode()
                SPAN["requests"] += 1
                SPAN["last"] = time.monotonic()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(payload), payload)
            )
            await writer.drain()
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


@dataclass(frozen=True)
class Measure:
    trials: int
    model_s: float  # from the first model request to the last answer: the run's model-bound part
    wall_s: float
    cpu_s: float
    peak_rss_mib: float


def run_passhat(latency: float, trials_per_scenario: int, concurrency: int, tasks: str | None = None) -> Measure:
    """One run on the CLI in a child process, against a server of its own; passhat's CPU time and peak RSS only."""
    with Server(latency) as server, tempfile.TemporaryDirectory() as out:
        args = [sys.executable, "-m", "passhat.cli", "run", "--agent", "llm:openai/bench", "--user", "llm:openai/bench",
                "--agent-base-url", server.url, "--user-base-url", server.url, "--trials", str(trials_per_scenario),
                "--concurrency", str(concurrency), "--max-connections", "1024", "--out", out, "--run-id", "bench",
                "--max-retries", "0"]  # fmt: skip
        if tasks:
            args += ["--tasks", tasks]
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
        started = time.perf_counter()
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"passhat failed: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        span = server.span()
    trials = trials_per_scenario * (TRIALS_PER_TASK_SET if tasks is None else 5 * len(tasks.split(",")))
    return Measure(trials, span["last"] - span["first"], wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call in the throughput rows")
    parser.add_argument("--quick", action="store_true", help="smaller runs (fewer trials per row)")
    options = parser.parse_args()
    if options.serve is not None:
        asyncio.run(serve(options.serve))
        return
    big = 4 if options.quick else 10
    rows: list[tuple[str, str]] = []
    run_passhat(0.0, 1, 16, tasks="retail-001")  # warm: imports compiled, caches on disk
    small, large = run_passhat(0.0, 1, 64), run_passhat(0.0, big, 64)
    per_trial = (large.cpu_s - small.cpu_s) / (large.trials - small.trials)
    rows.append(("harness CPU per trial (zero latency, marginal)", f"{per_trial * 1e3:.2f} ms"))
    for m in (small, large):
        rows.append(
            (
                f"whole run of {m.trials:,} trials (CPU incl. start-up and report)",
                f"{m.cpu_s:.1f} s, {m.cpu_s / m.trials * 1e3:.1f} ms/trial",
            )
        )
    for m in (small, large):
        rows.append((f"peak RSS, {m.trials:,} trials", f"{m.peak_rss_mib:.0f} MiB"))
    for concurrency in (1, 16, 64, 256):
        ideal = concurrency / (CALLS_PER_TRIAL * options.latency)
        trials = max(1, round(ideal * (6 if options.quick else 12) / TRIALS_PER_TASK_SET))
        tasks = "retail-001,retail-002" if concurrency == 1 else None  # 10 trials: about 12 s
        m = run_passhat(options.latency, trials if tasks is None else 1, concurrency, tasks)
        rate = m.trials / m.model_s
        rows.append((f"concurrency {concurrency}, {options.latency * 1e3:.0f} ms/call ({m.trials:,} trials)",
                     f"{rate:.1f} trials/s of ideal {ideal:.1f} ({rate / ideal:.0%})"))  # fmt: skip
    print(
        f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; shape: 3 customer turns, 1 read tool call, {CALLS_PER_TRIAL} model calls"
    )
    print("| what | figure |\n| --- | --- |")
    for what, figure in rows:
        print(f"| {what} | {figure} |")


if __name__ == "__main__":
    main()
