"""Domains from outside the package: a folder (``--domain DIR``), an installed package (the entry-point group
``passhat.domains``) and extra task files (``--tasks-dir``); and every way such a domain can be broken refused
before any trial, in one paragraph naming the file, with exit status 2 and no traceback.

The folders are built here, in code. Their ``domain.py`` derives from retail (its schema, policy and a few of its
task files copied in), so these tests speak only of loading and refusing, not of any domain's contract.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import passhat
import passhat.domains.retail
from passhat.cli import main
from passhat.domains import domain_names, load_domain

RETAIL_DIR = Path(passhat.domains.retail.__file__).parent
ONE_RUN = ["--trials", "1", "--personas", "baseline"]

DOMAIN_PY = """\
import dataclasses
from pathlib import Path

from passhat.domains import load_domain, load_task_files

from .rules import RULES
from .tools import TOOLS

HERE = Path(__file__).parent
RETAIL = load_domain("retail")
DOMAIN = dataclasses.replace(
    RETAIL,
    name={name!r},
    schema_sql=(HERE / "schema.sql").read_text(encoding="utf-8"),
    policy=(HERE / "policy.md").read_text(encoding="utf-8"),
    tools=(*RETAIL.tools, *TOOLS),
    rules=(*RETAIL.rules, *RULES),
    load_tasks=lambda: load_task_files(HERE / "tasks", RETAIL.task_model),
)
"""

TOOLS_PY = '''\
import sqlite3

from passhat.domains.toolkit import tool


@tool()
def opening_hours(db: sqlite3.Connection) -> str:
    """When the shop's support line is open."""
    return "9:00 to 17:00"


