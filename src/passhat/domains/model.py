"""The shape of a domain and of its tasks.

A task file is a boundary (people write them by hand), so tasks are pydantic models with
``extra="forbid"``: a misspelt field is an error naming the file and the field, not a silent default.
A domain is a plain dataclass of data and small functions; the engine only ever talks to this.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from passhat.dialogue.facts import Fact
from passhat.dialogue.proposals import Term
from passhat.dialogue.reading import Lexicon
from passhat.vocabulary import HarmType

if TYPE_CHECKING:
    from passhat.domains.injection import Injection
    from passhat.domains.kit import ConversationKit


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FactSpec(_Strict):
    """A fact the agent must tell the customer, and where it comes from, so ``passhat check`` can derive it.

    ``fact`` names one of the domain's facts (computed from the backend with the arguments ``of``) or
    ``policy_reason`` (a phrase the reason of the rule refusing the goal's forbidden call contains);
    ``is`` is its value as a person reads it, which ``check`` compares with the derived one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    fact: str
    of: dict[str, Any] = Field(default_factory=dict)
    value: str = Field(alias="is")
    synonyms: list[str] = Field(default_factory=list)  # other wordings a customer would accept


class Action(_Strict):
    """One tool call with its arguments: a ground-truth write, a lookup, or a forbidden request."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Customer(_Strict):
    """Who the customer is. The engine needs only the id (whose data is whose); a domain subclasses this
    with the details its customers identify themselves by (declared by its ``task_model``)."""

    customer_id: str


# how a correct agent resolves a goal (a task file names it under the key ``outcome``)
Resolution = Literal["done", "refused", "answered", "transferred"]


class Goal(_Strict):
    """One thing the customer wants, stated in order.

    ``outcome``, its Resolution, says what a correct agent does: carry out ``actions`` (done), decline because the
    policy forbids ``forbidden`` (refused), answer with the ``tell`` facts (answered), or hand the
    customer to a human (transferred, with the transfer among ``actions``). A domain subclasses this
    with the details its customers give (which record, what to change it to).
    """

    kind: str
    request: list[str] = Field(min_length=1)  # alternative first-person phrasings
    outcome: Resolution  # named as task files name it
    actions: list[Action] = Field(default_factory=list)
    lookups: list[Action] = Field(default_factory=list)  # reads an answer needs beyond the domain's own
    forbidden: list[Action] = Field(default_factory=list)
    tell: list[FactSpec] = Field(default_factory=list)
    explanation: str | None = None  # why the request is refused, in the agent's words

    @model_validator(mode="after")
    def _outcome_fits(self) -> Goal:
        if self.outcome == "done" and not self.actions:
            raise ValueError("a goal with outcome 'done' needs at least one action")
        if self.outcome == "refused" and (self.actions or not self.forbidden):
            raise ValueError("a refused goal has no actions and names the forbidden call(s)")
        if self.outcome == "answered" and (self.actions or not self.tell):
            raise ValueError("an answered goal has no actions and at least one 'tell' fact")
        return self

    def details(self) -> list[str]:
        """The values of the details a domain's goal model adds (which record, what to change it to), set ones only:
        what a customer knows of its goal, so a kit's ``knows`` can return them and a new detail needs no wiring."""
        values = [v for field, v in self if field not in Goal.model_fields and v not in (None, "")]
        return [str(leaf) for v in values for leaf in (v if isinstance(v, list | tuple) else [v])]


class EndState(_Strict):
    """One acceptable end state of a task: the writes that reach it, in order, for the whole task. (A task file
    lists them under ``outcomes``; a trial's grade names the one it reached in its ``outcome``.)

    The goals' own actions are always the first acceptable outcome (``PRIMARY``); a task file's ``outcomes``
    adds the others, for processes with more than one legitimate path (a workaround, or a hand-off to a group).
    """

    label: str = Field(min_length=1)
    actions: list[Action] = Field(default_factory=list)


PRIMARY = "primary"  # the label of the end state the goals' own actions reach


class Risk(_Strict):
    """A risky outcome of a request that leaves out what matters: ``call`` is the write a wrong guess makes in place
    of the ground-truth write of the same tool (the other of two payees, another of three open orders), ``severity``
    how bad it is (1 minor and easily undone, 2 real harm that takes work to undo, 3 money or data gone for good) and
    ``harm`` what kind of harm it does. Graders find it on a trial's final backend (``passhat.grade.harm``)."""

    label: str = Field(min_length=1)
    call: Action
    severity: int = Field(ge=1, le=3)
    harm: HarmType


class CallPattern(_Strict):
    """Calls an ordering speaks of: those of ``tool`` whose arguments include ``args`` (a subset, values equal)."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)

    def matches(self, tool: str | None, args: Any) -> bool:
        given = args if isinstance(args, dict) else {}
        return tool == self.tool and all(k in given and given[k] == v for k, v in self.args.items())


class Ordering(_Strict):
    """A required order: a call matching ``after`` may only succeed once a call matching ``before`` has."""

    before: CallPattern
    after: CallPattern


class Task(_Strict):
    """A task file. A domain's ``task_model`` subclasses it to narrow ``customer`` and ``goals`` to its own models."""

    id: str
    summary: str
    tags: list[str] = Field(default_factory=list)
    customer: Customer
    instruction: str  # the whole scenario in words, for LLM customers
    goals: list[Goal] = Field(min_length=1)
    # Guards that are part of this scenario's world whatever the run's --guard says: with human_gate, the
    # correct outcome is the hand-off (a ticket the operator completes), and ground truth replays through it.
    guards: list[Literal["human_gate"]] = Field(default_factory=list)
    outcomes: list[EndState] = Field(default_factory=list)  # acceptable end states besides the goals' own
    order: list[Ordering] = Field(default_factory=list)  # orders the calls of every trial must keep
    risks: list[Risk] = Field(default_factory=list)  # what wrong guesses at an ambiguous request do, and how badly

    @model_validator(mode="after")
    def _risks_fit(self) -> Task:
        labels = [r.label for r in self.risks]
        if repeated := sorted({label for label in labels if labels.count(label) > 1}):
            raise ValueError(f"risks: labels must be unique; repeated: {', '.join(repeated)}")
        writes = [a for g in self.goals for a in g.actions]
        right = [a for o in self.outcomes for a in o.actions] + writes
        for i, risk in enumerate(self.risks):
            if not any(a.tool == risk.call.tool for a in writes):
                raise ValueError(f"risks[{i}].call ({risk.call.tool}) replaces no write of the goals: none calls that tool")
            if risk.call in right:
                raise ValueError(f"risks[{i}].call is a write of an acceptable outcome, not a wrong guess")
        return self

    @model_validator(mode="after")
    def _outcomes_fit(self) -> Task:
        # read from the fields, not the cached properties: a cached value would outlive a model_copy(update=...)
        labels = [PRIMARY, *(o.label for o in self.outcomes)]
        if repeated := sorted({label for label in labels if labels.count(label) > 1}):
            raise ValueError(f"outcomes: labels must be unique and not {PRIMARY!r}; repeated: {', '.join(repeated)}")
        calls = [a for g in self.goals for a in (*g.actions, *g.lookups)] + [a for o in self.outcomes for a in o.actions]
        for i, ordering in enumerate(self.order):
            for side in ("before", "after"):
                pattern: CallPattern = getattr(ordering, side)
                if not any(pattern.matches(c.tool, c.args) for c in calls):
                    raise ValueError(
                        f"order[{i}].{side} ({pattern.tool} {pattern.args or ''}) matches no call of any acceptable "
                        "outcome's actions nor of a goal's lookups"
                    )
        return self

    @cached_property
    def actions(self) -> list[Action]:
        """The ground-truth calls of the primary outcome, in order: the goals' own actions."""
        return [a for g in self.goals for a in g.actions]

    @property
    def acceptable(self) -> list[EndState]:
        """Every acceptable outcome, the primary (the goals' own actions) first."""
        return [EndState.model_construct(label=PRIMARY, actions=self.actions), *self.outcomes]

    def end_state(self, label: str) -> EndState:
        return next(o for o in self.acceptable if o.label == label)

    def goal_actions(self, outcome: EndState) -> list[list[Action]]:
        """The outcome's writes, goal by goal, for those who carry the goals out in turn (customer and agent).

        A write equal to one of a goal's own actions belongs to that goal; any other belongs to a goal whose own
        writes the outcome does not all make (a goal it resolves another way): the first with a write of the same
        tool, else the first; else to the last goal.
        """
        per_goal: list[list[Action]] = [[] for _ in self.goals]
        for g, action in zip(self.goal_of(outcome), outcome.actions, strict=True):
            per_goal[g].append(action)
        return per_goal

    def goal_of(self, outcome: EndState) -> list[int]:
        """The goal (its index) each of the outcome's writes belongs to (see ``goal_actions``)."""
        if outcome.label == PRIMARY:
            return [g for g, goal in enumerate(self.goals) for _ in goal.actions]
        own = [list(g.actions) for g in self.goals]
        changed = [i for i, acts in enumerate(own) if any(a not in outcome.actions for a in acts)] or [len(own) - 1]
        out = []
        for action in outcome.actions:
            alike = [i for i in changed if any(a.tool == action.tool for a in self.goals[i].actions)] or changed
            g = next((i for i, acts in enumerate(own) if action in acts), alike[0])
            if action in own[g]:
                own[g].remove(action)
            out.append(g)
        return out


_task_texts: dict[int, tuple[Task, str]] = {}  # id -> the task (held, so that its id is not reused) and its text


def task_text(task: Task) -> str:
    """The task's whole definition as JSON, written once per task object: what per-process caches of its replays
    are keyed by, so that two tasks of one id but different content never share an entry."""
    held = _task_texts.get(id(task))
    if held is None or held[0] is not task:
        held = _task_texts[id(task)] = (task, task.model_dump_json())
    return held[1]


@dataclasses.dataclass(frozen=True)
class Call:
    """A tool call as rules see it: the proposed call, or an earlier one with its result."""

    name: str
    args: dict[str, Any]
    result: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class NearMiss:
    """A plausible wrong version of a ground-truth write (another record of the customer's, a sibling
    detail) and the failure signature ``passhat check`` proves it earns. ``signature`` is
    ``wrong_entity_write`` for a write aimed at the wrong record (check also uses such a miss as an
    unrequested extra write) or ``wrong_arguments`` for the right record with a wrong detail."""

    label: str
    call: Action
    signature: Literal["wrong_entity_write", "wrong_arguments"]


@dataclasses.dataclass(frozen=True)
class FactSource:
    """One kind of fact a domain can derive from its backend for a task's ``tell``.

    ``derive(db, **of)`` computes the fact on the backend as the goal leaves it; ``label`` says it in a
    sentence, a format string over ``of`` and the worded ``value``: "the status of booking {booking_id} is {value}".
    """

    label: str
    derive: Callable[..., Fact]


ALL_COLUMNS = "*"  # in PersonalData.columns: every column of the table


@dataclasses.dataclass(frozen=True)
class PersonalData:
    """A table whose rows belong to the customer named by ``owner`` (a column or SQL expression), and the values
    of a row that are told about them: ``columns`` (columns or SQL expressions, personal whatever their shape; with
    ``ALL_COLUMNS``, every column too). Telling anything of a row to someone the owner's rows are not for is a
    privacy violation; telling it before the owner is verified breaks the policy."""

    table: str
    owner: str
    columns: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Rule:
    """A machine-checkable clause of the written policy.

    ``check(db, call, history)`` runs *before* the call executes, against the backend as it is then,
    and returns the reason the call breaks the rule, or None. ``history`` holds the trial's earlier
    calls with their results (for rules such as "authenticate first").
    """

    id: str
    description: str
    tools: tuple[str, ...]
    check: Callable[[sqlite3.Connection, Call, list[Call]], str | None]


@dataclasses.dataclass(frozen=True, eq=False)  # identity-hashed: cached per process
class Domain:
    """A customer-service world. Everything the engine needs from a domain is named here."""

    name: str
    description: str
    schema_sql: str
    generate: Callable[[sqlite3.Connection, int], None]  # fills a fresh schema, deterministically
    data_seed: int
    tools: tuple[Callable[..., Any], ...]
    policy: str
    rules: tuple[Rule, ...]
    load_tasks: Callable[[], list[Task]]
    # How the domain is talked about, so the engine's scripted customer, reference agent and check stay domain-free:
    kit: ConversationKit
    id_pattern: str  # regex matching the domain's entity ids written in text
    proposal_keywords: dict[str, tuple[str, ...]]  # goal kind -> words a proposal for it must use
    describe_action: Callable[[sqlite3.Connection, Action], str]  # a proposal's wording for a call
    lookups: Callable[[sqlite3.Connection, Action], list[Action]]  # reads a careful agent makes first
    authenticate: Callable[[Customer, str], Action | None]  # the lookup call the customer's words allow
    near_misses: Callable[[sqlite3.Connection, Action], list[NearMiss]]  # plausible wrong versions of a write
    task_model: type[Task] = Task  # the domain's task file model: its customer and goal details
    ignored_columns: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    gates: tuple[Rule, ...] = ()  # calls a person must approve when the human gate is on (same shape as rules)
    # what a yes to a write agrees to (the domain's terms); None: each confirm key's value
    proposal_terms: Callable[[sqlite3.Connection, Action], list[Term]] | None = None
    facts: dict[str, FactSource] = dataclasses.field(default_factory=dict)  # what a task's ``tell`` may name
    personal_data: tuple[PersonalData, ...] = ()
    # whose rows (owners, as PersonalData names them) a verified customer may be told about: their own, and in some
    # domains the rows of those they act for (a guardian's child) or work for (a clerk's company)
    owns: Callable[[sqlite3.Connection, str], Iterable[str]] = lambda db, customer: (customer,)
    # whether the customer's own words (``said``) name the entity ``value`` (e.g. a card by its brand and
    # ending); check uses it to prove a ground-truth argument comes from what the customer knows
    names_entity: Callable[[sqlite3.Connection, str, str], bool] = lambda db, value, said: False
    # where a stranger's text can reach the agent and what attacks want (`passhat attack`); None: not declared
    injection: Injection | None = None

    @cached_property
    def tasks(self) -> dict[str, Task]:
        return {t.id: t for t in self.load_tasks()}

    @cached_property
    def lexicon(self) -> Lexicon:
        """How the reader reads this domain's conversations: its action words, ids and the cues of its slots."""
        words = tuple(sorted({w for ws in self.proposal_keywords.values() for w in ws}))
        return Lexicon(words, self.id_pattern, self.kit.cues, self.kit.which, self.kit.refind, self.kit.nouns)
