"""A local stand-in for the framework example's model: a chat-completions endpoint that needs no key and no network.

It plays a careful desk clerk that only cancels orders, so the example runs end to end offline: it asks for the
customer's email, looks the customer and the order up with the tools it is offered, proposes the cancellation in
words and waits for a yes, cancels, and says what it did. Anything else it declines. It reads the whole
conversation each turn (no state), like a real model. It is a stub to try the plumbing with, not an agent to
measure: put a real model behind --base-url for that.

    python examples/framework_agent/local_model.py --port 8769 &
    OPENAI_BASE_URL=http://127.0.0.1:8769/v1 OPENAI_API_KEY=unused python examples/framework_agent/server.py --port 8768 &
    passhat run --agent mcp+http://127.0.0.1:8768/agent --tasks retail-001,retail-026,retail-033 --trials 2
"""

from __future__ import annotations

import argparse
import json
import re
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ORDER = re.compile(r"#?\b(R\d{7})\b", re.IGNORECASE)
YES = re.compile(r"\b(yes|yeah|yep|sure|go ahead|please do|confirm(ed)?|ok(ay)?|correct|that's right)\b", re.IGNORECASE)
ASK_EMAIL = "Happy to help. To verify your identity, could you tell me the email address on your account?"
ASK_ORDER = "Thank you. Which order is it about? Please give me its order id (it looks like #R1234567)."
DECLINE = "I'm sorry, I can only cancel orders here; I have changed nothing. Is there anything else I can help with?"


def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The clerk's next message: text, or one tool call (an OpenAI chat-completions ``message``)."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user" and isinstance(m.get("content"), str))
    calls = {c["function"]["name"]: c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()}
    email, order = EMAIL.search(said), ORDER.search(said)
    if email is None:
        return text(ASK_EMAIL)
    if "find_customer_by_email" not in calls:
        return tool_call("find_customer_by_email", {"email": email[0]})
    if order is None:
        return text(ASK_ORDER)
    order_id = f"#{order[1].upper()}"
    if "get_order" not in calls:
        return tool_call("get_order", {"order_id": order_id})
    if "cancel" not in said.lower():
        return text(DECLINE)
    reason = "ordered by mistake" if "mistake" in said.lower() else "no longer needed"
    proposal = (
        f"I can cancel order {order_id} (reason: {reason}) and refund everything paid for it to the payment method it "
        "was paid with. Shall I go ahead? Please answer yes or no."
    )
    if "cancel_order" in calls:
        return text(done(messages, calls["cancel_order"]["id"], order_id))
    if not any(m["role"] == "assistant" and m.get("content") == proposal for m in messages):
        return text(proposal)
    if YES.search(messages[-1].get("content") or ""):
        return tool_call("cancel_order", {"order_id": order_id, "reason": reason})
    return text(f"All right, I will leave order {order_id} as it is. Is there anything else I can help with?")


def done(messages: list[dict[str, Any]], call_id: str, order_id: str) -> str:
    """What the clerk says after its cancel call: what the tool answered, success or error."""
    result = next((m.get("content") or "" for m in messages if m.get("tool_call_id") == call_id), "")
    if '"error"' in result:
        return f"I'm sorry, I could not cancel order {order_id}: {result}. Nothing was changed."
    return (
        f"Order {order_id} has been cancelled, and everything paid for it will be refunded to the payment method it "
        "was paid with. Is there anything else I can help you with?"
    )


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class ModelHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, {"error": {"message": "POST chat completions to /v1/chat/completions"}})
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        message = reply(body.get("messages", []))
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        self._send(
            200,
            {
                "id": f"local-{time.monotonic_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "local-clerk"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            },
        )

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise here
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8769)
    options = parser.parse_args()
    server = ThreadingHTTPServer((options.host, options.port), ModelHandler)
    print(f"serving the local stand-in model at http://{options.host}:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
