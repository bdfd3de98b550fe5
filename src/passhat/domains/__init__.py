"""The domain registry and the loader of task files."""

from __future__ import annotations

import importlib
from pathlib import Path

from pydantic import ValidationError

from passhat.domains.model import Domain, Task
from passhat.errors import UserError
from passhat.safe_files import cut, listed, load_yaml, shown

_BUILT_IN = ("retail",)


def domain_names() -> list[str]:
    return list(_BUILT_IN)


def load_domain(name: str) -> Domain:
    """The domain called ``name``; its module exposes ``DOMAIN``. Loaded once per process."""
    if name not in _BUILT_IN:
        raise UserError(f"unknown domain {name!r} (--domain): the domains are {', '.join(_BUILT_IN)}.")
    return importlib.import_module(f"passhat.domains.{name}").DOMAIN


def load_task_files(folder: Path, model: type[Task]) -> list[Task]:
    """Every ``*.yaml`` task in ``folder`` as the domain's task ``model``, sorted by id; a broken file is a
    UserError naming it and its fields (read within ``safe_files``' bounds: size, encoding, nesting,
    aliases, integers, keys)."""
    tasks: dict[str, Task] = {}
    for path in sorted(folder.glob("*.yaml")):
        raw = load_yaml(path, f"task file {path}")
        try:
            task = model.model_validate(raw)
        except ValidationError as exc:
            problems = [f"{'.'.join(cut(str(p), 60) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()]
            raise UserError(f"task file {path} is invalid: {listed(problems)}.") from None
        if task.id in tasks:
            raise UserError(f"task file {path} repeats the task id {shown(task.id)}; task ids must be unique.")
        tasks[task.id] = task
    return sorted(tasks.values(), key=lambda t: t.id)
