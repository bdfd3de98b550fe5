"""Runtime guardrails in front of an agent's tools, usable inside and outside the harness.

The names below load their module on first use (PEP 562): the command line reads a guard's vocabulary (the
operators of ``passhat.guard.gate``) without loading the gateway, and what it imports, into every command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat.lazy import lazy_names

if TYPE_CHECKING:
    from passhat.guard.audit import AuditLog, verify_folder
    from passhat.guard.gateway import GUARDS, Gateway, Passage
    from passhat.guard.options import parse_guards
    from passhat.guard.path import ToolPath

_HOMES = {
    "AuditLog": "audit",
    "verify_folder": "audit",
    "GUARDS": "gateway",
    "Gateway": "gateway",
    "Passage": "gateway",
    "parse_guards": "options",
    "ToolPath": "path",
}

__getattr__ = lazy_names(__name__, _HOMES)


__all__ = ["GUARDS", "AuditLog", "Gateway", "Passage", "ToolPath", "parse_guards", "verify_folder"]
