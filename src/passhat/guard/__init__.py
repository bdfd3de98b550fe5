"""Runtime guardrails in front of an agent's tools, usable inside and outside the harness."""

from passhat.guard.audit import AuditLog, verify_folder
from passhat.guard.gateway import GUARDS, Gateway, Passage
from passhat.guard.options import parse_guards

__all__ = ["GUARDS", "AuditLog", "Gateway", "Passage", "parse_guards", "verify_folder"]
