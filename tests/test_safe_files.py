"""Every file passhat reads from a path a user gives — task files, fault plans, the --config TOML — is
read within bounds: a hostile file ends in one short message naming it (exit 2 on the command line),
never a traceback, a hang or a blow-up of memory; and the files people really write still load."""

from __future__ import annotations

import os
import re
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from passhat.cli import main
from passhat.cli.run import run as run_command
from passhat.config_file import load_config_file
from passhat.domains import load_domain, load_task_files
from passhat.errors import UserError
from passhat.faults import parse_faults
from passhat.grade import GroundTruthError
from passhat.grade.check import check_task
from passhat.safe_files import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES, load_toml, load_yaml, read_text_file

Kind = Literal["task", "plan", "config"]
TASK_DIR = Path(__file__).parents[1] / "src/passhat/domains/retail/tasks"
VALID: dict[Kind, str] = {
    "task": (TASK_DIR / "retail-001.yaml").read_text(encoding="utf-8"),
    "plan": "timeout: 0.1\n",
    "config": "trials = 1\n",
}
RETAIL = load_domain("retail")
MESSAGE_LIMIT = 900  # a refusal may list every flag of `passhat run` (a config key), never more of the file


def alias_bomb(levels: int, width: int) -> str:
    """A YAML flow list whose last anchor stands for width**levels scalars."""
    parts = ["&a0 [" + ",".join(["x"] * width) + "]"]
    parts += [f"&a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


def with_value(kind: Kind, value: str) -> str:
    """A valid file of ``kind`` that also holds ``value`` where its reader looks at it: an argument of a
    ground-truth call, a fault's rate, a flag."""
    if kind == "task":
        reason = "      reason: no longer needed\n"
        return VALID["task"].replace(reason, f"{reason}      note: {value}\n", 1)
    return VALID[kind] + ("stale_read: " if kind == "plan" else "seed = ") + value + "\n"


def write_hostile(path: Path, kind: Kind, case: str) -> None:
    if case == "FIFO":
        os.mkfifo(path)
    elif case == "folder":
        path.mkdir()
    elif case == "50 MB file":
        with path.open("w", encoding="utf-8") as f:
            f.write(VALID[kind])
            f.writelines("#" * 1023 + "\n" for _ in range(50 * 1024))
    else:
        path.write_bytes(HOSTILE[case](kind))


HOSTILE: dict[str, Callable[[Kind], bytes]] = {
    "non-UTF-8 bytes": lambda kind: VALID[kind].encode() + b"# d\xe9lai\n",
    "10,000-deep nesting": lambda kind: with_value(kind, "[" * 10_000 + "]" * 10_000).encode(),
    "326-byte alias bomb": lambda kind: with_value(kind, alias_bomb(8, 9)).encode(),
    "1.2 KB alias bomb": lambda kind: with_value(kind, alias_bomb(10, 30)).encode(),
    "5000-digit integer": lambda kind: with_value(kind, "9" * 5000).encode(),
    "duplicated key": lambda kind: (VALID[kind] + VALID[kind].splitlines(keepends=True)[0]).encode(),
    "empty file": lambda kind: b"",
    "not a mapping": lambda kind: b"- 1\n- 2\n",
}
CASES = [*HOSTILE, "FIFO", "folder", "50 MB file"]
YAML_ONLY = {"326-byte alias bomb", "1.2 KB alias bomb"}  # TOML has no aliases
WORDS = {  # what the refusal says, for YAML files and, where it differs, for TOML
    "non-UTF-8 bytes": ("not UTF-8 text: byte 0xe9 at offset",),
    "10,000-deep nesting": (f"more than {MAX_DEPTH} levels deep", "too deeply"),
    "326-byte alias bomb": (f"more than {MAX_VALUES:,} values (an alias counting as all it stands for)",),
    "1.2 KB alias bomb": (f"more than {MAX_VALUES:,} values (an alias counting as all it stands for)",),
    "5000-digit integer": ("integer longer than 100 digits",),
    "duplicated key": ("twice", "not valid TOML"),
    "empty file": ("holds nothing",),
    "not a mapping": ("must be a mapping", "not valid TOML"),
    "FIFO": ("not a regular file",),
    "folder": ("a folder, not a file",),
    "50 MB file": (f"larger than {MAX_FILE_BYTES:,} bytes",),
}


def words(case: str, kind: Kind) -> str:
    said = WORDS[case]
    return said[-1] if kind == "config" else said[0]


@pytest.fixture
def fifo_guard() -> Iterator[Callable[[Path], None]]:
    """A reader that blocks on a FIFO fails the test instead of hanging it: after 30 s the FIFO gets a
    writer that closes at once, so the reader sees an empty file."""
    timers = []

    def guard(path: Path) -> None:
        def unblock() -> None:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader waiting: nothing blocked
                pass

        timers.append(threading.Timer(30, unblock))
        timers[-1].start()

    yield guard
    for timer in timers:
        timer.cancel()


def hostile_file(tmp_path: Path, kind: Kind, case: str, guard: Callable[[Path], None]) -> Path:
    path = tmp_path / ("eval.toml" if kind == "config" else f"hostile-{kind}.yaml")
    write_hostile(path, kind, case)
    if case == "FIFO":
        guard(path)
    return path


def refusal(load: Callable[[], object]) -> tuple[str, int]:
    """The message of the UserError ``load`` raises, and the peak memory it allocated meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(UserError) as refused:
            load()
        return str(refused.value), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def one_paragraph(output: str) -> str:
    assert "Traceback" not in output
    assert len(output) < MESSAGE_LIMIT, output[:MESSAGE_LIMIT]
    return " ".join(output.split())


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_task_file_is_refused_naming_it(tmp_path: Path, case: str, fifo_guard) -> None:
    path = hostile_file(tmp_path, "task", case, fifo_guard)
    message, peak = refusal(lambda: load_task_files(tmp_path, RETAIL.task_model))
    assert str(path) in message and words(case, "task") in one_paragraph(message)
    assert peak < 8 * MAX_FILE_BYTES


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_fault_plan_exits_2_naming_it(tmp_path: Path, case: str, fifo_guard) -> None:
    path = hostile_file(tmp_path, "plan", case, fifo_guard)
    message, peak = refusal(lambda: parse_faults(str(path)))
    assert str(path) in message and words(case, "plan") in one_paragraph(message)
    assert peak < 8 * MAX_FILE_BYTES
    result = CliRunner().invoke(main, ["run", "--faults", str(path), "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2
    assert str(path) in one_paragraph(result.output) and words(case, "plan") in one_paragraph(result.output)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("case", [c for c in CASES if c not in YAML_ONLY])
def test_a_hostile_config_file_exits_2_naming_it(tmp_path: Path, case: str, fifo_guard) -> None:
    path = hostile_file(tmp_path, "config", case, fifo_guard)
    message, peak = refusal(lambda: load_config_file(path, run_command.params))
    assert str(path) in message and words(case, "config") in one_paragraph(message)
    assert peak < 8 * MAX_FILE_BYTES
    result = CliRunner().invoke(main, ["run", "--config", str(path), "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2  # (a folder or a FIFO may be refused by the option's own check first)
    assert "eval.toml" in one_paragraph(result.output)
    assert not (tmp_path / "runs").exists()


# -- the bounds, from both sides ------------------------------------------------------------------


def test_the_built_in_task_files_load_anchors_and_aliases_included() -> None:
    anchored = [p for p in TASK_DIR.glob("*.yaml") if "&id001" in p.read_text(encoding="utf-8")]
    assert anchored and len(load_task_files(TASK_DIR, RETAIL.task_model)) == len(list(TASK_DIR.glob("*.yaml")))


def test_nesting_up_to_the_bound_loads_and_one_level_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nest.yaml"
    path.write_text("x: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n")  # the mapping is level 1
    assert load_yaml(path, "nest.yaml")
    path.write_text("x: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    with pytest.raises(UserError, match="levels deep"):
        load_yaml(path, "nest.yaml")
    toml = tmp_path / "nest.toml"
    toml.write_text("x = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n")
    assert load_toml(toml, "nest.toml")
    toml.write_text("x = " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    with pytest.raises(UserError, match="levels deep"):
        load_toml(toml, "nest.toml")


@pytest.mark.parametrize(
    "text, value",
    [
        ("9" * 100, int("9" * 100)),
        ("-" + "9" * 100, -int("9" * 100)),
        ("0x" + "f" * 83, int("f" * 83, 16)),
    ],
)
def test_integers_of_up_to_100_digits_load(tmp_path: Path, text: str, value: int) -> None:
    (tmp_path / "n.yaml").write_text(f"n: {text}\n")
    (tmp_path / "n.toml").write_text(f"n = {text}\n")
    assert load_yaml(tmp_path / "n.yaml", "n.yaml") == load_toml(tmp_path / "n.toml", "n.toml") == {"n": value}


@pytest.mark.parametrize("text", ["1" + "0" * 100, "0x1" + "0" * 84, "1" + ":59" * 60, "1" + "_0" * 100])
def test_longer_integers_are_refused_however_written(tmp_path: Path, text: str) -> None:
    (tmp_path / "n.yaml").write_text(f"n: {text}\n")
    with pytest.raises(UserError, match="longer than 100 digits"):
        load_yaml(tmp_path / "n.yaml", "n.yaml")
    if ":" not in text:  # TOML has no base-60 integers
        (tmp_path / "n.toml").write_text(f"n = {text}\n")
        with pytest.raises(UserError, match="longer than 100 digits"):
            load_toml(tmp_path / "n.toml", "n.toml")


def test_aliases_load_while_their_expansion_stays_under_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    ten = "&v [" + ",".join(["0"] * 9) + "]"  # 10 values: the list and its items

    def aliases(n: int) -> str:  # the mapping, 2 keys, the anchored list, the list of n aliases
        return f"a: {ten}\nb: [" + ",".join(["*v"] * n) + "]\n"

    most = (MAX_VALUES - 14) // 10
    path.write_text(aliases(most))
    loaded = load_yaml(path, "aliases.yaml")
    assert len(loaded["b"]) == most and loaded["b"][-1] == [0] * 9
    path.write_text(aliases(most + 1))
    with pytest.raises(UserError, match=f"more than {MAX_VALUES:,} values"):
        load_yaml(path, "aliases.yaml")


def test_a_long_list_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "long.yaml"
    path.write_text("x: [" + ",".join(["0"] * MAX_VALUES) + "]\n# the file goes on: ]]]]\n")
    with pytest.raises(UserError, match=f"more than {MAX_VALUES:,} values .* \\(line 1\\)"):
        load_yaml(path, "long.yaml")


@pytest.mark.parametrize(
    "text, said",
    [
        ("a: &x [1, *x]\n", "alias inside the value it refers to"),
        ("base: &b {timeout: 0.1}\nplan:\n  <<: *b\n", "merge key"),
        ("a: 1\nb: 2\na: 3\n", "gives the key 'a' twice (line 3)"),
        ("a: {x: 1, x: 1}\n", "gives the key 'x' twice"),
        ("a: 2001-13-45\n", "not a valid !!timestamp (line 1)"),
        ("a: !!int\n", "not a valid !!int"),
        ("? [1]\n: 2\n", "not valid YAML"),
        ("a: *nowhere\n", "not valid YAML: found undefined alias"),
        ("a: 'x\x00'\n", "not valid YAML"),
    ],
)
def test_yaml_that_is_ambiguous_or_unbuildable_is_refused(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    with pytest.raises(UserError, match=re.escape(said)):
        load_yaml(path, "odd.yaml")


def test_the_size_bound_counts_bytes_and_a_byte_order_mark_is_no_text(tmp_path: Path) -> None:
    path = tmp_path / "ten.yaml"
    path.write_bytes("\ufeffa: 1234".encode())  # 10 bytes
    assert read_text_file(path, "ten.yaml", limit=10) == "a: 1234"
    path.write_bytes("\ufeffa: 12345".encode())
    with pytest.raises(UserError, match="larger than 10 bytes"):
        read_text_file(path, "ten.yaml", limit=10)


def test_a_missing_file_and_an_unreadable_path_are_named(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.yaml", tmp_path / ("x" * 300 + ".yaml")):
        with pytest.raises(UserError, match=r"cannot read the fault plan .* \(--faults\)"):
            parse_faults(str(path))


# -- messages do not grow with the input -----------------------------------------------------------


@pytest.mark.parametrize(
    "kind, text",
    [
        ("plan", "x" * 500_000 + ": 0.1\n"),
        ("plan", "timeout: '" + "x" * 500_000 + "'\n"),
        ("plan", "\n".join(f"class{i}: 0.1" for i in range(10_000)) + "\n"),
        ("plan", "timeout: *" + "a" * 500_000 + "\n"),
        ("config", "x" * 500_000 + " = 1\n"),
        ("config", '[prices."' + "m" * 500_000 + '"]\ninput = "free"\n'),
        ("task", with_value("task", "1") + "x" * 500_000 + ": 1\n"),
        ("task", VALID["task"].replace("tags:\n- writes:1\n", "tags: [" + ",".join(["1"] * 10_000) + "]\n", 1)),
    ],
)
def test_a_message_quotes_only_a_few_dozen_characters_of_the_file(tmp_path: Path, kind: Kind, text: str) -> None:
    path = tmp_path / ("eval.toml" if kind == "config" else f"{kind}.yaml")
    path.write_text(text)
    load = {
        "task": lambda: load_task_files(tmp_path, RETAIL.task_model),
        "plan": lambda: parse_faults(str(path)),
        "config": lambda: load_config_file(path, run_command.params),
    }[kind]
    message, _ = refusal(load)
    one_paragraph(message)


def test_a_fault_spec_too_long_to_be_a_file_name_is_read_as_a_spec() -> None:
    with pytest.raises(UserError, match="unknown fault class"):
        parse_faults("x" * 300 + "=0.1")


def test_a_fault_plan_named_without_yaml_suffix_is_still_a_file(tmp_path: Path, fifo_guard) -> None:
    for case in ("FIFO", "folder"):
        path = tmp_path / case
        write_hostile(path, "plan", case)
        if case == "FIFO":
            fifo_guard(path)
        with pytest.raises(UserError, match=words(case, "plan")):
            parse_faults(str(path))


def test_check_names_the_task_and_the_tool_a_ground_truth_lacks() -> None:
    raw = RETAIL.tasks["retail-026"].model_dump(by_alias=True)
    raw["goals"][0]["forbidden"][0]["tool"] = "teleport_order"
    with pytest.raises(GroundTruthError, match=r"retail-026: goals\[0\]\.forbidden\[0\]\.tool 'teleport_order' is not a tool"):
        check_task(RETAIL, RETAIL.task_model.model_validate(raw))


# -- fuzz: any bytes either load or are refused as a UserError -------------------------------------

SYNTAX = "[]{}:,-&*!|>'\"#?<=.\n\t 019aex_+"
PIECES = [  # YAML's and TOML's less travelled constructs
    "!!binary /w==",
    "!!set {a}",
    "!!omap [a: 1]",
    "!!pairs [a: 1]",
    "!!timestamp ",
    "!!float ",
    "!!int ",
    "!!str ",
    "!!python/object:os.system ",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "<<: ",
    "? ",
    "- ",
    ": ",
    "&a ",
    "*a",
    "1:2:3",
    "0o17",
    "0x_1",
    "2001-02-30",
    "2001-01-01 01:01:01 +99:00",
    "1e400",
    ".nan",
    "inf",
    "nan",
    "true",
    "[a]",
    "{a: b}",
    '"\\ud800"',
    "'''",
    '"""',
    " = ",
    "[[x]]\n",
    "[x.y]\n",
    "x.y = 1\n",
    "1979-05-27T07:32:00Z",
    "\n  ",
]
FILE_TEXT = st.one_of(
    st.binary(max_size=300),
    st.text(SYNTAX, max_size=300).map(str.encode),
    st.lists(st.sampled_from(PIECES) | st.text(SYNTAX, max_size=5), max_size=40).map(lambda parts: "".join(parts).encode()),
)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def loads_or_refuses(load: Callable[[], object]) -> None:
    try:
        load()
    except UserError as exc:
        one_paragraph(str(exc))


