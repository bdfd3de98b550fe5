"""A domain from a folder outside the package: its ``domain.py`` imported as a private package.

The folder is imported under a module name of its own, derived from its resolved path, with the folder as
the package's search path: ``domain.py`` can say ``from .tools import TOOLS``, and two folders that both
hold a ``tools.py`` never meet in ``sys.modules``. Whatever goes wrong while importing is a UserError
naming the file and the line, since the person reading it wrote that file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import sys
import traceback
from pathlib import Path

from passhat.domains.model import Domain
from passhat.errors import UserError
from passhat.safe_files import cut, shown

ENTRY_FILE = "domain.py"  # the file of a domain folder that defines DOMAIN
MAX_ENTRIES = 10_000  # files and folders in one domain folder; the built-in domains hold fewer than 100


def import_folder(folder: Path) -> Domain:
    """The ``DOMAIN`` that ``folder/domain.py`` defines; ``folder`` is resolved (absolute, no symlinks)."""
    entry = folder / ENTRY_FILE
    if not folder.is_dir():
        raise UserError(
            f"--domain {shown(str(folder))} is no folder: give a domain's name or the path of a domain folder "
            f"(one holding {ENTRY_FILE})."
        )
    if not entry.is_file():
        raise UserError(
            f"domain folder {folder} has no {ENTRY_FILE}: a domain folder's {ENTRY_FILE} defines DOMAIN = Domain(...)."
        )
    refuse_unsafe_entries(folder)
    name = "_passhat_domain_" + hashlib.sha256(str(folder).encode(errors="surrogateescape")).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, entry, submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None  # a .py file always has a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: relative imports look the package up there
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        _forget(name)
        if isinstance(exc, UserError):
            raise UserError(f"domain folder {folder} cannot be loaded: {exc}") from None
        hint = " (is it installed in the environment passhat runs in?)" if isinstance(exc, ModuleNotFoundError) else ""
        raise UserError(f"domain folder {folder} cannot be imported: {raised_at(exc, folder)}: {describe(exc)}{hint}.") from None
    return domain_in(module, str(entry))


def refuse_unsafe_entries(folder: Path) -> None:
    """Refuse a domain folder holding anything but regular files and folders (or symlinks to them).

    Its ``domain.py`` reads its own files with ordinary ``open``: a FIFO named ``policy.md`` would block it
    forever and a device would feed it without end; a symlink to nothing (or round a loop) fails there with
    a message about the wrong file. Checked before anything in the folder runs.
    """
    count = 0
    for root, folders, files in os.walk(folder):  # symlinked folders are listed, not entered
        folders[:] = [f for f in folders if f != "__pycache__"]
        for name in (*folders, *files):
            count += 1
            if count > MAX_ENTRIES:
                raise UserError(f"domain folder {folder} holds more than {MAX_ENTRIES:,} files and folders.")
            _refuse_unsafe_entry(Path(root, name), folder)


def _refuse_unsafe_entry(path: Path, folder: Path) -> None:
    try:
        info = os.stat(path)  # follows a symlink to what it names
    except OSError as exc:
        why = "is a symlink to nothing (or round a loop)" if path.is_symlink() else f"cannot be read ({exc.strerror})"
        raise UserError(f"domain folder {folder}: {path} {why}; remove it.") from None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        raise UserError(
            f"domain folder {folder}: {path} is not a regular file (a pipe, socket or device), which passhat "
            "would wait on forever; remove it."
        )


def domain_in(found: object, where: str) -> Domain:
    """``found`` itself when it is a Domain, else the ``DOMAIN`` it defines (a module's); ``where`` names it."""
    if isinstance(found, Domain):
        return found
    domain = getattr(found, "DOMAIN", None)
    if domain is None:
        raise UserError(f"{where} defines no DOMAIN: it must set DOMAIN = Domain(...) (passhat.domains.model.Domain).")
    if not isinstance(domain, Domain):
        raise UserError(f"DOMAIN in {where} is a {type(domain).__name__}, not a passhat.domains.model.Domain.")
    return domain


def _forget(package: str) -> None:
    """Drop a folder's half-imported package and its modules, so the next attempt imports them afresh."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def describe(exc: BaseException) -> str:
    """An exception in a few words: a SyntaxError's own message, else its type and message."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg}"
    return cut(" ".join(f"{type(exc).__name__}: {exc}".split()), 200)


def raised_at(exc: BaseException, home: Path | None) -> str:
    """Where ``exc`` was raised, as "file, line N": a SyntaxError's own position, else the innermost frame in
    ``home`` (the code the reader wrote), else the innermost frame."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}, line {exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if home is not None and Path(f.filename).is_relative_to(home)]
    frame = (own or frames)[-1] if frames else None
    return f"{frame.filename}, line {frame.lineno}" if frame else "an unknown place"
