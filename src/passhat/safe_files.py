"""Reading the files a user points passhat at — task files, fault plans, the ``--config`` TOML — without
trusting them.

A file is read only if it is a regular file (a FIFO would block the reader forever; a folder is no
file) of at most MAX_FILE_BYTES, and only as UTF-8 (the error gives the byte offset). Its parse must
stay small: values nested at most MAX_DEPTH deep (parsers and validators recurse), at most MAX_VALUES
values once YAML aliases are expanded (a few hundred bytes of aliases can stand for billions of values,
and whatever reads the result — validation, repr, JSON — expands them), integers of at most
MAX_INT_DIGITS digits (Python refuses to convert more than 4,300), no YAML merge key (``<<``) and no key
given twice. Every refusal is a UserError naming the file, and quotes at most a few dozen characters of
what the file holds, so no message grows with the input.
"""

from __future__ import annotations

import os
import reprlib
import stat
import tomllib
from pathlib import Path
from typing import Any

import yaml

from passhat.errors import UserError

MAX_FILE_BYTES = 1 << 20  # 1 MiB: a task file is a few KB, a fault plan or a config a few hundred bytes
MAX_DEPTH = 64
MAX_VALUES = 10_000  # the largest retail task holds 144
MAX_INT_DIGITS = 100
_INT_BOUND = 10**MAX_INT_DIGITS
MAX_PROBLEMS = 5  # problems listed in one message; the rest are counted

_quoted = reprlib.Repr()
_quoted.maxlevel, _quoted.maxstring, _quoted.maxother = 3, 60, 60
_quoted.maxlist = _quoted.maxtuple = _quoted.maxdict = _quoted.maxset = _quoted.maxfrozenset = 5


def shown(value: object) -> str:
    """``repr(value)`` cut to a few dozen characters, without building the whole repr first."""
    return cut(_quoted.repr(value), 80)


def cut(text: str, limit: int = 200) -> str:
    """``text`` if short, else its start and end around an ellipsis."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


def listed(problems: list[str]) -> str:
    """The first MAX_PROBLEMS problems, each cut, and how many more there are."""
    shown_problems = "; ".join(cut(p) for p in problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    return shown_problems + (f"; and {more} more" if more > 0 else "")


def read_text_file(path: Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of the regular file ``path`` (``what`` names it in errors: "the fault plan x.yaml (--faults)").

    Opened without blocking and checked on the open file, so a FIFO or a file swapped after a check
    is refused, not waited on; at most ``limit`` + 1 bytes are ever read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise UserError(f"cannot read {what}: {getattr(exc, 'strerror', None) or exc}.") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UserError(f"cannot read {what}: it is a folder, not a file.")
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"cannot read {what}: it is not a regular file (a pipe, socket or device); give a file.")
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = b"" if info.st_size > limit else file.read(limit + 1)
    except OSError as exc:  # a "file" that refuses reading, such as /proc/self/mem
        raise UserError(f"cannot read {what}: {exc.strerror or exc}.") from None
    finally:
        os.close(fd)
    if info.st_size > limit or len(data) > limit:
        raise UserError(f"{what} is larger than {limit:,} bytes, the most passhat reads from such a file.")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(
            f"{what} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line}): "
            f"{exc.reason}; save the file as UTF-8."
        ) from None


def load_yaml(path: Path, what: str) -> dict[Any, Any]:
    """The YAML mapping in ``path``, within the bounds above; anything else is a UserError naming it."""
    text = read_text_file(path, what)
    try:
        loader = _BoundedLoader(text)  # reading starts here: it refuses control characters
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except _Refused as exc:
        raise UserError(f"{what} {exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{what} is not valid YAML: {_yaml_problem(exc)}.") from None
    return _mapping(data, what)


def load_toml(path: Path, what: str) -> dict[str, Any]:
    """The TOML table in ``path``, within the bounds above; anything else is a UserError naming it."""
    text = read_text_file(path, what)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{what} is not valid TOML: {cut(str(exc))}.") from None
    except ValueError:  # tomllib's int() of more digits than Python converts (4,300)
        raise UserError(f"{what} has an integer longer than {MAX_INT_DIGITS} digits.") from None
    except RecursionError:
        raise UserError(f"{what} nests arrays or tables too deeply to read (the limit is {MAX_DEPTH} levels).") from None
    _check_parsed(data, what)
    return _mapping(data, what)


def _mapping(data: Any, what: str) -> dict[Any, Any]:
    if data is None or data == {}:
        raise UserError(f"{what} holds nothing (it is empty or only comments).")
    if not isinstance(data, dict):
        raise UserError(f"{what} must be a mapping of keys to values (`key: value` lines), not a {type(data).__name__}.")
    return data


def _check_parsed(data: Any, what: str) -> None:
    """The bounds on an already parsed value (TOML has no aliases, so walking it is linear in the file)."""
    pending, count = [(data, 1)], 0
    while pending:
        value, depth = pending.pop()
        count += 1
        if count > MAX_VALUES:
            raise UserError(f"{what} holds more than {MAX_VALUES:,} values.")
        if depth > MAX_DEPTH:
            raise UserError(f"{what} nests values more than {MAX_DEPTH} levels deep.")
        if isinstance(value, int) and abs(value) >= _INT_BOUND:
            raise UserError(f"{what} has an integer longer than {MAX_INT_DIGITS} digits.")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        pending.extend((child, depth + 1) for child in children)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error as one short line: what, and where (its own text spans lines and quotes the input)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return cut(" ".join(filter(None, [exc.context, exc.problem])) + where)
    if isinstance(exc, yaml.reader.ReaderError):
        return f"character U+{exc.character:04X} at position {exc.position}: {exc.reason}"
    return cut(str(exc).replace("\n", " "))


class _Refused(Exception):
    """A bound broken while parsing; load_yaml puts the file's name in front."""


