"""Result objects, a worked example, conventions, edge cases and argument errors.

The worked example is from the guide "Repeat AI evaluations and report uncertainty honestly".
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import evalspec.stats as es
from evalspec.stats import (
    InvalidArgument,
    beta_hdi,
    clustered_mean_interval,
    clustered_standard_error,
    hdi,
    ks_distance,
    mcnemar,
    paired_cluster_bootstrap,
    paired_difference_interval,
    paired_equivalence_test,
    paired_noninferiority_test,
    proportion_interval,
)


# --- the guide's "Compare paired cases" worked example ---------------------------------


def test_guide_wilson_82_of_100() -> None:
    """The guide: 82/100 -> 95 % Wilson 73.3 %-88.3 % (to the printed digit)."""
    r = proportion_interval(82, 100)
    assert r.method == "wilson" and r.confidence_level == 0.95 and r.n == 100 and r.successes == 82
    assert r.estimate == 0.82
    assert round(r.low * 100, 1) == 73.3
    assert round(r.high * 100, 1) == 88.3
    # and the guide's own formula: centre (p + z^2/2n)/(1 + z^2/n), half-width z sqrt(p q/n + z^2/4n^2)/(1 + z^2/n)
    p, n, z = 0.82, 100, 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert r.low == pytest.approx(centre - half, abs=1e-12)
    assert r.high == pytest.approx(centre + half, abs=1e-12)


def test_guide_paired_difference_is_four_points() -> None:
    """The guide: A 82, B 78, disagreements 8 (A only) and 4 (B only) -> (8 - 4)/100 = 4 points."""
    a, b, c = 74, 8, 4
    d = 100 - a - b - c
    assert a + b == 82 and a + c == 78
    for method in es.PAIRED_METHODS:
        r = paired_difference_interval(a, b, c, d, method=method)
        assert r.estimate == pytest.approx(0.04, abs=1e-15)
        assert r.table == (a, b, c, d)
        assert r.low < 0.04 < r.high
        # twelve disagreements do not establish a difference at 95 %
        assert r.low < 0 < r.high
    # the row-level paired bootstrap agrees in substance
    x = np.repeat([1, 1, 0, 0], [a, b, c, d]).astype(float)
    y = np.repeat([1, 0, 1, 0], [a, b, c, d]).astype(float)
    boot = paired_cluster_bootstrap(x, y, np.arange(100), resamples=4000, seed=1)
    assert boot.estimate == pytest.approx(0.04)
    assert boot.low < 0 < boot.high


# --- result objects ------------------------------------------------------------------------


def _all_results() -> list[object]:
    rng = np.random.default_rng(3)
    cl = np.repeat(np.arange(12), 5)
    x = (rng.random(60) < 0.7).astype(float)
    y = (rng.random(60) < 0.6).astype(float)
    return [
        proportion_interval(3, 10, "jeffreys"),
        paired_difference_interval(20, 12, 2, 16, "tango"),
        mcnemar(6, 16),
        paired_noninferiority_test(59, 6, 16, 80, 0.1),
        paired_equivalence_test(59, 6, 16, 80, 0.1),
        clustered_mean_interval(x, cl),
        paired_cluster_bootstrap(x, y, cl, resamples=500),
        beta_hdi(2, 5),
        hdi(rng.normal(size=500)),
        ks_distance([1, 2, 3], [2, 3, 4, 5]),
    ]


@pytest.mark.parametrize("result", _all_results(), ids=lambda r: type(r).__name__)
def test_results_are_frozen_and_json_ready(result: object) -> None:
    with pytest.raises(AttributeError):
        result.method = "other"  # type: ignore[attr-defined]
    d = result.to_dict()  # type: ignore[attr-defined]
    assert json.loads(json.dumps(d)) == d
    assert d["kind"]

    def builtin_only(v: object) -> bool:
        if isinstance(v, dict):
            return all(isinstance(k, str) and builtin_only(x) for k, x in v.items())
        if isinstance(v, list):
            return all(builtin_only(x) for x in v)
        return type(v) in (int, float, str, bool) or v is None

    assert builtin_only(d)
    if hasattr(result, "low"):
        assert result.interval == (result.low, result.high)  # type: ignore[attr-defined]
        assert result.interval.low == result.low  # type: ignore[attr-defined]
        for key in ("estimate", "low", "high", "method", "confidence_level", "n"):
            assert key in d


def test_public_names() -> None:
    for name in es.__all__:
        assert hasattr(es, name), name


# --- conventions ---------------------------------------------------------------------------


def test_one_sided_alternatives() -> None:
    up = proportion_interval(0, 30, "clopper_pearson", alternative="less")
    assert up.low == 0.0 and up.high == pytest.approx(1 - 0.05 ** (1 / 30), abs=1e-12)
    lo = proportion_interval(30, 30, "clopper_pearson", alternative="greater")
    assert lo.high == 1.0 and lo.low == pytest.approx(0.05 ** (1 / 30), abs=1e-12)
    # one-sided 95 % bound = the corresponding limit of the two-sided 90 % interval
    for method in es.PROPORTION_METHODS:
        two = proportion_interval(7, 40, method, 0.90)
        assert proportion_interval(7, 40, method, 0.95, "less").high == pytest.approx(two.high, abs=1e-12)
        assert proportion_interval(7, 40, method, 0.95, "greater").low == pytest.approx(two.low, abs=1e-12)


def test_one_sided_wilson_from_notes() -> None:
    """Case prop-zero-upper-30 notes: one-sided Wilson (z = 1.645) upper = 0.0827243."""
    assert proportion_interval(0, 30, "wilson", alternative="less").high == pytest.approx(0.0827243, abs=5e-7)
    assert proportion_interval(0, 100, "wilson", alternative="less").high == pytest.approx(0.0263427, abs=5e-7)


def test_jeffreys_boundary_convention() -> None:
    """BCD: limit reset to 0 at x = 0 and 1 at x = n; the other limit uses alpha/2."""
    r = proportion_interval(0, 20, "jeffreys")
    assert r.low == 0.0 and r.high == pytest.approx(0.1166, abs=1e-4)
    r = proportion_interval(20, 20, "jeffreys")
    assert r.high == 1.0 and r.low == pytest.approx(1 - 0.1166, abs=1e-4)


def test_newcombe_method10_equals_method8_when_ad_le_bc() -> None:
    for table in [(1, 97, 1, 1), (2, 3, 4, 1), (0, 5, 5, 0)]:
        a = paired_difference_interval(*table, method="newcombe")
        b = paired_difference_interval(*table, method="newcombe_nocc")
        assert a.interval == pytest.approx(b.interval, abs=1e-15)


def test_wald_cc_is_fagerland_form() -> None:
    a, b, c, d = 59, 6, 16, 80
    n = a + b + c + d
    r = paired_difference_interval(a, b, c, d, "wald_cc")
    half = 1.959963984540054 * math.sqrt(b + c - (abs(b - c) - 1) ** 2 / n) / n
    assert r.interval == pytest.approx(((b - c) / n - half, (b - c) / n + half), abs=1e-12)


def test_paired_se_ddof1_variant_from_notes() -> None:
    """Case paired-se-cavo2012 notes: with ddof = 1 the SE is 0.02880842833 (CR1, singleton clusters)."""
    diffs = np.repeat([0.0, 1.0, -1.0, 0.0], [59, 6, 16, 80])
    se1 = clustered_standard_error(diffs, np.arange(diffs.size), correction="CR1")
    assert se1 == pytest.approx(0.02880842833, abs=1e-10)
    assert se1 == pytest.approx(diffs.std(ddof=1) / math.sqrt(diffs.size), abs=1e-15)


def test_cluster_se_naive_and_paper_forms_from_notes() -> None:
    scores = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    clusters = [1, 1, 1, 2, 2, 3, 3, 3, 3]
    assert clustered_standard_error(scores, clusters, "CR0") == pytest.approx(math.sqrt(26) / 27, abs=1e-12)
    assert np.std(scores, ddof=1) / 3 == pytest.approx(0.1666666667, abs=1e-9)
    assert clustered_standard_error(scores, clusters, "CR1") == pytest.approx(
        math.sqrt(26) / 27 * math.sqrt(3 / 2), abs=1e-12
    )


def test_clustered_mean_interval_uses_t_on_g_minus_1() -> None:
    from scipy import stats

    scores = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    clusters = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    r = clustered_mean_interval(scores, clusters, 0.9, correction="CR1")
    assert r.df == 2 and r.n_clusters == 3 and r.correction == "CR1" and r.n == 12
    assert r.se == pytest.approx(0.288675134595, abs=1e-9)
    t = stats.t.ppf(0.95, 2)
    assert r.interval == pytest.approx((0.5 - t * r.se, 0.5 + t * r.se), abs=1e-12)
    # the default CR2: the reference case's note gives clubSandwich CR2 = 0.2886751346 (equal sizes)
    r2 = clustered_mean_interval(scores, clusters, 0.9)
    assert r2.correction == "CR2" and r2.df == pytest.approx(2.0, abs=1e-12)
    assert r2.se == pytest.approx(0.2886751346, abs=1e-10)
    assert r2.interval == pytest.approx(r.interval, abs=1e-9)


def test_cluster_labels_of_any_hashable_type() -> None:
    scores = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    expected = clustered_standard_error(scores, [1, 1, 1, 2, 2, 3, 3, 3, 3])
    for labels in (
        ["x", "x", "x", "y", "y", "z", "z", "z", "z"],
        [("d", 1)] * 3 + [("d", 2)] * 2 + [("e", 1)] * 4,
        [1, 1, 1, "1", "1", None.__class__, None.__class__, None.__class__, None.__class__],
        np.array([7, 7, 7, 3, 3, 5, 5, 5, 5]),
    ):
        assert clustered_standard_error(scores, labels) == pytest.approx(expected, abs=1e-15)


def test_mcnemar_variants() -> None:
    assert mcnemar(0, 0, "asymptotic").pvalue == 1.0
    assert mcnemar(5, 5, "exact").pvalue == 1.0
    assert mcnemar(5, 5, "mid_p").pvalue == pytest.approx(1.0)
    assert mcnemar(5, 5, "asymptotic_cc").pvalue == 1.0
    assert mcnemar(1, 7, "exact").pvalue == pytest.approx(2 * 9 / 256, abs=1e-15)
    assert mcnemar(1, 7, "mid_p").pvalue == pytest.approx(2 * 5 / 256, abs=1e-15)
    r = mcnemar(150, 86, "asymptotic")
    assert r.statistic == pytest.approx(64 / math.sqrt(236)) and r.n == 236
    assert mcnemar(86, 150, "asymptotic").statistic == pytest.approx(-64 / math.sqrt(236))


def test_noninferiority_consistent_with_lower_bound() -> None:
    r = paired_noninferiority_test(59, 6, 16, 80, 0.1)
    assert r.statistic == pytest.approx(1.24891823247, abs=1e-9)
    assert r.pvalue == pytest.approx(0.105847491126, abs=1e-9)
    assert r.noninferior is False
    assert r.low == pytest.approx(-0.113126053052, abs=1e-6) and r.high == 1.0
    r2 = paired_noninferiority_test(59, 6, 16, 80, 0.12)
    assert r2.noninferior is True and r2.low > -0.12


def test_beta_hdi_shapes() -> None:
    assert beta_hdi(3, 1).interval == pytest.approx((0.05 ** (1 / 3), 1.0), abs=1e-12)
    assert beta_hdi(1, 1, 0.9).interval == pytest.approx((0.05, 0.95))
    assert beta_hdi(0.5, 2).low == 0.0
    r = beta_hdi(5.356, 18.615)
    from scipy import stats

    d = stats.beta(5.356, 18.615)
    assert d.cdf(r.high) - d.cdf(r.low) == pytest.approx(0.95, abs=1e-10)
    assert d.pdf(r.high) == pytest.approx(d.pdf(r.low), rel=1e-7)
    with pytest.raises(InvalidArgument, match="U-shaped"):
        beta_hdi(0.5, 0.5)


def test_sample_hdi_approaches_beta_hdi() -> None:
    rng = np.random.default_rng(0)
    draws = rng.beta(2, 5, size=200_000)
    r = hdi(draws)
    exact = beta_hdi(2, 5)
    assert r.low == pytest.approx(exact.low, abs=5e-3) and r.high == pytest.approx(exact.high, abs=5e-3)
    assert np.mean((draws >= r.low) & (draws <= r.high)) >= 0.95
    assert hdi([1.0, 2.0, 3.0, 10.0], 0.75).interval == (1.0, 3.0)


def test_ks_matches_scipy_and_sign() -> None:
    from scipy import stats

    rng = np.random.default_rng(5)
    for _ in range(20):
        x = rng.integers(0, 6, size=rng.integers(1, 30)).astype(float)
        y = rng.integers(0, 6, size=rng.integers(1, 30)).astype(float) + rng.integers(0, 2)
        assert ks_distance(x, y).statistic == pytest.approx(stats.ks_2samp(x, y).statistic, abs=1e-15)
    r = ks_distance([1, 2, 3], [2, 3, 4, 5])
    assert (r.location, r.sign) == (3.0, 1)
    assert ks_distance([4, 5, 6], [1, 2, 3]).sign == -1
    assert ks_distance([1, 2], [2, 1]).statistic == 0.0


# --- the bootstrap's degenerate cases ------------------------------------------------------


def test_bootstrap_single_cluster_is_an_error() -> None:
    with pytest.raises(InvalidArgument, match="at least 2 clusters") as err:
        paired_cluster_bootstrap([1, 0, 1], [0, 0, 1], ["doc"] * 3)
    assert err.value.argument == "clusters"


def test_bootstrap_all_differences_equal() -> None:
    x = np.ones(40)
    y = np.zeros(40)
    r = paired_cluster_bootstrap(x, y, np.repeat(np.arange(8), 5), resamples=200)
    assert r.interval == (1.0, 1.0) and r.standard_error == 0.0 and "same difference" in r.note
    r = paired_cluster_bootstrap(np.ones(10), np.ones(10), np.arange(10), resamples=200)
    assert r.interval == (0.0, 0.0) and r.note


def test_bootstrap_bca_falls_back_when_undefined(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the observed difference lies outside the bootstrap distribution, BCa is undefined."""
    import evalspec.stats.bootstrap as boot

    def shifted(d: np.ndarray, m: np.ndarray, resamples: int, seed: int, workers: int) -> np.ndarray:
        return np.linspace(0.5, 0.6, resamples)  # every resample above the estimate 0.1

    monkeypatch.setattr(boot, "_bootstrap_distribution", shifted)
    x = np.array([1.0] + [0.0] * 9)
    r = paired_cluster_bootstrap(x, np.zeros(10), np.arange(10), resamples=101, interval="bca")
    assert r.estimate == pytest.approx(0.1)
    assert r.method == "percentile" and r.requested_method == "bca" and "BCa is undefined" in r.note
    # the percentile interval would be [0.5025, 0.5975]; it is extended down to the estimate it must contain
    assert r.interval == pytest.approx((0.1, float(np.quantile(np.linspace(0.5, 0.6, 101), 0.975))))
    assert r.bias_correction == 0.0 and r.acceleration == 0.0


