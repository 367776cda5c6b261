"""Frozen result objects returned by the statistics kernels (scipy.stats style).

Every interval result exposes ``estimate``, ``low``, ``high``, the ``interval`` property (a
``(low, high)`` named tuple), ``method``, ``confidence_level`` and ``n``; tests add
``statistic`` and ``pvalue``. ``to_dict()`` returns JSON-ready builtins only (``float``,
``int``, ``str``, ``bool``, lists, dicts) so the analysis layer can put it in the claim record
verbatim.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "BootstrapResult",
    "ClusteredMcNemarResult",
    "ClusteredMeanResult",
    "ClusteredProportionResult",
    "EquivalenceResult",
    "HDIResult",
    "Interval",
    "IntervalResult",
    "KSResult",
    "McNemarResult",
    "NonInferiorityResult",
    "PairedDifferenceResult",
    "ProportionResult",
]


class Interval(NamedTuple):
    """A confidence (or credible) interval ``(low, high)``."""

    low: float
    high: float


def _jsonable(value: Any) -> Any:
    """Convert numpy scalars, tuples and nested containers to JSON-ready builtins."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        fvalue = float(value)
        if not math.isfinite(fvalue):
            raise ValueError(f"non-finite value {fvalue!r} cannot go into a claim record")
        return fvalue
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in value]
    if value is None:
        return None
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")


class _ToDict:
    """Mixin: ``to_dict`` over the dataclass fields, plus a ``kind`` tag."""

    kind: str = "result"

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a mapping of JSON-ready builtins (for the claim record)."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            out[f.name] = _jsonable(getattr(self, f.name))
        return out


@dataclass(frozen=True, kw_only=True)
class IntervalResult(_ToDict):
    """A point estimate with a confidence interval.

    Attributes
    ----------
    estimate : float
        The point estimate (an observed proportion or difference).
    low, high : float
        The interval limits.
    method : str
        The interval method, as accepted by the function's ``method`` argument.
    confidence_level : float
        The nominal coverage of the interval.
    n : int
        The number of observations (rows, cases or trials) behind the estimate.
    """

    estimate: float
    low: float
    high: float
    method: str
    confidence_level: float
    n: int

    kind = "interval"

    @property
    def interval(self) -> Interval:
        """The interval as a ``(low, high)`` named tuple."""
        return Interval(self.low, self.high)


@dataclass(frozen=True, kw_only=True)
class ProportionResult(IntervalResult):
    """Interval for a single binomial proportion ``successes / n``.

    ``alternative`` is ``"two-sided"``, ``"less"`` (one-sided upper bound, ``low = 0``) or
    ``"greater"`` (one-sided lower bound, ``high = 1``).
    """

    successes: int
    alternative: str = "two-sided"

    kind = "proportion_interval"


@dataclass(frozen=True, kw_only=True)
class PairedDifferenceResult(IntervalResult):
    """Interval for the paired difference ``p1 - p2 = (b - c) / n`` of a 2x2 table.

    ``table`` is ``(a, b, c, d)``: a both pass, b first only, c second only, d neither.
    """

    table: tuple[int, int, int, int]

    kind = "paired_difference_interval"


@dataclass(frozen=True, kw_only=True)
class McNemarResult(_ToDict):
    """McNemar's test of marginal homogeneity from the discordant counts ``b`` and ``c``.

    ``statistic`` is the signed z ``(b - c)/sqrt(b + c)`` (continuity-corrected for
    ``asymptotic_cc``) for the asymptotic methods and the count ``b`` for the exact and mid-p
    methods (conditional on ``n = b + c`` discordant pairs). ``pvalue`` is two-sided.
    """

    statistic: float
    pvalue: float
    method: str
    b: int
    c: int
    n: int

    kind = "mcnemar"


@dataclass(frozen=True, kw_only=True)
class NonInferiorityResult(IntervalResult):
    """One-sided Tango score test of ``H0: p1 - p2 <= -margin`` against ``p1 - p2 > -margin``.

    ``low`` is the one-sided ``confidence_level`` lower confidence bound of the Tango score
    interval and ``high`` is 1, so ``noninferior`` (``pvalue < 1 - confidence_level``) holds
    exactly when ``low > -margin``.
    """

    table: tuple[int, int, int, int]
    margin: float
    statistic: float
    pvalue: float
    noninferior: bool

    kind = "paired_noninferiority_test"


