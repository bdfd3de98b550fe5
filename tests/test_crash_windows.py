"""Kill passhat with SIGKILL at each moment a kill can hurt — the store half-created, a trial stored but
its audit entries not yet mirrored, an audit append half-written, a report half-written — then go on:
the run ends with the same trials as one never interrupted, its audit trail verifies intact, and no
report is left truncated.

The kills are exact, not timed: ``PASSHAT_TEST_CRASH_AT=<window>:<n>`` (see ``passhat.crashpoints``)
makes the process kill itself the n-th time it reaches the window.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from passhat.crashpoints import CRASH_VARIABLE
from passhat.file_writes import temporary_prefix, write_atomically
from passhat.guard.audit import AUDIT_FILE
from passhat.store import STORE_FILE, ResultStore

PASSHAT = str(Path(sys.executable).parent / "passhat")
RUN = ["--tasks", "retail-001,retail-003", "--personas", "baseline", "--trials", "3", "--guard", "all", "--seed", "11",
       "--concurrency", "2"]  # fmt: skip
KILLED = -signal.SIGKILL


@pytest.fixture(scope="module")
def config_home(tmp_path_factory) -> Path:
    """Where every process of this module finds (and the first one makes) the audit key."""
    return tmp_path_factory.mktemp("config")


def passhat(config_home: Path, out: Path, *args: str, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (CRASH_VARIABLE, "PASSHAT_AUDIT_KEY")}
    env["XDG_CONFIG_HOME"] = str(config_home)
    if crash:
        env[CRASH_VARIABLE] = crash
    return subprocess.run([PASSHAT, *args, "--out", str(out)], env=env, capture_output=True, text=True, timeout=300)


def outcomes(folder: Path) -> dict[tuple[str, str, int], Any]:
    with ResultStore.open(folder) as store:
        return {t.key: (t.reward, t.signature, t.events) for t in store.trials()}


def stored_count(folder: Path) -> int:
    with ResultStore.open(folder) as store:
        return len(store.trials())


@pytest.fixture(scope="module")
def whole_run(config_home, tmp_path_factory) -> Path:
    """The run never interrupted."""
    out = tmp_path_factory.mktemp("whole")
    result = passhat(config_home, out, "run", *RUN, "--run-id", "r")
    assert result.returncode == 0, result.stderr
    return out / "r"


@pytest.fixture(scope="module")
def uninterrupted(whole_run) -> dict[tuple[str, str, int], Any]:
    whole = outcomes(whole_run)
    assert len(whole) == 6
    return whole


def assert_intact(config_home: Path, out: Path, run_id: str) -> str:
    verified = passhat(config_home, out, "audit", "verify", run_id)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "intact" in verified.stdout and "note:" not in verified.stdout
    return verified.stdout


@pytest.mark.parametrize(
    "kills",
    [["trial_stored:1"], ["trial_stored:4"], ["audit_append:1"], ["audit_append:5"], ["audit_append:3", "audit_append:1"]],
)
def test_a_run_killed_in_a_window_resumes_to_the_uninterrupted_result(config_home, uninterrupted, tmp_path, kills) -> None:
    first = passhat(config_home, tmp_path, "run", *RUN, "--run-id", "r", crash=kills[0])
    assert first.returncode == KILLED, first.stderr
    for window in kills[1:]:  # killed again while resuming
        assert passhat(config_home, tmp_path, "run", "--resume", "r", crash=window).returncode == KILLED
    assert 0 < stored_count(tmp_path / "r") < 6
    killed = passhat(config_home, tmp_path, "audit", "verify", "r")
    assert killed.returncode == 0 and "note:" in killed.stdout, killed.stdout  # what a kill leaves is no tampering
    resumed = passhat(config_home, tmp_path, "run", "--resume", "r")
    assert resumed.returncode == 0, resumed.stderr
    assert outcomes(tmp_path / "r") == uninterrupted
    assert_intact(config_home, tmp_path, "r")
    repairs = [
        e for e in map(json.loads, (tmp_path / "r" / AUDIT_FILE).read_text().splitlines()) if e.get("decision") == "repaired"
    ]
    assert len(repairs) == sum(k.startswith("audit_append") for k in kills)  # a torn line is cut and the cut recorded


def test_a_run_killed_as_its_store_is_created_leaves_an_id_a_new_run_reuses(config_home, uninterrupted, tmp_path) -> None:
    killed = passhat(config_home, tmp_path, "run", *RUN, "--run-id", "r", crash="store_create:1")
    assert killed.returncode == KILLED and (tmp_path / "r" / STORE_FILE).stat().st_size == 0
    resumed = passhat(config_home, tmp_path, "run", "--resume", "r")
    assert resumed.returncode == 2 and "reuses the id" in resumed.stderr
    again = passhat(config_home, tmp_path, "run", *RUN, "--run-id", "r")
    assert again.returncode == 0, again.stderr
    assert f"note: run id 'r': its store {tmp_path / 'r' / STORE_FILE} held nothing" in " ".join(again.stderr.split())
    assert outcomes(tmp_path / "r") == uninterrupted
    assert_intact(config_home, tmp_path, "r")


def test_a_run_killed_writing_its_json_report_keeps_the_previous_one_and_resumes(config_home, uninterrupted, tmp_path) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"previous": true}\n')
    killed = passhat(config_home, tmp_path, "run", *RUN, "--run-id", "r", "--json", str(report), crash="report_write:1")
    assert killed.returncode == KILLED
    assert report.read_text() == '{"previous": true}\n'  # not empty, not half of the new one
    assert stored_count(tmp_path / "r") == 6
    resumed = passhat(config_home, tmp_path, "run", "--resume", "r", "--json", str(report))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(report.read_text())["run_id"] == "r"
    assert outcomes(tmp_path / "r") == uninterrupted
    assert_intact(config_home, tmp_path, "r")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_report_killed_mid_write_leaves_every_file_whole(config_home, whole_run, tmp_path, n) -> None:
    shutil.copytree(whole_run, tmp_path / "r")
    files = {"--json": tmp_path / "r.json", "--html": tmp_path / "r.html", "--junit": tmp_path / "r.xml"}
    for path in files.values():
        path.write_text("the previous report\n")
    flags = [part for flag, path in files.items() for part in (flag, str(path))]
    killed = passhat(config_home, tmp_path, "report", "r", *flags, crash=f"report_write:{n}")
    assert killed.returncode == KILLED
    written = [path for path in files.values() if path.read_text() != "the previous report\n"]
    assert len(written) == n - 1  # those before the kill are whole and new, the rest as they were
    assert list(tmp_path.glob(".passhat-*.tmp"))  # the killed write's temporary file
    assert passhat(config_home, tmp_path, "report", "r", *flags).returncode == 0
    assert not list(tmp_path.glob(".passhat-*.tmp"))  # removed by the next write of the same report
    assert json.loads(files["--json"].read_text())["run_id"] == "r"
    assert files["--html"].read_text().rstrip().endswith("</html>")
    assert ET.parse(files["--junit"]).getroot().tag == "testsuite"


def test_an_atomic_write_that_fails_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch) -> None:
    target = tmp_path / "report.json"
    target.write_text("previous")
    os.chmod(target, 0o640)

    def refused(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, "new")
    assert target.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["report.json"]
    monkeypatch.undo()
    write_atomically(target, "new")
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) == "0o640"  # its permissions kept


def test_a_write_removes_what_killed_writes_of_the_same_file_left_but_not_a_live_writers(tmp_path) -> None:
    target, other = tmp_path / "report.json", tmp_path / "other.json"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f"{temporary_prefix(target)}{dead.stdout.strip()}-abc.tmp"  # a writer that is gone
    live = tmp_path / f"{temporary_prefix(target)}{os.getpid()}-def.tmp"  # a writer still at work
    elsewhere = tmp_path / f"{temporary_prefix(other)}{dead.stdout.strip()}-ghi.tmp"  # another file's
    for path in (left, live, elsewhere):
        path.write_text("half a report")
    write_atomically(target, "new")
    assert not left.exists() and live.exists() and elsewhere.exists()
