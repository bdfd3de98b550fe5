"""An agent built with the OpenAI Agents SDK (``openai-agents``), served over HTTP for ``passhat run --agent mcp+http://...``.

At each of the agent's turns passhat POSTs {"protocol": "passhat.agent/1", "trial", "conversation", "tools", "mcp":
{"url"}}. This service runs an Agents-SDK agent on the conversation, with passhat's MCP endpoint for the trial as its
only tool server (streamable HTTP): the SDK lists the tools and calls them itself, and passhat records each call. The
service answers {"message": <the agent's final output>}. It keeps no state: the conversation it is sent (the
customer's messages, the agent's earlier answers and its tool calls with their results) is all it needs.

The model is any chat-completions endpoint: --base-url (default $OPENAI_BASE_URL, else OpenAI's), the key in
$OPENAI_API_KEY, --model. The agent's instructions are its own: a short brief and the desk's written policy.

    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 python examples/framework_agent/server.py --port 8768
    passhat run --agent mcp+http://127.0.0.1:8768/agent --tasks retail-001,retail-026,retail-033
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agents import Agent, MaxTurnsExceeded, ModelBehaviorError, OpenAIChatCompletionsModel, RunConfig, Runner
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

from passhat.domains import load_domain

PROTOCOL = "passhat.agent/1"
PATH = "/agent"
BRIEF = (
    "You are the customer-service agent of an online shop. Verify the customer's identity before anything else, look "
    "things up with your tools, and before any change describe it exactly and wait for the customer's explicit yes. "
    "Follow the policy below."
)


@dataclasses.dataclass(frozen=True)
class ModelEndpoint:
    """Where the agent's model answers: a chat-completions endpoint, its key and the model's name."""

    base_url: str | None
    api_key: str
    model: str


async def answer(request: dict[str, Any], endpoint: ModelEndpoint, instructions: str) -> dict[str, Any]:
    """One turn: the Agents-SDK agent, with the trial's MCP tools, on the conversation so far."""
    client = AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)
    async with MCPServerStreamableHttp({"url": request["mcp"]["url"]}, name="passhat", cache_tools_list=True) as tools:
        agent = Agent(
            name="shop desk",
            instructions=instructions,
            model=OpenAIChatCompletionsModel(model=endpoint.model, openai_client=client),
            mcp_servers=[tools],
        )
        result = await Runner.run(agent, input_items(request["conversation"]), run_config=RunConfig(tracing_disabled=True))
    return {"protocol": PROTOCOL, "message": str(result.final_output)}


def input_items(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """passhat's chat messages as the Agents SDK's input items (messages, function calls and their outputs)."""
    items: list[dict[str, Any]] = []
    for message in conversation:
        if message["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"], "output": message["content"]})
            continue
        if message.get("content"):
            items.append({"role": message["role"], "content": message["content"]})
        for call in message.get("tool_calls", ()):
            function = call["function"]
            items.append(
                {"type": "function_call", "call_id": call["id"], "name": function["name"], "arguments": function["arguments"]}
            )
    return items


def make_server(host: str, port: int, endpoint: ModelEndpoint, instructions: str) -> ThreadingHTTPServer:
    """The service, bound but not yet serving (port 0: any free port, read from ``server_address``)."""

    class AgentHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path != PATH:
                return self._send(404, {"error": f"POST the conversation to {PATH}"})
            request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            if request.get("protocol") != PROTOCOL or "mcp" not in request:
                return self._send(400, {"error": f"this service speaks {PROTOCOL} with an MCP endpoint (--agent mcp+http://...)"})
            try:
                reply = asyncio.run(answer(request, endpoint, instructions))
            except (MaxTurnsExceeded, ModelBehaviorError):  # the agent's own failure: the customer sees it, passhat judges it
                reply = {"protocol": PROTOCOL, "message": "Sorry, I could not complete that. Please try again later."}
            except Exception as exc:  # the model or the tools could not be reached: passhat counts an infra error
                return self._send(503, {"error": f"{type(exc).__name__}: {exc}"})
            self._send(200, reply)

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # one line per request is noise at 1,000 trials
            pass

    return ThreadingHTTPServer((host, port), AgentHandler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8768)
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"), help="the model's chat-completions endpoint")
    parser.add_argument("--model", default="gpt-4.1-mini")
    parser.add_argument("--domain", default="retail", help="whose written policy the agent follows")
    options = parser.parse_args()
    endpoint = ModelEndpoint(options.base_url, os.environ.get("OPENAI_API_KEY", "no-key"), options.model)
    instructions = f"{BRIEF}\n\n{load_domain(options.domain).policy}"
    server = make_server(options.host, options.port, endpoint, instructions)
    print(f"serving the Agents-SDK agent at http://{options.host}:{server.server_address[1]}{PATH}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
