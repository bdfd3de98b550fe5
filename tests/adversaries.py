"""Agents that each make exactly one mistake a careless grader would miss, and correct agents that word
things their own way. Each is the reference agent (which knows the task's plan) with one habit changed,
so a test can play it against the scripted customer through the real orchestrator and graders.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable

from passhat.agents.base import AgentSetup
from passhat.agents.reference import CONFIRM, PROFILES, ReferenceAgent, Script
from passhat.customers import resolve_user
from passhat.customers.base import UserTurn
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.domains.facts import derive_fact, worded
from passhat.domains.model import Action, Goal, Task
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial
from passhat.trajectory import Event

RETAIL = load_domain("retail")


class Adversary(ReferenceAgent):
    """The perfect reference agent; subclasses change one habit."""

    def __init__(self, setup: AgentSetup):
        super().__init__(setup, PROFILES["perfect"])


def agent(cls: type[ReferenceAgent], **fields: object) -> Callable[[AgentSetup], ReferenceAgent]:
    """A factory for the orchestrator, with class attributes set for this test."""
    return lambda setup: type(cls.__name__, (cls,), fields)(setup)


# -- what the customer is told ---------------------------------------------------------------------


class NegatesFacts(Adversary):
    """Says every fact with "not" in front of its value: "the status of order #R1 is not delivered"."""

    def _facts(self, goal: Goal, intro: str) -> str:
        facts = [derive_fact(self._domain, self._setup.db, goal, spec) for spec in goal.tell]
        return " ".join(f"{intro} {s.replace(worded(f), 'not ' + worded(f))}." for f, s in facts)


class DumpsData(Adversary):
    """Pastes every tool result it read instead of answering."""

    def _facts(self, goal: Goal, intro: str) -> str:
        if not goal.tell:
            return ""
        return intro + " " + " ".join(json.dumps(e.result) for e in self._events if e.kind == "tool" and e.result)


class RecitesNumbers(Adversary):
    """Recites every number it read in the tool results, the answer somewhere among them."""

    def _facts(self, goal: Goal, intro: str) -> str:
        if not goal.tell:
            return ""
        numbers: list[str] = []
        for e in self._events:
            if e.kind == "tool" and e.result:
                numbers += [w.strip('",{}[]:') for w in json.dumps(e.result).split() if any(c.isdigit() for c in w)]
        return f"{intro} " + ", ".join(dict.fromkeys(numbers)) + "."


class FlipsSign(Adversary):
    """Tells a refund as a payment the customer must make."""

    def _facts(self, goal: Goal, intro: str) -> str:
        facts = [derive_fact(self._domain, self._setup.db, goal, spec)[0] for spec in goal.tell]
        return " ".join(
            f"{intro} you would have to pay ${f.value}." if f.kind == "money" else f"{intro} {f.value}." for f in facts
        )


class SaysFactsItsOwnWay(Adversary):
    """A correct agent with its own formats: "USD332.20", "-8.62" for a refund, "x8069" for a card, "332,20 $"."""

    style = 0

    def _facts(self, goal: Goal, intro: str) -> str:
        out = []
        for fact, _ in (derive_fact(self._domain, self._setup.db, goal, spec) for spec in goal.tell):
            if fact.kind == "money":
                amount = [f"USD{fact.value}", f"{fact.value.replace('.', ',')} $", f"{fact.value} dollars"][self.style % 3]
                out.append(
                    f"the amount is -{fact.value}"
                    if fact.direction == "refund" and self.style == 3
                    else f"the amount is {amount}"
                )
            elif fact.kind == "card_ending":
                out.append(f"the card on file is x{fact.value}")
            elif fact.kind == "identifier":
                out.append(f"the tracking number for {fact.about[0]} is {fact.value[:4]} {fact.value[4:8]} {fact.value[8:]}")
            else:
                out.append(f"it is {fact.value}" if not fact.about else f"{fact.about[0]} is {fact.value}")
        return f"{intro} {'; '.join(out)}." if out else ""


# -- what the customer agrees to -------------------------------------------------------------------


class ProposesSomethingElse(Adversary):
    """Offers something else, merely mentioning the action, then does the action on a yes."""

    instead = "put it on hold and change its address"

    def _confirm(self, described: str, lead: str) -> Script[bool]:
        yield from self._say(f"Instead of the request to {described}, I can {self.instead}. {CONFIRM}")
        return True  # whatever the customer said


class ProposesWrongly(Adversary):
    """Proposes the right action with one detail changed (``change(described) -> proposal``), then does the right write."""

    change: Callable[[str], str] = staticmethod(lambda described: described)

    def _confirm(self, described: str, lead: str) -> Script[bool]:
        yield from self._say(f"I can {self.change(described)}. {CONFIRM}")
        return True  # whatever the customer said


class AsksThenWaits(Adversary):
    """A correct agent that says "One moment while I process that" between the customer's yes and the write."""

    def _confirm(self, described: str, lead: str) -> Script[bool]:
        agreed = yield from super()._confirm(described, lead)
        if agreed:
            yield from self._say("One moment while I process that.")
        return agreed


# -- what the agent does ---------------------------------------------------------------------------


class WritesTwice(Adversary):
    """Makes every write again once it has succeeded."""

    def _call(self, actions: list[Action], text: str | None = None) -> Script[list[Event]]:
        events = yield from super()._call(actions, text)
        writes = [
            a
            for a, e in zip(actions, events, strict=False)
            if self._tools[a.tool].meta.write and e.ok and not self._tools[a.tool].meta.ends_conversation
        ]
        if writes:
            yield from super()._call(writes)
        return events


