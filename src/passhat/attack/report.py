"""The attack suite's report: a typed document (its JSON, `passhat attack --json`) built from the stored outcomes.

Field by field it is described in docs/attacks.md; its ``version`` names the format (``ATTACK_SCHEMA``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from passhat.agents.attack_templates import TEMPLATES
from passhat.attack.config import AttackConfig, configurations
from passhat.attack.figures import ConfigurationFigures, Figure, UnderAttack, configuration_figures
from passhat.attack.store import AttackTrial
from passhat.domains.injection import Injection

ATTACK_SCHEMA = "passhat.attack/1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FigureJson(_Model):
    """A share over scenarios; keys of the maps are k (as text), values pass^k / pass@k and their 95% intervals."""

    scenarios: int
    trials: int
    successes: int
    pass_hat_k: dict[str, float]
    pass_hat_k_interval: dict[str, tuple[float, float]]
    pass_at_k: dict[str, float]
    pass_at_k_interval: dict[str, tuple[float, float]]

    @classmethod
    def of(cls, f: Figure | None) -> FigureJson | None:
        if f is None:
            return None
        return cls(
            scenarios=f.scenarios,
            trials=f.trials,
            successes=f.successes,
            pass_hat_k={str(k): v for k, v in f.pass_hat_k.items()},
            pass_hat_k_interval={str(k): v for k, v in f.pass_hat_k_ci.items()},
            pass_at_k={str(k): v for k, v in f.pass_at_k.items()},
            pass_at_k_interval={str(k): v for k, v in f.pass_at_k_ci.items()},
        )


class UnderAttackJson(_Model):
    utility_under_attack: FigureJson | None
    attack_success: FigureJson | None
    read_share: float | None  # attacked trials in which a tool result showed the agent the attack's text

    @classmethod
    def of(cls, u: UnderAttack) -> UnderAttackJson:
        return cls(utility_under_attack=FigureJson.of(u.utility), attack_success=FigureJson.of(u.success), read_share=u.shown)


class ConfigurationJson(_Model):
    label: str
    defenses: list[str]
    utility_without_attack: FigureJson | None
    under_attack: UnderAttackJson
    per_attack: dict[str, UnderAttackJson]
    per_goal: dict[str, UnderAttackJson]
    refused_calls: int
    withheld_results: int

    @classmethod
    def of(cls, defenses: Sequence[str], f: ConfigurationFigures) -> ConfigurationJson:
        return cls(
            label=f.label,
            defenses=list(defenses),
            utility_without_attack=FigureJson.of(f.baseline),
            under_attack=UnderAttackJson.of(f.overall),
            per_attack={a: UnderAttackJson.of(u) for a, u in f.per_attack.items()},
            per_goal={g: UnderAttackJson.of(u) for g, u in f.per_goal.items()},
            refused_calls=f.refused,
            withheld_results=f.withheld,
        )


class Named(_Model):
    name: str
    description: str


class AttackReport(_Model):
    version: str = ATTACK_SCHEMA  # this document's format
    run_id: str
    domain: str
    agent: str
    user: str
    personas: list[str]
    tasks: list[str]
    trials_per_scenario: int
    seed: int
    attacks: list[Named]
    goals: list[Named]
    configurations: list[ConfigurationJson]
    judged_trials: int
    infra_errors: int


def build_attack_report(run_id: str, config: AttackConfig, injection: Injection, outcomes: Sequence[AttackTrial]) -> AttackReport:
    run = config.run
    goals = [injection.goal(g) for g in config.goals]
    return AttackReport(
        run_id=run_id,
        domain=run.domain,
        agent=run.agent,
        user=run.user,
        personas=run.personas,
        tasks=run.tasks,
        trials_per_scenario=run.trials,
        seed=run.seed,
        attacks=[Named(name=a, description=TEMPLATES[a].description) for a in config.attacks],
        goals=[Named(name=g.name, description=g.description) for g in goals],
        configurations=[
            ConfigurationJson.of(c.defenses, configuration_figures(c.label, outcomes, config.attacks, config.goals))
            for c in configurations(config.defenses)
        ],
        judged_trials=sum(o.reward is not None for o in outcomes),
        infra_errors=sum(o.reward is None for o in outcomes),
    )
