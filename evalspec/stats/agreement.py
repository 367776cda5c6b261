"""Agreement between two raters (a person and a judge): Cohen's kappa and Krippendorff's alpha.

* **Cohen's kappa** (Cohen 1960): ``(p_o - p_e) / (1 - p_e)``, with ``p_o`` the share of
  units the two raters label alike and ``p_e = sum_k p_1(k) p_2(k)`` the agreement expected
  from each rater's own label frequencies.
* **Krippendorff's alpha, nominal** (Krippendorff, "Computing Krippendorff's
  Alpha-Reliability", 2011): ``1 - D_o / D_e`` from the coincidence matrix ``o_ck`` of
  pairable values (every ordered pair of values within a unit, weighted ``1 / (m_u - 1)``
  for a unit with ``m_u`` values), ``n_c`` its margins and ``n`` the pairable values:
  ``alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k``. Units with fewer than
  two values are not pairable.

Intervals: percentile bootstrap over clusters (all labelled cases of a cluster resampled
together), from the four counts of each cluster, so a resample is one matrix product.
Either coefficient is undefined (None) when the expected disagreement is zero (every label
the same).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evalspec.stats._validation import InvalidArgument, _level

__all__ = ["AgreementResult", "binary_agreement", "cohen_kappa", "krippendorff_alpha_nominal"]


def cohen_kappa(counts: Any) -> float | None:
    """Cohen's kappa of a 2x2 table given as (n00, n01, n10, n11) (rater 1's label first); None if undefined."""
    v = _kappa(np.asarray(counts, dtype=np.float64).reshape(1, 4))[0]
    return None if not math.isfinite(v) else float(v)


def _kappa(c: np.ndarray) -> np.ndarray:
    n = c.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (c[:, 0] + c[:, 3]) / n
        r1 = (c[:, 2] + c[:, 3]) / n  # rater 1 says 1
        r2 = (c[:, 1] + c[:, 3]) / n  # rater 2 says 1
        pe = r1 * r2 + (1 - r1) * (1 - r2)
        out = (po - pe) / (1 - pe)
    out[~(1 - pe > 1e-15)] = np.nan
    return out


def _alpha2(c: np.ndarray) -> np.ndarray:
    """Krippendorff's nominal alpha for two raters, binary labels, no missing value, from (n00, n01, n10, n11)."""
    units = c.sum(axis=1)
    n = 2 * units
    n1 = 2 * c[:, 3] + c[:, 1] + c[:, 2]
    n0 = n - n1
    dis = c[:, 1] + c[:, 2]  # o_01 = o_10 = number of disagreeing units
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1 - (n - 1) * 2 * dis / (2 * n0 * n1)
    out[~(n0 * n1 > 0)] = np.nan
    return out


def krippendorff_alpha_nominal(data: Any) -> float | None:
    """Krippendorff's nominal alpha of a units x raters matrix (NaN = no value); None if undefined."""
    m = np.asarray(data, dtype=np.float64)
    if m.ndim != 2:
        raise InvalidArgument("data", data, "must be a 2-d units x raters matrix")
    values = np.unique(m[np.isfinite(m)])
    if values.size == 0:
        return None
    index = {v: j for j, v in enumerate(values.tolist())}
    o = np.zeros((values.size, values.size))
    for row in m:
        vals = [index[v] for v in row[np.isfinite(row)].tolist()]
        mu = len(vals)
        if mu < 2:
            continue
        for i, ci in enumerate(vals):
            for j, cj in enumerate(vals):
                if i != j:
                    o[ci, cj] += 1.0 / (mu - 1)
    nc = o.sum(axis=1)
    n = nc.sum()
    off = o.sum() - np.trace(o)
    expected = nc.sum() ** 2 - float(nc @ nc)
    if n <= 1 or expected <= 0:
        return None
    return float(1 - (n - 1) * off / expected)


@dataclass(frozen=True)
class AgreementResult:
    """Agreement of two binary raters on the same units, with cluster-bootstrap percentile intervals."""

    units: int
    agree: int
    counts: tuple[int, int, int, int]
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    alpha: float | None
    alpha_low: float | None
    alpha_high: float | None
    confidence_level: float
    resamples: int
    seed: int
    clusters: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def binary_agreement(first: Any, second: Any, *, clusters: Any = None, confidence_level: float = 0.95,
                     resamples: int = 2000, seed: int = 0) -> AgreementResult:
    """Kappa and alpha of two 0/1 label arrays on the same units, with cluster-bootstrap intervals."""
    level = _level("confidence_level", confidence_level)
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise InvalidArgument("first", first, "first and second must be non-empty arrays of the same length")
    if not (np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all()):
        raise InvalidArgument("first", first, "labels must be 0 or 1")
    cell = (2 * a + b).astype(np.int64)  # 0: (0,0) 1: (0,1) 2: (1,0) 3: (1,1)
    cl = np.arange(a.size) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    cl = cl.reshape(-1)
    g = int(cl.max()) + 1
    per = np.zeros((g, 4))
    np.add.at(per, (cl, cell), 1.0)
    per = per[per.sum(axis=1) > 0]
    g = per.shape[0]
    total = per.sum(axis=0)
    kappa = _kappa(total[None, :])[0]
    alpha = _alpha2(total[None, :])[0]
    rng = np.random.default_rng(seed)
    w = rng.multinomial(g, np.full(g, 1.0 / g), size=resamples).astype(np.float64)
    boot = w @ per
    tail = (1 - level) / 2

    def bounds(values: np.ndarray, point: float) -> tuple[float | None, float | None]:
        if not math.isfinite(point):
            return None, None
        finite = values[np.isfinite(values)]
        if finite.size < 0.9 * values.size:  # undefined in many resamples: no honest interval
            return None, None
        lo, hi = np.quantile(finite, [tail, 1 - tail])
        return float(lo), float(hi)

    k_lo, k_hi = bounds(_kappa(boot), kappa)
    a_lo, a_hi = bounds(_alpha2(boot), alpha)
    counts = tuple(int(x) for x in total)
    return AgreementResult(units=int(a.size), agree=counts[0] + counts[3], counts=counts,  # type: ignore[arg-type]
                           kappa=None if not math.isfinite(kappa) else float(kappa), kappa_low=k_lo, kappa_high=k_hi,
                           alpha=None if not math.isfinite(alpha) else float(alpha), alpha_low=a_lo, alpha_high=a_hi,
                           confidence_level=level, resamples=int(resamples), seed=int(seed), clusters=g)
