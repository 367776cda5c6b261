"""Every reference case in ``data/statistics-cases.json`` that evalspec.stats covers.

The file is a copy of ``shared/reference/statistics-cases.json`` (106 cases: id, statistic,
method, inputs, expected, tolerance, source, notes). Each covered case is checked at its own
stated tolerance; the test id carries the case id and a short form of its source. The
beta-binomial / BDA cases belong to the Bayesian issue and are reported as skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from evalspec.stats import (
    beta_hdi,
    clustered_standard_error,
    distribution_hdi,
    ks_distance,
    mcnemar,
    paired_difference_interval,
    paired_equivalence_test,
    proportion_interval,
)
from evalspec.stats.proportion import _agresti_coull_unclipped

CASES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "statistics-cases.json").read_text())


def _source_tag(source: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", source)
    return "_".join(words[:6])


def _table(inp: dict[str, Any]) -> tuple[int, int, int, int]:
    if "a_both" in inp:
        return inp["a_both"], inp["b_first_only"], inp["c_second_only"], inp["d_neither"]
    # PropCIs orientation case: only b, c, n and a + d are given; split a + d arbitrarily
    # (the Tango interval depends on a and d only through their sum)
    return inp["a_plus_d"], inp["b"], inp["c"], 0


_PROPORTION_METHOD = [
    ("with continuity correction", "wilson_cc"),
    ("wilson", "wilson"),
    ("clopper", "clopper_pearson"),
    ("mid-p", "mid_p"),
    ("jeffreys", "jeffreys"),
    ("agresti-coull", "agresti_coull"),
    ("wald", "wald"),
]


def _proportion_method(text: str) -> str:
    low = text.lower()
    for key, method in _PROPORTION_METHOD:
        if key in low:
            return method
    raise AssertionError(f"unmapped proportion method {text!r}")


def _paired_method(text: str) -> str:
    low = text.lower()
    if "method 8" in low:
        return "newcombe_nocc"
    if "newcombe" in low:
        return "newcombe"
    if "tango" in low:
        return "tango"
    if "agresti-min" in low:
        return "agresti_min"
    if "bonett" in low:
        return "bonett_price"
    if "continuity" in low:
        return "wald_cc"
    if low == "wald":
        return "wald"
    raise AssertionError(f"unmapped paired method {text!r}")


def _mcnemar_method(text: str) -> str:
    low = text.lower()
    if "mid-p" in low:
        return "mid_p"
    if "exact" in low:
        return "exact"
    if "with continuity" in low:
        return "asymptotic_cc"
    if "asymptotic" in low:
        return "asymptotic"
    raise AssertionError(f"unmapped McNemar method {text!r}")


def compute(case: dict[str, Any]) -> Any:
    """Evalspec's value for a case, in the shape of ``case['expected']``."""
    stat, method, inp = case["statistic"], case["method"], case["inputs"]
    if stat.startswith("single proportion"):
        return list(proportion_interval(inp["x"], inp["n"], _proportion_method(method), inp["conf"]).interval)
    if stat.startswith("one-sided"):
        return proportion_interval(inp["x"], inp["n"], "clopper_pearson", inp["conf"], alternative="less").high
    if stat.startswith("paired difference"):
        r = paired_difference_interval(*_table(inp), method=_paired_method(method), confidence_level=inp["conf"])
        return list(r.interval)
    if stat == "McNemar test p-value":
        variant = "exact" if method.startswith("any variant") else _mcnemar_method(method)
        return mcnemar(inp["b"], inp["c"], variant).pvalue
    if stat == "McNemar z statistic":
        return mcnemar(inp["b"], inp["c"], "asymptotic").statistic
    if stat.startswith("paired equivalence"):
        r = paired_equivalence_test(*_table(inp), margin=inp["margin"], confidence_level=1 - inp["alpha"])
        return [r.statistic_lower, r.pvalue_lower, r.statistic_upper, r.pvalue_upper]
    if stat.startswith("standard error of paired difference"):
        a, b, c, d = _table(inp)
        diffs = np.repeat([0.0, 1.0, -1.0, 0.0], [a, b, c, d])
        # each item its own cluster with CR0 = sqrt(var(ddof=0)/n) = the Wald SE
        return clustered_standard_error(diffs, np.arange(diffs.size), correction="CR0")
    if stat == "cluster-robust SE of a mean":
        correction = "CR0" if method.startswith("CR0") else "CR1"
        return clustered_standard_error(inp["scores"], inp["clusters"], correction=correction)
    if stat == "two-sample Kolmogorov-Smirnov D":
        return ks_distance(inp["x1"], inp["x2"]).statistic
    if stat == "95% highest density interval":
        if inp["dist"] == "beta":
            return list(beta_hdi(inp["a"], inp["b"], inp["mass"]).interval)
        if inp["dist"] == "gamma":
            dist = sps.gamma(inp["shape"], scale=1.0 / inp["rate"])
            return list(distribution_hdi(dist, inp["mass"]).interval)
    return None


