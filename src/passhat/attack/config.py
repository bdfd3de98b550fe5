"""An attack suite's configuration: the run it shares with `passhat run` (domain, agent, customers, tasks, trials,
seed), the attacks and goals to try, and the defenses to compare. Stored with the suite, so resume needs nothing else."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from passhat.agents.attack_templates import TEMPLATE_NAMES, TemplateName
from passhat.attack.defenses import DEFENSE_NAMES, DefenseName
from passhat.errors import UserError
from passhat.run_config import RunConfig

NO_DEFENSE = "none"
ALL_DEFENSES = "all"


class AttackConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run: RunConfig
    attacks: list[TemplateName]
    goals: list[str]
    defenses: list[DefenseName]  # compared: none, each alone, and (two or more) all of them together


@dataclasses.dataclass(frozen=True)
class Configuration:
    """One column of the defenses table: a label and the defenses on."""

    label: str
    defenses: tuple[DefenseName, ...]


def configurations(defenses: Sequence[DefenseName]) -> list[Configuration]:
    """No defense, each one alone, and all of them together when there are several."""
    out = [Configuration(NO_DEFENSE, ())] + [Configuration(d, (d,)) for d in defenses]
    if len(defenses) > 1:
        label = ALL_DEFENSES if set(defenses) == set(DEFENSE_NAMES) else "+".join(defenses)
        out.append(Configuration(label, tuple(defenses)))
    return out


def parse_names(spec: str, known: Sequence[str], flag: str, every: str = ALL_DEFENSES) -> list[str]:
    """A comma list of names (each once, in the order given) from ``known``, or ``every`` for all of them; an
    empty list means all of them too."""
    names = list(dict.fromkeys(n.strip() for n in spec.split(",") if n.strip()))
    if not names or names == [every]:
        return list(known)
    if unknown := [n for n in names if n not in known]:
        raise UserError(f"unknown name {', '.join(map(repr, unknown))} in {flag}; choose from {', '.join(known)} (or {every}).")
    return names


def parse_defenses(spec: str) -> list[DefenseName]:
    """--defense: none (the default: no defense), all, or a comma list."""
    if spec.strip() in ("", NO_DEFENSE):
        return []
    return parse_names(spec, DEFENSE_NAMES, "--defense")  # type: ignore[return-value]


def parse_attacks(spec: str) -> list[TemplateName]:
    return parse_names(spec, TEMPLATE_NAMES, "--attacks")  # type: ignore[return-value]
