"""The events of one trial. Everything the graders, the store and the reports know of a trial is here.

A leaf module (no imports from the rest of passhat) because every layer reads events.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

EventKind = Literal["user", "agent", "tool", "end"]
EndReason = Literal["satisfied", "unsatisfied", "abandoned", "transferred", "max_turns"]


@dataclasses.dataclass(frozen=True)
class Event:
    """One step of a conversation.

    ``user`` / ``agent``: a chat message (``text``). ``tool``: one call with its validated arguments,
    its three-shape result and the policy rules it broke (``violations``: [{"rule", "reason"}]).
    ``end``: how the conversation stopped (``text`` is the EndReason).
    """

    kind: EventKind
    text: str = ""
    call_id: str | None = None
    name: str | None = None
    args: Any = None
    result: dict[str, Any] | None = None
    violations: tuple[dict[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "tool":
            out.update(call_id=self.call_id, name=self.name, args=self.args, result=self.result)
            if self.violations:
                out["violations"] = list(self.violations)
        else:
            out["text"] = self.text
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Event:
        return cls(**{**raw, "violations": tuple(raw.get("violations", ()))})

    @property
    def ok(self) -> bool:
        """A tool call that took effect."""
        return self.kind == "tool" and self.result is not None and self.result.get("status") == "ok"


def end_reason(events: list[Event]) -> str | None:
    return next((e.text for e in reversed(events) if e.kind == "end"), None)
