"""The labelled corpus of agent messages (tests/corpus/<domain>.yaml) and what passhat's reader makes of each.

Each message is one agent turn of a task's conversation, written in the styles models use (terse, markdown,
chatty, plain), labelled with its reading: the details it asks the customer for, whether it asks for a yes
to an action and which writes a plain "yes" to it agrees to, whether it declines, which writes it says are
done, whether it found nothing or hands the customer to a person, and facts it states (or mentions without
stating). ``read_entry`` reads a message the way the scripted customer, the confirmation guard and the graders
do; ``bench/reader_accuracy.py`` and ``tests/test_reader_corpus.py`` compare the two.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from passhat.dialogue.facts import Fact, tell
from passhat.dialogue.reading import read_message
from passhat.dialogue.values import Direction, FactKind
from passhat.domains import load_domain
from passhat.domains.model import Action, Domain
from passhat.env import Environment, tool_registry
from passhat.env.tools import validate_args
from passhat.grade.writes import WriteCall, comparable
from passhat.guard.confirmation import commitment_for

CORPUS = Path(__file__).parent / "corpus"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when built: the corpus loads in a fraction
Style = Literal["terse", "markdown", "chatty", "plain"]
FIELDS = ("asks", "proposal", "proposes", "refuses", "reports", "not_found", "handoff", "tells", "not_told")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Write(_Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class FactLabel(_Strict):
    kind: FactKind
    value: str
    direction: Direction | None = None
    about: list[str] = Field(default_factory=list)

    def fact(self) -> Fact:
        return Fact(self.kind, self.value, direction=self.direction, about=tuple(self.about))


class Entry(_Strict):
    id: str
    task: str
    style: Style
    done: list[Write] = Field(default_factory=list)
    text: str = Field(min_length=1)
    asks: list[str] = Field(default_factory=list)
    proposal: bool = False
    proposes: list[Write] = Field(default_factory=list)
    refuses: bool = False
    reports: list[Write] = Field(default_factory=list)
    not_found: bool = False
    handoff: bool = False
    tells: list[FactLabel] = Field(default_factory=list)
    not_told: list[FactLabel] = Field(default_factory=list)

    @model_validator(mode="after")
    def _proposal_fits(self) -> Entry:
        if self.proposes and not self.proposal:
            raise ValueError("a message whose yes agrees to writes (proposes) asks for a yes: set proposal: true")
        return self


class CorpusFile(_Strict):
    domain: str
    messages: list[Entry]


@dataclasses.dataclass(frozen=True)
class Observed:
    """One message's reading, in the corpus's terms (writes as comparable keys)."""

    asks: frozenset[str]
    proposal: bool
    proposes: frozenset[str]
    refuses: bool
    reports: frozenset[str]
    not_found: bool
    handoff: bool
    tells: tuple[bool, ...]  # per labelled fact: told
    not_told: tuple[bool, ...]  # per labelled non-fact: told (wrongly)


def load(path: Path) -> CorpusFile:
    corpus = CorpusFile.model_validate(yaml.load(path.read_text(), Loader=_LOADER))
    domain = load_domain(corpus.domain)
    problems = [f"{path.name}: {e.id}: {p}" for e in corpus.messages for p in _problems(domain, e)]
    ids = [e.id for e in corpus.messages]
    problems += [f"{path.name}: id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    if problems:
        raise ValueError("\n".join(problems))
    return corpus


def corpus_files(folder: Path = CORPUS) -> list[Path]:
    return sorted(folder.glob("*.yaml"))


def _problems(domain: Domain, entry: Entry) -> list[str]:
    if entry.task not in domain.tasks:
        return [f"no task {entry.task!r} in {domain.name}"]
    tools = tool_registry(domain)
    out = [
        f"asks names {s!r}, not a slot of {domain.name} ({', '.join(domain.kit.slots)})"
        for s in entry.asks
        if s not in domain.kit.slots
    ]
    for field in ("done", "proposes", "reports"):
        for w in getattr(entry, field):
            spec = tools.get(w.tool)
            if spec is None or not spec.meta.write:
                out.append(f"{field}: {w.tool!r} is not a write tool of {domain.name}")
                continue
            try:
                validate_args(spec, w.args)
            except Exception as exc:  # the tool's own validation message
                out.append(f"{field}: {w.tool} {w.args}: {exc}")
    return out


def key(domain: Domain, write: Write | Action | WriteCall) -> str:
    """A write as the graders compare writes: its tool and arguments, free text left out, arguments as validated."""
    tools = tool_registry(domain)
    args = validate_args(tools[write.tool], dict(write.args))
    tool, compared = comparable(WriteCall(write.tool, args), tools)
    return json.dumps([tool, compared], sort_keys=True, default=str)


def candidates(domain: Domain, entry: Entry) -> list[Write]:
    """The writes a yes to the message could agree to: the task's own (every acceptable outcome, and the forbidden
    requests), their plausible wrong versions, and whatever the labels name."""
    found = dict(_task_writes(domain, entry.task))
    for w in [*entry.proposes, *entry.reports]:
        write = Write(tool=w.tool, args=dict(w.args))
        try:
            found.setdefault(key(domain, write), write)
        except Exception:  # a near miss the tool would refuse: not a write anyone can propose
            continue
    return list(found.values())


@functools.cache
def _task_writes(domain: Domain, task_id: str) -> tuple[tuple[str, Write], ...]:
    """A task's own writes and their near misses, by key (the same for every message of the task)."""
    task = domain.tasks[task_id]
    env = Environment(domain)
    try:
        own = [a for o in task.acceptable for a in o.actions] + [a for g in task.goals for a in g.forbidden]
        near = [m.call for a in own for m in domain.near_misses(env.db, a)]
    finally:
        env.close()
    found: dict[str, Write] = {}
    for w in [*own, *near]:
        write = Write(tool=w.tool, args=dict(w.args))
        try:
            found.setdefault(key(domain, write), write)
        except Exception:  # a near miss the tool would refuse: not a write anyone can propose
            continue
    return tuple(found.items())


