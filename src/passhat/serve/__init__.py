"""Long-running servers: a domain's tools served over MCP (``mcp_server``) and the web dashboard and operator
inbox (``web``).

The MCP server's names are exported here but imported on first use: the web app and the `users` commands
must not pay for the MCP SDK's import.
"""

from __future__ import annotations

from passhat.lazy import lazy_names

__all__ = ["McpDomainServer", "McpSession"]
__getattr__ = lazy_names(__name__, dict.fromkeys(__all__, "mcp_server"))
