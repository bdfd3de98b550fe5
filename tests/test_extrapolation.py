"""pass^k beyond n: the model is re-selected in every bootstrap resample, and a figure no model can be
trusted for is withheld with its reason, in the JSON, the terminal and the HTML report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta
from test_report_review import invoke, report_json, store

from passhat.metrics.estimators import pass_hat_curve
from passhat.metrics.extrapolate import (
    EXTRAPOLATE_KS,
    AlwaysBeta,
    AtomFamily,
    BetaModel,
    Mixture,
    _fit_all,
    bootstrap_pass_hat,
    extrapolate,
    group_counts,
    loglik,
    moment_bounds,
    unseen_tail_floor,
)
from passhat.metrics.intervals import percentile, resample_multiplicities
from passhat.metrics.simulate import Blend, draw_rates, simulate_counts

# Reliable scenarios spread just below 1, flaky ones, and nearly hopeless ones: no candidate is the truth.
BETA_MIXTURE = Blend((0.6, 0.25, 0.15), (BetaModel(40.0, 1.0), BetaModel(6.0, 3.0), BetaModel(0.5, 8.0)))
POINT_MASSES = Mixture((0.6, 0.25, 0.15), (1.0, 0.6, 0.0))


def from_histogram(histogram: dict[int, int], trials: int = 8) -> list[tuple[int, int]]:
    """One (c, n) per scenario: histogram[c] scenarios passed c of `trials`."""
    return [(c, trials) for c, scenarios in histogram.items() for _ in range(scenarios)]


def fit(counts: list[tuple[int, int]], **options: int | bool):
    return extrapolate(counts, pass_hat_curve([c for c, _ in counts], [n for _, n in counts]), **options)


# --- the models ---------------------------------------------------------------------------------------


def test_always_beta_hand_computed() -> None:
    model = AlwaysBeta(0.5, 2.0, 1.0)  # half never fail, half p ~ Beta(2, 1): E[p^k] = 2 / (k + 2)
    assert model.pass_hat(np.array([1, 1000])) == pytest.approx([0.5 + 0.5 * 2 / 3, 0.5 + 0.5 * 2 / 1002])
    assert model.posterior(2, 3).always == 0.0  # a failure rules out "never fails"
    all_pass = model.posterior(3, 3)  # likelihood 1 against E[p^3] = 2/5
    assert all_pass.always == pytest.approx(0.5 / (0.5 + 0.5 * 0.4)) and (all_pass.a, all_pass.b) == (5.0, 1.0)
    groups = (np.array([3.0, 2.0]), np.array([3.0, 3.0]), np.array([1.0, 1.0]))
    assert loglik(model, groups) == pytest.approx(np.log(0.5 + 0.5 * 0.4) + np.log(0.5 * 2 * 3 / (5 * 4 * 3)))


def test_a_blend_truth_draws_and_predicts_from_its_parts() -> None:
    truth = Blend((0.25, 0.75), (Mixture((1.0,), (1.0,)), BetaModel(2.0, 2.0)))
    assert truth.pass_hat(2) == pytest.approx(0.25 + 0.75 * 0.3)  # E[p^2] of Beta(2, 2) = 3/10
    rates = draw_rates(truth, 20000, np.random.default_rng(0))
    assert (rates == 1.0).mean() == pytest.approx(0.25, abs=0.01) and rates.mean() == pytest.approx(0.625, abs=0.01)


def test_a_component_that_never_fails_is_pinned_at_exactly_one() -> None:
    counts = simulate_counts(Mixture((0.5, 0.5), (1.0, 0.8)), 1000, 8, np.random.default_rng(3))
    result = fit(counts, reps=100)
    assert result.model.name == "always+mixture-1" and result.model.rates[0] == 1.0
    assert result.curve[1000][0] == pytest.approx(0.5, abs=0.04)  # a rate fitted at 0.998 would give 0.07


def test_a_mixture_with_an_always_share_fits_every_resample_at_least_as_well_as_one_rate() -> None:
    # always+mixture-1 holds mixture-1 (its share at 1 at 0): where the data need no "always", the fit must
    # still reach that likelihood, in every resample, though the share creeps to 0 (plain EM stalled short).
    counts = from_histogram({6: 17, 7: 70, 8: 173})
    groups = group_counts(counts)
    draws = resample_multiplicities(groups[2], 200, 0).astype(float)
    one_rate, with_always = AtomFamily(1), AtomFamily(2, always=True)
    _, nested = one_rate.fit(groups, draws, np.tile(one_rate.starts(groups)[1], (200, 1)))
    _, richer = with_always.fit(groups, draws, np.tile(with_always.starts(groups)[1], (200, 1)))
    assert (richer >= nested - 1e-6).all()


# --- intervals: the model is chosen again in every resample -------------------------------------------


def test_reselecting_the_model_covers_a_continuous_truth_the_held_model_misses() -> None:
    counts = simulate_counts(BETA_MIXTURE, 235, 8, np.random.default_rng(0))
    truth = float(BETA_MIXTURE.pass_hat(100))
    groups = group_counts(counts)
    held, _ = bootstrap_pass_hat(_fit_all(groups), groups, [100], 200, 0, reselect=False)
    ((held_lo, held_hi),) = percentile(held)
    assert not held_lo <= truth <= held_hi  # the old interval: the first choice's own resampling noise only
    reselected = fit(counts, reps=200)
    _, lo, hi = reselected.curve[100]
    assert lo <= truth <= hi and reselected.predicted(100)
    assert sum(share > 0.05 for share in reselected.chosen_share.values()) >= 2  # the resamples did choose differently


def test_a_point_mass_truth_gets_numeric_intervals_that_cover_it() -> None:
    counts = simulate_counts(POINT_MASSES, 235, 8, np.random.default_rng(1))
    result = fit(counts, reps=200)
    doc = result.to_json()
    for k in EXTRAPOLATE_KS:
        lo, hi = doc["ci"][str(k)]
        assert doc["pass_hat_k"][str(k)] is not None and lo <= float(POINT_MASSES.pass_hat(k)) <= hi
    assert doc["not_predicted"] == {} and all(doc["agrees"].values())


# --- the verdict: not predicted, and why --------------------------------------------------------------


# 100 scenarios × 8 trials from a truth where 70% never fail and the rest draw p from Beta(9, 1):
# "the 84 all-pass scenarios never fail" and "they fail about once in fifty" fit the counts alike.
ALWAYS_OR_ALMOST = {4: 1, 5: 2, 7: 13, 8: 84}


def test_models_that_fit_alike_but_predict_apart_withhold_pass_k() -> None:
    result = fit(from_histogram(ALWAYS_OR_ALMOST), reps=200)
    doc = result.to_json()
    assert doc["pass_hat_k"]["20"] is not None  # close to the data, the models still agree
    assert doc["pass_hat_k"]["100"] is None and doc["ci"]["100"] is None and doc["pass_hat_k"]["1000"] is None
    reason = doc["not_predicted"]["100"]
    assert "fit the data about as well" in reason and "cannot tell which is right" in reason
    low, high = (float(x) for x in reason.split(" from ")[1].split(" (")[0].split(" to "))
    assert high - low > 0.3  # the disagreement is real, not rounding
    assert max(int(k) for k in doc["curve"]) < 100  # the chart stops where the prediction does


def test_a_model_that_cannot_reproduce_what_was_measured_predicts_nothing() -> None:
    # Every scenario passed exactly 4 of 8: far less spread than any success rate gives (binomial).
    result = fit(from_histogram({4: 100}), reps=100)
    assert not all(result.agrees.values())
    assert set(result.to_json()["not_predicted"]) == {"20", "100", "1000"}
    assert "does not reproduce what was measured" in result.withheld[20]


def test_a_run_where_no_scenario_passed_all_n_is_no_misfit() -> None:
    # 30 scenarios at p = 0.7: none passed 8 of 8 (exact pass^8 = 0, with a bootstrap interval of [0, 0]),
    # which one success rate of 0.65 makes likely (0.97^30 = 0.4). The fit stands.
    result = fit(from_histogram({2: 1, 3: 2, 4: 5, 5: 8, 6: 9, 7: 5}), reps=100)
    assert result.fit_vs_exact[8][1] == 0.0 and result.fit_vs_exact[8][0] > 0.02
    assert all(result.agrees.values()) and result.withheld == {}


def test_an_all_pass_run_keeps_the_rates_its_trials_cannot_rule_out_in_the_interval() -> None:
    # 47 scenarios x 8 trials, every one passed: 376 passes cannot tell p = 1 from p = 0.99 (pass^1000 ~ 0.00004).
    # Every p equal to the pooled one-sided 2.5% Clopper-Pearson bound, 0.025^(1/376), is not ruled out.
    result = fit(from_histogram({8: 47}), reps=50)
    for k in EXTRAPOLATE_KS:
        value, lo, hi = result.curve[k]
        assert value == pytest.approx(1.0) and hi == pytest.approx(1.0)
        assert lo == pytest.approx(0.025 ** (k / 376))  # 0.82 at k = 20, 0.37 at 100, 5e-5 at 1000
    assert result.curve[8][1] == pytest.approx(1.0)  # k <= n: measured, no floor


def test_the_unseen_tail_only_lowers_the_lower_end_when_some_scenarios_failed() -> None:
    # 40 of 47 never failed; the rest failed: the floor counts them as 0 and the never-failed at the pooled bound.
    counts = from_histogram({8: 40, 5: 7})
    result, held = fit(counts, reps=50), unseen_tail_floor(group_counts(counts), [20, 1000])
    assert held == pytest.approx([40 / 47 * 0.025 ** (20 / 320), 40 / 47 * 0.025 ** (1000 / 320)])
    assert result.curve[1000][1] <= held[1] and result.curve[20][1] <= held[0]


def test_a_zero_success_run_keeps_the_never_failing_share_it_cannot_rule_out() -> None:
    # 47 scenarios x 8 trials, every one failed: the bootstrap resamples "none ever passes" every time and
    # read pass^k [0, 0]. A share of scenarios that never fail, up to Jeffreys' 97.5% bound on 0 of 47
    # (Beta(0.5, 47.5)), is not ruled out, and pass^k is at least that share whatever k.
    result = fit(from_histogram({0: 47}))
    for k in EXTRAPOLATE_KS:
        value, lo, hi = result.curve[k]
        assert value == pytest.approx(0.0) and lo == pytest.approx(0.0)
        assert hi == pytest.approx(beta(0.5, 47.5).ppf(0.975), rel=0.15)
    assert result.curve[8][2] == pytest.approx(0.0)  # k <= n is measured, and its interval is the report's own


def test_many_scenarios_just_below_one_at_four_trials_keep_their_true_tail_in_the_interval() -> None:
    # 500 scenarios x 4 trials of the beta mixture: the 60% near p = 0.975 mostly pass 4 of 4, so "always +
    # a mixture" fits best and reads pass^100 ~ 0.5 against a truth of 0.17. What 4 trials cannot rule out
    # (the measured pass^3 and pass^4 allow much less) must stay in the interval.
    for seed in range(5):
        counts = simulate_counts(BETA_MIXTURE, 500, 4, np.random.default_rng(seed))
        result = fit(counts, reps=100)
        for k in (20, 100):
            _, lo, hi = result.curve[k]
            assert lo <= float(BETA_MIXTURE.pass_hat(k)) <= hi, (seed, k, result.curve[k])


def test_the_moment_floor_is_as_high_as_the_last_two_measured_moments_allow() -> None:
    # Half the scenarios never pass, half pass with p = 0.9: 20,000 scenarios x 4 trials at their expected
    # counts. Mass at 0 and at pass^4 / pass^3 = 0.9 is exactly the spread the bound assumes, so the floor
    # sits just under the truth (0.5 * 0.9^k): it lowers the lower end no further than the trials require
    # (at k = 100 the ratio's sampling error, raised to the 96th power, takes it further below).
    counts = from_histogram({4: 6561, 3: 2916, 2: 486, 1: 36, 0: 10001}, trials=4)
    (at_4, at_20, at_100), _ = moment_bounds(group_counts(counts), [4, 20, 100])
    assert at_4 == 1.0  # k <= n is measured: no floor
    assert 0.9 * 0.5 * 0.9**20 <= at_20 <= 0.5 * 0.9**20 and at_100 <= 0.5 * 0.9**100


def test_the_moment_ceiling_is_as_low_as_the_last_two_measured_moments_allow() -> None:
    # A fifth of the scenarios never fail, the rest pass with p = 0.5: mass at 1 beside one rate is the
    # spread the ceiling assumes, so it sits just over the truth (0.2 + 0.8 * 0.5^k), however far k goes.
    counts = from_histogram({4: 2500, 3: 2000, 2: 3000, 1: 2000, 0: 500}, trials=4)
    _, (at_4, at_20, at_1000) = moment_bounds(group_counts(counts), [4, 20, 1000])
    assert at_4 == 0.0  # k <= n is measured: no ceiling
    for ceiling, k in ((at_20, 20), (at_1000, 1000)):
        assert 0.2 + 0.8 * 0.5**k <= ceiling <= 1.1 * (0.2 + 0.8 * 0.5**k)


def test_a_well_identified_truth_keeps_an_informative_lower_end() -> None:
    # 8 trials of "0.6 never fail, 0.25 at 0.6, 0.15 never pass": pass^8 and pass^7 are nearly equal, so
    # the floor at k = 20 stays close to the truth (0.6) instead of reaching down to 0.
    counts = simulate_counts(POINT_MASSES, 235, 8, np.random.default_rng(1))
    _, lo, hi = fit(counts, reps=100).curve[20]
    truth = float(POINT_MASSES.pass_hat(20))
    assert 0.8 * truth < lo <= truth <= hi


# --- the reports ----------------------------------------------------------------------------------------


def stored_histogram(out: Path, run_id: str, histogram: dict[int, int]) -> None:
    """A stored run whose scenario j passed exactly its histogram count of 8 trials."""
    wanted = [c for c, scenarios in histogram.items() for _ in range(scenarios)]
    rates = {(f"t{j:03d}", "a"): 1.0 for j in range(len(wanted))}
    store(
        out,
        run_id,
        rates,
        trial_extra=lambda task, persona, i: {"reward": 0, "signature": "no_write"} if i >= wanted[int(task[1:])] else None,
    )


def test_reports_say_not_predicted_with_the_reason_where_models_disagree(tmp_path: Path) -> None:
    stored_histogram(tmp_path, "r", ALWAYS_OR_ALMOST)
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html", "--full")
    x = doc["metrics"]["extrapolated"]
    assert x["pass_hat_k"]["20"] is not None and x["pass_hat_k"]["100"] is None
    out = result.output
    assert "not predicted (below)" in out and f"{x['pass_hat_k']['20']:.3f} [" in out
    assert "pass^100: not predicted — models that fit the data about as well" in out.replace("\n", " ")
    html = (tmp_path / "r.html").read_text()
    assert "not predicted: models that fit the data about as well" in html
    assert html.count("Model-based pass^100") == 1 and "pass^100 (" in html


def test_reports_say_once_that_nothing_beyond_n_is_predicted_when_the_fit_misses(tmp_path: Path) -> None:
    stored_histogram(tmp_path, "r", {4: 100})
    result, doc = report_json(tmp_path, "r", "--html", tmp_path / "r.html", "--full")
    x = doc["metrics"]["extrapolated"]
    assert all(v is None for v in x["pass_hat_k"].values()) and doc["metrics"]["extrapolation_skipped"] is None
    out = result.output.replace("\n", " ")
    assert "pass^k beyond n = 8: not predicted — the best-fitting model" in out
    assert "predicted pass^k [95% CI]" not in out
    html = (tmp_path / "r.html").read_text()
    assert "pass^k beyond n is not predicted: the best-fitting model" in html and "Model-based pass^100" not in html


def test_traffic_withholds_the_clean_days_the_report_does_not_predict(tmp_path: Path) -> None:
    # The report predicts pass^20 of this run but not pass^100; 10 conversations a day are within what it
    # predicts, 100 days of them (pass^1000 for each scenario) are not, and traffic says so with the reason.
    stored_histogram(tmp_path, "r", ALWAYS_OR_ALMOST)
    path = tmp_path / "t.json"
    result = invoke("traffic", "r", "--out", tmp_path, "--per-day", 10, "--k-days", 100, "--json", path)
    assert result.exit_code == 0, result.output
    doc = json.loads(path.read_text())
    assert all(t["clean_day"] is not None and t["clean_days"] is None for t in doc["tasks"])
    assert all(t["clean_day_ci"][0] <= t["clean_day"] <= t["clean_day_ci"][1] for t in doc["tasks"])
    assert all(t["clean_days_ci"] is None for t in doc["tasks"])
    assert f"{doc['tasks'][0]['clean_day']:.3f} [" in result.output  # a shown figure carries its interval
    assert doc["clean_day"] is not None and "models that fit the data about as well" in doc["not_predicted"]
    assert "not predicted" in result.output and "does not predict pass^k that far" in result.output.replace("\n", " ")


def test_the_dashboards_traffic_calculator_withholds_what_the_report_does(tmp_path: Path) -> None:
    from web_support import make_app, signed_in

    stored_histogram(tmp_path, "r", ALWAYS_OR_ALMOST)
    client = signed_in(make_app(tmp_path), tmp_path, "viewer")
    page = client.get("/runs/r/traffic", params={"per_day": "10", "days": "100", "target": "0.9"})
    assert page.status_code == 200, page.text
    assert "the report does not predict pass^k that far: models that fit the data about as well" in page.text
    assert page.text.count('<td class="num">not predicted</td>') == 100  # P(clean 100 days) of each task
    shown = r'<td class="num">[01]\.\d{3} <span class="muted">\[[^\]]+\]</span></td><td class="num">not predicted'
    assert len(re.findall(shown, page.text)) == 100  # P(clean day) of each task, with its range
