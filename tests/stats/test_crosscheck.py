"""Grid cross-checks against independent implementations (statsmodels, scipy).

The reference file pins published values at a few points; these tests compare whole grids
of inputs with libraries that implement the same definitions, at 1e-9 unless stated.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from evalspec.stats import clustered_standard_error, mcnemar, proportion_interval

GRID = [(x, n) for n in (1, 2, 5, 13, 40, 101) for x in range(n + 1)]
LEVELS = (0.8, 0.95, 0.99)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("wilson", "wilson"), ("clopper_pearson", "beta"), ("agresti_coull", "agresti_coull"), ("jeffreys", "jeffreys")],
)
def test_against_statsmodels(ours: str, theirs: str, level: float) -> None:
    for x, n in GRID:
        if ours == "jeffreys" and x in (0, n):
            continue  # convention split at the boundary (statsmodels does not reset to 0/1; see notes)
        r = proportion_interval(x, n, ours, level)
        lo, hi = proportion_confint(x, n, alpha=1 - level, method=theirs)
        assert r.interval == pytest.approx((lo, hi), abs=1e-9), (x, n)


@pytest.mark.parametrize(
    ("ours", "theirs", "level"),
    [("wilson", "wilson", 0.9), ("wilson_cc", "wilsoncc", 0.8), ("wilson_cc", "wilsoncc", 0.95),
     ("wilson_cc", "wilsoncc", 0.99), ("clopper_pearson", "exact", 0.95)],  # statsmodels covers CP at all levels
)
def test_against_scipy_binomtest(ours: str, theirs: str, level: float) -> None:
    for x, n in GRID:
        ci = stats.binomtest(x, n).proportion_ci(confidence_level=level, method=theirs)
        assert proportion_interval(x, n, ours, level).interval == pytest.approx((ci.low, ci.high), abs=1e-9), (x, n)


@pytest.mark.parametrize("level", LEVELS)
def test_mid_p_limits_solve_their_defining_equations(level: float) -> None:
    tail = (1 - level) / 2
    for x, n in GRID:
        r = proportion_interval(x, n, "mid_p", level)
        if x > 0:
            assert stats.binom.sf(x, n, r.low) + 0.5 * stats.binom.pmf(x, n, r.low) == pytest.approx(tail, abs=1e-10)
        if x < n:
            assert stats.binom.cdf(x - 1, n, r.high) + 0.5 * stats.binom.pmf(x, n, r.high) == pytest.approx(
                tail, abs=1e-10
            )


def test_mcnemar_against_statsmodels() -> None:
    for b in range(0, 25, 3):
        for c in range(0, 25, 4):
            if b + c == 0:
                continue
            table = [[10, b], [c, 10]]
            assert mcnemar(b, c, "exact").pvalue == pytest.approx(sm_mcnemar(table, exact=True).pvalue, abs=1e-12)
            assert mcnemar(b, c, "asymptotic").pvalue == pytest.approx(
                sm_mcnemar(table, exact=False, correction=False).pvalue, abs=1e-12
            )
            if abs(b - c) >= 1:  # statsmodels squares |b - c| - 1 without flooring it at 0
                assert mcnemar(b, c, "asymptotic_cc").pvalue == pytest.approx(
                    sm_mcnemar(table, exact=False, correction=True).pvalue, abs=1e-12
                )


@pytest.mark.parametrize("correction", ["CR0", "CR1"])
def test_clustered_se_against_statsmodels_ols(correction: str) -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    for _ in range(10):
        g = int(rng.integers(2, 30))
        clusters = rng.integers(0, g, size=int(rng.integers(g, 200)))
        values = rng.random(clusters.size) + rng.normal(size=g)[clusters % g]
        _, groups = np.unique(clusters, return_inverse=True)
        if np.unique(groups).size < 2:
            continue
        fit = sm.OLS(values, np.ones_like(values)).fit(
            cov_type="cluster", cov_kwds={"groups": groups, "use_correction": correction == "CR1"}
        )
        assert clustered_standard_error(values, clusters, correction) == pytest.approx(float(fit.bse[0]), rel=1e-10)