# What PyYAML's constructors raise on a value that matches a type's tag but not its form.
_BUILD_ERRORS = (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError)


def _line(where: yaml.Node | yaml.Event) -> str:
    return f"(line {where.start_mark.line + 1})"


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting as it composes: nesting depth, values with aliases expanded
    (each node's count is kept, so an alias costs one lookup), integer length, repeated keys."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._total = 0  # values composed so far, an alias counting as all the values it stands for
        self._values: dict[yaml.Node, int] = {}  # each composed node: its values once expanded

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        if self._depth >= MAX_DEPTH:
            raise _Refused(f"nests values more than {MAX_DEPTH} levels deep {_line(self.peek_event())}.")
        alias = self.check_event(yaml.AliasEvent)
        if not alias:
            self._count(1, self.peek_event())  # counted before its children: a long list stops early
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if alias:
            if node not in self._values:  # its anchor is still being composed: the value would contain itself
                raise _Refused(f"has an alias inside the value it refers to {_line(node)}.")
            self._count(self._values[node], node)
        else:
            self._values[node] = 1 + sum(map(self._values.__getitem__, _children(node)))
        return node

    def _count(self, values: int, where: yaml.Node | yaml.Event) -> None:
        self._total += values
        if self._total > MAX_VALUES:
            raise _Refused(f"holds more than {MAX_VALUES:,} values (an alias counting as all it stands for) {_line(where)}.")

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except _BUILD_ERRORS:  # e.g. "!!int ''", "!!timestamp x", or 2001-02-30, which YAML calls a date
            kind = cut(node.tag.replace("tag:yaml.org,2002:", "!!"), 60)
            raise _Refused(f"has a value that is not a valid {kind} {_line(node)}.") from None

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        for key, _ in node.value:
            if key.tag == "tag:yaml.org,2002:merge":
                raise _Refused(f"uses a merge key '<<' {_line(key)}; write the keys out instead.")

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)  # refuses a merge key before it is read as a key
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise _Refused(f"gives the key {shown(key)} twice {_line(key_node)}; keep one of them.")
                    seen.add(key)
                except TypeError:  # an unhashable key: the base class says so
                    pass
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        # The text is bounded before converting (Python refuses over 4,300 digits), the value after
        # (hexadecimal and base-60 integers are written shorter than their decimal digits).
        if len(node.value) > 2 * MAX_INT_DIGITS or abs(value := super().construct_yaml_int(node)) >= _INT_BOUND:
            raise _Refused(f"has an integer longer than {MAX_INT_DIGITS} digits {_line(node)}.")
        return value


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
