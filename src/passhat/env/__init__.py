"""The environment: backend forks, the tool registry, tool-call execution, and state diffs."""

from passhat.env.backend import RowDifference, diff_backends, fork_backend, template_for
from passhat.env.environment import Environment, Execution, ToolRunner, Violation, tool_registry
from passhat.env.tools import ToolSpec

__all__ = [
    "Environment",
    "Execution",
    "RowDifference",
    "ToolRunner",
    "ToolSpec",
    "Violation",
    "diff_backends",
    "fork_backend",
    "template_for",
    "tool_registry",
]
