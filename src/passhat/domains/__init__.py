"""The domain registry and the loader of task files.

``--domain`` names a domain three ways: a built-in (``retail``); a name an installed package registers in
the entry-point group ``passhat.domains`` (its entry point loads to a Domain, or to a module defining
``DOMAIN``); or the path of a domain folder, whose ``domain.py`` defines ``DOMAIN`` (``passhat.domains.folder``).
A built-in wins over an installed domain of the same name, so no package can change what ``--domain retail``
means. A text with a ``/`` or starting with ``.`` is a path; a bare name is a folder only when no installed
domain has it and the folder exists (write ``./name`` to mean the folder whatever is installed).
``--tasks-dir`` adds a folder of task files to any of them.

Each domain is loaded once per process (a folder once per resolved path). Loading only imports: the
commands that run or prove tasks check a domain that is not built in before any trial
(``passhat.run.preflight``), since checking drives the engine this package sits below.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from passhat.errors import UserError
from passhat.safe_files import cut, listed, load_yaml, shown

if TYPE_CHECKING:  # the models (pydantic) load with the first domain, not with every command's start
    from passhat.domains.model import Domain, Task

BUILT_IN = ("retail", "payables", "helpdesk", "benefits", "intake")
DEFAULT_DOMAIN = "retail"  # what --domain means when it is not given
ENTRY_POINT_GROUP = "passhat.domains"

_loaded: dict[str, Domain] = {}  # a folder's resolved path, or an installed domain's "name = target"
_homes: dict[Domain, Path] = {}  # the folder each domain's files are in (for error messages naming them)
_with_tasks: dict[tuple[Domain, Path], Domain] = {}  # (domain, resolved --tasks-dir) -> the domain with them


def domain_names() -> list[str]:
    """The built-in domains, then the installed ones (a name of both is the built-in)."""
    return [*BUILT_IN, *sorted(set(_installed()) - set(BUILT_IN))]


def domain_ref(ref: str) -> str:
    """What a run stores of ``--domain`` so that later commands find the same domain from any folder: a name as
    given, a domain folder as its absolute, resolved path."""
    return str(_folder_path(ref)) if _names_folder(ref) else ref


def load_domain(ref: str, tasks_dir: str | Path | None = None) -> Domain:
    """The domain ``ref`` names (a built-in name, which wins over an installed domain's, an installed name, or a
    folder's path), with the task files of ``tasks_dir`` added to its tasks when given; an unknown or broken
    one is a UserError."""
    domain = _domain(ref)
    return domain if tasks_dir is None else _with_task_folder(domain, _folder_path(str(tasks_dir), "--tasks-dir"))


def load_task_files(folder: Path, model: type[Task]) -> list[Task]:
    """Every ``*.yaml`` task in ``folder`` as the domain's task ``model``, sorted by id; a broken file is a
    UserError naming it and its fields (read within ``safe_files``' bounds: size, encoding, nesting,
    aliases, integers, keys)."""
    import pydantic

    tasks: dict[str, Task] = {}
    for path in sorted(folder.glob("*.yaml")):
        raw = load_yaml(path, f"task file {path}")
        try:
            task = model.model_validate(raw)
        except pydantic.ValidationError as exc:
            problems = [f"{'.'.join(cut(str(p), 60) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()]
            raise UserError(f"task file {path} is invalid: {listed(problems)}.") from None
        if task.id in tasks:
            raise UserError(f"task file {path} repeats the task id {shown(task.id)}; task ids must be unique.")
        tasks[task.id] = task
    return sorted(tasks.values(), key=lambda t: t.id)


def _domain(ref: str) -> Domain:
    if ref in BUILT_IN:
        module = importlib.import_module(f"passhat.domains.{ref}")
        _homes.setdefault(module.DOMAIN, Path(module.__file__).parent)  # type: ignore[arg-type]
        return module.DOMAIN
    if _names_folder(ref):
        folder = _folder_path(ref)
        return _loaded_once(str(folder), lambda: _import_folder(folder))
    installed = _installed()
    if ref in installed:
        entry = installed[ref]
        return _loaded_once(f"{entry.name} = {entry.value}", lambda: _load_installed(entry))
    raise UserError(
        f"unknown domain {shown(ref)} (--domain): the domains are {', '.join(domain_names())}; "
        "or give the path of a domain folder (e.g. ./my_domain)."
    )


def _loaded_once(key: str, load: Callable[[], tuple[Domain, Path | None]]) -> Domain:
    """The domain loaded under ``key``, loaded on first use (a failure is not kept: a fixed folder loads on
    the next try)."""
    if key not in _loaded:
        domain, home = load()
        _loaded[key] = domain
        if home is not None:
            _homes[domain] = home
    return _loaded[key]


def _import_folder(folder: Path) -> tuple[Domain, Path]:
    from passhat.domains.folder import import_folder

    return import_folder(folder), folder


def _load_installed(entry: importlib.metadata.EntryPoint) -> tuple[Domain, Path | None]:
    """The domain an installed package registers, and the folder of the package its module is in (None for a
    lone top-level module: the folder it sits in holds other packages' files)."""
    from passhat.domains.folder import describe, domain_in, raised_at

    where = f"the entry point {entry.name} = {entry.value} (group {ENTRY_POINT_GROUP}, package {_package(entry)})"
    try:
        found = entry.load()
    except Exception as exc:
        raise UserError(f"{where} cannot be imported: {raised_at(exc, None)}: {describe(exc)}.") from None
    module = importlib.import_module(entry.module)
    in_package = hasattr(module, "__path__") or bool(module.__spec__ and module.__spec__.parent)
    return domain_in(found, where), Path(module.__file__).resolve().parent if in_package and module.__file__ else None


def _package(entry: importlib.metadata.EntryPoint) -> str:
    return entry.dist.name if entry.dist is not None else "unknown"


def _installed() -> dict[str, importlib.metadata.EntryPoint]:
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _names_folder(ref: str) -> bool:
    if ref in BUILT_IN:
        return False
    if "/" in ref or os.sep in ref or ref.startswith("."):
        return True
    return ref not in _installed() and _folder_path(ref).is_dir()


def _folder_path(ref: str, flag: str = "--domain") -> Path:
    """``ref`` as an absolute path without symlinks; a path the system cannot use is a UserError."""
    try:
        return Path(ref).resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: a symlink loop, on Python before 3.13
        raise UserError(f"{flag} {shown(ref)} is no usable path ({exc}).") from None


def _with_task_folder(domain: Domain, folder: Path) -> Domain:
    """``domain`` with the tasks of ``folder`` after its own (an id of its own is refused), once per process."""
    key = (domain, folder)
    if key not in _with_tasks:
        if not folder.is_dir():
            raise UserError(f"--tasks-dir {folder} is no folder: give the folder that holds the task files (*.yaml).")
        added = load_task_files(folder, domain.task_model)
        if not added:
            raise UserError(f"--tasks-dir {folder} holds no task file (*.yaml).")
        home = domain_home(domain)
        clashes = [
            f"{task_where(folder, t.id)} has the id of the domain's {task_where(home, t.id)}"
            for t in added
            if t.id in domain.tasks
        ]
        if clashes:
            raise UserError(f"--tasks-dir {folder}: {listed(clashes)}; give each added task an id of its own.")
        own = list(domain.tasks.values())
        _with_tasks[key] = dataclasses.replace(domain, load_tasks=lambda: [*own, *added])
    return _with_tasks[key]


def domain_home(domain: Domain) -> Path | None:
    """The folder a loaded domain's files are in (its folder, or its package's), to name them in messages."""
    return _homes.get(domain)


def task_where(folder: Path | None, task_id: str) -> str:
    """A task named for a message: by its file under ``folder`` when found, else by its id."""
    path = task_file(folder, task_id) if folder else None
    return f"task file {path}" if path else f"task {shown(task_id)}"


def task_file(folder: Path, task_id: str) -> Path | None:
    """The YAML file under ``folder`` whose top-level ``id`` is ``task_id``: found by reading the files, since
    a task does not know its file; only error messages need it."""
    line = re.compile(rf"^id:[ \t]*(['\"]?){re.escape(task_id)}\1[ \t]*(#.*)?$", re.MULTILINE)
    for path in sorted(folder.rglob("*.yaml")):
        try:
            if path.is_file() and line.search(path.read_text(encoding="utf-8", errors="replace")):
                return path
        except OSError:
            continue
    return None
