"""Who decides the human gate's tickets: a leaf module, so the command line offers the choice without loading the
gate and what it imports."""

from typing import Literal, get_args

OperatorKind = Literal["simulated", "inbox"]  # SimulatedOperator, or people in the inbox (passhat.guard.inbox)
OPERATORS: tuple[OperatorKind, ...] = get_args(OperatorKind)
