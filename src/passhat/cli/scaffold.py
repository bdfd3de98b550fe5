"""`passhat new-domain`: write a small working domain folder to start a team's own domain from."""

from __future__ import annotations

from pathlib import Path

import click

from passhat.cli import main
from passhat.cli.common import FilePath, console
from passhat.scaffold import new_domain as write_domain


@main.command("new-domain")
@click.argument("name")
@click.option(
    "--path",
    "parent",
    default=".",
    show_default=True,
    type=FilePath(path_type=Path),
    help="Folder to write the domain folder NAME in.",
)
def new_domain(name: str, parent: Path) -> None:
    """Write NAME/, a small working domain (tables, tools, policy, rule, tasks) whose files say what to change."""
    folder = write_domain(name, parent)
    ref = f"./{folder}" if folder.parent == Path(".") else str(folder)  # a bare name could be an installed domain's
    console.print(f"Wrote the {name} domain to {ref}. Prove its tasks, then run it:", highlight=False, markup=False)
    console.print(f"  passhat check --domain {ref}\n  passhat run --domain {ref}", highlight=False, markup=False)
