"""The scripted customer: plays a task's goals, in order, under a persona, from the task's fields alone.

It reads each agent message with ``dialogue.reading`` (cue phrases, not our agent's exact wording), so it
can face any agent. It wants a result, not one path to it: where a task accepts several outcomes, it agrees
to the writes of any of them (but not to a mix of two: once it agreed to a write, only the outcomes that make it
stay open). It says yes only to a proposal of what it wants, judged by the same rule the graders
bind a yes with (``dialogue.proposals``): the action offered (not what is done instead), every term of
the call named in any usual wording, and nothing stated that it did not ask for (another amount, a refund
that is really a charge, another card). A question is settled only by an answer to it.
All randomness comes from the ``random.Random`` it is given, so a seed fixes every word it says.
"""

from __future__ import annotations

import collections
import dataclasses
import random
import re
import threading
from collections.abc import Callable
from typing import Any

from passhat.customers.base import UserTurn
from passhat.customers.personas import Persona
from passhat.customers.wording import Voice as CustomerVoice
from passhat.customers.wording import tone_of
from passhat.dialogue import Message, is_affirmative
from passhat.dialogue.facts import Fact, answers_kind
from passhat.dialogue.proposals import Commitment, action_pattern, bound_writes, proposes
from passhat.dialogue.reading import Reading, read_message
from passhat.dialogue.reasks import reasked_binding, standing_proposal
from passhat.dialogue.text import sentences
from passhat.dialogue.values import names_identifier
from passhat.domains.facts import derive_fact
from passhat.domains.kit import IDENTITY, Voice, joined
from passhat.domains.model import Action, Domain, EndState, Goal, Task
from passhat.env import Environment, tool_registry
from passhat.guard.confirmation import commitment_for

# an offer that asks whether the customer wants anything, not one thing: "Is there anything on your own membership
# you'd like me to look at?" ("Anything else?" beside an offer is a question of its own)
_INVITES = re.compile(r"\b(?:anything|something)\b(?! else| more)[^.?!]*\?", re.I)
# a request's opening word that accepts the agent's last answer ("Fine.", "OK,", "All right, then"); "Good afternoon" is none
_ACCEPTANCE = re.compile(r"\A(?:fine|ok(?:ay)?|all right|alright|great|good|in that case)[,.!]\s*(?:then\b,?\s*)?", re.I)

MAX_MISMATCHES = 3  # wrong proposals for one goal before the customer gives up
MAX_REPEATS = 3  # times the customer gives the same detail again before it gives up
CALM_PATIENCE = 8  # messages without progress a patient customer sits through


@dataclasses.dataclass(frozen=True)
class _GoalPlan:
    """What the customer knows of one goal. ``calls`` are what it would have done, in any acceptable outcome
    (for a refused goal, the forbidden calls: the customer does want them; the agent is the one who must
    decline); ``paths`` are its calls (indices) in each acceptable outcome, in the task's order of outcomes."""

    goal: Goal
    calls: list[Action]
    commitments: list[Commitment]  # per call: what a yes to it agrees to, as the customer expects its account
    questions: list[Fact]  # an informational goal's facts: what the customer asked, to hear answered
    paths: list[frozenset[int]]


@dataclasses.dataclass
class _GoalState:
    """Where one goal stands (``_GoalPlan``'s fields, and what happened to them so far)."""

    goal: Goal
    calls: list[Action]
    commitments: list[Commitment]
    questions: list[Fact]
    paths: list[frozenset[int]]
    awaiting: set[int] = dataclasses.field(default_factory=set)  # confirmed, result not reported yet
    completed: set[int] = dataclasses.field(default_factory=set)
    answered: set[int] = dataclasses.field(default_factory=set)  # questions the agent has answered
    mismatches: int = 0
    refusals: int = 0
    questioned: bool = False
    handled: bool = False

    def fits(self, outcome: int) -> bool:
        """Whether every call agreed to so far is one of the outcome's (-1: a harmless offer, no call)."""
        return {i for i in self.completed | self.awaiting if i >= 0} <= self.paths[outcome]

    def open_calls(self, live: list[int]) -> list[int]:
        """Calls not done yet that one of the ``live`` outcomes makes."""
        return [i for i in range(len(self.calls)) if i not in self.completed and any(i in self.paths[k] for k in live)]

    def done(self, live: list[int]) -> bool:
        """Whether the calls done are exactly those of one of the ``live`` outcomes."""
        return any(self.paths[k] == self.completed for k in live)


