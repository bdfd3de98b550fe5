"""Refusing a broken domain before any trial runs: one paragraph naming the file and what is wrong.

A domain from a folder or an installed package is code and data written outside passhat. Run unchecked,
a mistake in it surfaces mid-run as a traceback, as an infra error in every trial, or as a grade that
blames the agent for the task's fault. So it is checked once, when it is loaded, in the order the engine
would trip over it: the backend builds (the schema, then the generator), each tool derives its schema from
a docstring, the tasks load, each task names only the domain's tools, its ground truth replays without an
error on a fresh backend, and no rule or gate raises on those calls (nor on a task's forbidden calls).
The task files ``--tasks-dir`` adds get the task checks. Built-in domains are not checked here: their own
tests prove them, and every command would pay for it.

Loading (``passhat.domains``) stays below the engine; checking drives the engine (backend, tools, ground
truth), so it lives here, and the commands that run or prove tasks load their domain through
``load_checked_domain``.
"""

from __future__ import annotations

import inspect
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from passhat.domains import BUILT_IN, domain_home, load_domain, task_where
from passhat.domains.folder import describe, raised_at
from passhat.domains.model import Action, Call, Domain, Rule, Task
from passhat.domains.toolkit import ToolFailure
from passhat.env import Environment, template_for
from passhat.env.tools import spec_for, validate_args
from passhat.errors import UserError
from passhat.grade.check import unknown_tools
from passhat.grade.expected import GroundTruthError, ground_truth_calls
from passhat.safe_files import MAX_PROBLEMS, cut, shown

SCHEMA_FILE = "schema.sql"  # where a domain folder conventionally keeps its schema


def validate_domain(domain: Domain, home: Path | None, built_in: Iterable[str]) -> None:
    """Refuse (UserError) a domain loaded from ``home`` (its folder, or its package's) that would break a run."""
    what = f"domain {shown(domain.name)}" + (f" ({home})" if home else "")
    if domain.name in built_in:
        raise UserError(
            f"{what} has the name of a built-in domain; give DOMAIN a name of its own (runs, reports and the "
            "backend built for a domain are told apart by its name)."
        )
    for problems in (_backend_problems(domain, home), _tool_problems(domain, home)):
        if problems:
            raise UserError(f"{what} is broken: {listed(problems)}.")
    tasks = _tasks(domain, home, what)
    if problems := task_problems(domain, tasks, home):
        raise UserError(f"{what} is broken: {listed(problems)}.")


def load_checked_domain(ref: str, tasks_dir: str | Path | None = None) -> Domain:
    """The domain ``ref`` names, with the tasks of ``tasks_dir``, refused (UserError) if what was not built in
    would break a run: the domain itself unless built in, and the added tasks. Checked once per process."""
    domain = load_domain(ref)
    if ref not in BUILT_IN and domain not in _checked:
        validate_domain(domain, domain_home(domain), BUILT_IN)
        _checked.add(domain)
    if tasks_dir is None:
        return domain
    merged = load_domain(ref, tasks_dir)
    if merged not in _checked:
        added = [t for t in merged.tasks.values() if t.id not in domain.tasks]
        validate_added_tasks(merged, added, Path(tasks_dir).resolve())
        _checked.add(merged)
    return merged


_checked: set[Domain] = set()


def validate_added_tasks(domain: Domain, added: list[Task], folder: Path) -> None:
    """Refuse the task files of ``folder`` (--tasks-dir) when a task would break a run of the domain."""
    if problems := task_problems(domain, added, folder):
        raise UserError(f"the task files of --tasks-dir {folder} are broken: {listed(problems)}.")


def task_problems(domain: Domain, tasks: Iterable[Task], home: Path | None) -> list[str]:
    """What is wrong with each task, named by its file: a tool the domain lacks, or a ground truth that does
    not replay (an error result, a tool or rule that raises)."""
    problems = []
    for task in tasks:
        where = task_where(home, task.id)
        found = unknown_tools(domain, task) or _replay_problems(domain, task, home)
        problems += [f"{where}: {problem}" for problem in found]
    return problems


# -- the backend and the tools ---------------------------------------------------------------------------------


def _backend_problems(domain: Domain, home: Path | None) -> list[str]:
    """The schema SQLite refuses, the generator that raises, or whatever else stops the template backend."""
    db = sqlite3.connect(":memory:")
    try:
        try:
            db.executescript(domain.schema_sql)
        except sqlite3.Error as exc:
            return [f"SQLite refuses {_schema_source(domain, home)}: {exc}"]
        try:
            template_for(domain)
            return []
        except Exception as built:  # the generator's or the template's failure: find out which, to name it
            try:
                domain.generate(db, domain.data_seed)
            except Exception as exc:
                return [f"the data generator (DOMAIN.generate) raised {describe(exc)} at {raised_at(exc, home)}"]
            return [f"its backend cannot be built from {_schema_source(domain, home)}: {describe(built)}"]
    finally:
        db.close()


def _schema_source(domain: Domain, home: Path | None) -> str:
    """The schema's file when the folder's schema.sql is it, else the field that holds it."""
    path = home / SCHEMA_FILE if home else None
    try:
        if path and path.is_file() and path.read_text(encoding="utf-8") == domain.schema_sql:
            return str(path)
    except (OSError, UnicodeError):
        pass
    return "its schema (DOMAIN.schema_sql)"


