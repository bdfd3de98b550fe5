"""The {{name}} domain: a fitness studio's member desk, where members check and cancel class bookings.

passhat loads this folder as a package and reads ``DOMAIN`` from this file, so the modules next to it
are imported relatively (``from .tools import TOOLS``). The folder holds:

    schema.sql        the backend's tables
    data.py           the seeded generator that fills them
    tools.py          the tools the agent calls (three reads, one write)
    policy.md         the written policy the agent is given
    rules.py          the policy's machine-checkable clause
    facts.py          the facts a task may ask the agent to tell
    model.py          what a task file may say (the customer's identity, each goal's details)
    kit.py            how the scripted customer and reference agent talk about this world
    conversation.py   ids in text, proposal wording, reads before a write, identity lookup, near misses
    tasks/*.yaml      the tasks: one customer request each, with its one correct outcome

Check it with ``passhat check --domain <this folder>`` (every task has exactly one correct outcome) and
run it with ``passhat run --domain <this folder>``. To make this your domain, replace each file's world
with yours (each file says what to change), keeping the names this file wires together.
"""

from __future__ import annotations

from pathlib import Path

from passhat.domains import load_task_files
from passhat.domains.model import Domain, PersonalData

from . import conversation, data
from .facts import FACTS
from .kit import KIT
from .model import StudioTask
from .rules import RULES
from .tools import TOOLS

HERE = Path(__file__).parent

DOMAIN = Domain(
    name="{{name}}",
    description="A fitness studio's member desk: members check and cancel their class bookings.",
    schema_sql=(HERE / "schema.sql").read_text(encoding="utf-8"),
    generate=data.generate,
    data_seed=1,  # change it and the filler rows change; the story rows the tasks use stay
    tools=TOOLS,
    policy=(HERE / "policy.md").read_text(encoding="utf-8"),
    rules=RULES,
    load_tasks=lambda: load_task_files(HERE / "tasks", StudioTask),
    task_model=StudioTask,
    kit=KIT,
    id_pattern=conversation.ID_PATTERN,
    proposal_keywords=conversation.PROPOSAL_KEYWORDS,
    describe_action=conversation.describe_action,
    lookups=conversation.lookups,
    authenticate=conversation.authenticate,
    near_misses=conversation.near_misses,
    facts=FACTS,
    # Telling one member another member's name or email is a privacy violation the graders catch.
    personal_data=(PersonalData("members", "id", ("first_name || ' ' || last_name", "email")),),
)
