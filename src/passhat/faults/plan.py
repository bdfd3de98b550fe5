"""A run's fault plan: which fault classes to inject, each with its probability per tool call.

Given on the command line (``--faults timeout=0.1,stale_read=0.05``) or as a YAML file mapping class
to rate; stored with the run's configuration as a plain ``{class: rate}`` dict.
"""

from __future__ import annotations

from pathlib import Path

from passhat.errors import UserError
from passhat.safe_files import listed, load_yaml, shown

# Before the call runs: the tool is never reached.
CALL_FAULTS = ("timeout", "transient_error", "rate_limited", "permission_denied")
# After a read ran: what the agent is told differs from what the backend holds.
DATA_FAULTS = ("schema_drift", "stale_read", "contradiction", "wrong_value", "silent_empty", "injected_instruction")
# After a write ran: it took effect, the agent is told it timed out.
WRITE_FAULTS = ("lost_response",)
FAULT_CLASSES: tuple[str, ...] = CALL_FAULTS + WRITE_FAULTS + DATA_FAULTS


def parse_faults(spec: str | None) -> dict[str, float]:
    """``class=rate,...`` or the path of a YAML mapping; an empty spec is no faults."""
    if not spec or not spec.strip():
        return {}
    path = Path(spec)
    if path.suffix in (".yaml", ".yml") or _exists(path):
        return _from_yaml(path)
    plan: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, rate = part.partition("=")
        name = name.strip()
        if not sep:
            raise UserError(
                f"--faults entry {shown(part)} is not class=rate (e.g. timeout=0.1); classes: {', '.join(FAULT_CLASSES)}."
            )
        if name in plan:
            raise UserError(f"fault class {shown(name)} is given twice in --faults; give each class once, with one rate.")
        plan[name] = _rate(name, rate, "--faults")
    return checked_plan(plan, "--faults")


def _exists(path: Path) -> bool:
    """Whether ``path`` names something, so a pipe or a folder is refused as a file, not read as class=rate."""
    try:
        return path.exists()
    except OSError:  # a name too long for the file system: a class=rate spec, not a file
        return False


def _from_yaml(path: Path) -> dict[str, float]:
    raw = load_yaml(path, f"the fault plan {path} (--faults)")
    return checked_plan({str(k): _rate(str(k), v, str(path)) for k, v in raw.items()}, str(path))


def _rate(name: str, value: object, where: str) -> float:
    if isinstance(value, bool):  # YAML's true/false/yes/no would otherwise pass as 1.0 and 0.0
        raise UserError(f"the rate of fault {shown(name)} in {where} must be a number between 0 and 1, not {shown(value)}.")
    try:
        rate = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer past the largest float
        raise UserError(
            f"the rate of fault {shown(name)} in {where} must be a number between 0 and 1, not {shown(value)}."
        ) from None
    if not 0 <= rate <= 1:
        raise UserError(f"the rate of fault {shown(name)} in {where} must be between 0 and 1, not {shown(rate)}.")
    return rate


def checked_plan(plan: dict[str, float], where: str) -> dict[str, float]:
    """Known classes only; the rates of the classes that can hit one call must not add up past 1."""
    unknown = [name for name in plan if name not in FAULT_CLASSES]
    if unknown:
        raise UserError(
            f"unknown fault class {listed(list(map(shown, unknown)))} in {where}; the classes are {', '.join(FAULT_CLASSES)}."
        )
    for kind, group in (("a read", CALL_FAULTS + DATA_FAULTS), ("a write", CALL_FAULTS + WRITE_FAULTS)):
        if sum(plan.get(name, 0.0) for name in group) > 1 + 1e-9:
            raise UserError(f"the fault rates in {where} that can hit {kind} add up to more than 1; lower them.")
    return {name: plan[name] for name in FAULT_CLASSES if plan.get(name)}