class _Backends:
    """The backend after a message's ``done`` writes, kept for the next messages of the same state (the corpus lists a
    task's messages together), and the commitments computed on it: reading the corpus stays fast."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self.envs: dict[tuple[str, str], Environment] = {}
        self.made: dict[tuple[str, str, str], Any] = {}

    def commitment(self, domain: Domain, done: list[Write], write: Write) -> Any:
        state = (domain.name, json.dumps([[w.tool, w.args] for w in done], sort_keys=True, default=str))
        cached = (*state, json.dumps([write.tool, write.args], sort_keys=True, default=str))
        if cached not in self.made:
            env = self.envs.pop(state, None)
            if env is None:
                env = Environment(domain)
                env.replay([Action(tool=w.tool, args=w.args) for w in done])
            self.envs[state] = env  # most recently used last
            while len(self.envs) > self.size:
                self.envs.pop(next(iter(self.envs))).close()
            tools = tool_registry(domain)
            self.made[cached] = commitment_for(tools[write.tool], validate_args(tools[write.tool], write.args), env.db, domain)
        return self.made[cached]


_BACKENDS = _Backends()


@functools.cache
def _domain(name: str) -> Domain:
    return load_domain(name)


def _before(domain: Domain, done: list[Write]) -> dict[str, Any]:
    """Each write made's terms, by key, on the backend as it stood before that write: a refund made reads its
    amount, not the 0.00 left once it is made, whether the message reports it or a yes would agree to it again."""
    return {key(domain, w): _BACKENDS.commitment(domain, done[:i], w) for i, w in enumerate(done)}


def read_entry(entry: Entry, domain_name: str) -> Observed:
    """What passhat's reader makes of the message, in the task's conversation after ``entry.done``."""
    domain = _domain(domain_name)
    task = domain.tasks[entry.task]
    writes = candidates(domain, entry)
    made = _before(domain, entry.done)
    commitments = [made.get(key(domain, w)) or _BACKENDS.commitment(domain, entry.done, w) for w in writes]
    done = [made[key(domain, w)] for w in entry.done]
    reading = read_message(entry.text, domain.lexicon)
    own = (task.customer.customer_id,)
    proposed = reading.agreed(commitments, done, own) if reading.proposal else set()
    reported = reading.reported(commitments, done, own)
    return Observed(
        asks=frozenset(reading.asks),
        proposal=reading.proposal,
        proposes=frozenset(key(domain, writes[i]) for i in proposed),
        refuses=reading.refusal,
        reports=frozenset(key(domain, writes[i]) for i in reported),
        not_found=reading.not_found,
        handoff=reading.handoff,
        tells=tuple(tell(f.fact(), [(0, entry.text)], (), domain.id_pattern).told for f in entry.tells),
        not_told=tuple(tell(f.fact(), [(0, entry.text)], (), domain.id_pattern).told for f in entry.not_told),
    )


def expected(entry: Entry, domain_name: str) -> Observed:
    domain = _domain(domain_name)
    return Observed(
        asks=frozenset(entry.asks),
        proposal=entry.proposal,
        proposes=frozenset(key(domain, w) for w in entry.proposes),
        refuses=entry.refuses,
        reports=frozenset(key(domain, w) for w in entry.reports),
        not_found=entry.not_found,
        handoff=entry.handoff,
        tells=tuple(True for _ in entry.tells),
        not_told=tuple(False for _ in entry.not_told),
    )


def wrong_fields(entry: Entry, domain_name: str) -> list[str]:
    """The fields of the reading that differ from the labels (empty: read right)."""
    got, want = read_entry(entry, domain_name), expected(entry, domain_name)
    return [f for f in FIELDS if getattr(got, f) != getattr(want, f)]
