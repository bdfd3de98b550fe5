"""`passhat accounts`: the operator accounts of the web app (`passhat serve`), in <out>/accounts.sqlite.

Every change is appended to the runs folder's audit trail by "cli:<login>", the person at this terminal; the
server may be running meanwhile (the accounts file and the trail are both safe to write from two processes).
"""

from __future__ import annotations

import contextlib
import getpass
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from passhat.cli import main
from passhat.cli.common import console, out_option

if TYPE_CHECKING:
    from passhat.serve.web.accounts import Account, Accounts

password_stdin_option = click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input (for scripts) instead of prompting.",
)


@main.group()
def accounts() -> None:
    """Operator accounts of the web app: add, list, change role, remove, reset two-factor, set a password."""


def _accounts(out: Path) -> Accounts:
    # imported by the commands, not with the CLI: `passhat --help` must not pay for the web stack and argon2
    from passhat.serve.web.accounts import Accounts

    return Accounts(out)


@contextlib.contextmanager
def _audited(out: Path, action: str, **details: Any) -> Iterator[None]:
    """Make, inside, a change the runs folder's trail records: refused before it is made when the trail cannot be
    continued (another audit key), recorded once it is made."""
    from passhat.guard.audit import signing_key
    from passhat.serve.web import trail

    with trail.recorded(out, signing_key(), action, f"cli:{_login()}", **details):
        yield


def _login() -> str:
    """Who runs this command: the OS login (or the user id when the system has no name for it)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return f"uid {os.getuid()}"


def _password(from_stdin: bool) -> str:
    from passhat.serve.web.accounts import checked_password

    if from_stdin:
        line = sys.stdin.readline()
        return checked_password(line.removesuffix("\n").removesuffix("\r"), "the password on standard input (--password-stdin)")
    return checked_password(click.prompt("Password", hide_input=True, confirmation_prompt=True), "the password")


def _print_enrolment(account: Account) -> None:
    console.print(
        f"two-factor: {account.name} scans a QR code at the first sign-in to `passhat serve`; or enter this secret in an "
        f"authenticator app: {account.totp_secret}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    console.print(f"enrolment URI: {account.enrolment_uri}", highlight=False, markup=False, soft_wrap=True)


@accounts.command("add")
@click.argument("name")
@click.option("--role", required=True, help="viewer, operator, approver or admin (each includes the ones before it).")
@password_stdin_option
@out_option
def add(name: str, role: str, password_stdin: bool, out: Path) -> None:
    """Add an account NAME with a password (prompted twice, hidden) and a fresh two-factor secret."""
    from passhat.serve.web.accounts import checked_name, checked_role

    name, new_role = checked_name(name), checked_role(role, "--role")
    secret = _password(password_stdin)
    with _audited(out, "account added", name=name, role=new_role):
        account = _accounts(out).add(name, new_role, secret)
    console.print(f"added account {account.name} ({account.role}) to {out / 'accounts.sqlite'}", highlight=False, markup=False)
    _print_enrolment(account)


@accounts.command("list")
@out_option
def list_users(out: Path) -> None:
    """List the accounts: name, role, whether two-factor is set up, whether disabled, when created."""
    table = Table("name", "role", "two-factor", "state", "created")
    for account in _accounts(out).all():
        enrolled = "enrolled" if account.enrolled else "at next sign-in"
        table.add_row(account.name, account.role, enrolled, "disabled" if account.disabled else "active", account.created_at)
    console.print(table)


@accounts.command("role")
@click.argument("name")
@click.argument("role")
@out_option
def role(name: str, role: str, out: Path) -> None:
    """Give account NAME the role ROLE; it applies from the account's next request."""
    from passhat.serve.web.accounts import checked_role

    with _audited(out, "account role changed", name=name, role=role):
        _accounts(out).set_role(name, checked_role(role))
    console.print(f"{name} is now {role}", highlight=False, markup=False)


@accounts.command("remove")
@click.argument("name")
@out_option
def remove(name: str, out: Path) -> None:
    """Remove account NAME; its sessions end at once (its past actions stay in the audit trail)."""
    with _audited(out, "account removed", name=name):
        _accounts(out).remove(name)
    console.print(f"removed account {name}", highlight=False, markup=False)


@accounts.command("reset-2fa")
@click.argument("name")
@out_option
def reset_2fa(name: str, out: Path) -> None:
    """Give account NAME a new two-factor secret (a lost phone): its sessions end, and it enrols again at its
    next sign-in."""
    with _audited(out, "account two-factor reset", name=name):
        account = _accounts(out).reset_2fa(name)
    console.print(f"reset the two-factor secret of {name}", highlight=False, markup=False)
    _print_enrolment(account)


@accounts.command("password")
@click.argument("name")
@password_stdin_option
@out_option
def password(name: str, password_stdin: bool, out: Path) -> None:
    """Set the password of account NAME (prompted twice, hidden); its sessions end."""
    accounts = _accounts(out)
    accounts.require(name)
    secret = _password(password_stdin)
    with _audited(out, "password changed", name=name):
        accounts.set_password(name, secret)
    console.print(f"set the password of {name}; its sessions have ended", highlight=False, markup=False)


# the old name, hidden and kept for a release: `passhat users add ...` in a script still works
main.add_command(click.Group("users", commands=accounts.commands, hidden=True, help="Old name of `passhat accounts`."))
