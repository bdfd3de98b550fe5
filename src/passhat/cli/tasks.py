"""The domains and their tasks: `passhat domains`, `passhat tasks` (and `tasks show`), `passhat check`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
import yaml
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from passhat.cli import main
from passhat.cli.common import console, domain_options, shown
from passhat.domains import domain_names, load_domain
from passhat.errors import UserError

if TYPE_CHECKING:
    from passhat.domains.model import Domain, Task


def load_checked_domain(name: str, tasks_dir: str | None = None) -> Domain:
    """The domain with its tasks checked (``passhat.run.preflight``, loaded when a command runs: it loads the graders,
    which `passhat --help` has no use for)."""
    from passhat.run.preflight import load_checked_domain as checked

    return checked(name, tasks_dir)


@main.command()
def domains() -> None:
    """List the domains: the built-in ones, then those installed packages register."""
    table = Table("domain", "tasks", "tools", "rules", "description")
    for name in domain_names():
        d = load_domain(name)
        table.add_row(name, str(len(d.tasks)), str(len(d.tools)), str(len(d.rules)), Text(d.description))
    console.print(table)


@main.group(invoke_without_command=True)
@domain_options("whose tasks to list")
@click.pass_context
def tasks(ctx: click.Context, domain: str, tasks_dir: str | None) -> None:
    """List a domain's tasks (`passhat tasks show ID` for one)."""
    ctx.obj = (load_checked_domain(domain, tasks_dir), domain)
    if ctx.invoked_subcommand:
        return
    table = Table("id", "writes", "tags", "summary")
    for t in ctx.obj[0].tasks.values():
        table.add_row(Text(t.id), str(len(t.actions)), Text(", ".join(t.tags)), Text(t.summary))
    console.print(table)


@tasks.command("show")
@click.argument("task_id")
@click.pass_context
def tasks_show(ctx: click.Context, task_id: str) -> None:
    """Show one task in full."""
    domain, named = ctx.obj
    task = _task(domain, named, task_id)
    console.print(
        yaml.safe_dump(task.model_dump(exclude_defaults=True), sort_keys=False, allow_unicode=True), highlight=False, markup=False
    )


def _task(domain: Domain, named: str, task_id: str) -> Task:
    """The task TASK_ID names, or a user error saying how to list them."""
    task = domain.tasks.get(task_id)
    if task is None:
        raise UserError(
            f"there is no task {shown(task_id)} (TASK_ID) in domain {shown(named)}; `passhat tasks --domain {named}` lists them."
        )
    return task


@tasks.command("brief")
@click.argument("task_id")
@click.option("--domain", "own_domain", help="Domain whose task it is (here or before `brief`, as `passhat tasks --domain`).")
@click.option("--persona", default="baseline", show_default=True, help="The persona whose voice the brief is in.")
@click.pass_context
def tasks_brief(ctx: click.Context, task_id: str, own_domain: str | None, persona: str) -> None:
    """Print the brief a person reads to play one task as a customer: never its ground truth."""
    from passhat.customers.brief import render_brief
    from passhat.customers.personas import PERSONAS

    domain, named = ctx.obj if own_domain is None else (load_checked_domain(own_domain), own_domain)
    task = _task(domain, named, task_id)
    if persona not in PERSONAS:
        raise UserError(f"unknown persona {shown(persona)} in --persona; choose from {', '.join(PERSONAS)}.")
    console.print(render_brief(domain, task, PERSONAS[persona]).text(), highlight=False, markup=False, soft_wrap=True)


@main.command()
@domain_options("whose tasks to prove")
@click.option("--tasks", "task_ids", default="", help="Comma list of task ids (default: all).")
@click.option("-v", "--verbose", is_flag=True, help="Show every case, not only the ones that do not hold.")
def check(domain: str, tasks_dir: str | None, task_ids: str, verbose: bool) -> None:
    """Prove each task: its ground truth earns reward 1, each near miss of it fails for the right reason, and its
    customer's brief gives none of it away."""
    from passhat.customers.brief import task_brief_problems
    from passhat.grade import GroundTruthError
    from passhat.grade.check import ANY_FAILURE, check_task
    from passhat.grade.remedies import remedy
    from passhat.run.runner import select_tasks  # the runner loads the agents and model clients: not for `--help`

    d = load_checked_domain(domain, tasks_dir)
    chosen = select_tasks(d, [t.strip() for t in task_ids.split(",") if t.strip()])
    broken = 0
    for task in chosen:
        if leaks := task_brief_problems(d, task):
            broken += 1
            console.print(f"{escape(task.id)}: [red]DOES NOT HOLD[/] {escape('; '.join(leaks))}", highlight=False)
            continue
        try:
            results = check_task(d, task)
        except GroundTruthError as exc:
            broken += 1
            console.print(f"{escape(task.id)}: [red]DOES NOT HOLD[/] {escape(str(exc))}", highlight=False)
            continue
        bad = [r for r in results if not r.holds]
        broken += bool(bad)
        status = "[green]ok[/]" if not bad else "[red]DOES NOT HOLD[/]"
        console.print(f"{escape(task.id)}: {status} ({len(results)} cases)", highlight=False)
        for r in results if verbose else bad:
            expect = "any signature" if r.case.expect == ANY_FAILURE else r.case.expect
            want = "reward 1" if expect is None else f"reward 0 / {expect}"
            got = f"reward {r.grade.reward} / {r.grade.signature}" if r.applied else "skipped: the backend rejects this near miss"
            console.print(f"    {r.case.label} [{r.case.mode}]: want {want}, got {got}", highlight=False, markup=False)
            if fix := remedy(d, task, r):
                console.print(f"      to fix: {fix}", highlight=False, markup=False)
    console.print(f"{len(chosen) - broken} of {len(chosen)} tasks hold.")
    if broken:
        sys.exit(1)
