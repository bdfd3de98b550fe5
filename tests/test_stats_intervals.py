"""Intervals, extrapolation, partition, spread, traffic and the gate against hand-computed values,
and against simulated runs whose truth is known."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta

from passhat.metrics.compare import WITHIN_NOISE, ScenarioMismatch, compare_runs
from passhat.metrics.estimators import pass_at_curve, pass_hat_curve
from passhat.metrics.extrapolate import (
    EXTRAPOLATE_KS,
    BetaFamily,
    BetaModel,
    Mixture,
    extrapolate,
    families,
    group_counts,
    select_model,
)
from passhat.metrics.gate import Gate, decide, parse_gate
from passhat.metrics.intervals import bootstrap_means, run_intervals, wilson
from passhat.metrics.partition import Partition, partition, partition_by
from passhat.metrics.simulate import simulate_counts
from passhat.metrics.spread import compounding, persona_drops, scenario_variance, spread
from passhat.metrics.traffic import clean_bounds, needed_success, traffic, traffic_model

# --- Wilson ---------------------------------------------------------------------------------------


def test_wilson_hand_computed() -> None:
    z2 = 1.959963984540054**2
    assert wilson(5, 10) == pytest.approx((0.2365930905, 0.7634069095), abs=1e-9)
    assert wilson(8, 8) == pytest.approx((8 / (8 + z2), 1.0), abs=1e-12)  # c = n: upper end 1, lower n/(n+z²)
    assert wilson(0, 8) == pytest.approx((0.0, z2 / (8 + z2)), abs=1e-12)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_rate_and_stays_in_0_1(cn: tuple[int, int]) -> None:
    lo, hi = wilson(*cn)
    assert 0.0 <= lo <= cn[0] / cn[1] <= hi <= 1.0


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson(3, 2)


# --- bootstrap ------------------------------------------------------------------------------------


def test_bootstrap_is_seeded_and_reproducible() -> None:
    counts = [(8, 8), (6, 8), (0, 8), (7, 8), (8, 8)]
    assert run_intervals(counts, seed=3) == run_intervals(counts, seed=3)
    assert run_intervals(counts, seed=3) != run_intervals(counts, seed=4)


Z2 = 1.959963984540054**2


def test_a_zero_success_run_gets_the_score_interval_on_its_scenarios_not_a_point() -> None:
    # 47 scenarios x 8 trials at p = 0.6 (seeded) where no scenario passed all 8, so pass^8 = 0, and every one
    # passed at least once, so pass@8 = 1: the percentile bootstrap printed [0, 0] and [1, 1]. Every value is
    # 0 (or 1), so the interval is Wilson's for 0 (or 47) of 47, wider than Jeffreys' (0.052) at S = 47.
    counts = simulate_counts(Mixture((1.0,), (0.6,)), 47, 8, np.random.default_rng(0))
    assert not any(c == 8 for c, _ in counts) and all(c > 0 for c, _ in counts)
    ci = run_intervals(counts)
    assert ci.pass_hat_k[8] == pytest.approx((0.0, Z2 / (47 + Z2)), abs=1e-12)  # (0, 0.0756)
    assert ci.pass_at_k[8] == pytest.approx((47 / (47 + Z2), 1.0), abs=1e-12)


def test_an_all_pass_run_does_not_claim_certainty() -> None:
    # 8 of 8 cannot tell p = 1 from p = 0.99, and 47 scenarios cannot rule out a few that fail: no [1, 1].
    ci = run_intervals([(8, 8)] * 47)
    for k in range(1, 9):
        assert ci.pass_hat_k[k] == pytest.approx((47 / (47 + Z2), 1.0), abs=1e-12)
        assert ci.pass_at_k[k][0] < 1.0


def test_binary_scenario_values_give_the_wider_of_wilson_and_jeffreys() -> None:
    # pass^8 per scenario is 1 (8 of 8) or 0: 30 of 47 passed all, so the mean is a proportion of 47 scenarios.
    ci = run_intervals([(8, 8)] * 30 + [(5, 8)] * 17, reps=20000)
    jeffreys, score = beta.ppf([0.025, 0.975], 30.5, 17.5), wilson(30, 47)
    assert ci.pass_hat_k[8] == pytest.approx((min(jeffreys[0], score[0]), max(jeffreys[1], score[1])), abs=0.002)


def test_a_figure_that_rounds_to_1_keeps_a_finite_interval() -> None:
    # 100 trials per scenario: pass@50 is 1 - 1e-30 for most scenarios, so its mean rounds to 1.0 while its
    # variance does not round to 0, and p(1 - p)/variance is 0 effective scenarios (0/0 in the bounds).
    rng = np.random.default_rng(0)
    counts = [(int(c), 100) for c in rng.binomial(100, rng.beta(5.0, 1.0, 200))]
    ci = run_intervals(counts, reps=200)
    assert all(math.isfinite(b) for figure in (ci.pass_hat_k, ci.pass_at_k) for v in figure.values() for b in v)
    assert ci.pass_at_k[50] == pytest.approx((200 / (200 + Z2), 1.0), abs=1e-9)


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(6, 7)), min_size=1, max_size=30))
def test_intervals_hold_the_points_and_keep_their_order(raw: list[tuple[int, int]]) -> None:
    """Every interval holds its point, and the bounds are ordered as the points are:
    pass@n >= ... >= pass@1 = pass^1 >= ... >= pass^n."""
    counts = [(min(c, n), n) for c, n in raw]
    ci, exact = run_intervals(counts, reps=200), pass_hat_curve([c for c, _ in counts], [n for _, n in counts])
    at = pass_at_curve([c for c, _ in counts], [n for _, n in counts])
    chain = [ci.pass_at_k[k] for k in sorted(at, reverse=True)] + [ci.pass_hat_k[k] for k in sorted(exact)]
    for k in exact:
        assert ci.pass_hat_k[k][0] <= exact[k] <= ci.pass_hat_k[k][1]
        assert ci.pass_at_k[k][0] <= at[k] <= ci.pass_at_k[k][1]
    assert ci.pass_at_k[1] == ci.pass_hat_k[1] == ci.avg_reward
    assert all(a[0] >= b[0] and a[1] >= b[1] for a, b in itertools.pairwise(chain))


def test_intervals_at_zero_cover_the_truth_about_95_percent_of_the_time() -> None:
    """47 scenarios x 8 trials at p = 0.6 (pass^8 = 0.017, pass@8 = 0.9993): 45% of runs have no scenario
    passing all 8, where the percentile bootstrap covered pass^8 in 54% of runs and pass@8 in 3-34%.
    80 seeded runs: coverage 95% gives >= 70 covered with probability 0.99 (binomial), 54% almost never."""
    truth_hat, truth_at, covered_hat, covered_at = 0.6**8, 1 - 0.4**8, 0, 0
    for seed in range(80):
        counts = simulate_counts(Mixture((1.0,), (0.6,)), 47, 8, np.random.default_rng(500 + seed))
        ci = run_intervals(counts, reps=500, seed=seed)
        covered_hat += ci.pass_hat_k[8][0] <= truth_hat <= ci.pass_hat_k[8][1]
        covered_at += ci.pass_at_k[8][0] <= truth_at <= ci.pass_at_k[8][1]
    assert covered_hat >= 70 and covered_at >= 70


def test_bootstrap_means_match_resampling_indices_in_distribution() -> None:
    # Two kinds of scenario, 1 and 0, half each: a resample mean is Binomial(S, 1/2) / S.
    values = np.array([[1.0]] * 50 + [[0.0]] * 50)
    draws = bootstrap_means(values, reps=20000, seed=1)[:, 0]
    assert draws.mean() == pytest.approx(0.5, abs=0.003)
    assert draws.std() == pytest.approx(math.sqrt(0.25 / 100), rel=0.03)


# --- extrapolation --------------------------------------------------------------------------------


def test_model_pass_hat_hand_computed() -> None:
    assert Mixture((0.5, 0.5), (1.0, 0.5)).pass_hat(3) == pytest.approx(0.5 + 0.5 * 0.125)
    # Beta(2, 1): E[p^k] = 2 / (k + 2)
    assert BetaModel(2.0, 1.0).pass_hat(np.array([1, 8, 1000])) == pytest.approx([2 / 3, 0.2, 2 / 1002])


def test_posterior_reweights_components() -> None:
    prior = Mixture((0.5, 0.5), (1.0, 0.5))
    post = prior.posterior(2, 2)  # two passes: likelihood 1 vs 0.25
    assert post.weights == pytest.approx((0.8, 0.2))
    assert prior.posterior(1, 2).weights == pytest.approx((0.0, 1.0))  # a failure rules out "always"


def test_candidates_are_capped_by_identifiability() -> None:
    """n trials identify n moments of p: no candidate has more than n free parameters."""
    names = {n: [f.name for f in families(n)] for n in (1, 2, 3, 4, 5, 8)}
    assert names[1] == ["mixture-1"]
    assert names[2] == ["mixture-1", "beta-binomial", "always+mixture-1"]
    assert names[3] == names[2] + ["mixture-2", "always+beta"]
    assert names[4] == names[3] + ["always+mixture-2"]
    assert names[5] == names[8] == names[4] + ["mixture-3"]


KNOWN = Mixture((0.6, 0.25, 0.15), (1.0, 0.6, 0.0))


def test_fitted_mixture_recovers_a_known_truth() -> None:
    """KNOWN's top rate is exactly 1: the mixture with "always" pinned there fits as well with one
    parameter fewer, so it is chosen, and its pass^1000 keeps the whole always share."""
    counts = simulate_counts(KNOWN, 1500, 8, np.random.default_rng(7))
    model, candidates = select_model(group_counts(counts))
    assert model.name == "always+mixture-2"
    assert isinstance(model, Mixture) and model.rates[0] == 1.0
    assert model.weights == pytest.approx(KNOWN.weights, abs=0.04)
    assert model.rates == pytest.approx(KNOWN.rates, abs=0.04)
    assert float(model.pass_hat(1000)) == pytest.approx(model.weights[0])
    assert [c.name for c in candidates] == [f.name for f in families(8)]


def test_beta_binomial_fit_recovers_a_known_beta() -> None:
    rng = np.random.default_rng(5)
    c = rng.binomial(8, rng.beta(2.0, 0.5, size=3000))
    groups = group_counts([(int(x), 8) for x in c])
    starts = BetaFamily().starts(groups)
    params, loglik = BetaFamily().fit(groups, np.tile(groups[2], (len(starts), 1)), starts)
    model = BetaFamily().model(params[np.argmax(loglik)])
    assert isinstance(model, BetaModel)
    assert (model.a, model.b) == pytest.approx((2.0, 0.5), rel=0.15)


def test_extrapolation_recovers_pass_hat_beyond_n_and_agrees_below() -> None:
    counts = simulate_counts(KNOWN, 1000, 8, np.random.default_rng(11))
    exact = pass_hat_curve([c for c, _ in counts], [n for _, n in counts])
    fit = extrapolate(counts, exact)
    for k in EXTRAPOLATE_KS:
        assert fit.predicted(k)
        assert fit.curve[k][0] == pytest.approx(float(KNOWN.pass_hat(k)), abs=0.04)
    assert fit.max_gap < 0.02
    assert set(fit.fit_vs_exact) == set(range(1, 9)) and all(fit.agrees.values())


def test_95_percent_intervals_cover_the_truth_about_95_percent_of_the_time() -> None:
    """Seeded repetitions of a 300-scenario run: the bootstrap intervals of the exact pass^8 and of
    the extrapolated pass^20..1000 must cover the true values in roughly 95% of repetitions, and a
    point-mass truth must get its intervals, not refusals. Too narrow intervals (e.g. resampling
    trials instead of scenarios) cover far less."""
    repetitions, covered_exact = 40, 0
    predicted, covered_model = np.zeros(len(EXTRAPOLATE_KS)), np.zeros(len(EXTRAPOLATE_KS))
    for seed in range(repetitions):
        counts = simulate_counts(KNOWN, 300, 8, np.random.default_rng(1000 + seed))
        lo, hi = run_intervals(counts, reps=1000, seed=seed).pass_hat_k[8]
        covered_exact += lo <= KNOWN.pass_hat(8) <= hi
        fit = extrapolate(counts, {}, reps=200, seed=seed)
        shown = np.array([fit.predicted(k) for k in EXTRAPOLATE_KS])
        predicted += shown
        covered_model += shown & [fit.curve[k][1] <= KNOWN.pass_hat(k) <= fit.curve[k][2] for k in EXTRAPOLATE_KS]
    assert 0.85 <= covered_exact / repetitions <= 1.0
    assert (predicted / repetitions >= 0.9).all()
    assert ((covered_model / predicted) >= 0.85).all()


# --- partition and spread -------------------------------------------------------------------------


def test_partition_counts_and_by_persona() -> None:
    counts = {("t1", "a"): (8, 8), ("t1", "b"): (3, 8), ("t2", "a"): (0, 8), ("t2", "b"): (8, 8)}
    assert partition(counts.values()) == Partition(2, 1, 1)
    assert partition_by(counts, lambda s: [s[1]]) == {"a": Partition(1, 0, 1), "b": Partition(1, 1, 0)}


def test_variance_and_spread_hand_computed() -> None:
    assert scenario_variance(6, 8) == pytest.approx(6 * 2 / 56)
    assert scenario_variance(8, 8) == 0.0 and scenario_variance(1, 1) is None
    s = spread([(8, 8), (0, 8)])
    assert s.mean_trial_variance == 0.0 and s.between_scenarios == pytest.approx(0.25)
    # 4/8 and 8/8: raw variance 0.0625, less (1 - 1/2) * (4 * 4 / 56 / 8) / 2 of noise.
    assert spread([(4, 8), (8, 8)]).between_scenarios == pytest.approx(0.0625 - 0.5 * (16 / 56 / 8) / 2)


def test_between_scenario_spread_is_net_of_binomial_noise() -> None:
    # 260 scenarios all at p = 0.95: the raw variance of c/8 is about 0.95 * 0.05 / 8 = 0.006, the truth 0.
    # The estimate's own standard error here is about 0.0005, so 0.002 is four of them.
    counts = simulate_counts(Mixture((1.0,), (0.95,)), 260, 8, np.random.default_rng(7))
    assert spread(counts).between_scenarios < 0.002
    # A real spread survives: half at 1, half at 0.6 has var(p) = 0.04.
    counts = simulate_counts(Mixture((0.5, 0.5), (1.0, 0.6)), 400, 8, np.random.default_rng(8))
    assert spread(counts).between_scenarios == pytest.approx(0.04, abs=0.008)


def test_persona_drop_is_paired_by_task() -> None:
    counts = {(f"t{i}", "baseline"): (8, 8) for i in range(30)}
    counts |= {(f"t{i}", "rude"): (2, 8) for i in range(30)}
    (avg, *_rest) = persona_drops(counts)["rude"]
    assert avg.metric == "avg_reward" and avg.change == pytest.approx(-0.75)
    assert avg.verdict == "worse"


def test_compounding_groups_by_writes_tag() -> None:
    counts = {("a", "p"): (8, 8), ("b", "p"): (4, 8), ("c", "p"): (2, 8)}
    tags = {"a": ["writes:0"], "b": ["writes:2", "compound"], "c": ["writes:2"]}
    points = compounding(counts, tags, k=2)
    assert [(p.writes, p.scenarios) for p in points] == [(0, 1), (2, 2)]
    assert points[1].avg_reward == pytest.approx(0.375)
    assert points[1].pass_hat_k == pytest.approx((6 / 28 + 1 / 28) / 2)


# --- traffic --------------------------------------------------------------------------------------


def test_traffic_hand_computed_under_a_known_model() -> None:
    model = Mixture((0.5, 0.5), (1.0, 0.9))
    view = traffic({("t", "a"): (4, 4)}, model, per_day=10, days=2, target=0.9)
    (task,) = view.tasks
    w = 0.5 / (0.5 + 0.5 * 0.9**4)  # posterior weight of "always" after 4 passes
    assert task.success == pytest.approx(w + (1 - w) * 0.9)
    assert task.expected_failures == pytest.approx(10 * (1 - task.success))
    assert task.clean_day == pytest.approx(w + (1 - w) * 0.9**10)
    assert task.clean_days == pytest.approx(w + (1 - w) * 0.9**20)
    assert task.needed == pytest.approx(0.9 ** (1 / 10)) == needed_success(10, 0.9)
    # Its own 4 passes rule out only rates with p^4 < 0.025: a clean day of 10 may be as unlikely as 0.025^(10/4).
    assert task.clean_day_ci == pytest.approx((0.025 ** (10 / 4), 1.0))
    assert task.clean_days_ci == pytest.approx((0.025 ** (20 / 4), 1.0))


def test_traffic_on_an_all_pass_run_keeps_the_failures_its_trials_cannot_rule_out() -> None:
    # 47 tasks x 1 persona x 8 trials, all passed: the fitted model says "always" and a clean day is 1.000.
    # 376 passes cannot rule out every scenario at 0.025^(1/376) ~ 0.99, so the interval's lower end falls
    # as the traffic grows, while a figure the model gets from its own trials keeps its upper end at 1.
    counts = {(f"t{j}", "a"): (8, 8) for j in range(47)}
    model, credible = traffic_model(list(counts.values()))
    views = [traffic(counts, model, per_day, 1, 0.9, credible) for per_day in (1, 10, 100)]
    assert all(v.clean_day == pytest.approx(1.0) and v.clean_day_ci[1] == pytest.approx(1.0) for v in views)
    lows = [v.clean_day_ci[0] for v in views]
    assert lows == pytest.approx([0.025 ** (x / 8) for x in (1, 10, 100)]) and lows[0] > lows[1] > lows[2]


def test_a_failed_scenario_brings_its_wilson_interval_into_the_clean_day() -> None:
    low, high = wilson(6, 8)
    assert clean_bounds([(6, 8), (8, 8)], [3, 3]) == pytest.approx((low**3 * 0.025 ** (3 / 8), high**3))
    assert clean_bounds([(6, 8)], [3]) == pytest.approx((low**3, high**3))  # no scenario passed all: no tail


# --- gate -----------------------------------------------------------------------------------------


def test_gate_parsing() -> None:
    assert parse_gate("k=8,min=0.9") == Gate(8, 0.9)
    assert parse_gate(" k = 4 , min=0.5, persona=impatient") == Gate(4, 0.5, "impatient")
    for bad in ("k=8", "k=8,min=1.5", "k=0,min=0.5", "k=8,min=0.9,k=2", "n=8,min=0.9", "k=eight,min=0.9"):
        with pytest.raises(ValueError):
            parse_gate(bad)


def test_gate_decision_on_a_finished_run() -> None:
    counts = {("t1", "a"): (8, 8), ("t2", "a"): (6, 8)}  # pass^2 = (1 + 15/28) / 2 = 0.768
    assert decide(Gate(2, 0.75), counts).meets is True
    assert decide(Gate(2, 0.77), counts).meets is False
    assert decide(Gate(2, 0.77, "a"), counts).value == pytest.approx((1 + 15 / 28) / 2)


def test_gate_bounds_while_trials_remain() -> None:
    planned = {("t1", "a"): 8, ("t2", "a"): 8}
    # t2 failed 7 times already: its pass^2 term is 0 whatever comes; t1 could still be anything.
    undecided = decide(Gate(2, 0.4), {("t2", "a"): (0, 7)}, planned)
    assert (undecided.lo, undecided.hi, undecided.meets) == (0.0, 0.5, None)
    assert decide(Gate(2, 0.6), {("t2", "a"): (0, 7)}, planned).meets is False


# --- compare --------------------------------------------------------------------------------------


def test_compare_refuses_different_scenarios_unless_intersection() -> None:
    a = {("t1", "p"): (8, 8), ("t2", "p"): (8, 8)}
    b = {("t1", "p"): (8, 8), ("t3", "p"): (8, 8)}
    with pytest.raises(ScenarioMismatch):
        compare_runs(a, b)
    result = compare_runs(a, b, intersection=True)
    assert result.scenarios == 1 and result.left_out == 2


def test_compare_finds_a_planted_difference_and_calls_noise_noise() -> None:
    rng = np.random.default_rng(3)
    a = dict(enumerate(simulate_counts(KNOWN, 200, 8, rng)))
    planted = {s: (min(8, c + 3) if s < 100 else c, n) for s, (c, n) in a.items()}  # better on half the scenarios
    result = compare_runs(a, planted)
    assert result.verdict == "better"
    assert result.deltas[0].lo > 0 and {ch.scenario for ch in result.changes} <= set(range(100))
    again = compare_runs(a, dict(a))
    assert again.verdict == WITHIN_NOISE and not again.changes
