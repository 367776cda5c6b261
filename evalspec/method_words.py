"""Interval and test methods in words: the claim names them by code, a decision owner reads words.

``cluster_t (CR2, t on 57.1 df)`` is "cluster-robust t interval (CR2 small-sample correction,
57.1 degrees of freedom)". Used by the decision's reasons and by the report; the claim keeps
the codes (its ``method`` fields), so nothing is lost.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["method_words"]

#: Interval and test methods as the claim names them -> words a decision owner can read.
_METHOD_WORDS = {
    "newcombe": "Newcombe score interval for paired proportions",
    "newcombe_nocc": "Newcombe score interval for paired proportions (uncorrected)",
    "tango": "Tango score interval for paired proportions",
    "wald": "Wald interval",
    "wald_cc": "Wald interval with continuity correction",
    "agresti_min": "Agresti–Min adjusted interval for paired proportions",
    "bonett_price": "Bonett–Price adjusted interval for paired proportions",
    "wilson": "Wilson score interval",
    "wilson_cc": "Wilson score interval with continuity correction",
    "clopper_pearson": "Clopper–Pearson exact interval",
    "jeffreys": "Jeffreys interval",
    "agresti_coull": "Agresti–Coull interval",
    "mid_p": "mid-p exact interval",
    "durkalski": "Durkalski's McNemar test for clustered pairs",
    "exact": "exact binomial test",
    "asymptotic": "chi-square approximation",
    "asymptotic_cc": "chi-square approximation with continuity correction",
    "hdi": "highest-density interval",
    "beta_hdi": "highest-density interval of the Beta posterior",
    "sample_hdi": "highest-density interval of the posterior draws",
    "percentile": "percentile",
    "bca": "bias-corrected and accelerated (BCa)",
}
_CORRECTIONS = {"CR2": "CR2 small-sample correction", "CR1": "CR1 correction", "CR0": "no small-sample correction",
                "CR3 jackknife, skewness-corrected": "CR3 jackknife correction with Hall's skewness correction"}


def method_words(method: Any) -> str:
    """A method code from the claim (``cluster_t (CR2, t on 57.1 df)``, ``wilson_cluster_deff``) in words.

    Codes it does not know (or text that is already words) come back as they are, so nothing
    the claim says is ever hidden.
    """
    if not isinstance(method, str) or not method:
        return "—" if method is None else str(method)
    text = method.strip()
    if text in _METHOD_WORDS:
        return _METHOD_WORDS[text]
    m = re.fullmatch(r"(cluster|case)_t \((CR\d|CR3 jackknife, skewness-corrected), t on ([\d.]+) df\)", text)
    if m:
        unit = "cluster-robust t interval" if m.group(1) == "cluster" else "t interval treating cases as independent"
        return f"{unit} ({_CORRECTIONS.get(m.group(2), m.group(2))}, {m.group(3)} degrees of freedom)"
    m = re.fullmatch(r"(cluster|case)_bootstrap \((percentile|bca)\)", text)
    if m:
        what = "cluster bootstrap" if m.group(1) == "cluster" else "bootstrap of cases"
        return f"{what}, {_METHOD_WORDS[m.group(2)]} interval"
    m = re.fullmatch(r"cluster_robust_t_(cr\d)", text)
    if m:
        return f"cluster-robust t interval ({_CORRECTIONS.get(m.group(1).upper(), m.group(1).upper())})"
    m = re.fullmatch(r"clustered_mean_t \((CR\d)\)", text)
    if m:
        return f"cluster-robust t interval for the mean ({_CORRECTIONS.get(m.group(1), m.group(1))})"
    m = re.fullmatch(r"([a-z_]+?)_cluster_deff(_conservative_df)?", text)
    if m and m.group(1) in _METHOD_WORDS:
        return (f"{_METHOD_WORDS[m.group(1)]} on the effective number of cases (the clusters' design effect)"
                + (", conservative degrees of freedom" if m.group(2) else ""))
    m = re.fullmatch(r"newcombe on (\d+) (\w+) \(no disagreement\)", text)
    if m:
        return f"Newcombe score interval on the {m.group(1)} {m.group(2)} (the candidates never disagree)"
    return text