class ScriptedUser:
    """A deterministic customer. ``respond`` is the whole interface (see ``UserSimulator``)."""

    def __init__(self, domain: Domain, task: Task, persona: Persona, rng: random.Random):
        self._domain, self._task, self._persona, self._rng = domain, task, persona, rng
        self._kit = domain.kit
        self._voice: Voice = CustomerVoice(tone_of(persona), rng, domain.kit.phrasings)
        self._tools = tool_registry(domain)
        self._goals = _goal_states(domain, task)
        self._index = 0
        self._given: set[str] = set()  # slots given in full for the current goal (identity: for good)
        self._repeats: collections.Counter[str] = collections.Counter()
        self._slip = self._choose_slip()
        self._correction: Callable[[Voice], str] | None = None  # a slip to put right if the agent finds nothing
        self._held_back: str | None = None  # the rest of a request given in pieces
        self._stalled = 0
        self._moved = False
        self._said: list[Message] = []  # the conversation so far, to read a re-ask of a proposal still standing

    # -- the interface ------------------------------------------------------------------------------

    async def respond(self, agent_text: str | None) -> UserTurn:
        if agent_text is None:
            turn = UserTurn(self._opening())
        else:
            self._said.append(("agent", agent_text))
            turn = self._answer_to(agent_text)
        self._said.append(("user", turn.text))
        return turn

    def _answer_to(self, agent_text: str) -> UserTurn:
        self._moved = False
        turn = self._reply(agent_text)
        if turn.stop is None and self._held_back and not is_affirmative(turn.text):
            turn = UserTurn(joined(turn.text, self._voice.say("rest"), self._take_held_back()))
        return self._after_patience(turn)

    # -- the opening --------------------------------------------------------------------------------

    def _opening(self) -> str:
        greeting = self._voice.say("greeting")
        request = self._request(self._goals[0].goal)
        volunteered = self._identity() if self._persona.incoherent and self._rng.random() < 0.5 else ""
        if self._persona.incoherent and self._rng.random() < 0.5:
            self._held_back = request
            return joined(greeting, self._voice.say("vague"), volunteered)
        return joined(greeting, volunteered, request)

    def _choose_slip(self) -> str | None:
        """The incoherent customer's first-try mistake about who they are."""
        if not self._persona.incoherent:
            return None
        return self._rng.choice(list(self._kit.slips(self._task.customer)))

    def _request(self, goal: Goal) -> str:
        """One of the goal's requests, without the word that accepts what the agent said before ("Fine.", "OK,"): the
        customer's own lead-in comes first ("Got it. One more thing."), and "One more thing. Fine." contradicts it."""
        request = _ACCEPTANCE.sub("", self._rng.choice(goal.request), count=1)
        return joined(request[:1].upper() + request[1:], self._voice.say("urgency"))

    def _take_held_back(self) -> str:
        text, self._held_back = self._held_back or "", None
        return text

    # -- reacting to one agent message --------------------------------------------------------------

    def _reply(self, text: str) -> UserTurn:
        reading = read_message(text, self._domain.lexicon)
        state = self._current
        if state is None:
            return self._finish()
        verdict = self._absorb(state, reading, text)
        if verdict is not None:
            return verdict
        if reading.proposal and state.handled:  # e.g. a refusal it accepts, with an alternative: for the next goal
            state = self._next_goal_state()
            if state is None:  # nothing more is wanted: a plain no to the offer, and goodbye if asked for more
                return self._no_thanks(reading)
            if not self._matching_calls(state, text, reading):  # an extra offer, then on to the next request
                return UserTurn(self._declined_for_next(text, state.goal))
        if reading.proposal and reading.asks:  # two questions at once: both answered
            return self._on_proposal_and_asks(state, text, reading)
        if reading.proposal:
            return self._on_proposal(state, text, reading)
        if reading.closing and not (reading.asks or reading.anything_else):
            return self._finish()
        if reading.handoff:
            self._moved = True
            return UserTurn(self._voice.say("wait"))
        if reading.not_found:
            return self._on_not_found(state.goal, text)
        if reading.asks and reading.refusal and state.handled and self._index == len(self._goals) - 1:
            return self._no_thanks(reading)  # the refusal taken, the alternative's details asked for: nothing more is wanted
        if reading.asks:
            answers = self._answers(state.goal, reading.asks)
            return UserTurn(joined(answers, self._voice.say("just_that")) if reading.anything_else else answers)
        if state.handled or reading.anything_else:
            return self._next_goal(state)
        if reading.working:
            return UserTurn(self._voice.say("ack"))
        return UserTurn(joined(self._voice.say("unhelped"), self._restatement(state)))

    @property
    def _current(self) -> _GoalState | None:
        return self._goals[self._index] if self._index < len(self._goals) else None

    def _absorb(self, state: _GoalState, reading: Reading, text: str) -> UserTurn | None:
        """Update the current goal (and later goals whose calls it agreed to with it) from what the agent says
        about it; a turn when that settles the reply."""
        outcome = state.goal.outcome
        waiting = [s for s in self._goals if s.awaiting]
        failed = reading.failure or reading.refusal and not reading.report
        if state.awaiting and failed and not (reading.report and self._reported_beside(waiting, text)):
            for s in waiting:
                s.awaiting.clear()
            return self._refused(state, reading)
        if state.awaiting and reading.report:
            for s in waiting:
                self._complete(s, s.awaiting)
                s.awaiting.clear()
        elif (
            reading.report
            and (reading.informative or reading.proposal and reading.anything_else)  # "Done! Anything else? Shall I ...?"
            and outcome != "answered"
            and (named := self._reported_calls(state, text, reading))
        ):
            for goal, calls in named.items():  # done without asking: the customer still got what it wanted
                self._complete(self._goals[goal], calls)
        elif reading.handoff and outcome == "transferred":
            self._settle(state, True)
        elif outcome == "answered" and (told := self._told(state, reading)):
            # an answer is credited before what comes with it: a follow-up offer, or an "I can't ..." that explains it
            state.answered |= told
            if len(state.answered) == len(state.questions):  # "your identity is verified" answers nothing
                self._settle(state, True)
        elif reading.refusal and (
            not reading.proposal or outcome == "refused" and not self._matching_calls(state, text, reading)
        ):
            return self._refused(state, reading)  # an offer of the very write wanted, a caveat beside it, is no refusal
        return None

    def _reported_beside(self, waiting: list[_GoalState], text: str) -> bool:
        """Whether the message says every awaited write was done in the sentences that report no failure or refusal:
        "$55.00 has been refunded to your Visa. As I said, I couldn't do anything about Bruno's tow" reports the write
        and recalls an earlier refusal; "I tried, but the refund failed: your card has been closed" reports nothing."""
        lexicon = self._domain.lexicon
        readings = [read_message(text[start:end], lexicon) for start, end in sentences(text)]
        plain = " ".join(r.text for r in readings if not (r.failure or r.refusal))
        done = [s.commitments[i] for s in self._goals for i in s.completed if i >= 0]
        own = (self._task.customer.customer_id,)
        return all(
            len(bound_writes(plain, [s.commitments[i] for i in s.awaiting], done, lexicon.id_pattern, own, reported=True))
            == len(s.awaiting)
            for s in waiting
        )

    def _declined_for_next(self, text: str, goal: Goal) -> str:
        """An offer the customer does not take, then its next request, saying one thing: "No, thanks. One more thing:
        ..." to an offer of something else; to an offer that asks whether there is anything it wants ("is there anything
        on your own membership I can look at?"), no "No, thanks": the next request is what it wants."""
        declined = "" if _INVITES.search(text) else self._voice.say("no_thanks")
        return joined(declined, self._voice.say("next"), self._request(goal))

    def _reported_calls(self, state: _GoalState, text: str, reading: Reading) -> dict[int, set[int]]:
        """The open calls the message says are done, leaving out those said only in an offer beside the report
        ("Status not changed — say if you want it marked with controller")."""
        named = self._matching_calls(state, text, reading, reported=True)
        if not named or reading.done_text == text:
            return named
        cut = self._matching_calls(state, reading.done_text, reading, reported=True)
        kept = {goal: calls & cut.get(goal, set()) for goal, calls in named.items()}
        return {goal: calls for goal, calls in kept.items() if calls}

    def _told(self, state: _GoalState, reading: Reading) -> set[int]:
        """The questions of an informational goal that the message's statements answer (a refusal that answers none
        stays a refusal; an offer's own terms answer nothing)."""
        if not reading.tells:
            return set()
        text = reading.text if reading.informative else reading.stated
        return {i for i, q in enumerate(state.questions) if answers_kind(q, text, self._domain.id_pattern)}

    def _no_thanks(self, reading: Reading) -> UserTurn:
        """An offer of nothing the customer wants, once its request is handled: declined politely, not as a wrong
        read-back; with "anything else?" beside it, the customer also says what is next (or goodbye)."""
        if not reading.anything_else:
            return UserTurn(self._voice.say("no_thanks"))
        state = self._current
        turn = self._finish() if state is None or state.handled else self._next_goal(state)
        return dataclasses.replace(turn, text=joined(self._voice.say("no_thanks"), turn.text))

    def _settle(self, state: _GoalState, handled: bool) -> None:
        self._moved = True
        state.handled = handled

    def _complete(self, state: _GoalState, calls: set[int]) -> None:
        state.completed |= calls
        self._settle(state, state.done(self._live_outcomes()))

    def _refused(self, state: _GoalState, reading: Reading) -> UserTurn | None:
        """A refusal is right for a refused goal (accepted, perhaps after one push-back); otherwise pushed back once."""
        self._moved = True
        state.refusals += 1
        if state.goal.outcome == "refused":
            moving_on = reading.anything_else or reading.closing or reading.proposal
            if state.refusals == 1 and not moving_on and self._pushes_back():
                return UserTurn(self._voice.say("pushback"))
            state.handled = True
            return None
        if state.refusals >= 2:
            return UserTurn(self._voice.say("leave"), stop="unsatisfied")
        return UserTurn(joined(self._voice.say("pushback"), self._request(state.goal)))

    def _pushes_back(self) -> bool:
        return self._persona.upset or self._rng.random() < 0.3

    def _next_goal(self, state: _GoalState) -> UserTurn:
        """After a goal is handled (or at "anything else?"): the next goal, or the goodbye."""
        if not state.handled:  # "anything else?" before this request is handled: only this, said again
            # part of it done: that part acknowledged, the rest asked for, not "only this" before the whole request again
            if not state.completed:
                return UserTurn(joined(self._voice.say("just_that"), self._request(state.goal)))
            lead = self._voice.say("rest_open")
            done = [state.commitments[i] for i in state.completed if i >= 0]  # -1: an informational offer taken
            wanted = [state.commitments[i] for i in state.open_calls(self._live_outcomes())]
            rest = _undone_part(self._rng.choice(state.goal.request), done, wanted)
            return UserTurn(joined(lead, rest, self._voice.say("urgency")))
        nxt = self._next_goal_state()
        if nxt is None:
            return self._finish()
        return UserTurn(joined(self._voice.say("ack"), self._voice.say("next"), self._request(nxt.goal)))

    def _next_goal_state(self) -> _GoalState | None:
        """On to the next goal, with only who the customer is still given (None: no goal left)."""
        self._moved = True
        self._advance()
        self._given &= {IDENTITY}
        self._repeats.clear()
        return self._current

    def _advance(self) -> None:
        """On to the next goal not handled yet (a later goal's writes may have been agreed to and done already)."""
        self._index += 1
        while self._current is not None and self._current.handled:
            self._index += 1

    def _finish(self) -> UserTurn:
        if self._current is not None and self._current.handled:
            self._advance()
        if self._current is None:
            return UserTurn(self._voice.say("close"), stop="satisfied")
        return UserTurn(self._voice.say("leave"), stop="unsatisfied")

    def _restatement(self, state: _GoalState) -> str:
        return joined(self._voice.say("restate"), self._request(state.goal))

    # -- proposals ----------------------------------------------------------------------------------

    def _on_proposal(self, state: _GoalState, text: str, reading: Reading) -> UserTurn:
        self._moved = True
        matched = self._matching_calls(state, text, reading)
        if not matched:
            state.mismatches += 1
            if state.mismatches >= MAX_MISMATCHES:
                return UserTurn(self._voice.say("leave"), stop="unsatisfied")
            return UserTurn(joined(self._voice.say("no"), self._restatement(state)))
        if self._persona.asks_why and not state.questioned:
            state.questioned = True
            return UserTurn(self._voice.say("why"))
        for goal, calls in matched.items():
            self._goals[goal].awaiting |= calls
        return UserTurn(self._voice.say("yes"))

    def _on_proposal_and_asks(self, state: _GoalState, text: str, reading: Reading) -> UserTurn:
        """A proposal and a question for a detail in one message: the yes (or no) and the answer. A proposal that
        does not match yet may wait for the detail asked, so the customer only answers it."""
        if not self._matching_calls(state, text, reading):
            return UserTurn(self._answers(state.goal, reading.asks))
        turn = self._on_proposal(state, text, reading)
        beside_yes = is_affirmative(turn.text)
        return dataclasses.replace(turn, text=joined(turn.text, self._answers(state.goal, reading.asks, beside_yes)))

    def _matching_calls(self, state: _GoalState, text: str, reading: Reading, reported: bool = False) -> dict[int, set[int]]:
        """Per goal (by index), the open calls a yes to this message would agree to: some of the current goal's,
        and with them any of the later goals' writes proposed in the same message (an agent may propose every
        write at once). For an informational goal, a harmless offer that names nothing the customer does not
        know: {-1}. ``reported``: the calls the message says are done instead (beside an offer of something else)."""
        own = (self._task.customer.customer_id,)
        if not state.calls:
            keywords = self._domain.proposal_keywords.get(state.goal.kind, ())
            if keywords and not proposes(text, keywords):
                return {}
            goal = state.goal
            known = _ids_in([self._kit.knows(goal), [a.args for a in goal.lookups], list(own)])
            return {self._index: {-1}} if all(any(names_identifier(i, k) for k in known) for i in reading.ids) else {}
        live = self._live_outcomes()
        open_calls = [(self._index, i) for i in state.open_calls(live)]
        open_calls += [
            (g, i)
            for g in range(self._index + 1, len(self._goals))
            if self._agreeable_later(self._goals[g])
            for i in self._goals[g].open_calls(live)
        ]
        # the message may also report the writes made so far, for this goal or an earlier one ("Done. Next, shall I ...?",
        # "Recap: KE-32's workaround was applied to INC-1221. Shall I resolve INC-1221?")
        done = [s.commitments[i] for s in self._goals for i in s.completed if i >= 0]
        wanted = [self._goals[g].commitments[i] for g, i in open_calls]
        reported = reported or not reading.proposal
        chosen = bound_writes(text, wanted, done, self._domain.id_pattern, own, reported=reported)
        if not chosen and not reported:
            chosen = self._reasked(text, wanted, done, own)
        agreed: dict[int, set[int]] = {}
        for g, i in (open_calls[k] for k in chosen):
            agreed.setdefault(g, set()).add(i)
        return agreed if self._index in agreed else {}

    def _reasked(self, text: str, wanted: list[Commitment], done: list[Commitment], own: tuple[str, ...]) -> set[int]:
        """The writes a short re-ask agrees to: those the proposal still standing binds and the re-ask keeps, by the
        rule the graders judge the yes by (``dialogue.reasks``)."""
        earlier = standing_proposal(self._said, len(self._said), self._domain.id_pattern, own)
        if earlier is None:
            return set()
        chosen = bound_writes(earlier, wanted, done, self._domain.id_pattern, own)
        batch = [wanted[i] for i in chosen]
        return {i for i in chosen if reasked_binding(text, earlier, wanted[i], batch, self._domain.id_pattern, own, done).ok}

    def _live_outcomes(self) -> list[int]:
        """The acceptable outcomes (their indices) that make every write the customer agreed to so far."""
        return [k for k in range(len(self._goals[0].paths)) if all(s.fits(k) for s in self._goals)]

    def _agreeable_later(self, state: _GoalState) -> bool:
        """A later goal whose writes the customer may agree to ahead of time: all wanted, none begun, each asked for."""
        return (
            state.goal.outcome == "done"
            and not (state.handled or state.completed or state.awaiting)
            and all(self._tools[c.tool].meta.needs_confirmation for c in state.calls)
        )

    # -- answering questions ------------------------------------------------------------------------

    def _answers(self, goal: Goal, asks: frozenset[str], beside_yes: bool = False) -> str:
        """The details asked for that the customer has; for one it lacks, "I'm not sure what you need from me", but
        never beside a yes: that filler after "Yes, go ahead" reads as taking the yes back (``is_affirmative``)."""
        parts = []
        for slot in self._kit.slots:
            if slot in asks:
                before = slot in self._given
                parts.append(self._answer(goal, slot) or ("" if beside_yes else self._voice.say("unknown")))
                self._repeats[slot] += before
                self._moved |= not before and slot in self._given
        if any(n > MAX_REPEATS for n in self._repeats.values()):
            return self._voice.say("leave")
        return joined(*parts)

    def _answer(self, goal: Goal, slot: str) -> str:
        if slot == IDENTITY:
            return self._identity()
        text = self._kit.answer(slot, goal, self._voice)
        if text:
            self._given.add(slot)
        return text

    def _identity(self) -> str:
        """Who the customer is, as its domain's customers say it; an incoherent slip on the first try."""
        slip, self._slip = self._slip, None
        said = self._kit.identify(self._task.customer, slip, self._voice)
        if said.given:
            self._given.add(IDENTITY)
        self._correction = said.correction
        return said.text

    def _on_not_found(self, goal: Goal, text: str) -> UserTurn:
        """The agent found nothing: put a slip right, or give the detail again."""
        if self._correction is not None:
            fix, self._correction = self._correction, None
            return UserTurn(fix(self._voice))
        slot = (self._kit.refind(text) if IDENTITY in self._given else None) or IDENTITY
        return UserTurn(self._answers(goal, frozenset({slot})))

    # -- patience -----------------------------------------------------------------------------------

    def _after_patience(self, turn: UserTurn) -> UserTurn:
        """Counts agent messages in a row that moved nothing forward; past its patience the customer leaves."""
        if turn.stop or self._moved:
            self._stalled = 0
            return turn
        self._stalled += 1
        if self._persona.patience is not None and self._stalled > self._persona.patience:
            return UserTurn(self._voice.say("abandon"), stop="abandoned")
        if self._stalled > CALM_PATIENCE:
            return UserTurn(self._voice.say("leave"), stop="unsatisfied")
        return turn


