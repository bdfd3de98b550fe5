"""Long-running servers: a domain's tools served over MCP to an agent that runs outside passhat."""

from passhat.serve.mcp_server import McpDomainServer, McpSession, listening_socket

__all__ = ["McpDomainServer", "McpSession", "listening_socket"]
