"""`passhat guard ablate` as a library: one run per configuration of guards, each a normal stored run with the
same seed, scenarios and trials (so the same trial keys and trial seeds), created or resumed.

The runs are named ``<ablation id>-<configuration>``. The ablation id is derived from everything the runs
evaluate, so the same command finds its stored runs and runs only their missing trials, while a command that
evaluates anything else (another agent, seed, fault plan, task set or task definition) gets runs of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from passhat.errors import UserError
from passhat.guard.ablation import Configuration, configurations
from passhat.metrics.ablation import AblationTrial, TrialKey
from passhat.metrics.summary import is_judged
from passhat.run.runner import OnTrial, execute, plan_trials
from passhat.run_config import RunConfig, stored_config
from passhat.store import STORE_FILE, ResultStore


@dataclasses.dataclass(frozen=True)
class AblationRun:
    """A configuration's run: what it evaluates and its store, open for writing."""

    configuration: Configuration
    config: RunConfig
    store: ResultStore

    @property
    def run_id(self) -> str:
        return self.store.run_id


def ablation_id(base: RunConfig, guards: Sequence[str]) -> str:
    """``ablate-`` and a digest of the run configuration (its guards aside) and of the guards ablated."""
    evaluated = json.dumps([base.model_dump(mode="json", exclude={"guard"}), list(guards)], sort_keys=True)
    return "ablate-" + hashlib.sha256(evaluated.encode()).hexdigest()[:10]


@contextlib.contextmanager
def ablation_runs(base: RunConfig, guards: Sequence[str], out: Path) -> Iterator[list[AblationRun]]:
    """Every configuration's run in ``out``, created or resumed, each held (as its one writer) until the end."""
    name = ablation_id(base, guards)
    with contextlib.ExitStack() as held:
        runs = []
        for configuration in configurations(guards):
            config = base.model_copy(update={"guard": list(configuration.guards)})
            store = held.enter_context(_store(out / configuration.run_id(name), config))
            runs.append(AblationRun(configuration, config, store))
        yield runs


def _store(folder: Path, config: RunConfig) -> ResultStore:
    """The run's store: resumed if the folder holds one of this very configuration, else created."""
    if not (folder / STORE_FILE).exists():
        return ResultStore.create(folder, folder.name, config.model_dump())
    store = ResultStore.resume(folder)
    try:
        if stored_config(store).model_dump() != config.model_dump():
            raise UserError(
                f"{folder} holds a run of another configuration than this ablation's {folder.name!r}; move that "
                "folder away, or give another --out."
            )
    except BaseException:
        store.close()
        raise
    return store


def missing_trials(runs: Sequence[AblationRun]) -> int:
    """The trials the runs have not judged yet, over all of them (a progress bar's total)."""
    return sum(len(plan_trials(run.config, run.store.completed_keys())) for run in runs)


def execute_run(run: AblationRun, concurrency: int, workers: int, on_trial: OnTrial | None = None) -> None:
    """Run a configuration's missing trials in ``workers`` processes, ``concurrency`` in flight; on_trial hears of
    each stored trial."""
    asyncio.run(execute(run.config, run.store, concurrency, on_trial, workers=workers))


def judged_trials(store: ResultStore) -> dict[TrialKey, AblationTrial]:
    """A run's judged trials by key, with what the ablation's figures read of them."""
    return {r.key: AblationTrial(r.reward, r.grade, r.events) for r in store.report_trials() if is_judged(r.to_result())}
