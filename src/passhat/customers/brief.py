"""A customer's brief for a person playing it: who they are, what they want and what they know, in the persona's voice.

A person who plays a scenario must know what the scripted customer knows, and nothing the agent is meant to find
out or work out: the tools, the facts it must tell, the reason it must refuse. So the brief is rendered from the
scripted customer's own words (its identity, its requests, its answers to every detail the domain's kit can be
asked for), spoken through the same voice as the persona's, and ``task_brief_problems`` proves that none of the
ground truth the customer cannot know is in it: ``passhat check`` fails a task whose brief leaks.
"""

from __future__ import annotations

import dataclasses
import random
import re

from passhat.customers.personas import PERSONAS, Persona
from passhat.customers.wording import Voice, tone_of
from passhat.domains.facts import worded
from passhat.domains.kit import IDENTITY
from passhat.domains.model import Domain, Task
from passhat.env import tool_registry
from passhat.grade.expected import TaskFact, required_facts

VERDICTS = ("phrase", "status")  # fact kinds a question names as well as an answer
STOPS = "When you have what you wanted, press “I'm done”; if the agent cannot help, “Give up”; to ask for a person, “Ask for a person”."


@dataclasses.dataclass(frozen=True)
class Line:
    """One sentence of a brief and where it comes from, so a leak can be traced to what to change."""

    text: str
    source: str


@dataclasses.dataclass(frozen=True)
class Brief:
    """What a person reads before playing ``task`` as ``persona``; ``text()`` is the brief as shown."""

    task_id: str
    persona: str
    who: Line
    wants: tuple[Line, ...]
    knows: tuple[Line, ...]
    manner: Line

    @property
    def lines(self) -> tuple[Line, ...]:
        return (self.who, *self.wants, *self.knows, self.manner)

    def text(self) -> str:
        wants = "\n".join(f"  {i}. {w.text}" for i, w in enumerate(self.wants, 1))
        knows = "\n".join(f"  - {k.text}" for k in self.knows) or "  - nothing more than the above"
        return (
            f"Who you are: {self.who.text}\n"
            f"What you want, in this order:\n{wants}\n"
            f"What you can tell the agent if asked:\n{knows}\n"
            f"How you behave: {self.manner.text}\n"
            f"{STOPS}"
        )


def render_brief(domain: Domain, task: Task, persona: Persona) -> Brief:
    """The brief, worded the same way every time for one task and persona (the voice's choices are seeded by them)."""
    voice = Voice(tone_of(persona), random.Random(f"{task.id}/{persona.name}"), domain.kit.phrasings)
    kit = domain.kit
    who = Line(kit.identify(task.customer, None, voice).text, "the customer's identity (the domain kit's identify)")
    wants = tuple(Line(goal.request[0], f"goals[{g}].request[0]") for g, goal in enumerate(task.goals))
    knows = tuple(
        Line(said, f"the domain kit's answer for {slot!r} of goals[{g}]")
        for g, goal in enumerate(task.goals)
        for slot in kit.slots
        if slot != IDENTITY and (said := kit.answer(slot, goal, voice))
    )
    once: dict[str, Line] = {}  # a detail two goals share, said once
    for line in knows:
        once.setdefault(line.text, line)
    return Brief(task.id, persona.name, who, wants, tuple(once.values()), Line(persona.description, f"persona {persona.name}"))


def task_brief_problems(domain: Domain, task: Task) -> list[str]:
    """Every leak of the task's brief, under every persona (the persona's voice words the brief), each once with the
    personas whose brief has it."""
    found: dict[str, list[str]] = {}
    for persona in PERSONAS.values():
        for leak in _leaks(domain, task, render_brief(domain, task, persona)):
            found.setdefault(leak, []).append(persona.name)
    return [f"task {task.id}: the customer's brief (persona {', '.join(names)}) {leak}" for leak, names in found.items()]


def _leaks(domain: Domain, task: Task, brief: Brief) -> list[str]:
    """What of the ground truth the brief gives away, each naming the sentence's source: a tool's name (a customer
    never knows the agent's tools), a fact the agent must tell (the customer asked to learn it), or the reason
    the agent must give for a refusal."""
    secrets = [(f"the tool name {t!r}", _word(t)) for t in tool_registry(domain) if "_" in t]
    secrets += [(f"the value {worded(f.fact)!r} the agent must tell", _word(worded(f.fact))) for f in _told(domain, task)]
    secrets += [(f"goals[{g}].explanation", _word(goal.explanation)) for g, goal in enumerate(task.goals) if goal.explanation]
    return [
        f"gives away {what}, in {line.source}: reword it so the customer says only what it knows"
        for line in brief.lines
        for what, pattern in secrets
        if pattern.search(line.text)
    ]


def _told(domain: Domain, task: Task) -> list[TaskFact]:
    """The facts the agent must tell in any acceptable outcome, but for a hand-off's owner (a group the customer
    may well name itself), values the customer's own details hold (its card's ending) and verdicts (a status or a
    phrase: the customer's question names them, "is it within tolerance?")."""
    if not any(goal.tell for goal in task.goals):  # nothing to tell: no replay of the outcomes needed
        return []
    mine = {str(v).casefold() for v in task.customer.model_dump().values() if v}
    mine |= {v.casefold() for goal in task.goals for v in domain.kit.knows(goal)}
    facts = [f for o in task.acceptable for f in required_facts(domain, task, o.label) if f.goal is not None]
    return [f for f in facts if f.fact.kind not in VERDICTS and worded(f.fact).casefold() not in mine]


def _word(text: str) -> re.Pattern[str]:
    """``text`` as a whole word (not inside a longer word or number), in any case."""
    return re.compile(rf"(?<![\w.]){re.escape(text)}(?![\w]|\.\d)", re.IGNORECASE)
