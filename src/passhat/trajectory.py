"""The events of one trial. Everything the graders, the store and the reports know of a trial is here.

A leaf module (it imports only the shared vocabulary) because every layer reads events.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, cast

from passhat.vocabulary import BLOCKED, GuardDecision

EventKind = Literal["user", "agent", "tool", "guard", "end"]
INFRA_ERROR = "infra_error"  # the trial could not be judged (model API down, harness bug): retried, never scored
USER_SIMULATOR_ERROR = "user_simulator_error"  # the simulated customer broke its instruction: the trial is not judged
# How the customer ended the conversation (gave up: abandoned; a simulator that broke its instruction:
# user_simulator_error), and how a conversation ended, the customer's stop or the harness's limits; or the
# agent's side cutting it short: its model's context window full, its own failure (agent_error: its code raised
# SystemExit or the like, its service refused passhat's request), or no answer after it had written (agent_unavailable).
UserStop = Literal["satisfied", "unsatisfied", "abandoned", "transferred", "user_simulator_error"]
AgentCut = Literal["context_overflow", "agent_error", "agent_unavailable"]
EndReason = UserStop | AgentCut | Literal["max_turns"]
# Why a trial failed, most specific first (the graders pick the first that applies); the last two are
# not the agent's failures and are counted apart.
Signature = Literal[
    "policy_violation",
    "privacy_violation",
    "policy_disclosure",
    "unconfirmed_write",
    "duplicate_write",
    "out_of_order",
    "wrong_entity_write",
    "wrong_arguments",
    "partial_resolution",
    "extra_write",
    "no_write",
    "misinformed",
    "missing_output",
    "unannounced_handoff",
    "tool_error_unrecovered",
    "user_abandoned",
    "closed_unresolved",
    "max_turns",
    "context_overflow",
    "agent_error",
    "agent_unavailable",
    "user_simulator_error",
    "infra_error",
]

# Signs in a failed trial that the simulated customer, not the agent, went wrong (grade/noise.py)
SuspicionKind = Literal["turned_down_ground_truth", "asked_again", "left_reachable"]


@dataclasses.dataclass(frozen=True)
class Event:
    """One step of a conversation.

    ``user`` / ``agent``: a chat message (``text``). ``tool``: one call with its validated arguments,
    its three-shape result and the policy rules it broke (``violations``: [{"rule", "reason"}]).
    ``end``: how the conversation stopped (``text`` is the EndReason; ``cause``, when the agent's side cut it
    short, what passhat saw: the exception, the HTTP status).
    A tool event's ``result`` is what the agent saw; ``fault`` ({"class", "actual"}) says an injected
    fault changed it (``actual``: what the backend really returned, None if the call never ran) and
    ``guard`` ({"guard", "decision", ...}) says a guardrail stopped or answered it; ``commitment`` is what
    a customer's yes to a write agrees to, taken before it ran (what the graders bind the yes to). ``guard`` events
    are decisions taken outside the agent's calls (a human-gate ticket resolved by the operator).
    """

    kind: EventKind
    text: str = ""
    call_id: str | None = None
    name: str | None = None
    args: Any = None
    result: dict[str, Any] | None = None
    violations: tuple[dict[str, str], ...] = ()
    fault: dict[str, Any] | None = None
    guard: dict[str, Any] | None = None
    commitment: dict[str, Any] | None = None  # a write's terms, as ``dialogue.proposals.Commitment.to_dict``
    cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind in ("tool", "guard"):
            out.update(call_id=self.call_id, name=self.name, args=self.args, result=self.result)
            if self.violations:
                out["violations"] = list(self.violations)
        if self.kind != "tool":
            out["text"] = self.text
        out.update(
            {
                k: v
                for k, v in (("fault", self.fault), ("guard", self.guard), ("commitment", self.commitment), ("cause", self.cause))
                if v is not None
            }
        )
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Event:
        return cls(**{**raw, "violations": tuple(raw.get("violations", ()))})

    @property
    def ok(self) -> bool:
        """A tool call whose result, as the agent saw it, is a success (see ``took_effect`` for the truth)."""
        return self.kind == "tool" and self.result is not None and self.result.get("status") == "ok"

    @property
    def decision(self) -> GuardDecision | None:
        """What a guardrail did with this call (None: no guardrail acted on it)."""
        return cast(GuardDecision, self.guard["decision"]) if self.guard else None

    @property
    def took_effect(self) -> bool:
        """The call really ran and succeeded, whatever the agent was told (a lost response took effect;
        an idempotent replay or a guard refusal did not)."""
        if self.kind not in ("tool", "guard") or self.decision in BLOCKED:
            return False
        actual = self.fault["actual"] if self.fault else self.result
        return actual is not None and actual.get("status") == "ok"


def end_reason(events: list[Event]) -> EndReason | None:
    return next((cast(EndReason, e.text) for e in reversed(events) if e.kind == "end"), None)
