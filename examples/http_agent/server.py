"""The retail agent of examples/python_agent, served over HTTP with the standard library only.

passhat POSTs {"protocol": "passhat.agent/1", "trial": {"id", "seed"}, "conversation", "tools"} at each of
the agent's turns; this service answers {"message", "tool_calls"}. It keeps no state: the conversation
it is sent is all it needs. A real service would put its own agent (a framework, a model) behind the
same endpoint.

    python examples/http_agent/server.py --port 8767
    passhat run --agent http://127.0.0.1:8767/agent --tasks retail-001,retail-026,retail-033
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python_agent"))
from retail_agent import decide  # noqa: E402 - the rules live beside the Python example

PROTOCOL = "passhat.agent/1"
PATH = "/agent"


class AgentHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path != PATH:
            return self._send(404, {"error": f"POST the conversation to {PATH}"})
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        if request.get("protocol") != PROTOCOL:
            return self._send(400, {"error": f"this service speaks {PROTOCOL}, not {request.get('protocol')!r}"})
        self._send(200, {"protocol": PROTOCOL, **decide(request["conversation"])})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # one line per request is noise at 1,000 trials
        pass


def make_server(host: str = "127.0.0.1", port: int = 8767) -> ThreadingHTTPServer:
    """The service, bound but not yet serving (port 0: any free port, read from ``server_address``)."""
    return ThreadingHTTPServer((host, port), AgentHandler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8767)
    options = parser.parse_args()
    server = make_server(options.host, options.port)
    print(f"serving the retail agent at http://{options.host}:{server.server_address[1]}{PATH}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
