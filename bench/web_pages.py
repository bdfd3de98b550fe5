"""Dashboard pages at scale: server time of the pages of `passhat serve` on a run of 100,000 trials.

Fills a results store of 100,000 synthetic trials with report_scale's filler (2,500 tasks × 5 personas × 8 trials;
kept under the system's temp folder and reused by later runs, `--fresh` fills it again), starts the web app in this
process, signs a viewer in through the real sign-in routes, and times each page from the moment the app is called
to its last byte (the app's own time: no network, no browser). The run page is timed cold (its report model built
from the store), cold from the disk cache (a restarted server) and warm (in memory); every other page warm, as the
median and the worst of REPEATS requests. Target: under 300 ms warm per page.
Run with `.venv/bin/python bench/web_pages.py [--fresh]`.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from report_scale import fill  # the filler of the report benchmark: same synthetic run

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from web_support import make_app, signed_in  # noqa: E402  (the test suite's sign-in through the real routes)

SIZE, REPEATS = 100_000, 5
RUN = f"run{SIZE}"
FOLDER = Path(tempfile.gettempdir()) / "passhat-bench-web"
PAGES = {  # warm pages: name -> address
    "runs list": "/runs",
    "run page": f"/runs/{RUN}",
    "scenario grid (page 1)": f"/runs/{RUN}/grid",
    "scenario grid (page 13)": f"/runs/{RUN}/grid?page=13",
    "trial list (page 1)": f"/runs/{RUN}/trials",
    "trial list (failed, page 200)": f"/runs/{RUN}/trials?outcome=failed&page=200",
    "trial list (one scenario)": f"/runs/{RUN}/trials?task=task-01234&persona=skeptical",
    "one trial": f"/runs/{RUN}/trials/task-01234/skeptical/3",
    "live view (json)": f"/runs/{RUN}/live.json",
}


class Timed:
    """The app, timing each request from its call to the end of its response."""

    def __init__(self, app: Any):
        self.app, self.last = app, 0.0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        start = time.perf_counter()
        await self.app(scope, receive, send)
        self.last = time.perf_counter() - start


def runs_folder(fresh: bool) -> Path:
    """The folder holding the big run, filled unless a finished one is there already."""
    if fresh:
        shutil.rmtree(FOLDER, ignore_errors=True)
    if not (FOLDER / RUN / "results.sqlite").is_file():
        FOLDER.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        fill(FOLDER / RUN, SIZE)
        print(f"filled {SIZE:,} trials in {time.perf_counter() - started:.0f} s", flush=True)
    shutil.rmtree(FOLDER / ".cache", ignore_errors=True)  # every run of the benchmark starts cold
    return FOLDER


class Browser:
    """A signed-in viewer of one app instance (one server process)."""

    def __init__(self, out: Path):
        from starlette.testclient import TestClient

        app = make_app(out)
        self.timed = Timed(app)
        self.client = TestClient(self.timed, cookies=signed_in(app, out, "viewer", "bench").cookies)

    def get(self, path: str) -> tuple[float, int]:
        response = self.client.get(path)
        assert response.status_code == 200, (path, response.status_code, response.text[:300])
        return self.timed.last * 1000, len(response.content)


def main(fresh: bool) -> None:
    out = runs_folder(fresh)
    print(f"{os.cpu_count()} cores; load average before: {Path('/proc/loadavg').read_text().split()[:3]}")
    first = Browser(out)
    rows = [("runs list, cold", *first.get(PAGES["runs list"]))]
    rows.append(("run page, cold (model built)", *first.get(PAGES["run page"])))
    rows.append(("run page, cold from the disk cache", *Browser(out).get(PAGES["run page"])))
    print(f"{'page':<38} {'server ms':>10} {'worst ms':>9} {'KiB':>8}")
    for name, ms, size in rows:
        print(f"{name:<38} {ms:>10.0f} {'':>9} {size / 1024:>8.0f}")
    for name, path in PAGES.items():
        first.get(path)  # the first request of a page may fill a cache: the warm figure is the next ones
        timings = [first.get(path) for _ in range(REPEATS)]
        ms = [t for t, _ in timings]
        print(f"{name + ', warm':<38} {statistics.median(ms):>10.1f} {max(ms):>9.1f} {timings[0][1] / 1024:>8.0f}", flush=True)
    print(f"load average after: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main("--fresh" in sys.argv[1:])