def _goal_states(domain: Domain, task: Task) -> list[_GoalState]:
    """Each goal with the calls it wants, what a yes to each agrees to, and the questions it asks (fresh state)."""
    return [_GoalState(p.goal, list(p.calls), list(p.commitments), list(p.questions), list(p.paths)) for p in _plan(domain, task)]


_plans: dict[int, tuple[Task, list[_GoalPlan]]] = {}
_plans_lock = threading.Lock()


def _plan(domain: Domain, task: Task) -> list[_GoalPlan]:
    """What the customer knows of its goals, worked out once per task and process.

    The customer knows its own account, so it judges a proposal on the account as it expects it to be:
    after the earlier goals, and the goal's earlier calls, are done (in the acceptable outcome the call is of).
    """
    with _plans_lock:
        cached = _plans.get(id(task))
        if cached is not None and cached[0] is task:
            return cached[1]
    primary, *others = task.acceptable
    plan = _outcome_plan(domain, task, primary)
    for outcome in others:
        plan = [_merged(mine, theirs) for mine, theirs in zip(plan, _outcome_plan(domain, task, outcome), strict=True)]
    with _plans_lock:
        _plans[id(task)] = (task, plan)
    return plan


def _outcome_plan(domain: Domain, task: Task, outcome: EndState) -> list[_GoalPlan]:
    """The goals as one acceptable outcome carries them out."""
    tools = tool_registry(domain)
    env = Environment(domain)
    try:
        plan = []
        for goal, writes in zip(task.goals, task.goal_actions(outcome), strict=True):
            calls = list(writes or goal.forbidden)
            commitments = []
            for call in calls:
                commitments.append(commitment_for(tools[call.tool], dict(call.args), env.db, domain))
                if call in writes:
                    env.replay([call])
            questions = (
                [derive_fact(domain, env.db, goal, spec, env.history)[0] for spec in goal.tell]
                if goal.outcome == "answered"
                else []
            )
            plan.append(_GoalPlan(goal, calls, commitments, questions, [frozenset(range(len(calls)))]))
    finally:
        env.close()
    return plan


