"""``--guard off|all|name,name``: the guards a run switches on."""

from __future__ import annotations

from passhat.errors import UserError
from passhat.guard.gateway import GUARDS


def parse_guards(spec: str | None) -> list[str]:
    """The enabled guards, in the gateway's order; 'off' (or nothing) is none, 'all' is every guard."""
    text = (spec or "off").strip().lower()
    if text in ("off", "none", ""):
        return []
    if text == "all":
        return list(GUARDS)
    names = {n.strip() for n in text.split(",") if n.strip()}
    unknown = sorted(names - set(GUARDS))
    if unknown:
        raise UserError(
            f"unknown guard {', '.join(map(repr, unknown))} in --guard; use off, all, or a comma list of {', '.join(GUARDS)}."
        )
    return [g for g in GUARDS if g in names]
