"""Writing a new domain folder from the template next to this file: a small working domain to start from.

The template is a complete domain (a fitness studio's member desk) whose files say what to change for a
real one; ``NAME`` replaces the placeholder wherever the domain names itself. The folder is written in
full under a hidden temporary name next to the target and renamed into place at the end, so a failure
leaves no half-written domain behind, and an existing folder is never written into. A --path that does not
exist yet is created (``--path domains`` on a fresh clone), and removed again when the domain cannot be written.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path

from passhat.domains import BUILT_IN
from passhat.errors import UserError
from passhat.safe_files import shown

TEMPLATE = Path(__file__).parent / "template"
PLACEHOLDER = "{{name}}"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,63}")


def new_domain(name: str, parent: Path) -> Path:
    """Write the template as ``parent/name`` with ``name`` filled in, and return that folder."""
    target = _target(name, parent)
    staging = parent / f".{name}.{secrets.token_hex(4)}.partial"
    made = _missing_folders(parent)
    try:
        for folder in made:
            os.mkdir(folder)
        os.mkdir(staging)
    except OSError as exc:
        _remove_made(made)
        raise UserError(f"cannot write in --path {parent} ({exc.strerror or exc}); choose a folder you can write to.") from None
    try:
        _fill(staging, name)
        os.rename(staging, target)  # fails rather than replace a folder with files in it
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_made(made)
        if isinstance(exc, OSError):
            raise UserError(
                f"cannot write the domain folder {target} ({exc.strerror or exc}); nothing was left behind."
            ) from None
        raise
    return target


def _target(name: str, parent: Path) -> Path:
    """``parent/name``, once the name is a slug, the parent a folder, and nothing is there yet."""
    if not NAME_PATTERN.fullmatch(name):
        raise UserError(
            f"{shown(name)} is not a domain name (NAME): use a lower-case letter, then lower-case letters, digits, '_' or '-', "
            "at most 64 characters, e.g. helpdesk or member-desk."
        )
    if name in BUILT_IN:
        raise UserError(f"{shown(name)} is the name of a built-in domain (NAME); give your domain a name of its own.")
    blocked = next((p for p in (parent, *parent.parents) if p.exists() or p.is_symlink()), None)
    if blocked is not None and not blocked.is_dir():
        where = "" if blocked == parent else f" ({blocked} is not a folder)"
        raise UserError(f"--path {parent} is not a folder{where}; give a folder to write the domain folder in.")
    target = parent / name
    if target.exists() or target.is_symlink():
        raise UserError(
            f"{target} already exists; passhat new-domain never writes into an existing folder: choose another NAME or --path."
        )
    return target


def _missing_folders(parent: Path) -> list[Path]:
    """The folders of ``parent`` that do not exist yet, outermost first: what new_domain creates."""
    return [p for p in (*reversed(parent.parents), parent) if not (p.exists() or p.is_symlink())]


def _remove_made(made: list[Path]) -> None:
    """Remove the folders new_domain created, innermost first, when nothing else was put in them."""
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            return


def _fill(folder: Path, name: str) -> None:
    """Copy the template into ``folder``, the placeholder in every file replaced by ``name``."""
    for source in sorted(TEMPLATE.rglob("*")):
        relative = source.relative_to(TEMPLATE)
        if any(part == "__pycache__" or part.endswith(".pyc") for part in relative.parts):
            continue
        destination = folder / relative
        if source.is_dir():
            destination.mkdir()
        else:
            destination.write_text(source.read_text(encoding="utf-8").replace(PLACEHOLDER, name), encoding="utf-8")