@dataclass(frozen=True, kw_only=True)
class EquivalenceResult(IntervalResult):
    """Two one-sided Tango score tests (TOST) of ``|p1 - p2| >= margin``.

    ``statistic_lower``/``pvalue_lower`` test ``H0: p1 - p2 <= -margin``;
    ``statistic_upper``/``pvalue_upper`` test ``H0: p1 - p2 >= +margin``. ``pvalue`` is the
    larger of the two and ``statistic`` the z of that test. ``low``/``high`` is the two-sided
    Tango interval at level ``2 * confidence_level - 1`` (90 % for 95 %), which lies inside
    ``(-margin, margin)`` exactly when ``equivalent`` holds.
    """

    table: tuple[int, int, int, int]
    margin: float
    statistic: float
    pvalue: float
    statistic_lower: float
    pvalue_lower: float
    statistic_upper: float
    pvalue_upper: float
    equivalent: bool

    kind = "paired_equivalence_test"


@dataclass(frozen=True, kw_only=True)
class ClusteredMeanResult(IntervalResult):
    """Mean with a cluster-robust standard error and a t interval on ``df`` degrees of freedom.

    ``df`` is the Bell-McCaffrey value (a real number) for CR2 and ``n_clusters - 1`` for
    CR0/CR1. ``max_cluster_share`` is the largest cluster's share of the rows and
    ``effective_clusters`` is ``1 / sum_g (n_g / n)^2`` (G for equal sizes, near 1 when one
    cluster dominates): the inputs of a dominant-cluster caveat. ``note`` is non-empty when
    the interval has zero width (no between-cluster variation: uninformative, not certain).
    """

    se: float
    df: float
    n_clusters: int
    correction: str
    max_cluster_share: float = 0.0
    effective_clusters: float = 0.0
    note: str = ""

    kind = "clustered_mean_interval"


@dataclass(frozen=True, kw_only=True)
class ClusteredProportionResult(IntervalResult):
    """Cluster-aware interval (or one-sided bound) for one proportion.

    The proportion ``estimate = successes / n`` is the mean of per-case outcomes. The
    interval is a binomial interval (``method``: Wilson or Clopper-Pearson) computed on an
    effective number of cases ``effective_n = n / design_effect`` (with a degrees-of-freedom
    adjustment, see :func:`evalspec.stats.clustered_proportion_interval`), and never narrower
    than the same interval treating cases as independent. ``design_effect`` is the estimated
    ratio of the cluster-robust (CR2) variance to the binomial variance ``p(1-p)/n`` (1 when
    it cannot be estimated, and then ``note`` says so); ``df`` the Bell-McCaffrey degrees of
    freedom; ``se`` the CR2 standard error.
    """

    successes: float
    alternative: str
    n_clusters: int
    design_effect: float
    effective_n: float
    df: float
    se: float
    note: str = ""

    kind = "clustered_proportion_interval"


@dataclass(frozen=True, kw_only=True)
class ClusteredMcNemarResult(_ToDict):
    """McNemar-type test of equal paired proportions when cases come in clusters.

    ``statistic`` is the chi-square statistic on 1 df of Durkalski et al. (2003),
    ``(sum_k (b_k - c_k))^2 / sum_k (b_k - c_k)^2``; ``pvalue`` is two-sided. ``b`` and
    ``c`` are the total discordant counts (first only, second only), ``n`` the number of
    paired cases and ``n_clusters`` the number of clusters (``clusters_discordant`` of them
    hold at least one disagreement).
    """

    statistic: float
    pvalue: float
    method: str
    b: int
    c: int
    n: int
    n_clusters: int
    clusters_discordant: int

    kind = "clustered_mcnemar"


@dataclass(frozen=True, kw_only=True)
class BootstrapResult(IntervalResult):
    """Paired cluster bootstrap of ``mean(x) - mean(y)``.

    ``method`` is the interval actually reported (``"bca"`` or ``"percentile"``);
    ``requested_method`` is what was asked for. They differ only when BCa is undefined (the
    observed difference lies outside the bootstrap distribution), and then ``note`` says so.
    ``bias_correction`` (z0) and ``acceleration`` (a) are the BCa constants (0 for percentile).
    """

    resamples: int
    seed: int
    n_clusters: int
    standard_error: float
    requested_method: str
    bias_correction: float
    acceleration: float
    note: str = ""

    kind = "paired_cluster_bootstrap"


@dataclass(frozen=True, kw_only=True)
class HDIResult(IntervalResult):
    """Highest-density interval holding probability ``confidence_level``.

    ``estimate`` is the distribution's (or the samples') mean.
    """

    kind = "hdi"


@dataclass(frozen=True, kw_only=True)
class KSResult(_ToDict):
    """Two-sample Kolmogorov-Smirnov distance ``D = sup |F_x - F_y|``.

    ``estimate`` equals ``statistic``; ``location`` is the smallest point where the supremum
    is attained and ``sign`` is +1 when ``F_x > F_y`` there (x tends to be smaller), else -1.
    """

    statistic: float
    estimate: float
    location: float
    sign: int
    n_x: int
    n_y: int
    method: str = "ks_2samp_statistic"

    kind = "ks_distance"
