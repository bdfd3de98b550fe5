"""What the faces read of a stored run beside its trials: its domain's task tags and gated tasks (for every report,
the command's and the dashboard's alike) and whether a gate can be answered by the run at all (`passhat run` and
`passhat report --gate`, the dashboard's gate box, the pytest plugin's marker).

A report of stored trials needs the run's domain only for its task tags and gated tasks: when the domain cannot be
loaded any more (a domain folder deleted or broken since the run), the report renders without them, and the face
that asked is told why, to say so in its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from passhat.domains import load_domain
from passhat.errors import UserError
from passhat.safe_files import shown

if TYPE_CHECKING:  # the metrics load numpy and scipy, a run configuration the model clients: not for `--help`
    from passhat.metrics.gate import Decision, Gate
    from passhat.run_config import RunConfig
    from passhat.store.results import TrialRow


def task_tags(config: RunConfig, gone: Callable[[str], object]) -> dict[str, list[str]]:
    """Each task's tags: an imported run's as its source gave them (it has no passhat domain), any other's from its
    domain. Every report asks for them first (then for gated_tasks), so ``gone`` hears here, once, why both are left
    out when the domain is gone."""
    if config.imported is not None:
        return dict(config.imported.tags)
    try:
        tasks = load_domain(config.domain, config.tasks_dir).tasks
    except UserError as exc:
        gone(f"the report leaves out the run's task tags and gated tasks: {exc}")
        return {}
    return {t.id: t.tags for t in tasks.values()}


def gated_tasks(config: RunConfig) -> set[str]:
    """The tasks that declare a human gate of their own (``guards:`` in the task file); none when the domain is
    gone (task_tags said so), or the run was imported (no passhat domain: its name may be a built-in's)."""
    if config.imported is not None:
        return set()
    try:
        tasks = load_domain(config.domain, config.tasks_dir).tasks
    except UserError:
        return set()
    return {t.id for t in tasks.values() if t.guards}


def gate_section(gate: Gate, rows: Iterable[TrialRow], config: RunConfig) -> tuple[Decision, dict[str, Any]]:
    """The gate's decision on a stored run, and the report's gate section (the decision and the 95% interval of its
    pass^k): what `passhat report --gate` shows and `passhat certify` signs, computed one way for both."""
    from passhat.metrics.gate import decide, gate_ci
    from passhat.metrics.summary import scenario_counts

    counts = scenario_counts(t.to_result() for t in rows)
    decision = decide(gate, counts, config.planned_trials())
    return decision, {**decision.to_json(), "ci": gate_ci(gate, counts, decision)}


def check_gate(gate: Gate | None, config: RunConfig, flag: str) -> None:
    """A gate the run cannot answer is a user error before any trial runs."""
    if gate is None:
        return
    if gate.k > config.trials:
        raise UserError(
            f"the gate's k = {gate.k} ({flag}) exceeds the run's {config.trials} trials per scenario; "
            f"pass^k needs k <= n: lower k or run with --trials {gate.k} or more."
        )
    if gate.persona is not None and gate.persona not in config.personas:
        raise UserError(
            f"the gate's persona {shown(gate.persona)} ({flag}) is not among the run's personas ({', '.join(config.personas)})."
        )
