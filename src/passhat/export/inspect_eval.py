"""A stored run as Inspect AI's native `.eval` log (a zip archive: the header, and a file per sample).

The archive's layout is Inspect's own and changes with it, so inspect-ai writes it: passhat writes its `.json` log
(``inspect_log``), Inspect reads it and writes it again as `.eval`. The two formats thus hold the same log. Unlike
the `.json` log this needs inspect-ai installed, and holds the run's samples in memory while Inspect converts them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from passhat.errors import UserError
from passhat.export.inspect_log import write_inspect_log
from passhat.run_config import RunConfig
from passhat.store import TrialRecord


def write_inspect_eval(path: Path, run_id: str, created: float, config: RunConfig, trials: Iterable[TrialRecord]) -> int:
    """Write the run's `.eval` log to ``path`` (replaced whole or not at all); returns the samples (trials) written."""
    try:
        from inspect_ai.log import read_eval_log, write_eval_log
    except ImportError:
        raise UserError(
            f"-o {path}: a .eval log is written by inspect-ai, which is not installed: pip install 'passhat[inspect]' "
            "(or name the file *.json: passhat writes that format itself)."
        ) from None
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".passhat-") as folder:
        staged, converted = Path(folder) / "log.json", Path(folder) / "log.eval"
        written = write_inspect_log(staged, run_id, created, config, trials)
        write_eval_log(read_eval_log(str(staged)), str(converted), format="eval")
        os.replace(converted, path)
    return written
