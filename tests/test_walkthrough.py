"""docs/domains.md's walk-through "Adding a new kind of write" works as written: its code, applied where each
block says to a fresh starter domain, makes a domain whose every task `passhat check` proves, with the output
the page shows; and each failure the page shows is what `check` prints when the part it names is left out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from passhat.cli import main

DOC = Path(__file__).parents[1] / "docs" / "domains.md"
APPLY = re.compile(
    r"<!-- apply: (?P<file>[^|]+?) \| (?P<how>new|after|before|replace)(?: \| (?P<anchor>.+?))?(?: \| (?P<name>\w+))? -->"
)
CHECK = re.compile(r"<!-- check(?: without: (?P<without>.+?))? -->")
FENCED = re.compile(r"\n```[a-z]*\n(?P<body>.*?)\n```", re.S)


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Adding a new kind of write")
    return text[start : text.index("\n## ", start + 1)]


def blocks(marker: re.Pattern[str]) -> list[tuple[re.Match[str], str]]:
    """Each marker of the walk-through with the fenced block right after it."""
    text = section()
    found = []
    for m in marker.finditer(text):
        fence = FENCED.match(text, m.end())
        assert fence, f"no code block right after {m.group()}"
        found.append((m, fence.group("body")))
    return found


def apply(folder: Path, without: str | None = None) -> None:
    """Apply every block of the walk-through to ``folder`` but the one named ``without`` (or the lines equal to
    it, when it is quoted)."""
    line = json.loads(without) if without and without.startswith('"') else None
    for m, body in blocks(APPLY):
        if without and m.group("name") == without:
            continue
        if line is not None:
            body = "\n".join(ln for ln in body.splitlines() if ln != line)
        path = folder / m.group("file")
        if m.group("how") == "new":
            assert not path.exists(), path
            path.write_text(body + "\n", encoding="utf-8")
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        [at] = [i for i, ln in enumerate(lines) if ln.strip() == m.group("anchor").strip()]
        how = m.group("how")
        new = body.splitlines()
        lines = {
            "before": lines[:at] + new + lines[at:],
            "after": lines[: at + 1] + new + lines[at + 1 :],
            "replace": lines[:at] + new + lines[at + 1 :],
        }[how]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture()
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh starter domain named as the page names it, with the current folder its parent (as in the page)."""
    monkeypatch.chdir(tmp_path)
    made = CliRunner().invoke(main, ["new-domain", "studio", "--path", str(tmp_path)])
    assert made.exit_code == 0, made.output
    return tmp_path / "studio"


def test_the_walkthrough_applied_to_a_fresh_starter_domain_is_proved_as_the_page_shows(studio: Path) -> None:
    apply(studio)
    [(_, shown)] = [(m, b) for m, b in blocks(CHECK) if not m.group("without")]
    command, *printed = shown.splitlines()
    assert command == "$ passhat check --domain ./studio"
    result = CliRunner().invoke(main, ["check", "--domain", "./studio"])
    assert result.exit_code == 0, result.output
    assert flat(result.output) == flat("\n".join(printed))


@pytest.mark.parametrize("without", [m.group("without") for m, _ in blocks(CHECK) if m.group("without")])
def test_each_failure_the_page_shows_is_what_check_says_when_its_part_is_left_out(studio: Path, without: str) -> None:
    apply(studio, without)
    [shown] = [b for m, b in blocks(CHECK) if m.group("without") == without]
    result = CliRunner().invoke(main, ["check", "--domain", "./studio", "--tasks", "studio-005"])
    assert result.exit_code == 1, result.output
    assert flat(shown) in flat(result.output)


def test_the_walkthrough_shows_two_failures_and_touches_no_file_it_says_needs_no_change() -> None:
    """The page's promise: data.py and kit.py stay as they are; the failures shown are the issue's two."""
    touched = {m.group("file") for m, _ in blocks(APPLY)}
    assert touched == {"schema.sql", "tools.py", "model.py", "conversation.py", "tasks/change-phone.yaml"}
    assert len([m for m, _ in blocks(CHECK) if m.group("without")]) == 2
