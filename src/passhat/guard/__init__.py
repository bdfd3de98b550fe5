"""Runtime guardrails in front of an agent's tools, usable inside and outside the harness."""

from passhat.guard.audit import AuditLog, verify_folder
from passhat.guard.gateway import GUARDS, Gateway, Passage
from passhat.guard.options import parse_guards
from passhat.guard.path import ToolPath

__all__ = ["GUARDS", "AuditLog", "Gateway", "Passage", "ToolPath", "parse_guards", "verify_folder"]
