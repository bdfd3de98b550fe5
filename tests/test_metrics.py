"""pass^k / pass@k estimators against hand-computed and exact rational values, and run summaries."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from passhat.metrics import (
    TrialResult,
    headline_ks,
    pass_at_curve,
    pass_at_k,
    pass_hat_curve,
    pass_hat_k,
    summarize,
)


def exact_pass_hat(successes: list[int], trials: list[int], k: int) -> Fraction:
    ratios = [Fraction(math.comb(c, k), math.comb(n, k)) for c, n in zip(successes, trials, strict=True)]
    return sum(ratios, Fraction(0)) / len(ratios)


def exact_pass_at(successes: list[int], trials: list[int], k: int) -> Fraction:
    ratios = [Fraction(math.comb(n - c, k), math.comb(n, k)) for c, n in zip(successes, trials, strict=True)]
    return 1 - sum(ratios, Fraction(0)) / len(ratios)


@st.composite
def scenario_counts(draw: st.DrawFn, max_n: int = 12) -> tuple[list[int], list[int]]:
    trials = draw(st.lists(st.integers(1, max_n), min_size=1, max_size=8))
    successes = [draw(st.integers(0, n)) for n in trials]
    return successes, trials


# --- hand-computed values -------------------------------------------------------------------------


def test_n8_c6_k2() -> None:
    assert pass_hat_k([6], [8], 2) == pytest.approx(15 / 28, abs=1e-15)
    assert pass_at_k([6], [8], 2) == pytest.approx(27 / 28, abs=1e-15)


@pytest.mark.parametrize("k", range(1, 9))
def test_all_successes_give_one(k: int) -> None:
    assert pass_hat_k([8], [8], k) == 1.0
    assert pass_at_k([8], [8], k) == 1.0


@pytest.mark.parametrize("k", range(1, 9))
def test_no_successes_give_zero(k: int) -> None:
    assert pass_hat_k([0], [8], k) == 0.0
    assert pass_at_k([0], [8], k) == 0.0


def test_mixed_scenarios_average() -> None:
    # (c, n) = (6, 8), (8, 8), (0, 8), (2, 4): pass^2 = (15/28 + 1 + 0 + 1/6) / 4
    successes, trials = [6, 8, 0, 2], [8, 8, 8, 4]
    assert pass_hat_k(successes, trials, 2) == pytest.approx((15 / 28 + 1 + 0 + 1 / 6) / 4, abs=1e-15)
    # C(n-c, 2)/C(n, 2) = 1/28, 0, 1, 1/6
    assert pass_at_k(successes, trials, 2) == pytest.approx(1 - (1 / 28 + 0 + 1 + 1 / 6) / 4, abs=1e-15)


def test_k_1_is_mean_success_rate() -> None:
    successes, trials = [6, 8, 0, 2, 1], [8, 8, 8, 4, 3]
    mean_rate = sum(c / n for c, n in zip(successes, trials, strict=True)) / len(trials)
    assert pass_hat_k(successes, trials, 1) == pytest.approx(mean_rate, abs=1e-15)
    assert pass_at_k(successes, trials, 1) == pytest.approx(mean_rate, abs=1e-15)


def test_not_mean_success_to_the_k() -> None:
    # One scenario: 0.75^2 = 0.5625 is biased high; two all-or-nothing scenarios: 0.5^2 = 0.25 is biased low.
    assert pass_hat_k([6], [8], 2) != pytest.approx(0.75**2, abs=1e-3)
    assert pass_hat_k([8, 0], [8, 8], 2) == 0.5


@pytest.mark.parametrize(
    ("successes", "trials", "k"),
    [([], [], 1), ([1], [2], 0), ([1], [2], 3), ([1, 3], [2, 4], 3), ([3], [2], 1), ([-1], [2], 1), ([1], [2, 3], 1)],
)
def test_invalid_arguments_raise(successes: list[int], trials: list[int], k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(successes, trials, k)
    with pytest.raises(ValueError):
        pass_at_k(successes, trials, k)


def test_curves_on_no_scenarios_raise() -> None:
    with pytest.raises(ValueError):
        pass_hat_curve([], [])
    with pytest.raises(ValueError):
        pass_at_curve([], [])


def test_curves_cover_k_up_to_smallest_n() -> None:
    assert list(pass_hat_curve([2, 5], [4, 9])) == [1, 2, 3, 4]
    assert list(pass_at_curve([2, 5], [4, 9])) == [1, 2, 3, 4]


# --- properties -----------------------------------------------------------------------------------


@given(scenario_counts())
def test_pass_hat_non_increasing_pass_at_non_decreasing_and_bounded(counts: tuple[list[int], list[int]]) -> None:
    hat, at = pass_hat_curve(*counts), pass_at_curve(*counts)
    for k in hat:
        assert 0.0 <= hat[k] <= 1.0 and 0.0 <= at[k] <= 1.0
        assert hat[k] <= at[k] + 1e-12
        if k > 1:
            assert hat[k] <= hat[k - 1]
            assert at[k] >= at[k - 1]


@given(scenario_counts())
def test_curves_equal_single_k(counts: tuple[list[int], list[int]]) -> None:
    hat, at = pass_hat_curve(*counts), pass_at_curve(*counts)
    for k in hat:
        assert hat[k] == pytest.approx(pass_hat_k(*counts, k), abs=1e-14)
        assert at[k] == pytest.approx(pass_at_k(*counts, k), abs=1e-14)


@given(scenario_counts())
def test_matches_exact_rational_reference(counts: tuple[list[int], list[int]]) -> None:
    successes, trials = counts
    hat, at = pass_hat_curve(successes, trials), pass_at_curve(successes, trials)
    assert len(hat) == min(trials)
    for k in hat:
        assert hat[k] == pytest.approx(float(exact_pass_hat(successes, trials, k)), abs=1e-14)
        assert at[k] == pytest.approx(float(exact_pass_at(successes, trials, k)), abs=1e-14)


def test_n_1000_exact_without_overflow() -> None:
    successes = [0, 1, 500, 750, 999, 1000, 333]
    trials = [1000] * len(successes)
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        hat, at = pass_hat_curve(successes, trials), pass_at_curve(successes, trials)
        single = pass_hat_k(successes, trials, 1000), pass_at_k(successes, trials, 1000)
    assert list(hat) == list(range(1, 1001))
    for k in range(1, 1001):
        assert math.isfinite(hat[k]) and math.isfinite(at[k])
        assert abs(hat[k] - float(exact_pass_hat(successes, trials, k))) <= 1e-12
        assert abs(at[k] - float(exact_pass_at(successes, trials, k))) <= 1e-12
    assert single[0] == pytest.approx(1 / 7, abs=1e-12)  # only c = 1000 survives k = 1000
    assert single[1] == pytest.approx(6 / 7, abs=1e-12)  # only c = 0 has no success among 1000


def test_n_1000_half_successes_deep_tail() -> None:
    # C(500, 500) / C(1000, 500) is about 3.7e-300: tiny but must not be lost to overflow or NaN.
    value = pass_hat_k([500], [1000], 500)
    assert value > 0.0
    assert value == pytest.approx(float(Fraction(1, math.comb(1000, 500))), rel=1e-10)


# --- summary --------------------------------------------------------------------------------------


def outcome(
    task: str, persona: str, trial: int, reward: int | None, signature: str | None = None, infra: bool = False
) -> TrialResult:
    return TrialResult(task, persona, trial, reward, signature, infra)


def sample_outcomes() -> list[TrialResult]:
    """t1/calm 4/4, t1/angry 2/4 (+1 infra error), t2/calm 1/3 (+1 user simulator error), t2/angry 0/4."""
    rows = [outcome("t1", "calm", i, 1) for i in range(4)]
    rows += [outcome("t1", "angry", i, 1) for i in range(2)]
    rows += [outcome("t1", "angry", 2, 0, "unconfirmed_write"), outcome("t1", "angry", 3, 0, "policy_violation")]
    rows += [outcome("t1", "angry", 4, None, "infra_error", infra=True)]
    rows += [outcome("t2", "calm", 0, 1), outcome("t2", "calm", 1, 0, "no_write"), outcome("t2", "calm", 2, 0)]
    rows += [outcome("t2", "calm", 3, 0, "user_simulator_error")]
    rows += [outcome("t2", "angry", i, 0, "unconfirmed_write") for i in range(4)]
    return rows


def test_summary_excludes_and_counts_unjudged_trials() -> None:
    summary = summarize(sample_outcomes())
    assert summary.infra_errors == 1
    assert summary.user_simulator_errors == 1
    assert summary.scenarios == 4
    assert summary.trials_per_scenario == 3  # t2/calm has 3 judged trials
    successes, trials = [2, 4, 0, 1], [4, 4, 4, 3]  # sorted (task, persona): t1/angry, t1/calm, t2/angry, t2/calm
    assert summary.avg_reward == pytest.approx((2 / 4 + 1 + 0 + 1 / 3) / 4)
    assert summary.pass_hat_k == pass_hat_curve(successes, trials)
    assert summary.pass_at_k == pass_at_curve(successes, trials)
    assert list(summary.pass_hat_k) == [1, 2, 3]


def test_summary_by_persona() -> None:
    by = summarize(sample_outcomes()).by_persona
    assert list(by) == ["angry", "calm"]
    assert by["calm"].scenarios == 2
    assert by["calm"].avg_reward == pytest.approx((1 + 1 / 3) / 2)
    assert by["calm"].pass_hat_k == pass_hat_curve([4, 1], [4, 3])
    assert by["angry"].pass_at_k == pass_at_curve([2, 0], [4, 4])
    assert list(by["angry"].pass_hat_k) == [1, 2, 3, 4]


def test_summary_by_tag() -> None:
    summary = summarize(sample_outcomes(), tags={"t1": ["refund", "easy"], "t2": ["refund"]})
    assert list(summary.by_tag) == ["easy", "refund"]
    assert summary.by_tag["refund"].scenarios == 4
    assert summary.by_tag["easy"].pass_hat_k == pass_hat_curve([2, 4], [4, 4])
    assert summarize(sample_outcomes()).by_tag == {}


def test_failure_signatures_count_failed_judged_trials_most_frequent_first() -> None:
    signatures = summarize(sample_outcomes()).failure_signatures
    assert list(signatures.items()) == [
        ("unconfirmed_write", 5),
        ("no_write", 1),
        ("policy_violation", 1),
        ("unclassified", 1),
    ]


def test_summary_of_nothing_judged() -> None:
    summary = summarize([outcome("t1", "calm", 0, None, "infra_error", infra=True)])
    assert (summary.scenarios, summary.trials_per_scenario, summary.avg_reward) == (0, 0, None)
    assert summary.pass_hat_k == {} and summary.by_persona == {} and summary.infra_errors == 1


def test_judged_trial_needs_binary_reward() -> None:
    with pytest.raises(ValueError, match="reward"):
        summarize([outcome("t1", "calm", 0, None)])


def test_summary_to_json_has_string_k_keys() -> None:
    data = summarize(sample_outcomes(), tags={"t1": ["easy"]}).to_json()
    assert list(data["pass_hat_k"]) == ["1", "2", "3"]
    assert list(data["by_persona"]["angry"]["pass_at_k"]) == ["1", "2", "3", "4"]
    assert data["by_tag"]["easy"]["scenarios"] == 2
    assert data["infra_errors"] == 1 and data["user_simulator_errors"] == 1
    assert json.loads(json.dumps(data)) == data


@pytest.mark.parametrize(
    ("n", "ks"),
    [(0, []), (1, [1]), (2, [1, 2]), (5, [1, 2, 4, 5]), (8, [1, 2, 4, 8]), (10, [1, 2, 4, 8, 10])],
)
def test_headline_ks(n: int, ks: list[int]) -> None:
    assert headline_ks(n) == ks