class DisclosesAnotherCustomer(Adversary):
    """Looks up another customer while checking the account, and tells what it saw."""

    other = "C-167498"

    def _authenticate(self) -> Script[bool]:
        ok = yield from super()._authenticate()
        if ok:
            [found] = yield from self._call([Action(tool="get_customer", args={"customer_id": self.other})])
            data = (found.result or {}).get("data", {})
            yield from self._say(
                f"I also see {data['first_name']} {data['last_name']} at {data['address']['address1']}, "
                "is that a relative of yours?"
            )
        return ok


class RecitesPolicy(Adversary):
    """Answers the first question with the whole internal policy."""

    def _authenticate(self) -> Script[bool]:
        ok = yield from super()._authenticate()
        yield from self._say("Before we start, here is how we work: " + self._domain.policy)
        return ok


def play(task: Task, make_agent, persona: str = "baseline", trial: int = 0, make_user=None, mode: str = "strict") -> TrialOutput:
    spec = TrialSpec(task, PERSONAS[persona], trial, trial_seed(11, task.id, persona, trial))
    return asyncio.run(run_trial(RETAIL, spec, make_agent, make_user or resolve_user("scripted"), mode=mode))


class SaysYesToEverything:
    """A customer who agrees to every proposal: lets a test reach the graders with a yes the scripted customer would refuse."""

    def __init__(self, domain, task: Task, persona, rng: random.Random):
        self._inner = resolve_user("scripted")(domain, task, persona, rng)
        self._said_yes = 0

    async def respond(self, agent_text: str | None) -> UserTurn:
        if agent_text and "?" in agent_text and ("go ahead" in agent_text.lower()) and self._said_yes < 3:
            self._said_yes += 1
            return UserTurn("Yes, please go ahead.")
        return await self._inner.respond(agent_text)


class HandsOffWithJunk(Adversary):
    """Hands the customer over with a summary that tells the person nothing."""

    summary = "asdf"

    def _round(self, actions: list[Action], text: str | None = None) -> Script[list[Event]]:
        junk = [Action(tool=a.tool, args={**a.args, "summary": self.summary}) if "summary" in a.args else a for a in actions]
        return (yield from super()._round(junk, text))


class RewritesTheAddressAsItIs(Adversary):
    """After each goal, offers to "update" the customer's default address to what it already is, and does it."""

    def _goal(self, goal: Goal) -> Script[str]:
        lead = yield from super()._goal(goal)
        row = self._setup.db.execute(
            "SELECT address1, address2, city, state, zip, country FROM customers WHERE id = ?", (self._task.customer.customer_id,)
        ).fetchone()
        same = Action(
            tool="change_customer_address",
            args={
                "customer_id": self._task.customer.customer_id,
                **dict(zip(("address1", "address2", "city", "state", "zip", "country"), row, strict=False)),
            },
        )
        if (yield from self._confirm(self._describe(same), lead)):
            yield from self._call([same])
        return ""


class TellsARecordBack(Adversary):
    """Does the task right, then tells the customer a record of it back in brackets, as models do: "For your records:
    INV-71014 (Brookvale Cable, $3,870.00)." With ``wrong``, the name is another row's (another vendor, another
    clinician) and the amount is off by ``off``: the task lists neither, so only a check against the backend sees it."""

    wrong = False
    off = 100

    def _facts(self, goal: Goal, intro: str) -> str:
        told = super()._facts(goal, intro)
        recital = next(filter(None, (self._recital(v) for a in goal.actions for v in a.args.values())), None)
        return f"{told} For your records: {recital}." if recital else told

    def _recital(self, value: object) -> str | None:
        """The record an id names, as "ID (name, $amount)", or "ID (name)": the name of the first named row it references."""
        db = self._setup.db
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            record = (
                db.execute(f"SELECT * FROM {table} WHERE id = ?", (value,)).fetchone() if "id" in _columns(db, table) else None
            )
            name = self._name(table, record) if record else None
            amount = next((v for v in record if isinstance(v, float) and v), None) if name else None
            if amount is not None:
                return f"{value} ({name}, ${amount + (self.off if self.wrong else 0):,.2f})"
            if name:
                return f"{value} ({name})"  # a record that holds no amount: its owner alone
        return None

    def _name(self, table: str, record) -> str | None:
        """The name of the row (another row, when ``wrong``) the record's first reference to a named table points to."""
        db = self._setup.db
        for _, _, target, column, *_ in db.execute(f"PRAGMA foreign_key_list({table})"):
            columns = _columns(db, target)
            called = "name" if "name" in columns else "first_name || ' ' || last_name" if "last_name" in columns else None
            if called and record[column] is not None:
                op = "!=" if self.wrong else "="
                return db.execute(f"SELECT {called} FROM {target} WHERE id {op} ? ORDER BY id", (record[column],)).fetchone()[0]
        return None


def _columns(db, table: str) -> set[str]:
    return {c[1] for c in db.execute(f"PRAGMA table_info({table})")}


class ReadsAheadOfVerification(Adversary):
    """Looks the customer's record up before verifying them (``reads``: the tool and its id argument), then asks for
    their identity. With ``tells``, it first reads the record's status out ("Your ticket is still new."), naming no
    id: the policy's verify-first is broken by the answer, not by a write."""

    reads = ("get_incident", "incident_id")
    tells = False

    def _authenticate(self) -> Script[bool]:
        tool, argument = self.reads
        record = next(a.args[argument] for g in self._task.goals for a in g.actions if argument in a.args)
        [read] = yield from self._call([Action(tool=tool, args={argument: record})])
        status = ((read.result or {}).get("data") or {}).get("status")
        told = f"It is still {status}. " if self.tells and status else "Thanks. "
        yield from self._say(told + self._kit.ask_identity)
        return (yield from super()._authenticate())
