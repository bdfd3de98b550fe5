"""The HTML report in a real browser: headless Chromium opens the file offline, the charts render,
nothing is logged as an error, no request leaves the file, and the screenshot is not blank.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: commands on fd 3,
replies and events on fd 4, each a JSON message ended by a NUL byte), so no port and no extra
package is needed.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_gate_cli import invoke, synthetic_run

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
    "--window-size=1200,1600",
]


class Browser:
    """A Chromium process and one page, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        child_in, child_out = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_r, from_w))  # clear of 3 and 4

        def wire() -> None:  # in the child, before exec: the pipe ends become fds 3 and 4
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}"],
            preexec_fn=wire,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fd in (to_r, from_w, child_in, child_out):
            os.close(fd)
        self.out, self.inp = os.fdopen(to_w, "wb"), os.fdopen(from_r, "rb")
        self.events: list[dict[str, Any]] = []
        self.next_id, self.buffer = 0, b""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            chunk = os.read(self.inp.fileno(), 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self.out.write(json.dumps(message).encode() + b"\0")
        self.out.flush()
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(method)
            self.events.append(self._read())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def png_pixels_vary(png: bytes) -> int:
    """How many distinct byte values the decompressed image data holds (a blank page has one or two)."""
    pos, data = 8, b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        if kind == b"IDAT":
            data += png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(data)))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs Debian's chromium package)")
def test_html_report_renders_in_chromium_offline(tmp_path):
    synthetic_run(
        tmp_path, "r", {(f"retail-00{i}", p): r for i, r in enumerate((1.0, 0.9, 0.5, 0.0), 1) for p in ("baseline", "impatient")}
    )
    html = tmp_path / "report.html"
    assert invoke("report", "r", "--out", str(tmp_path), "--html", str(html)).exit_code == 0
    browser = Browser(tmp_path / "profile")
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable", session=True)
        browser.call(  # a laptop's screen, where charts drawn at 640 px once filled 45% of the width
            "Emulation.setDeviceMetricsOverride", session=True, width=1366, height=900, deviceScaleFactor=1, mobile=False
        )
        browser.call("Page.navigate", session=True, url=html.as_uri())
        browser.wait_for("Page.loadEventFired")
        legible = browser.call(
            "Runtime.evaluate",
            session=True,
            returnByValue=True,
            expression="""
            ({chart: document.querySelector('svg.chart').getBoundingClientRect().width,
              label: document.querySelector('svg.chart text').getBoundingClientRect().height,
              wrapped: Array.from(document.querySelectorAll('td.num .note')).filter(function (n) {
                return n.getClientRects().length > 1 || getComputedStyle(n.parentNode).whiteSpace !== 'nowrap'; }).length})""",
        )["result"]["value"]
        charts = browser.call(
            "Runtime.evaluate",
            session=True,
            returnByValue=True,
            expression="""
            Array.from(document.querySelectorAll('svg.chart')).map(function (svg) {
              var box = svg.getBoundingClientRect();
              return {w: box.width, h: box.height, shapes: svg.querySelectorAll('polyline,rect,polygon').length};
            })""",
        )["result"]["value"]
        browser.call("Runtime.evaluate", session=True, expression="location.hash = '#t3'")  # open a transcript
        shown = browser.call(
            "Runtime.evaluate",
            session=True,
            returnByValue=True,
            expression="getComputedStyle(document.getElementById('t3')).display",
        )["result"]["value"]
        shot = base64.b64decode(browser.call("Page.captureScreenshot", session=True, format="png")["data"])
    finally:
        browser.close()
    assert len(charts) >= 5 and all(c["w"] > 100 and c["h"] > 20 and c["shapes"] > 0 for c in charts)
    assert legible["chart"] >= 900 and legible["label"] >= 14 and legible["wrapped"] == 0, legible
    assert shown == "block"
    errors = [
        e
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert errors == []
    requests = {e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"}
    assert requests <= {html.as_uri()}  # the file itself, nothing else
    assert png_pixels_vary(shot) > 20
