"""The layers hold and the map says so: import-linter's contracts in pyproject.toml pass with no import exempted,
they catch an upward import (even one under TYPE_CHECKING) and a package given no layer, and docs/architecture.md
draws the contracts' very layers and has a row for every package and top-level module of passhat."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import passhat

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
DOC = ROOT / "docs" / "architecture.md"
SOURCE = Path(passhat.__file__).parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
ROW = re.compile(r"^\| `([a-z_]+(?:/|\.py))` \|", flags=re.MULTILINE)
LABEL = re.compile(r"^\S.*?\s{2,}")  # a drawn line's layer label ("trial parts    "), before the layer itself


def contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]


def layers_of(lines: list[str]) -> list[list[str]]:
    """Each layer as the list of its parts, top to bottom."""
    return [re.split(r"\s*\|\s*", line.strip()) for line in lines]


def contract_layers() -> list[list[str]]:
    (layers,) = [c for c in contracts() if c["type"] == "layers"]
    return layers_of(layers["layers"])


def layers_section(doc: str) -> str:
    return doc.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]


def drawn_layers(doc: str) -> list[list[str]]:
    """The layers the doc draws: its section's first fenced block, one layer a line, a label before some."""
    drawing = layers_section(doc).split("```\n", 2)[1]
    return layers_of([LABEL.sub("", line) for line in drawing.splitlines() if line.strip()])


def parts() -> set[str]:
    """passhat's packages (``name/``) and top-level modules (``name.py``), as the doc's table names them."""
    packages = {f"{p.name}/" for p in SOURCE.iterdir() if (p / "__init__.py").is_file()}
    return packages | {p.name for p in SOURCE.glob("*.py") if p.name != "__init__.py"}


def undocumented(doc: str, names: set[str]) -> list[str]:
    """The names without a row of their own in the layers table (a mention in prose or the drawing is no row)."""
    return sorted(names - set(ROW.findall(layers_section(doc))))


def lint(source: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the passhat found under ``source`` (a src folder), with this checkout's contracts."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    command = [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(PYPROJECT)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def test_the_contracts_hold_on_the_code():
    result = lint(SOURCE.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_import_is_exempted_and_every_part_has_a_layer():
    assert all("ignore_imports" not in c for c in contracts())
    (layers,) = [c for c in contracts() if c["type"] == "layers"]
    assert layers["containers"] == ["passhat"] and layers["exhaustive"] is True
    placed = {part for layer in contract_layers() for part in layer}
    assert placed == {name.removesuffix("/").removesuffix(".py") for name in parts()}


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of passhat's Python source to break on purpose (a src folder holding ``passhat/``)."""
    source = tmp_path_factory.mktemp("src")
    shutil.copytree(SOURCE, source / "passhat", ignore=shutil.ignore_patterns("__pycache__", "template", "tasks", "static"))
    return source


def lint_with(copy: Path, module: str, text: str) -> subprocess.CompletedProcess[str]:
    """lint-imports on the copy with one module added (``domains/probe.py``; ``newcomer/__init__.py``: a package),
    removed again after."""
    path = copy / "passhat" / module
    added = path.parent if not path.parent.exists() else path
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    try:
        return lint(copy)
    finally:
        if added.is_dir():
            shutil.rmtree(added)
        else:
            added.unlink()


def test_an_upward_import_breaks_the_layers_even_under_type_checking(copy: Path):
    probe = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from passhat.run.trial import run_trial\n"
    result = lint_with(copy, "domains/probe.py", probe)
    assert result.returncode == 1
    assert "passhat.domains is not allowed to import passhat.run" in result.stdout
    assert "passhat.domains.probe -> passhat.run.trial" in result.stdout


def test_a_downward_import_added_anywhere_keeps_the_layers(copy: Path):
    result = lint_with(copy, "run/probe.py", "from passhat.domains.model import Task\nfrom passhat.trajectory import Event\n")
    assert result.returncode == 0, result.stdout


def test_a_package_given_no_layer_breaks_the_contract(copy: Path):
    result = lint_with(copy, "newcomer/__init__.py", '"""A package nobody placed."""\n')
    assert result.returncode == 1
    assert "not listed as layers" in result.stdout and "passhat.newcomer" in result.stdout


def test_the_doc_draws_the_layers_the_contracts_check():
    assert drawn_layers(DOC.read_text()) == contract_layers()


def test_the_doc_has_a_row_for_every_package_and_top_level_module():
    doc = DOC.read_text()
    assert undocumented(doc, parts()) == [], "packages or modules without a row in docs/architecture.md's layers table"
    assert sorted(set(ROW.findall(layers_section(doc))) - parts()) == [], "rows for parts that no longer exist"


def test_a_part_named_only_in_prose_or_the_drawing_has_no_row():
    doc = DOC.read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| `safe_files.py` |"))
    without = doc.replace(row + "\n", "")
    assert "safe_files" in layers_section(without)  # still drawn and named in the text around the table
    assert undocumented(without, parts()) == ["safe_files.py"]
    assert undocumented(doc, parts() | {"newcomer/"}) == ["newcomer/"]