@settings(max_examples=150, deadline=None)
@given(data=FILE_TEXT, kind=st.sampled_from(["task", "plan", "config"]), prefix=st.booleans())
def test_fuzzed_files_load_or_are_refused_as_user_errors(fuzz_dir: Path, data: bytes, kind: Kind, prefix: bool) -> None:
    """``prefix`` starts from a valid file, so the fuzz also reaches past the parser into validation."""
    folder = fuzz_dir / kind
    folder.mkdir(exist_ok=True)
    path = folder / ("eval.toml" if kind == "config" else "fuzzed.yaml")
    path.write_bytes((VALID[kind].encode() if prefix else b"") + data)
    loads_or_refuses(
        {
            "task": lambda: load_task_files(folder, RETAIL.task_model),
            "plan": lambda: parse_faults(str(path)),
            "config": lambda: load_config_file(path, run_command.params),
        }[kind]
    )


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="no /proc here")
@pytest.mark.parametrize("flag", ["--faults", "--config"])
def test_a_file_that_refuses_reading_such_as_proc_self_mem_is_a_user_error(tmp_path: Path, flag: str) -> None:
    """/proc/self/mem is a regular file to stat() whose first read fails (EIO): the user named it, so the
    refusal is theirs to fix, not a bug report."""
    result = CliRunner().invoke(main, ["run", flag, "/proc/self/mem", "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2, result.output
    text = one_paragraph(result.output)
    assert "cannot read" in text and "/proc/self/mem" in text and "bug" not in text
    assert not (tmp_path / "runs").exists()
