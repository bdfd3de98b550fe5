"""`passhat attack`: the prompt-injection suite (utility with and without attacks, targeted attack success, defenses)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from passhat.cli import main
from passhat.cli.common import (
    OutputFile,
    PlainText,
    checked_id,
    console,
    customer_option,
    domain_options,
    err,
    existing_run_dir,
    folder_problem,
    out_option,
)
from passhat.domains import domain_ref
from passhat.errors import UserError

if TYPE_CHECKING:  # the suite loads the run machinery (numpy, scipy, the model clients): imported when it runs
    from passhat.attack.config import AttackConfig
    from passhat.attack.store import AttackStore

DEFAULT_AGENT = "reference:injectable"
SUITE_OPTIONS = ("domain", "tasks_dir", "agent", "user", "personas", "tasks", "trials", "seed", "attacks", "goals", "defense")


@main.command()
@domain_options("to attack")
@click.option(
    "--agent",
    default=DEFAULT_AGENT,
    show_default=True,
    type=PlainText(),
    help="Agent under attack: reference:injectable (follows injected instructions some of the time), another reference "
    "agent, llm:<provider>/<model>, python:<module>:<factory> or http(s)://host:port/path.",
)
@customer_option
@click.option("--personas", default="baseline", show_default=True, help="Comma list of personas, or 'all'.")
@click.option("--tasks", default="", help="Comma list of task ids (default: every task of the domain).")
@click.option(
    "--trials",
    default=4,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Trials per scenario (n), with and without each attack.",
)
@click.option(
    "--seed", default=0, show_default=True, type=int, help="Suite seed; each trial's seed derives from it, as in `passhat run`."
)
@click.option(
    "--attacks",
    default="all",
    show_default=True,
    help="Attack templates: all, or a comma list of ignore_previous,fake_system,tool_impersonation,urgency,multi_step.",
)
@click.option(
    "--goals", default="all", show_default=True, help="Attacker goals of the domain: all, or a comma list of their names."
)
@click.option(
    "--defense",
    default="none",
    show_default=True,
    help="Defenses to compare with none (each alone, and all of them together): none, all, or a comma list of "
    "tool_filter,spotlight,detector,repeat_instructions.",
)
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 256), help="Trials in flight at once.")
@out_option
@click.option("--json", "json_path", type=OutputFile(), help="Also write the JSON report here.")
@click.option("--run-id", help="Name of the suite's folder under --out (default: attack- and a timestamp).")
@click.option("--resume", metavar="RUN_ID", help="Finish an interrupted suite: only its missing trials run.")
@click.pass_context
def attack(
    ctx: click.Context,
    concurrency: int,
    out: Path,
    json_path: Path | None,
    run_id: str | None,
    resume: str | None,
    **options: Any,
) -> None:
    """Run the prompt-injection suite: every task without attack and under each attack template × attacker goal, on
    the same seeds; report utility without and under attack and targeted attack success (pass^k, intervals) per
    attack, per goal and per defense."""
    from passhat.attack.report import build_attack_report
    from passhat.attack.terminal import print_attack_report
    from passhat.attack.world import attack_world
    from passhat.domains import load_domain
    from passhat.report.json_report import write_json

    if resume:
        typed = [f"--{n.replace('_', '-')}" for n in (*SUITE_OPTIONS, "run_id") if _typed(ctx, n)]
        if typed:
            raise UserError(f"--resume finishes suite {resume!r} with its stored configuration; drop {', '.join(typed)}.")
        store, config = _resumed(out, resume)
    else:
        store, config = _created(out, run_id, options)
    with store:
        _run_with_progress(config, store, concurrency, out)
        world = attack_world(load_domain(config.run.domain, config.run.tasks_dir))
        report = build_attack_report(store.run_id, config, world.injection, store.outcomes())
    print_attack_report(report, console)
    if json_path:
        write_json(report.model_dump(mode="json"), json_path)
        err.print(f"JSON report written to {json_path}", highlight=False, markup=False)


def _typed(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


def _created(out: Path, run_id: str | None, options: dict[str, Any]) -> tuple[AttackStore, AttackConfig]:
    """A new suite's store and configuration, every name checked before its folder is made."""
    from passhat.attack.runner import new_attack_config
    from passhat.attack.store import AttackStore

    attacks, goals, defense = options.pop("attacks"), options.pop("goals"), options.pop("defense")
    config = new_attack_config(attacks, goals, defense, **{**options, "domain": domain_ref(options["domain"])})
    run_id = checked_id(run_id or time.strftime("attack-%Y%m%d-%H%M%S"), "--run-id")
    _make_folder(out)
    return AttackStore.create(out / run_id, run_id, config.model_dump()), config


def _resumed(out: Path, run_id: str) -> tuple[AttackStore, AttackConfig]:
    """A stored suite's store (its writer's lock held) and configuration; refused if its tasks or passhat changed."""
    from passhat.attack.store import AttackStore
    from passhat.run.runner import resume_check

    store = AttackStore.resume(existing_run_dir(out, run_id, "--resume"))
    try:
        config = _stored(store)
        for warning in resume_check(config.run, run_id):
            err.print(f"warning: {warning}", highlight=False, markup=False, soft_wrap=True)
    except BaseException:
        store.close()
        raise
    return store, config


def _stored(store: AttackStore) -> AttackConfig:
    from pydantic import ValidationError

    from passhat.attack.config import AttackConfig

    try:
        return AttackConfig.model_validate(store.config)
    except ValidationError as exc:
        raise UserError(
            f"{store.path} holds an invalid suite configuration ({exc.error_count()} problems): start a new suite."
        ) from None


def _make_folder(out: Path) -> None:
    if problem := folder_problem(out):
        raise UserError(f"--out {out}: {problem}.")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder ({exc.strerror or exc}); choose another --out.") from None


def _run_with_progress(config: AttackConfig, store: AttackStore, concurrency: int, out: Path) -> None:
    """The suite's missing trials under a progress bar; Ctrl-C says how to resume."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from passhat.attack.runner import run_attacks

    columns = [TextColumn("attack trials"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("trials", total=None)
        try:
            asyncio.run(
                run_attacks(
                    config, store, concurrency,
                    on_trial=lambda _: progress.advance(bar),
                    on_plan=lambda total: progress.update(bar, total=total),
                )
            )  # fmt: skip
        except KeyboardInterrupt:
            progress.stop()
            err.print(
                f"interrupted: the stored trials are kept; finish with `passhat attack --resume {store.run_id} --out {out}`",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            sys.exit(130)
