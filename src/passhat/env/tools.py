"""Typed tools: JSON schemas derived from signatures, validated arguments, and the result contract.

Every call ends in exactly one of three shapes, so an agent can always tell them apart:

- ``{"status": "ok", "data": ...}``                      the call worked (data may be a list or a dict)
- ``{"status": "not_found", "found": false, "message": ...}``   it worked and found nothing
- ``{"status": "error", "error": {"type", "message", "retryable"}}``  it could not be carried out

An empty list never stands for a failed lookup.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sqlite3
from collections.abc import Callable
from typing import Any, get_type_hints

import docstring_parser
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from passhat.domains.toolkit import NotFound, ToolFailure, ToolMeta
from passhat.errors import UserError
from passhat.untrusted import NOT_TEXT, escape_char

MAX_ARGUMENT_DEPTH = 32  # tools take flat arguments; deeper nesting is a malformed call, not data
SQLITE_INTEGERS = range(-(2**63), 2**63)  # what SQLite can bind


@dataclasses.dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., Any]
    meta: ToolMeta
    args_model: type[BaseModel]
    schema: dict[str, Any]  # OpenAI-style function schema: name, description, parameters


def ok(data: Any) -> dict[str, Any]:
    return {"status": "ok", "data": data}


def not_found(message: str) -> dict[str, Any]:
    return {"status": "not_found", "found": False, "message": message}


def error(type: str, message: str, retryable: bool = False) -> dict[str, Any]:
    return {"status": "error", "error": {"type": type, "message": message, "retryable": retryable}}


def spec_for(fn: Callable[..., Any]) -> ToolSpec:
    """Build a tool's spec from its signature and docstring; the first parameter is the backend."""
    meta: ToolMeta | None = getattr(fn, "__passhat_tool__", None)
    if meta is None:
        raise TypeError(f"{fn.__qualname__} is not marked with @tool")
    hints = get_type_hints(fn)
    params = list(inspect.signature(fn).parameters.values())[1:]
    summary, arg_docs = _parse_doc(fn)
    fields: dict[str, Any] = {}
    for p in params:
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints[p.name], default)
    model = create_model(  # type: ignore[call-overload]
        f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields
    )
    parameters = model.model_json_schema()
    parameters.pop("title", None)
    for name, prop in parameters.get("properties", {}).items():
        prop.pop("title", None)
        if name in arg_docs:
            prop["description"] = arg_docs[name]
    return ToolSpec(
        name=fn.__name__,
        fn=fn,
        meta=meta,
        args_model=model,
        schema={"name": fn.__name__, "description": summary, "parameters": parameters},
    )


def _parse_doc(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """A tool's Google-style docstring: its description and its ``Args:`` entries, each entry on one
    line however it was wrapped (the model reads every line of it)."""
    try:
        parsed = docstring_parser.parse(inspect.getdoc(fn) or "", style=docstring_parser.DocstringStyle.GOOGLE)
    except docstring_parser.ParseError as exc:
        raise UserError(
            f"the docstring of tool {fn.__qualname__} ({fn.__module__}) is not Google style: {exc}; write each "
            "Args: entry as `name: description`, continued on lines indented further."
        ) from None
    entries = {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
    return (parsed.description or "").strip(), entries


def argument_problem(value: Any, where: str = "arguments", depth: int = 0) -> str | None:
    """Why ``value`` can be no tool's argument (it is not JSON, or holds what SQLite, the store or the
    reports cannot carry), or None. Looks at most MAX_ARGUMENT_DEPTH levels deep."""
    if isinstance(value, str):
        if char := NOT_TEXT.search(value):
            return f"{where} holds {escape_char(char.group())}, which is not text (a control character or unpaired surrogate)"
        return None
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if value in SQLITE_INTEGERS else f"{where} is an integer outside the 64-bit range"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is not a finite number"
    if not isinstance(value, (list, dict)):
        return f"{where} is a {type(value).__name__}, not a JSON value"
    if depth == MAX_ARGUMENT_DEPTH:
        return f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    if isinstance(value, list):
        return next(filter(None, (argument_problem(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))), None)
    for key, item in value.items():
        if not isinstance(key, str):
            return f"{where} has a key that is not a string"
        member = key if depth == 0 else f"{where}.{key}"
        if problem := argument_problem(key, f"a key of {where}") or argument_problem(item, member, depth + 1):
            return problem
    return None


def validate_args(spec: ToolSpec, args: Any) -> dict[str, Any]:
    """The call's arguments, checked and coerced; raises ToolFailure with a message a model can act on.

    Checked before validation and again after it, since validation coerces (the string "1e999" into
    an infinite float), so that nothing reaches the tool that SQLite or the store would choke on.
    """
    if not isinstance(args, dict):
        raise ToolFailure("invalid_arguments", f"arguments for {spec.name} must be a JSON object")
    if problem := argument_problem(args):
        raise ToolFailure("invalid_arguments", f"invalid arguments for {spec.name}: {problem}")
    try:
        clean = spec.args_model.model_validate(args).model_dump()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        raise ToolFailure("invalid_arguments", f"invalid arguments for {spec.name}: {problems}") from None
    if problem := argument_problem(clean):
        raise ToolFailure("invalid_arguments", f"invalid arguments for {spec.name}: {problem}")
    return clean


Within = Callable[[sqlite3.Connection, dict[str, Any]], None]  # runs in the call's transaction, given its result


def invoke(spec: ToolSpec, db: sqlite3.Connection, args: dict[str, Any], within: Within | None = None) -> dict[str, Any]:
    """Run a tool whose arguments are already valid, inside one transaction, as a three-shape result.

    A tool that fails leaves the backend as it found it: the transaction rolls back. ``within`` (a
    guard's bookkeeping, such as an idempotency record) commits or rolls back with the tool's writes.
    """
    try:
        with db:
            result = ok(spec.fn(db, **args))
            if within is not None:
                within(db, result)
            return result
    except NotFound as exc:
        return not_found(str(exc))
    except ToolFailure as exc:
        return error(exc.type, exc.message, exc.retryable)
