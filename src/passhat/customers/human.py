"""A customer played by a person: its turns are what the person types, and a control ends the conversation.

To the orchestrator it is a customer like any other (``respond`` is the whole interface), so a person's trial goes
through the same environment, guards, faults, graders and store as a simulated one. The person's side speaks through
``say``: words, or a control that ends the conversation (done, give up, ask for a person). A person who says nothing
for ``idle_timeout`` seconds while it is their turn has left: the trial is abandoned (``CustomerIdle``), stored
without a grade rather than scored as the agent's failure.

``ReplayedCustomer`` says the same words again in the same order: against a deterministic agent, the grade of a
person's stored trial must equal the grade of its words replayed, which is what proves a human trial is graded
exactly like a scripted one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Sequence
from typing import Literal, cast, get_args

from passhat.customers.base import UserFactory, UserTurn
from passhat.customers.personas import Persona
from passhat.domains.model import Domain, Task
from passhat.errors import UserError
from passhat.trajectory import Event, UserStop, end_reason

Control = Literal["done", "give_up", "ask_for_person"]
CONTROLS: tuple[Control, ...] = get_args(Control)
# how each control ends the conversation, and what the customer says when the person types nothing with it
ENDINGS: dict[Control, tuple[UserStop, str]] = {
    "done": ("satisfied", "Thanks, that's everything I needed."),
    "give_up": ("unsatisfied", "Never mind, I'll leave it there."),
    "ask_for_person": ("abandoned", "I'd like to talk to a person, please."),  # the customer leaves the agent
}
MAX_WORDS = 4000  # characters one message of the person may have


class CustomerIdle(Exception):
    """The person said nothing for the idle timeout while it was their turn: the trial is abandoned (not scored)."""


@dataclasses.dataclass(frozen=True)
class Said:
    """One line of the conversation as the person sees it: who said it ("agent" or "customer") and the words."""

    who: Literal["agent", "customer"]
    text: str


class HumanCustomer:
    """The customer a person plays; one per trial. ``say`` is the person's side, ``respond`` the orchestrator's."""

    def __init__(self, idle_timeout: float):
        self.idle_timeout = idle_timeout
        self.transcript: list[Said] = []  # what the person has seen and said, in order
        self.ended = False  # a control was given: nothing more is said
        self.idled = False  # the person let the idle timeout pass: the trial is abandoned
        self._turns: asyncio.Queue[UserTurn] = asyncio.Queue()
        self._awaiting = False  # the orchestrator waits for the person (else the agent is working, or nothing began)

    @property
    def your_turn(self) -> bool:
        """Whether the conversation waits for the person's next message."""
        return self._awaiting and not self.ended

    @property
    def agent_working(self) -> bool:
        """Whether the agent is answering the person's last message (the page shows a typing state)."""
        return not self._awaiting and not self.ended and any(s.who == "customer" for s in self.transcript)

    def say(self, text: str, control: Control | None = None) -> UserTurn:
        """The person's next message, or with ``control`` their last; a UserError when nothing can be said now."""
        text = text.strip()
        if self.ended:
            raise UserError("this conversation is over; start another one to go on.")
        if control is not None and control not in CONTROLS:
            raise UserError(f"unknown control {control!r}; choose from {', '.join(CONTROLS)}.")
        if not text and control is None:
            raise UserError("the message is empty: type what the customer says, or end the conversation with a control.")
        if len(text) > MAX_WORDS:
            raise UserError(f"the message has {len(text):,} characters; one message may have at most {MAX_WORDS:,}.")
        if not self._awaiting and self.transcript:
            raise UserError("the agent is still answering; wait for its message before you write again.")
        stop, default = ENDINGS[control] if control else (None, "")
        turn = UserTurn(text or default, stop)
        self.ended = stop is not None
        self._awaiting = False
        self.transcript.append(Said("customer", turn.text))
        self._turns.put_nowait(turn)
        return turn

    async def respond(self, agent_text: str | None) -> UserTurn:
        if agent_text is not None:
            self.transcript.append(Said("agent", agent_text))
        self._awaiting = True
        try:
            return await asyncio.wait_for(self._turns.get(), self.idle_timeout)
        except TimeoutError:
            self.ended = self.idled = True
            raise CustomerIdle(f"the person said nothing for {self.idle_timeout:g} s: the trial is abandoned") from None

    def factory(self) -> UserFactory:
        """The factory a trial makes its customer with: this person, whatever the task and persona."""
        return lambda domain, task, persona, rng: self


class ReplayedCustomer:
    """Says ``turns`` in order, whatever the agent says: a person's words replayed."""

    def __init__(self, turns: Sequence[UserTurn]):
        self._turns = list(turns)
        self._next = 0

    @classmethod
    def from_events(cls, events: Sequence[Event]) -> ReplayedCustomer:
        """The customer's words of a stored trial, the last one ending it as that trial ended (when the customer did)."""
        ends = [i for i, e in enumerate(events) if e.kind == "end"]
        before = [e for e in events[: ends[-1]] if e.kind in ("user", "agent", "tool")] if ends else []
        reason = end_reason(list(events))
        ended_by_customer = bool(before) and before[-1].kind == "user"
        stop = cast(UserStop, reason) if ended_by_customer and reason in get_args(UserStop) else None
        texts = [e.text or "" for e in events if e.kind == "user"]
        return cls([UserTurn(t) for t in texts[:-1]] + [UserTurn(t, stop) for t in texts[-1:]])

    async def respond(self, agent_text: str | None) -> UserTurn:
        if self._next >= len(self._turns):
            raise RuntimeError(f"the replay has only {len(self._turns)} customer turns, and the agent asked for another")
        self._next += 1
        return self._turns[self._next - 1]

    def __call__(self, domain: Domain, task: Task, persona: Persona, rng: random.Random) -> ReplayedCustomer:
        """As a factory: the replay itself, for one trial."""
        return self
