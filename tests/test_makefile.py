"""The README's two commands, as make would run them (dry runs in a copy of the Makefile, so nothing is installed):
`make run` installs the package alone, `make test` the dev extras, each set with its own stamp, so `make test`
after `make run` still installs them and `make run` after `make test` installs nothing; Chromium comes alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE, DEV = "pip install --quiet -e .\n", "pip install --quiet -e '.[dev]'"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A folder with the Makefile and pyproject.toml, and a venv's python (an empty file: make only looks at it)."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    return tmp_path


def planned(folder: Path, target: str) -> str:
    """The commands `make -n TARGET` would run."""
    return subprocess.run(["make", "-n", target], cwd=folder, capture_output=True, text=True, check=True).stdout


def installed(folder: Path, stamp: str) -> None:
    """What a finished install leaves: its stamp, newer than pyproject.toml."""
    later = time.time() + 5
    (folder / ".venv" / stamp).touch()
    os.utime(folder / ".venv" / stamp, (later, later))


def test_make_run_installs_the_package_alone_and_says_how_to_put_its_bin_on_path(clone: Path) -> None:
    run = planned(clone, "run")
    assert BASE in run and DEV not in run
    assert "export PATH=" in run and ".venv/bin" in run


def test_make_test_after_make_run_still_installs_the_dev_extras(clone: Path) -> None:
    installed(clone, ".installed-base")
    assert BASE not in planned(clone, "run")
    assert DEV in planned(clone, "test")


def test_make_run_after_make_test_installs_nothing(clone: Path) -> None:
    installed(clone, ".installed-dev")
    installed(clone, ".installed-base")
    assert "pip install" not in planned(clone, "run") and "pip install" not in planned(clone, "test")


def test_the_browser_target_installs_chromium_alone_and_upgrades_nothing(clone: Path) -> None:
    browser = planned(clone, "browser")
    assert "apt-get install" in browser and "--no-install-recommends" in browser and "--no-upgrade" in browser
    assert "apt-get upgrade" not in browser and "dist-upgrade" not in browser
