"""Long-running servers: a domain's tools served over MCP (``mcp_server``) and the web dashboard and operator
inbox (``web``).

The MCP server's names are exported here but imported on first use: the web app and the `users` commands
must not pay for the MCP SDK's import.
"""

from __future__ import annotations

from typing import Any

__all__ = ["McpDomainServer", "McpSession", "listening_socket"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from passhat.serve import mcp_server

        return getattr(mcp_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