TOOLS = (opening_hours,)
'''

EXPLODING_RULE_PY = """\
from passhat.domains.model import Rule


def explode(db, call, history):
    return call.args["no_such_argument"]


RULES = (Rule(id="explodes", description="raises on every cancellation", tools=("cancel_order",), check=explode),)
"""

BROKEN_GENERATOR_PY = """\
def generate(db, seed):
    raise RuntimeError("the warehouse feed is offline")
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def domain_folder(
    root: Path, name: str = "shop", tasks: tuple[str, ...] = ("retail-001",), tail: str = "", **files: str | None
) -> Path:
    """A working domain folder ``root/name`` derived from retail. ``tail`` is code added to its domain.py;
    ``files`` replace its files by name, the dot before the extension written as ``_`` (``tools_py``,
    ``tasks/retail-001_yaml``), and None deletes one."""
    folder = root / name
    (folder / "tasks").mkdir(parents=True)
    for source in ("schema.sql", "policy.md"):
        shutil.copy(RETAIL_DIR / source, folder / source)
    for task in tasks:
        shutil.copy(RETAIL_DIR / "tasks" / f"{task}.yaml", folder / "tasks")
    contents = {"domain.py": DOMAIN_PY.format(name=name) + tail, "tools.py": TOOLS_PY, "rules.py": "RULES = ()\n"}
    for key, text in files.items():
        stem, _, extension = key.rpartition("_")
        contents[f"{stem}.{extension}"] = text
    for file, text in contents.items():
        if text is None:
            (folder / file).unlink(missing_ok=True)
        else:
            (folder / file).write_text(text, encoding="utf-8")
    return folder


def edited_task(task_id: str, edit) -> str:
    """A retail task file's text after ``edit`` changed its parsed YAML."""
    data = yaml.safe_load((RETAIL_DIR / "tasks" / f"{task_id}.yaml").read_text(encoding="utf-8"))
    edit(data)
    return yaml.safe_dump(data, sort_keys=False)


def a_task_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def stored_config(out: Path, run_id: str) -> dict:
    path = out / "report.json"
    assert invoke("report", run_id, "--out", str(out), "--json", str(path)).exit_code == 0
    return json.loads(path.read_text())["config"]


# -- a folder domain -----------------------------------------------------------------------------------------------


def test_check_proves_a_folder_domains_tasks(tmp_path):
    folder = domain_folder(tmp_path, tasks=("retail-001", "retail-002"))
    result = invoke("check", "--domain", str(folder))
    assert result.exit_code == 0, result.output
    assert "2 of 2 tasks hold." in result.output


def test_a_folder_domain_uses_its_own_modules_by_relative_import(tmp_path):
    """Two folders each with a tools.py: each domain gets its own (the folders are private packages)."""
    other_tool = TOOLS_PY.replace("opening_hours", "store_address").replace("When the shop's support line is open", "Where")
    shop = load_domain(str(domain_folder(tmp_path / "a")))
    other = load_domain(str(domain_folder(tmp_path / "b", name="other", tools_py=other_tool)))
    assert shop.tools[-1].__name__ == "opening_hours" and other.tools[-1].__name__ == "store_address"
    assert load_domain(str(tmp_path / "a" / "shop")) is shop  # once per process per path


def test_run_on_a_folder_then_report_from_elsewhere_and_after_the_folder_is_gone(tmp_path, monkeypatch):
    folder = domain_folder(tmp_path / "work")
    out = tmp_path / "runs"
    monkeypatch.chdir(tmp_path / "work")
    result = invoke("run", "--domain", "./shop", *ONE_RUN, "--tasks", "retail-001", "--out", str(out), "--run-id", "r1")
    assert result.exit_code == 0, result.output
    assert "pass^k" in result.output
    monkeypatch.chdir(tmp_path)
    assert stored_config(out, "r1")["domain"] == str(folder.resolve())  # the same domain from any folder
    shutil.rmtree(folder)
    source = Path(passhat.__file__).parents[1]  # a fresh process: this one keeps the domain it loaded
    gone = subprocess.run(
        [sys.executable, "-m", "passhat.cli", "report", "r1", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(source)},
        check=False,
    )
    assert gone.returncode == 0, gone.stderr
    assert "pass^k" in gone.stdout
    assert "leaves out the run's task tags" in gone.stderr and "Traceback" not in gone.stderr


# -- --tasks-dir ----------------------------------------------------------------------------------------------------


def _renamed(new_id: str):
    def edit(data: dict) -> None:
        data["id"] = new_id

    return edit


def test_tasks_dir_adds_a_teams_task_to_retail_for_every_command(tmp_path):
    extra = a_task_file(tmp_path / "ours", "refund.yaml", edited_task("retail-001", _renamed("team-001")))
    listed = invoke("tasks", "--tasks-dir", str(extra))
    assert listed.exit_code == 0 and "team-001" in listed.output and "retail-047" in listed.output
    assert "team-001" in invoke("tasks", "--tasks-dir", str(extra), "show", "team-001").output
    checked = invoke("check", "--tasks-dir", str(extra), "--tasks", "team-001")
    assert checked.exit_code == 0 and "1 of 1 tasks hold." in checked.output
    out = tmp_path / "runs"
    ran = invoke("run", "--tasks-dir", str(extra), *ONE_RUN, "--tasks", "team-001", "--out", str(out), "--run-id", "t1")
    assert ran.exit_code == 0, ran.output
    assert stored_config(out, "t1")["tasks_dir"] == str(extra.resolve())
    resumed = invoke("run", "--resume", "t1", "--out", str(out))
    assert resumed.exit_code == 0, resumed.output


def test_a_tasks_dir_id_that_is_a_domains_own_names_both_files(tmp_path):
    extra = a_task_file(tmp_path / "ours", "mine.yaml", edited_task("retail-001", lambda data: None))
    result = invoke("tasks", "--tasks-dir", str(extra))
    assert result.exit_code == 2 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert str(extra / "mine.yaml") in text and str(RETAIL_DIR / "tasks" / "retail-001.yaml") in text


def test_a_broken_task_in_a_tasks_dir_is_refused_before_any_trial(tmp_path):
    def nowhere(data: dict) -> None:
        data["id"] = "team-002"
        data["goals"][0]["actions"][0]["args"]["order_id"] = "#R0000001"

    extra = a_task_file(tmp_path / "ours", "lost.yaml", edited_task("retail-001", nowhere))
    out = tmp_path / "runs"
    result = invoke("run", "--tasks-dir", str(extra), *ONE_RUN, "--out", str(out))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(extra / "lost.yaml") in " ".join(result.output.split()) and not out.exists()


def test_a_tasks_dir_task_whose_other_acceptable_outcome_does_not_replay_is_refused_naming_it(tmp_path):
    def other_outcome_nowhere(data: dict) -> None:
        data["id"] = "team-003"
        lost = {**data["goals"][0]["actions"][0], "args": {**data["goals"][0]["actions"][0]["args"], "order_id": "#R0000001"}}
        data["outcomes"] = [{"label": "lost-order", "actions": [lost]}]

    extra = a_task_file(tmp_path / "ours", "two.yaml", edited_task("retail-001", other_outcome_nowhere))
    out = tmp_path / "runs"
    result = invoke("run", "--tasks-dir", str(extra), *ONE_RUN, "--out", str(out))
    assert result.exit_code == 2 and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert str(extra / "two.yaml") in text and "acceptable outcome 'lost-order'" in text and not out.exists()


# -- an installed domain --------------------------------------------------------------------------------------------


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Install a package into a folder on sys.path the way pip would leave it: the package and its dist-info,
    whose entry_points.txt registers the given ``name = target`` lines in the group passhat.domains."""
    site = tmp_path / "site"

    def install(package: str, *entry_points: str) -> None:
        domain_folder(site, name=package)
        info = site / f"{package}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text("[passhat.domains]\n" + "".join(f"{e}\n" for e in entry_points))
        monkeypatch.syspath_prepend(str(site))

    yield install
    for module in [m for m in sys.modules if m.startswith("teamshop")]:
        del sys.modules[module]


@pytest.mark.parametrize("target", ["domain", "domain:DOMAIN"])  # a module defining DOMAIN, or the Domain itself
def test_an_installed_package_registers_a_domain_by_entry_point(installed, target):
    package = "teamshop_" + target.replace(":", "_").lower()
    installed(package, f"{package} = {package}.{target}", f"retail = {package}.{target}")
    assert package in domain_names() and domain_names().count("retail") == 1
    assert load_domain("retail").name == "retail"  # a built-in wins over an installed domain of its name
    assert load_domain(package).name == package
    result = invoke("check", "--domain", package)
    assert result.exit_code == 0 and "1 of 1 tasks hold." in result.output
    assert package in invoke("domains").output


def test_an_installed_domain_that_cannot_be_imported_names_its_entry_point(installed):
    installed("teamshop_broken", "teamshop_broken = teamshop_broken.nowhere")
    result = invoke("tasks", "--domain", "teamshop_broken")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "teamshop_broken = teamshop_broken.nowhere" in result.output and "ModuleNotFoundError" in result.output


# -- a broken folder: refused before any trial, naming the file ----------------------------------------------------


def _unknown_tool(data: dict) -> None:
    data["goals"][0]["actions"][0]["tool"] = "cancel_everything"


def _missing_order(data: dict) -> None:
    data["goals"][0]["actions"][0]["args"]["order_id"] = "#R0000001"


# (what is broken: domain_folder's arguments, the file the message names, what it says is wrong)
BROKEN = {
    "no domain.py": (dict(domain_py=None), "", "has no domain.py"),
    "no DOMAIN": (dict(domain_py="X = 1\n"), "domain.py", "defines no DOMAIN"),
    "DOMAIN is no Domain": (dict(domain_py="DOMAIN = 'shop'\n"), "domain.py", "is a str, not a passhat.domains.model.Domain"),
    "a file it reads is missing": (dict(policy_md=None), "domain.py, line", "FileNotFoundError"),
    "a syntax error": (dict(tools_py="def opening_hours(:\n"), "tools.py, line 1", "SyntaxError"),
    "an import that fails": (dict(rules_py="from passhat import no_such_module\n"), "rules.py, line 1", "ImportError"),
    "an exception at import": (dict(tools_py="TOOLS = (1 / 0,)\n"), "tools.py, line 1", "ZeroDivisionError"),
    "a tool without a docstring": (
        dict(tools_py=TOOLS_PY.replace('    """When the shop\'s support line is open."""\n', "")),
        "tools.py, line",
        "tool opening_hours",
    ),
    "a task naming an unknown tool": (
        {"tasks/retail-001_yaml": edited_task("retail-001", _unknown_tool)},
        "tasks/retail-001.yaml",
        "'cancel_everything' is not a tool",
    ),
    "a task naming a row that does not exist": (
        {"tasks/retail-001_yaml": edited_task("retail-001", _missing_order)},
        "tasks/retail-001.yaml",
        "#R0000001",
    ),
    "a rule that raises": (dict(rules_py=EXPLODING_RULE_PY), "rules.py, line 5", "rule 'explodes' raised KeyError"),
    "a schema SQLite refuses": (dict(schema_sql="CREATE TABLE (\n"), "schema.sql", "SQLite refuses"),
    "a generator that raises": (
        dict(
            data_py=BROKEN_GENERATOR_PY,
            tail="from .data import generate\nDOMAIN = dataclasses.replace(DOMAIN, generate=generate)\n",
        ),
        "data.py, line 2",
        "the warehouse feed is offline",
    ),
    "the name of a built-in domain": (dict(name="retail"), "", "the name of a built-in domain"),
}


@pytest.mark.parametrize("way", list(BROKEN))
def test_a_broken_domain_folder_is_one_paragraph_naming_the_file_before_any_trial(tmp_path, way):
    arguments, named, wrong = BROKEN[way]
    # a name of its own: the backend built for a domain is kept per process by name
    folder = domain_folder(tmp_path, **{"name": f"shop{list(BROKEN).index(way)}", **arguments})
    out = tmp_path / "runs"
    result = invoke("run", "--domain", str(folder), *ONE_RUN, "--out", str(out))
    text = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert text.startswith("error:") and "Traceback" not in text
    assert (f"{folder}/{named}" if named else str(folder)) in text, text
    assert wrong in text, text
    assert not out.exists()  # refused before the run was made, let alone a trial


# -- what a domain folder may hold ------------------------------------------------------------------------------


def test_a_fifo_in_a_domain_folder_is_refused_naming_it_instead_of_waiting_forever(tmp_path):
    folder = domain_folder(tmp_path, name="piped", policy_md=None)
    os.mkfifo(folder / "policy.md")  # domain.py reads it with open(): without the check, a wait with no end
    result = subprocess.run(
        [sys.executable, "-m", "passhat.cli", "tasks", "--domain", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert f"{folder / 'policy.md'} is not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_socket_or_a_dangling_symlink_in_a_domain_folder_is_refused_naming_it(tmp_path):
    import socket

    sockets = domain_folder(tmp_path, name="socketed")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sockets / "tasks" / "feed.yaml"))
    dangling = domain_folder(tmp_path, name="dangling", schema_sql=None)
    (dangling / "schema.sql").symlink_to(tmp_path / "moved-away.sql")
    try:
        for folder, named, why in (
            (sockets, "tasks/feed.yaml", "is not a regular file"),
            (dangling, "schema.sql", "is a symlink to nothing"),
        ):
            result = invoke("tasks", "--domain", str(folder))
            assert result.exit_code == 2, result.output
            assert f"{folder}/{named} {why}" in " ".join(result.output.split())
    finally:
        server.close()


def test_a_symlink_loop_as_the_domain_is_a_user_error(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    result = invoke("tasks", "--domain", str(tmp_path / "a"))
    assert result.exit_code == 2, result.output
    assert "is no usable path" in result.output and "bug" not in result.output


def test_a_domain_folder_whose_files_are_symlinks_to_real_files_loads(tmp_path):
    """A team may keep its policy in one place and link it in: only what cannot be read as a file is refused."""
    folder = domain_folder(tmp_path, name="linked", policy_md=None)
    (folder / "policy.md").symlink_to(RETAIL_DIR / "policy.md")
    result = invoke("tasks", "--domain", str(folder))
    assert result.exit_code == 0, result.output
    assert "retail-001" in result.output
