"""What passhat's two MCP servers share on the wire: the MCP server of ``passhat serve mcp`` (``passhat.serve``) and
the per-trial server of an MCP-connected agent service (``mcp_agent``). A tool is listed and a result carried the
same way by both, at the same path, on a socket opened the same way. It lives with the agents, the lower of the
two layers, so that an agent never imports the server face.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import mcp.types as types

from passhat.domains.toolkit import ToolMeta
from passhat.errors import UserError
from passhat.safe_files import shown

MCP_PATH = "/mcp"  # where the streamable HTTP endpoint answers


def mcp_tool(schema: dict[str, Any], meta: ToolMeta) -> types.Tool:
    """A tool as MCP lists it: the function schema a run's LLM agent sees, annotated from the tool's metadata."""
    title = schema["name"].replace("_", " ").capitalize()
    if meta.write:
        hints = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": meta.idempotent}
    else:
        hints = {"read_only_hint": True}
    return types.Tool(
        name=schema["name"],
        title=title,
        description=schema["description"],
        input_schema=schema["parameters"],
        # the title again for clients of protocol versions that read it from the annotations only
        annotations=types.ToolAnnotations(title=title, open_world_hint=False, **hints),
    )


def tool_result(result: dict[str, Any]) -> types.CallToolResult:
    """A three-shape result as MCP carries it: structured, as JSON text for clients that read text only, and an error
    result unless it is a success."""
    text = json.dumps(result, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=result, is_error=result["status"] != "ok"
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: a free one the system picks); a UserError naming the flags when
    the address cannot be had."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except (OSError, UnicodeError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserError(
            f"cannot listen on --host {shown(host)} --port {port}: {reason}; give an address of this machine and a free "
            "port (--port 0 picks one)."
        ) from None
