"""Harness overhead: what passhat itself costs per trial, with a zero-latency agent and customer.

Prints the time to build the retail template, to fork it, and trials per second (wall and CPU) for
the reference agents against the scripted customer. Run with `make bench`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time

from passhat.agents import resolve_agent
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.env.backend import _build_template, fork_backend, template_for
from passhat.grade import expected_environment
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialSpec, run_trial


def median_seconds(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def bench_backend(domain) -> None:
    build = median_seconds(lambda: _build_template(domain), 5)
    template = template_for(domain)
    fork = median_seconds(lambda: fork_backend(template).close(), 2000)
    print(f"template build (once per process): {build * 1e3:.1f} ms, image {len(template.image) / 2**20:.2f} MiB")
    print(f"fork a fresh backend:             {fork * 1e6:.0f} µs (median of 2000)")


def bench_trials(domain, agent: str, trials_per_scenario: int) -> None:
    make_agent, make_user = resolve_agent(agent), resolve_user("scripted")
    specs = [
        TrialSpec(task, persona, i, trial_seed(0, task.id, persona.name, i))
        for task in domain.tasks.values()
        for persona in PERSONAS.values()
        for i in range(trials_per_scenario)
    ]
    for task in domain.tasks.values():
        expected_environment(domain, task)  # built once per process, as in a run

    async def run_all() -> list[int]:
        return [(await run_trial(domain, s, make_agent, make_user)).grade.reward for s in specs]

    wall0, cpu0 = time.perf_counter(), time.process_time()
    rewards = asyncio.run(run_all())
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(
        f"{agent:<18} {len(specs)} trials: {len(specs) / wall:7.0f} trials/s, "
        f"{cpu / len(specs) * 1e3:.2f} ms CPU per trial, mean reward {sum(rewards) / len(rewards):.3f}"
    )


def main() -> None:
    domain = load_domain("retail")
    print(f"machine: {os.cpu_count()} cores; retail: {len(domain.tasks)} tasks × {len(PERSONAS)} personas")
    bench_backend(domain)
    for agent in ("reference:perfect", "reference:flaky", "reference:hasty"):
        bench_trials(domain, agent, trials_per_scenario=2)


if __name__ == "__main__":
    main()
