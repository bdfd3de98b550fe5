"""The words several layers share, each defined once, in a leaf that every layer may import: no layer keeps a copy of
another's Literal (and no test has to keep two copies equal).

    HarmType       what a wrong guess costs: a task's risks declare it, the graders find it, the report counts it
    Resource       what a trial spends: the consistency metrics measure it, the report shows it
    GuardDecision  what a guardrail did with a call, on its event; BLOCKED: the decisions that stop the call
    HUMAN          the customer (``user``) of a run whose customers are people: human runs write it, compare reads it
"""

from __future__ import annotations

from typing import Literal, get_args

HarmType = Literal["financial_loss", "privacy_breach", "wrong_entity", "irreversible"]
Resource = Literal["turns", "tool_calls", "tokens", "cost_usd", "latency_s"]
RESOURCES: tuple[Resource, ...] = get_args(Resource)
# refused by a guard, an idempotent write's first result replayed, a key reused with other arguments, a call held
# for a person (a ticket), and that person's verdict carried out (the call done) or not
GuardDecision = Literal["refused", "replayed", "conflict", "ticket", "operator_done", "operator_rejected"]
BLOCKED: frozenset[GuardDecision] = frozenset({"refused", "replayed", "conflict", "ticket"})
HUMAN = "human"
