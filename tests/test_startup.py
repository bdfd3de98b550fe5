"""Instant start: the commands that only list or explain load none of the heavy libraries.

`passhat --help`, `passhat runs` and a command's `--help` are what a person types first and most often; numpy and
scipy (the statistics), the model SDKs, the MCP SDK and Inspect belong to the commands that use them. Each case runs
in a fresh interpreter, since this test process has long imported them all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "scipy", "openai", "anthropic", "mcp", "litellm", "inspect_ai")

PROBE = """
import json, sys
from passhat.cli import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def loaded_packages(*args: str) -> set[str]:
    """The top-level packages loaded by `passhat ARGS` in a fresh interpreter (its output discarded)."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_help_loads_no_heavy_library() -> None:
    assert loaded_packages("--help") & set(HEAVY) == set()


def test_listing_runs_loads_no_heavy_library(tmp_path: Path) -> None:
    assert loaded_packages("runs", "--out", str(tmp_path)) & set(HEAVY) == set()


def test_a_commands_help_loads_no_heavy_library() -> None:
    assert loaded_packages("report", "--help") & set(HEAVY) == set()