def _tool_problems(domain: Domain, home: Path | None) -> list[str]:
    """Tools that are not marked, repeat a name, have no docstring, or whose signature gives no schema."""
    names = Counter(getattr(fn, "__name__", repr(fn)) for fn in domain.tools)
    problems = [
        f"two tools are named {shown(name)}; a tool's name is how the agent calls it" for name, n in names.items() if n > 1
    ]
    for fn in domain.tools:
        where = f"tool {getattr(fn, '__name__', repr(fn))} ({_defined_at(fn)})"
        if getattr(fn, "__passhat_tool__", None) is None:
            problems.append(f"{where} is not marked with @tool (passhat.domains.toolkit.tool)")
            continue
        try:
            spec = spec_for(fn)
        except UserError as exc:
            problems.append(f"{where}: {exc}")
            continue
        except Exception as exc:
            problems.append(f"{where}: its signature gives no argument schema ({describe(exc)} at {raised_at(exc, home)})")
            continue
        if not spec.schema["description"]:
            problems.append(
                f"{where} has no docstring saying what it does: the agent under test reads it to choose the tool; "
                "write one (what it does, then Args: with a line per argument)"
            )
    return problems


def _tasks(domain: Domain, home: Path | None, what: str) -> list[Task]:
    try:
        return list(domain.tasks.values())
    except UserError:
        raise  # a task file's own error already names the file and the field
    except Exception as exc:
        raise UserError(f"{what} is broken: its tasks cannot be loaded: {describe(exc)} at {raised_at(exc, home)}.") from None


# -- a task's ground truth, replayed -----------------------------------------------------------------------------


def _replay_problems(domain: Domain, task: Task, home: Path | None) -> list[str]:
    """Why the task's ground truth does not replay on a fresh backend, for each of its acceptable outcomes (named
    when there are several): the first call that fails, raises, or makes a rule or gate raise; then any forbidden
    call a rule or gate raises on."""
    several = len(task.acceptable) > 1
    for outcome in task.acceptable:
        if problems := _outcome_problems(domain, task, outcome.label, home):
            return [f"acceptable outcome {outcome.label!r}: {p}" if several else p for p in problems]
    return []


def _outcome_problems(domain: Domain, task: Task, outcome: str, home: Path | None) -> list[str]:
    try:
        calls = ground_truth_calls(domain, task, outcome)
    except GroundTruthError as exc:
        return [str(exc)]
    except Exception as exc:
        return [f"the domain's authenticate raised {describe(exc)} at {raised_at(exc, home)}"]
    env = Environment(domain)
    try:
        for call in calls:
            if problem := _call_problem(domain, env, call, home):
                return [problem]
        forbidden = [c for goal in task.goals for c in goal.forbidden]
        return [p for c in forbidden if (p := _rules_raising(domain.rules + domain.gates, env, c, home, "forbidden"))]
    finally:
        env.close()


def _call_problem(domain: Domain, env: Environment, call: Action, home: Path | None) -> str | None:
    """Run one ground-truth call the way a trial would (rules and gates first); why it did not succeed."""
    said = f"the ground-truth call {call.tool}({cut(shown(call.args), 120)})"
    spec = env.tools.get(call.tool)
    if spec is None:  # the identity lookup the domain's authenticate makes (a task's own calls are checked before)
        return f"{said} names a tool the domain {shown(domain.name)} does not have"
    try:
        args = validate_args(spec, dict(call.args))
    except ToolFailure as exc:
        return f"{said}: {exc.message}"
    checked = (domain.rules if spec.meta.write else ()) + domain.gates  # the engine checks rules on writes, gates on any call
    if problem := _rules_raising(checked, env, Action(tool=call.tool, args=args), home, "ground-truth"):
        return problem
    try:
        result = env.execute(call.tool, args).result
    except Exception as exc:
        return f"{said} raised {describe(exc)} at {raised_at(exc, home)}"
    if result["status"] == "not_found":
        return f"{said} finds nothing ({result['message']}): the task names a row the backend does not have"
    if result["status"] != "ok":
        return f"{said} gives the error {result['error']['type']}: {result['error']['message']}"
    return None


def _rules_raising(rules: tuple[Rule, ...], env: Environment, call: Action, home: Path | None, kind: str) -> str | None:
    """The first rule or gate that applies to the call and raises when it checks it."""
    for rule in rules:
        if rule.tools and call.tool not in rule.tools:
            continue
        try:
            rule.check(env.db, Call(call.tool, dict(call.args)), list(env.history))
        except Exception as exc:
            return f"rule {shown(rule.id)} raised {describe(exc)} at {raised_at(exc, home)} on the {kind} call {call.tool}"
    return None


# -- naming places ------------------------------------------------------------------------------------------------


def listed(problems: list[str]) -> str:
    """The first MAX_PROBLEMS problems whole (each names a file by its full path, and quotes only short values),
    and how many more there are."""
    more = len(problems) - MAX_PROBLEMS
    return "; ".join(problems[:MAX_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")


def _defined_at(fn: Callable[..., Any]) -> str:
    try:
        return f"{inspect.getsourcefile(fn)}, line {inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return repr(fn)