def _params() -> list[Any]:
    out = []
    for case in CASES:
        marks = []
        if case["id"].startswith("betabinom-"):
            marks.append(pytest.mark.skip(
                reason="beta-binomial case: checked by tests/stats/test_beta_binomial.py (rat tumours), except the "
                "BDA (alpha+beta)^(-5/2) prior's posterior, a prior evalspec's model does not use"))
        out.append(pytest.param(case, id=f"{case['id']}--{_source_tag(case['source'])}", marks=marks))
    return out


@pytest.mark.parametrize("case", _params())
def test_reference_case(case: dict[str, Any]) -> None:
    got = compute(case)
    assert got is not None, f"case {case['id']} is not mapped to any evalspec.stats function"
    expected = case["expected"]
    tol = case["tolerance"]
    if case["method"].startswith("Agresti-Coull, unclipped"):
        # evalspec clips Agresti-Coull to [0, 1]; the unclipped limits are tested on the raw formula
        inp = case["inputs"]
        tail = (1 - inp["conf"]) / 2
        raw = _agresti_coull_unclipped(inp["x"], inp["n"], tail)
        np.testing.assert_allclose(raw, expected, rtol=0, atol=tol)
        expected = list(np.clip(expected, 0.0, 1.0))
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float), rtol=0, atol=tol)


def test_every_case_is_covered_or_explicitly_skipped() -> None:
    """No case silently falls through the dispatcher."""
    unmapped = [c["id"] for c in CASES if not c["id"].startswith("betabinom-") and compute(c) is None]
    assert unmapped == []
    assert len(CASES) == 106


def test_agresti_coull_clipped_value_from_notes() -> None:
    """The notes give the clipped value for 30/30: [0.86528830386, 1.0]."""
    r = proportion_interval(30, 30, "agresti_coull")
    np.testing.assert_allclose(r.interval, [0.86528830386, 1.0], atol=5e-6, rtol=0)


def test_tost_duality_with_90_percent_tango_interval_from_notes() -> None:
    """Notes of the equivalence cases give the 90 % Tango interval; equivalence iff inside the margins."""
    expected = {
        (59, 6, 16, 80, 0.1): ([-0.113126053052, -0.0150583638158], 0.105847491126, False),
        (150, 12, 10, 28, 0.05): ([-0.0299598732986, 0.0506559029225], 0.0525713867922, False),
        (43, 0, 1, 0, 0.1): ([-0.0956624263992, 0.0365169384181], 0.0437658444386, True),
    }
    for (a, b, c, d, margin), (ci, p_tost, equivalent) in expected.items():
        r = paired_equivalence_test(a, b, c, d, margin)
        np.testing.assert_allclose(r.interval, ci, atol=1e-6, rtol=0)
        assert r.pvalue == pytest.approx(p_tost, abs=1e-6)
        assert r.equivalent is equivalent
        assert r.equivalent == (-margin < r.low and r.high < margin)
