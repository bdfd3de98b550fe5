"""`passhat new-domain NAME --path DIR` writes a small domain that works as written: every task of it is
proved by `passhat check`, it runs, and the perfect reference agent passes every trial of it. A name, a
folder or a target it cannot use is one paragraph and exit 2, and nothing is left behind: an existing
folder is never written into, and a failure halfway leaves no half-written domain. A --path that does not exist
yet (`--path domains` on a fresh clone) is created."""

from __future__ import annotations

import errno
import json
import os
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import passhat
from passhat.cli import main
from passhat.customers.personas import PERSONAS
from passhat.domains import load_domain
from passhat.scaffold import PLACEHOLDER, TEMPLATE

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def new_domain(parent: Path, name: str = "shop2") -> Path:
    result = invoke("new-domain", name, "--path", str(parent))
    assert result.exit_code == 0, result.output
    return parent / name


@pytest.fixture(scope="module")
def shop2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return new_domain(tmp_path_factory.mktemp("domains"))


def test_the_new_domain_has_three_tasks_done_answered_and_refused_with_one_write_among_few_tools(shop2: Path) -> None:
    domain = load_domain(str(shop2))
    assert domain.name == "shop2"
    assert [g.outcome for t in domain.tasks.values() for g in t.goals] == ["done", "answered", "refused"]
    assert all(task_id.startswith("shop2-") for task_id in domain.tasks)
    writes = [fn.__name__ for fn in domain.tools if fn.__passhat_tool__.write]
    assert 3 <= len(domain.tools) <= 4 and len(writes) == 1
    assert len(domain.rules) == 1
    [done] = [g for t in domain.tasks.values() for g in t.goals if g.outcome == "done"]
    assert [a.tool for a in done.actions] == writes


def test_new_domain_then_check_then_run_all_exit_0(tmp_path: Path) -> None:
    """The acceptance line, as written: `passhat new-domain shop2 --path DIR && passhat check --domain DIR/shop2
    && passhat run --domain DIR/shop2 --trials 2`."""
    folder = new_domain(tmp_path)
    checked = invoke("check", "--domain", str(folder))
    assert checked.exit_code == 0 and "3 of 3 tasks hold." in checked.output, checked.output
    ran = invoke(
        "run", "--domain", str(folder), "--trials", "2", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "r.json")
    )
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["stored_trials"] == 2 * len(PERSONAS) * 3 and report["metrics"]["infra_errors"] == 0


def test_the_perfect_reference_agent_passes_every_trial(shop2: Path, tmp_path: Path) -> None:
    result = invoke(
        "run", "--domain", str(shop2), "--trials", "2", "--agent", "reference:perfect",
        "--out", str(tmp_path), "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["stored_trials"] == 2 * len(PERSONAS) * 3
    assert report["metrics"]["avg_reward"] == 1.0 and report["metrics"]["pass_hat_k"]["2"] == 1.0


def test_every_file_says_what_to_change_and_the_name_is_filled_in(tmp_path: Path) -> None:
    folder = new_domain(tmp_path, "member-desk")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    assert {p.relative_to(folder).as_posix() for p in files} == {
        p.relative_to(TEMPLATE).as_posix() for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    }
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert PLACEHOLDER not in text, path
        if path.suffix == ".yaml":
            assert text.startswith("#") and "id: 'member-desk-" in text, path
        else:
            assert "To make this your domain" in text, path
    assert 'name="member-desk"' in (folder / "domain.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["Shop", "2shop", "my shop", "shop/2", "../shop", ".shop", "shöp", "", "a" * 65])
def test_a_name_that_is_not_a_lower_case_slug_is_refused(tmp_path: Path, name: str) -> None:
    result = invoke("new-domain", name, "--path", str(tmp_path))
    assert_refused(result, "NAME")
    assert list(tmp_path.iterdir()) == []


def test_the_name_of_a_built_in_domain_is_refused(tmp_path: Path) -> None:
    assert_refused(invoke("new-domain", "retail", "--path", str(tmp_path)), "built-in domain")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_never_written_into(tmp_path: Path) -> None:
    (tmp_path / "shop2").mkdir()
    (tmp_path / "shop2" / "notes.txt").write_text("mine")
    (tmp_path / "taken").write_text("a file")
    for name in ("shop2", "taken"):
        assert_refused(invoke("new-domain", name, "--path", str(tmp_path)), "already exists")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["notes.txt", "shop2", "taken"]
    assert (tmp_path / "shop2" / "notes.txt").read_text() == "mine"


def test_a_path_that_does_not_exist_yet_is_created(tmp_path: Path) -> None:
    folder = new_domain(tmp_path / "domains" / "team")
    assert load_domain(str(folder)).name == "shop2"


def test_a_path_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    for parent in (tmp_path / "file", tmp_path / "file" / "domains"):
        assert_refused(invoke("new-domain", "shop2", "--path", str(parent)), "is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_folder_it_cannot_write_in_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    if os.access(locked, os.W_OK):  # root writes anywhere: the system's refusal is simulated instead
        real_mkdir = os.mkdir

        def refuse_in_locked(path, *args, **kwargs):
            if Path(path).parent == locked:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_mkdir(path, *args, **kwargs)

        monkeypatch.setattr(os, "mkdir", refuse_in_locked)
    assert_refused(invoke("new-domain", "shop2", "--path", str(locked)), "--path")
    assert list(locked.iterdir()) == []


def test_a_failure_halfway_leaves_no_half_written_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = Path.write_text
    written: list[Path] = []

    def disk_full_at_the_fourth_file(self: Path, *args, **kwargs):
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        written.append(self)
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full_at_the_fourth_file)
    assert_refused(invoke("new-domain", "shop2", "--path", str(tmp_path / "domains")), "No space left on device")
    assert len(written) == 3
    assert list(tmp_path.iterdir()) == []  # nor the --path folder it created


def test_the_template_is_shipped_as_package_data() -> None:
    """Every template file matches a package-data glob of pyproject.toml, so an installed passhat can write it."""
    package = Path(passhat.__file__).parent
    globs = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]["passhat"]
    shipped = {p for pattern in globs for p in package.glob(pattern)}
    template = {p for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert template and template <= shipped


def assert_refused(result, named: str) -> None:
    """Exit 2 with one paragraph that starts with "error:" and names the problem, and no traceback."""
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error:") and named in result.output, result.output
    assert "\n" not in result.output.strip() and "Traceback" not in result.output
