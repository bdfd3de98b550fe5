"""Where a domain's code lives, in the words of a message that tells a domain's author what to change."""

from __future__ import annotations

import inspect
import os
from typing import Any


def defined_at(fn: Any) -> str:
    """Where ``fn`` (a function or class a domain wired in) is defined, as a reader finds it: ``knows() in kit.py``,
    a lambda by its line, a class by its name."""
    try:
        path, line = inspect.getsourcefile(fn) or "", inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return getattr(fn, "__name__", "the domain's code")
    name = getattr(fn, "__name__", "")
    if name == "<lambda>":
        return f"the lambda at {_relative(path)}:{line}"
    return f"{name}{'' if inspect.isclass(fn) else '()'} in {_relative(path)}"


def _relative(path: str) -> str:
    """``path`` from the current folder when it lies under it (``studio/kit.py``), else as it is."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
