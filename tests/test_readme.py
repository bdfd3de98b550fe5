"""The README's commands work as a newcomer types them, in a fresh folder: every offline command it shows runs there
in the README's order and exits as its comment says (`<run-id>` is the run made before it, `<run-a> <run-b>` the two
runs made), starting with the `passhat run` that `make run` runs; every command that needs what a test does not have
(a model's key, the reader's own agent or service, a server left running) is named below with what it needs, so a
command added to the README is one or the other.

Two changes to what is typed, said here so no one mistakes them for the README's: the evaluations of the whole
default task set (`passhat run`, `--gate`, `--tasks-dir`) run over SMALL, since a full default run costs a minute of
CPU; and every run takes `--workers 1`, running its trials in this process."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SMALL = ["--tasks", "retail-016", "--personas", "baseline,emotional"]  # one task that fails some trials
PASSWORD = "a long enough pass phrase for ann"

# The README's commands a test in a fresh folder cannot run, with what each needs (and the tests that hold it).
NEEDS = {
    "passhat serve": "a server left running (test_web_*.py serve the app)",
    "passhat serve mcp --domain retail --transport http --port 8766": "a server left running (test_serve_mcp.py)",
    "passhat run --agent llm:openai/gpt-4.1 --trials 8": "an OpenAI key (test_llm_*.py use a fake server)",
    "passhat run --agent llm:openai/qwen2.5:7b --agent-base-url http://localhost:11434/v1": "a local model server",
    "passhat run --agent llm:anthropic/claude-sonnet-4-5": "an Anthropic key (test_llm_anthropic.py)",
    "passhat run --agent llm:litellm/gemini/gemini-2.0-flash": "a Gemini key (test_llm_litellm.py)",
    "passhat run --agent python:my_agents.support:create_agent": "the reader's own module (examples/python_agent)",
    "passhat run --agent http://127.0.0.1:8000/agent": "the reader's own service (examples/http_agent)",
    "passhat run --agent mcp+http://127.0.0.1:8000/agent": "the reader's own service (examples/framework_agent)",
}


def readme_commands() -> list[str]:
    """Every `passhat ...` line of the README's code blocks, without its comment, then each command its prose quotes
    whole (inline code starting with `passhat `), in the order they appear."""
    found, fenced = [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced and line.startswith("passhat "):
            found.append(shlex.join(shlex.split(line, comments=True)))
        elif not fenced:
            found += [shlex.join(shlex.split(code)) for code in re.findall(r"`(passhat [^`]*)`", line)]
    return found


def make_run_command() -> str:
    """The passhat command the Makefile's `run` target runs."""
    (command,) = re.findall(r"^run:.*\n\t\$\(BIN\)/(passhat[^\n]*)", (ROOT / "Makefile").read_text(), re.MULTILINE)
    return command


def typed(command: str, runs: list[str]) -> list[str]:
    """The arguments of a README command as this test types them: its placeholders filled in, and a run of the
    default task set narrowed to SMALL (a run of --tasks-dir to its own task) in this process."""
    words = shlex.split(command)[1:]
    filled = {"<run-id>": runs[:1], "<run-a>": runs[:1], "<run-b>": runs[-1:]}
    words = [filled[w][0] if w in filled else w for w in words]
    if words[0] == "run" and "--domain" not in words:
        words += ["--tasks", "my-001", "--personas", "baseline"] if "--tasks-dir" in words else SMALL
    return words + ["--workers", "1"] if words[0] == "run" else words


def my_tasks(folder: Path) -> None:
    """The reader's own task folder for `--tasks-dir my_tasks`: one retail task under an id of its own."""
    (folder / "my_tasks").mkdir()
    text = (ROOT / "src/passhat/domains/retail/tasks/retail-001.yaml").read_text(encoding="utf-8")
    (folder / "my_tasks" / "my-001.yaml").write_text(text.replace("id: retail-001", "id: my-001", 1), encoding="utf-8")


def new_run(folder: Path, known: list[str]) -> list[str]:
    """The runs stored in folder/runs, oldest first, with the one just made added to known."""
    made = sorted(p.name for p in (folder / "runs").iterdir() if p.name not in known) if (folder / "runs").is_dir() else []
    return known + made


@dataclass(frozen=True)
class Newcomer:
    """The fresh folder the README's commands ran in, and each command's exit status and output."""

    folder: Path
    printed: dict[str, tuple[int, str]]


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> Newcomer:
    """Each runnable README command, run in order in one fresh folder (a password typed twice where one is asked)."""
    folder = tmp_path_factory.mktemp("newcomer")
    my_tasks(folder)
    printed = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        runs: list[str] = []
        for command in [make_run_command(), *readme_commands()]:
            if command in NEEDS:
                continue
            given = f"{PASSWORD}\n{PASSWORD}\n" if command.startswith("passhat accounts add") else None
            result = CliRunner().invoke(main, typed(command, runs), input=given)
            printed[command] = (result.exit_code, result.output)
            runs = new_run(folder, runs)
    return Newcomer(folder, printed)


def report(output: str) -> list[str]:
    """The report `passhat run` prints: its lines after "run ID: N trials to run → ..." and a blank line."""
    started, blank, *lines = output.splitlines()
    assert "trials to run" in started and blank == "", output
    return lines


def test_every_readme_command_is_run_here_or_named_with_what_it_needs():
    commands = readme_commands()
    assert {
        "passhat runs",
        "passhat new-domain shop2 --path domains",
        "passhat export '<run-id>' --format inspect -o logs/",
    } <= set(commands)
    assert sorted(set(NEEDS) - set(commands)) == [], "NEEDS names commands the README no longer shows"


def test_each_offline_readme_command_runs_in_a_fresh_folder(newcomer):
    failed = {c: out for c, (code, out) in newcomer.printed.items() if code != 0 and "--gate" not in c}
    assert failed == {}
    gated = next(command for command in newcomer.printed if "--gate" in command)
    code, out = newcomer.printed[gated]
    assert code in (0, 1) and report(out)[0].startswith("gate pass^8 >= 0.9: ")
    assert (code == 1) == ("DOES NOT MEET THE BAR" in out), "exit 1 unless pass^8 reaches 0.9"


def test_the_files_the_readme_names_are_written_where_it_says(newcomer):
    files = {str(p.relative_to(newcomer.folder)) for p in newcomer.folder.rglob("*") if p.is_file()}
    assert {"report.html", "report.json", "domains/shop2/schema.sql"} <= files
    assert any(re.fullmatch(r"logs/[^/]+\.json", f) for f in files), "export -o logs/ writes a log in logs/"


def test_the_default_run_opens_and_ends_as_the_readmes_sample_does(newcomer):
    """The sample "What the default run prints" quotes: a verdict against the default bar first, the headline
    and the `next:` line last."""
    sample = re.search(r"## What the default run prints\n.*?```\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    quoted = sample.group(1).splitlines()
    lines = report(newcomer.printed[make_run_command()][1])
    verdict = re.compile(r"default bar pass\^8 >= 0\.9: (DOES NOT )?MEET(S)? THE BAR — pass\^8 = ")
    assert verdict.match(quoted[0]) and verdict.match(lines[0]), (quoted[0], lines[0])
    assert quoted[-2].startswith("next: ") and lines[-1].startswith("next: ")
    assert quoted[-3].startswith("pass^1 ") and lines[-2].startswith("pass^1 ")
