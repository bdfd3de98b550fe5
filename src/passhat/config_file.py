"""`passhat run --config eval.toml`: a run's flags written down once, and its price table.

Every flag of the command is a key, spelled as the flag without its dashes (``max-turns`` or
``max_turns``); flags given on the command line win over the file. A ``[prices."provider/model"]``
table (``input`` and ``output``, US dollars per million tokens) extends or overrides the built-in
prices. The file is checked as a whole before anything runs: an unknown key or a value of the wrong
type is an error naming the key and the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import click
from pydantic import ConfigDict, Field, ValidationError, create_model

from passhat.errors import UserError
from passhat.llm import Price
from passhat.safe_files import cut, listed, load_toml, shown

PRICES = "prices"


def load_config_file(path: Path, params: list[click.Parameter]) -> tuple[dict[str, Any], dict[str, Price]]:
    """(values by parameter name, prices) from the file; a UserError naming the key and file when wrong."""
    raw = load_toml(path, f"the config file {path} (--config)")
    names = _option_names(params)
    unknown = [key for key in raw if key != PRICES and key not in names]
    if unknown:
        raise UserError(
            f"unknown key {listed(list(map(shown, unknown)))} in {path} (--config); the keys are the flags of "
            f"`passhat run` without their dashes ({', '.join(sorted(k for k in names if '_' not in k))}) and a "
            f"[{PRICES}] table."
        )
    spellings: dict[str, list[str]] = {}
    for key in raw:
        if key != PRICES:
            spellings.setdefault(names[key], []).append(key)
    twice = [keys for keys in spellings.values() if len(keys) > 1]
    if twice:
        raise UserError(
            f"{path} (--config) sets {' and '.join(map(shown, twice[0]))}, one flag spelled two ways; keep one of them."
        )
    values = {names[key]: value for key, value in raw.items() if key != PRICES}
    try:
        checked = _file_model(params)(**values, **({PRICES: raw[PRICES]} if PRICES in raw else {}))
    except ValidationError as exc:
        problems = [f"{_key(e['loc'], names)}: {e['msg']}" for e in exc.errors()]
        raise UserError(f"{path} (--config) has a bad value: {listed(problems)}.") from None
    return checked.model_dump(exclude_unset=True, exclude={PRICES}), getattr(checked, PRICES)


def _option_names(params: list[click.Parameter]) -> dict[str, str]:
    """Each accepted key (``max-turns``, ``max_turns``) to the parameter's name."""
    names = {}
    for param in params:
        if not isinstance(param, click.Option) or not param.expose_value or param.name is None:
            continue
        for opt in param.opts:
            if opt.startswith("--"):
                names[opt[2:]] = names[opt[2:].replace("-", "_")] = param.name
    return names


def _file_model(params: list[click.Parameter]) -> Any:
    fields: dict[str, Any] = {PRICES: (dict[str, Price], {})}
    for param in params:
        if isinstance(param, click.Option) and param.expose_value and param.name:
            fields[param.name] = (_field_type(param), Field(None, **_bounds(param.type)))
    return create_model("ConfigFile", __config__=ConfigDict(extra="forbid", strict=True), **fields)


def _field_type(param: click.Option) -> Any:
    if param.is_flag:
        return bool | None
    kind = param.type
    if isinstance(kind, click.Choice):
        return Literal[tuple(kind.choices)] | None  # type: ignore[valid-type]
    if isinstance(kind, (click.types.IntParamType, click.IntRange)):
        return int | None
    if isinstance(kind, (click.types.FloatParamType, click.FloatRange)):
        return float | None
    return str | None


def _bounds(kind: click.ParamType) -> dict[str, Any]:
    if not isinstance(kind, (click.IntRange, click.FloatRange)):
        return {}
    lower = "gt" if kind.min_open else "ge"
    upper = "lt" if kind.max_open else "le"
    return {k: v for k, v in ((lower, kind.min), (upper, kind.max)) if v is not None}


def _key(loc: tuple[Any, ...], names: dict[str, str]) -> str:
    """The key as the file spells it (flag style), for error messages."""
    head = str(loc[0]) if loc else "?"
    flag = next((k for k, name in names.items() if name == head and "_" not in k), head)
    return ".".join(cut(part, 60) for part in [flag, *map(str, loc[1:])])
