"""A trial's way from the agent's tool calls to the backend: (guard) ⇄ (faults) ⇄ tools.

The orchestrator composes the two layers here, so ``guard`` and ``faults`` stay unaware of each
other and of agents: the fault injector is the inner layer of the guard's ToolPath.
"""

from __future__ import annotations

from collections.abc import Sequence

from passhat.env import Environment
from passhat.faults import FaultInjector
from passhat.guard import ToolPath
from passhat.guard.gate import SIMULATED, Operator


def trial_tool_path(
    env: Environment,
    seed: int,
    faults: dict[str, float],
    guards: Sequence[str],
    run_id: str,
    conversation_id: str,
    operator: Operator = SIMULATED,
) -> ToolPath:
    injector = FaultInjector(faults, seed, env) if faults else None
    inner = injector.execute if injector else None
    return ToolPath(env, guards, run_id=run_id, conversation_id=conversation_id, inner=inner, operator=operator)
