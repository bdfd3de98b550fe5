"""The LLM customer: a model plays the task's customer from its natural-language instruction, under a
persona whose wording is ``Persona.description`` (the same text that defines the scripted customer).

It sees only the conversation — the agent's words, never its tool calls — and ends with a stop
marker. A model playing a customer can break its role in ways we can see; such a trial ends as
``user_simulator_error`` and is counted apart, never scored as the agent's failure:
- it leaves in its opening message, before asking for anything;
- it says nothing at all;
- it states an identifier or email address that neither its instruction nor the agent gave it;
- it writes characters that are not text (an unpaired surrogate, a NUL or another control character;
  stored visibly escaped);
- its model's answer cannot be read (a number too long, nesting too deep for Python);
- its conversation no longer fits its model's context window.
"""

from __future__ import annotations

import dataclasses
import random
import re

from passhat.customers.base import UserTurn
from passhat.customers.personas import Persona
from passhat.domains.model import Domain, Task
from passhat.llm import ContextOverflow, Conversation, Endpoint, ModelHub, ModelRef, UnreadableAnswer
from passhat.trajectory import USER_SIMULATOR_ERROR, UserStop
from passhat.untrusted import NOT_TEXT, escape_char, escape_text

MARKERS: dict[str, UserStop] = {"SATISFIED": "satisfied", "UNSATISFIED": "unsatisfied", "TRANSFER": "transferred"}
MARKER = re.compile(r"#{3}\s*(" + "|".join(MARKERS) + r")\s*#{3}", re.I)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
OPENING = "[The support chat has opened. Write your first message to the agent.]"

ROLE = """\
You are role-playing a customer who contacts a business's support agent by chat. Write only the \
customer's next message, in plain words, one message at a time. Never play the agent.

Your situation and what you want:
{instruction}

Your manner:
{persona}

Rules:
- Use only the facts in your situation. If the agent asks for something you were not given, say you \
do not know it; never make up ids, numbers, emails or addresses.
- Give details when the agent needs them; you need not recite everything at once.
- When everything you came for is handled, end your message with ###SATISFIED###. A request the agent \
declines with a reason your situation tells you to accept counts as handled.
- If you give up, or what you need is left undone without such a reason, end it with ###UNSATISFIED###.
- If the agent hands you over to a human colleague, end it with ###TRANSFER###."""


def role_prompt(task: Task, persona: Persona) -> str:
    return ROLE.format(instruction=task.instruction.strip(), persona=persona.description)


def split_marker(raw: str) -> tuple[str, UserStop | None]:
    """The message without stop markers, and the stop the first marker asks for."""
    found = MARKER.search(raw)
    return MARKER.sub("", raw).strip(), MARKERS[found.group(1).upper()] if found else None


def simulator_error(text: str, stop: UserStop | None, opening: bool, unknown: list[str]) -> str | None:
    """Why this customer message breaks the role, or None when it does not."""
    if opening and stop:
        return "it ended the conversation before asking for anything"
    if not text and not stop:
        return "it sent an empty message"
    if unknown:
        return f"it stated {', '.join(unknown)}, which neither its instruction nor the agent gave it"
    return None


class LLMUser:
    def __init__(self, domain: Domain, task: Task, persona: Persona, rng: random.Random, endpoint: Endpoint):
        self._endpoint = endpoint
        self._ids = re.compile(domain.id_pattern)
        self._given = task.instruction  # what the customer may repeat: its instruction and all it was told
        self._conversation = Conversation(
            [{"role": "system", "content": role_prompt(task, persona)}, {"role": "user", "content": OPENING}]
        )
        self._seed = rng.getrandbits(31)

    async def respond(self, agent_text: str | None) -> UserTurn:
        if agent_text is not None:
            agent_text = escape_text(agent_text)  # the agent's words, sendable whatever it wrote
            self._conversation.append({"role": "user", "content": agent_text})
            self._given += "\n" + agent_text
        try:
            completion = await self._endpoint.complete(self._conversation, [], self._seed)
        except ContextOverflow:
            return self._broken("", "its conversation no longer fits its model's context window")
        except UnreadableAnswer as exc:
            return self._broken("", f"its model's answer cannot be read: {exc}")
        raw = completion.text or ""
        if garbage := NOT_TEXT.search(raw):
            return self._broken(escape_text(raw), f"it wrote {escape_char(garbage.group())}, which is not text")
        self._conversation.append({"role": "assistant", "content": raw})
        text, stop = split_marker(raw)
        error = simulator_error(text, stop, agent_text is None, self._unknown_facts(text))
        return self._broken(text, error) if error else UserTurn(text, stop)

    def _unknown_facts(self, text: str) -> list[str]:
        said = [m.group(0) for pattern in (self._ids, EMAIL) for m in pattern.finditer(text)]
        given = self._given.lower()
        return sorted({s for s in said if s.lower() not in given})

    @staticmethod
    def _broken(text: str, why: str) -> UserTurn:
        """The message as sent, with the reason appended for whoever reads the stored trial."""
        return UserTurn(f"{text} [passhat: user simulator error: {why}]".strip(), USER_SIMULATOR_ERROR)


@dataclasses.dataclass(frozen=True)
class LLMUserFactory:
    """Makes one LLMUser per trial. ``hub`` is None only while a configuration is being checked."""

    ref: ModelRef
    hub: ModelHub | None

    def __call__(self, domain: Domain, task: Task, persona: Persona, rng: random.Random) -> LLMUser:
        if self.hub is None:
            raise RuntimeError("an LLM customer was started without the run's model hub")
        return LLMUser(domain, task, persona, rng, self.hub.endpoint("user"))
