"""The docs stay true to the code: docs/cli.md has a section for every command of `passhat` naming every
flag it takes (and none for a command that no longer exists), the figures it quotes are those its quoted
commands print, the README stays a front door, and every relative link of the docs leads to a file (or
folder) and heading that exist."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from passhat.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = ROOT / "docs" / "cli.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 12_500  # bytes: the README is the front door, the reference lives in docs/
HEADING = re.compile(r"^#+ `passhat ([a-z][a-z0-9 -]*)`", flags=re.MULTILINE)


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    """Every command a user can run, by its full name ("audit verify"); a group that only gathers
    subcommands is not one, a group that runs on its own (`tasks`) is. An old name kept hidden for a release
    (`users` for `accounts`) is not documented apart."""
    for name, command in group.commands.items():
        if command.hidden:
            continue
        full = (*path, name)
        if not isinstance(command, click.Group) or command.invoke_without_command:
            yield " ".join(full), command
        if isinstance(command, click.Group):
            yield from commands(command, full)


def sections() -> dict[str, str]:
    """docs/cli.md's text under each `passhat <command>` heading, up to the next one."""
    text = CLI_DOC.read_text()
    found = list(HEADING.finditer(text))
    ends = [m.start() for m in found[1:]] + [len(text)]
    return {m[1].strip(): text[m.end() : end] for m, end in zip(found, ends, strict=True)}


def test_every_command_has_a_section_in_cli_md_that_names_each_of_its_flags():
    documented = sections()
    names = dict(commands())
    assert {"run", "report", "audit verify", "tasks", "tasks show", "schema report"} <= set(names)
    assert sorted(set(names) - set(documented)) == [], "commands without a section in docs/cli.md"
    assert sorted(set(documented) - set(names)) == [], "sections of docs/cli.md for commands that do not exist"
    for name, command in names.items():
        shown = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]  # an old name kept hidden
        flags = [o for p in shown for o in p.opts if o not in ("-h", "--help")]
        unnamed = [f for f in flags if not re.search(re.escape(f) + r"(?![\w-])", documented[name])]
        assert unnamed == [], f"`passhat {name}` flags missing from its section of docs/cli.md"


# docs/cli.md quotes small runs, whole commands and what they print, so a test can make them again in seconds.
QUOTED_EARLY_STOP = re.compile(
    r'`passhat run ([^`]*--early-stop)`\s+reaches "does not meet" after (\d+) of (\d+) trials \((\d+) saved\)'
)
QUOTED_HEADLINE = re.compile(r"`passhat run ([^`]*)`\s+prints `(pass\^1 [^`]*?): \.\.\.`")


def printed(command: str, out: Path) -> str:
    """What `passhat run` prints for a command quoted in docs/cli.md (in this process, into out)."""
    result = CliRunner().invoke(main, ["run", *shlex.split(command), "--workers", "1", "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_the_figures_cli_md_quotes_are_what_its_commands_print(tmp_path):
    text = CLI_DOC.read_text()
    (early,) = QUOTED_EARLY_STOP.findall(text)
    (headline,) = QUOTED_HEADLINE.findall(text)
    saved = re.search(r"early stop: (\d+) of (\d+) planned trials saved", printed(early[0], tmp_path))
    assert saved, "the quoted early-stop command printed no early stop line"
    ran, planned = int(saved[2]) - int(saved[1]), int(saved[2])
    assert (early[1], early[2], early[3]) == (str(ran), str(planned), saved[1]), "docs/cli.md's early-stop figures are stale"
    lines = printed(headline[0], tmp_path).splitlines()
    assert any(line.startswith(headline[1] + ": ") for line in lines), "docs/cli.md's quoted headline is stale"


def test_the_readme_is_a_front_door():
    assert len((ROOT / "README.md").read_bytes()) < README_LIMIT


def anchor(heading: str) -> str:
    """The anchor a heading gets on a rendered page: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return {anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def links(path: Path) -> Iterator[str]:
    """The relative targets of the page's links (not web addresses, not inside code)."""
    text = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL))
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target):
            yield target


def test_every_relative_link_leads_to_a_path_and_heading_that_exist():
    broken = []
    for page in DOCS:
        for target in links(page):
            file, _, fragment = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                broken.append(f"{page.name}: {target} (no such file or folder)")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_readme_cites_no_file_of_the_source_tree():
    text = (ROOT / "README.md").read_text()
    assert not re.search(r"\b(src|bench|tests)/", text), "the README is read where only the package is installed"


def test_the_examples_listen_on_ports_of_their_own_and_their_docs_start_them_there():
    """`passhat serve` keeps its port: an example left running beside it must not take it, so each example's server
    has a default port of its own, and every command the docs give to start it uses that port."""
    serve_port = next(p.default for p in main.commands["serve"].params if p.name == "port")
    defaults = {
        path.relative_to(ROOT).as_posix(): int(m[1])
        for path in sorted((ROOT / "examples").glob("*/*.py"))
        if (m := re.search(r'add_argument\("--port", type=int, default=(\d+)\)', path.read_text()))
    }
    assert len(defaults) >= 3 and len(set(defaults.values())) == len(defaults), defaults
    assert serve_port not in defaults.values()
    pages = [ROOT / "docs" / "agents.md", *sorted((ROOT / "examples").glob("*/*"))]
    started = [(m[1], int(m[2])) for page in pages for m in re.finditer(r"(examples/\w+/\w+\.py) --port (\d+)", page.read_text())]
    assert started and all(defaults[script] == port for script, port in started), started
    assert not any(str(serve_port) in page.read_text() for page in pages), "an example's doc names passhat serve's port"