def _merged(plan: _GoalPlan, other: _GoalPlan) -> _GoalPlan:
    """``plan`` with ``other``'s calls as one more path: a call both make is the same call (the first's terms)."""
    calls, commitments, path = list(plan.calls), list(plan.commitments), set()
    for call, commitment in zip(other.calls, other.commitments, strict=True):
        same = next((i for i, c in enumerate(calls) if c == call and i not in path), None)
        if same is None:
            calls.append(call)
            commitments.append(commitment)
            same = len(calls) - 1
        path.add(same)
    return dataclasses.replace(plan, calls=calls, commitments=commitments, paths=[*plan.paths, frozenset(path)])


# where a request joins its actions: "escalate INV-71014 and mark it with controller", "cancel it, then book a new one"
_CLAUSE_JOINT = re.compile(r"\s*(?:,\s*(?:and\s+)?(?:then\s+)?|;\s*|\s+and\s+(?:then\s+)?|\s+then\s+)", re.I)


def _undone_part(request: str, done: list[Commitment], wanted: list[Commitment]) -> str:
    """The clauses of a request that ask for a ``wanted`` action and no ``done`` one ("mark it with controller" once
    the escalation is reported done), as a request; the whole request when its clauses cannot be told apart."""
    clauses = [c.strip(" .!") for c in _CLAUSE_JOINT.split(request) if c.strip(" .!")]
    done_words, wanted_words = _actions(done), _actions(wanted)
    if done_words is None or wanted_words is None or not any(done_words.search(c) for c in clauses):
        return request
    rest = [c for c in clauses if wanted_words.search(c) and not done_words.search(c)]
    if not rest:
        return request
    text = re.sub(r"^(?:please|and|also)\s+", "", " and ".join(rest), flags=re.I)
    return f"Please also {text}."


def _actions(commitments: list[Commitment]) -> re.Pattern[str] | None:
    """One pattern for the action words of some writes (None: no words)."""
    return action_pattern(tuple(w for c in commitments for w in c.words))


def _ids_in(value: Any) -> frozenset[str]:
    """Every string inside an argument structure, as entity ids are compared (no case, no leading '#')."""
    if isinstance(value, dict):
        return frozenset().union(*map(_ids_in, value.values())) if value else frozenset()
    if isinstance(value, (list, tuple)):
        return frozenset().union(*map(_ids_in, value)) if value else frozenset()
    return frozenset({value.lower().lstrip("#")}) if isinstance(value, str) else frozenset()