# --- argument errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: proportion_interval(-1, 10), "successes"),
        (lambda: proportion_interval(11, 10), "successes"),
        (lambda: proportion_interval(1, 0), "n"),
        (lambda: proportion_interval(1.5, 10), "successes"),
        (lambda: proportion_interval(True, 10), "successes"),
        (lambda: proportion_interval(1, 10, "exact"), "method"),
        (lambda: proportion_interval(1, 10, confidence_level=95), "confidence_level"),
        (lambda: proportion_interval(1, 10, confidence_level=float("nan")), "confidence_level"),
        (lambda: proportion_interval(1, 10, confidence_level=1.0), "confidence_level"),
        (lambda: proportion_interval(1, 10, alternative="upper"), "alternative"),
        (lambda: paired_difference_interval(1, -2, 3, 4), "b"),
        (lambda: paired_difference_interval(0, 0, 0, 0), "a + b + c + d"),
        (lambda: paired_difference_interval(1, 2, 3, 4, "mcnemar"), "method"),
        (lambda: mcnemar(1, float("nan")), "c"),
        (lambda: mcnemar(1, 2, "chi2"), "method"),
        (lambda: paired_noninferiority_test(1, 2, 3, 4, margin=0), "margin"),
        (lambda: paired_equivalence_test(1, 2, 3, 4, margin=1.5), "margin"),
        (lambda: paired_equivalence_test(1, 2, 3, 4, margin="a"), "margin"),
        (lambda: clustered_standard_error([], []), "values"),
        (lambda: clustered_standard_error([1.0, np.nan], [1, 2]), "values"),
        (lambda: clustered_standard_error([1.0, 0.0], [1, 2, 3]), "clusters"),
        (lambda: clustered_standard_error([1.0, 0.0], [1, 1]), "clusters"),
        (lambda: clustered_standard_error([1.0, 0.0], [1, None]), "clusters"),
        (lambda: clustered_standard_error([1.0, 0.0], [1.0, np.nan]), "clusters"),
        (lambda: clustered_standard_error([1.0, 0.0], [1, 2], correction="CR4"), "correction"),
        (lambda: clustered_standard_error([[1.0, 0.0]], [1, 2]), "values"),
        (lambda: clustered_mean_interval([1.0, 0.0], [1, 2], confidence_level=0), "confidence_level"),
        (lambda: paired_cluster_bootstrap([1, 0], [1], [1, 2]), "y"),
        (lambda: paired_cluster_bootstrap([1, 2], [1, 0], [1, 2]), "x"),
        (lambda: paired_cluster_bootstrap([1, 0], [1, 0], [1, 2], resamples=10), "resamples"),
        (lambda: paired_cluster_bootstrap([1, 0], [1, 0], [1, 2], seed=-1), "seed"),
        (lambda: paired_cluster_bootstrap([1, 0], [1, 0], [1, 2], interval="basic"), "interval"),
        (lambda: paired_cluster_bootstrap([1, 0], [1, 0], "ab"), "clusters"),
        (lambda: beta_hdi(0, 1), "a"),
        (lambda: beta_hdi(1, -1), "b"),
        (lambda: beta_hdi(2, 2, prob=1.2), "prob"),
        (lambda: hdi([]), "samples"),
        (lambda: ks_distance([1.0], []), "y"),
        (lambda: ks_distance([np.inf], [1.0]), "x"),
    ],
)
def test_invalid_arguments_name_argument_and_value(call: object, argument: str) -> None:
    with pytest.raises(ValueError) as err:
        call()  # type: ignore[operator]
    assert isinstance(err.value, InvalidArgument)
    assert err.value.argument == argument
    assert str(err.value).startswith(f"{argument}=")


def test_tango_at_another_level() -> None:
    p = paired_difference_interval(59, 6, 16, 80, "tango", 0.9)
    assert p.interval == pytest.approx((-0.113126053052, -0.0150583638158), abs=1e-6)


def test_boolean_cluster_labels() -> None:
    assert clustered_standard_error([1.0, 0.0, 1.0, 1.0], np.array([True, False, True, False])) > 0
    with pytest.raises(InvalidArgument, match="at least 2"):
        clustered_standard_error([1.0, 0.0], np.array([True, True]))
