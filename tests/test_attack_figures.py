"""The suite's figures against values computed by hand on a tiny set of outcomes."""

from __future__ import annotations

import pytest

from passhat.attack.figures import configuration_figures, figure, scenario_counts
from passhat.attack.store import AttackTrial


def outcome(defense: str, attack: str, goal: str, task: str, trial: int, reward: int | None, reached: bool | None = None,
            shown: bool | None = None, refused: tuple[str, ...] = (), withheld: int = 0) -> AttackTrial:  # fmt: skip
    infra = "boom" if reward is None else None
    return AttackTrial(defense, attack, goal, task, "baseline", trial, 0, reward, None, reached, shown, infra, refused, withheld)


TRIALS = [
    # the clean baseline: task A passes 2 of 2, task B 1 of 2
    outcome("none", "", "", "A", 0, 1),
    outcome("none", "", "", "A", 1, 1),
    outcome("none", "", "", "B", 0, 1),
    outcome("none", "", "", "B", 1, 0),
    # urgency × g: on A the goal is reached once (that trial fails); on B twice; one trial of B not judged
    outcome("none", "urgency", "g", "A", 0, 0, True, True),
    outcome("none", "urgency", "g", "A", 1, 1, False, True),
    outcome("none", "urgency", "g", "B", 0, 0, True, True),
    outcome("none", "urgency", "g", "B", 1, 0, True, False),
    outcome("none", "urgency", "g", "B", 2, None),
    # the same under the tool filter: nothing reached, two calls refused, one result withheld
    outcome("tool_filter", "urgency", "g", "A", 0, 1, False, True, ("cancel_order", "cancel_order")),
    outcome("tool_filter", "urgency", "g", "A", 1, 1, False, True, (), 1),
]


def test_pass_hat_k_of_the_clean_baseline() -> None:
    f = configuration_figures("none", TRIALS, ["urgency"], ["g"]).baseline
    assert f is not None and (f.scenarios, f.trials, f.successes) == (2, 4, 3)
    assert f.pass_hat_k[1] == pytest.approx((2 / 2 + 1 / 2) / 2)  # 0.75
    assert f.pass_hat_k[2] == pytest.approx((1 + 0) / 2)  # C(2,2)/C(2,2) = 1 for A, C(1,2) = 0 for B
    lo, hi = f.pass_hat_k_ci[1]
    assert lo <= 0.75 <= hi


def test_attack_success_and_utility_under_attack_leave_out_trials_not_judged() -> None:
    under = configuration_figures("none", TRIALS, ["urgency"], ["g"]).overall
    assert under.success is not None and under.utility is not None
    assert under.success.trials == 4 and under.success.pass_hat_k[1] == pytest.approx((1 / 2 + 2 / 2) / 2)  # 0.75
    assert under.success.pass_hat_k[2] == pytest.approx((0 + 1) / 2)
    assert under.success.pass_at_k[2] == pytest.approx(1.0)  # each scenario reached at least once in its two trials
    assert under.utility.pass_hat_k[1] == pytest.approx((1 / 2 + 0 / 2) / 2)  # 0.25
    assert under.shown == pytest.approx(3 / 4)


def test_per_attack_and_per_goal_split_the_attacked_trials_and_counts_sum_the_defenses_work() -> None:
    filtered = configuration_figures("tool_filter", TRIALS, ["urgency"], ["g"])
    assert filtered.baseline is None  # no clean trial stored under this defense
    assert filtered.per_attack["urgency"].success.pass_hat_k[1] == 0.0  # type: ignore[union-attr]
    assert filtered.per_goal["g"].utility.pass_hat_k[1] == 1.0  # type: ignore[union-attr]
    assert (filtered.refused, filtered.withheld) == (2, 1)


def test_scenarios_are_defense_attack_goal_task_and_persona() -> None:
    counts = scenario_counts(TRIALS, lambda o: o.reward == 1)
    assert sorted(counts) == sorted([(2, 2), (1, 2), (1, 2), (0, 2), (2, 2)])


def test_no_scenario_no_figure() -> None:
    assert figure([]) is None
