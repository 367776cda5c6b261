"""Power of evalspec's clustered paired interval for unequal cluster sizes, by simulation.

With equal clusters the CR2 t statistic of a mean is exactly noncentral t on ``G - 1`` df for
normal cluster means (:func:`evalspec.stats.power.clustered_paired_power`). With unequal sizes no
formula gives the power of the rule evalspec applies: the CR2 variance is then not a scaled
chi-square, its Bell-McCaffrey df depend on the sizes drawn, and when the sizes are heavy-tailed
(coefficient of variation above :data:`evalspec.stats.clustered.HEAVY_TAIL_SIZE_CV`) method
``auto`` switches to the skewness-corrected jackknife interval. So the power is simulated, with a
fixed seed (the result is reproducible and says how many studies it rests on).

Model of one simulated study (stated, not checked, like every power assumption):

* ``G`` cluster sizes: all equal to ``cluster_size``; or lognormal with mean ``cluster_size`` and
  coefficient of variation ``size_cv`` (rounded, at least 1 case); or drawn with replacement from
  ``sizes`` (a pilot's cluster sizes).
* Per-case differences ``y = delta + u_g + e``: ``u_g`` the cluster's shift with variance
  ``ICC * V`` and ``e`` the case's own part with variance ``(1 - ICC) * V``, both normal, where
  ``V = omega^2 + sigma_A^2 / K_A + sigma_B^2 / K_B`` is the per-case variance of Miller (2024).
  Only the cluster means enter the interval, so they are drawn directly:
  ``mean_g ~ N(delta, V (ICC + (1 - ICC) / n_g))``.
* The interval: the case-weighted mean with the CR2 variance on Bell-McCaffrey df; for a
  sample whose sizes have CV above the threshold, CR3 with Hall's transformation on the smaller
  of the Bell-McCaffrey and Welch-Satterthwaite df (exactly :func:`clustered_mean_interval`);
  uninformative (infinite) below ``MIN_POWER_CLUSTERS`` clusters.

The interval is shift-equivariant, so one set of studies simulated at a true difference of 0
gives every power: ``P(lower bound > threshold | delta) = P(L0 > threshold - delta)`` where
``L0`` are the simulated lower bounds at 0 (:func:`power_from_bounds`,
:func:`detectable_from_bounds`).

Pure numbers in, numbers out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from evalspec.stats._validation import InvalidArgument
from evalspec.stats.clustered import HEAVY_TAIL_SIZE_CV
from evalspec.stats.power import MIN_POWER_CLUSTERS

__all__ = ["DEFAULT_STUDIES", "SimulatedBounds", "detectable_from_bounds", "interval_bounds", "power_from_bounds",
           "simulate_bounds", "simulated_clusters_needed"]

#: Studies simulated per power evaluation (Monte Carlo standard error about 0.9 points at 80 %).
DEFAULT_STUDIES = 2000
#: Studies per block of the vectorised simulation (bounds memory to a few MB per block).
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class SimulatedBounds:
    """One-sided lower and upper bounds at a true difference of 0, one per simulated study."""

    low: np.ndarray
    high: np.ndarray
    clusters: int
    studies: int
    seed: int
    heavy_share: float  # share of studies whose sizes were heavy-tailed (the skewness-corrected CR3 interval)


def _sizes(rng: np.random.Generator, studies: int, g: int, cluster_size: float, size_cv: float,
           sizes: np.ndarray | None) -> np.ndarray:
    if sizes is not None:
        return rng.choice(sizes, size=(studies, g)).astype(np.float64)
    if size_cv <= 0.0:
        return np.full((studies, g), float(cluster_size))
    s2 = math.log1p(size_cv * size_cv)
    mu = math.log(cluster_size) - s2 / 2.0
    return np.maximum(1.0, np.rint(np.exp(mu + math.sqrt(s2) * rng.standard_normal((studies, g)))))


def _hall(mean: np.ndarray, se: np.ndarray, t: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise :func:`evalspec.stats.clustered._hall_limits` (the same formula, vectorised)."""
    g = u.shape[1]
    u2 = u * u
    m2 = np.mean(u2, axis=1)
    m3 = np.einsum("ij,ij->i", u2, u) / g
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(m2 > 0, m3 / m2**1.5, 0.0)
    c = gamma / (3.0 * math.sqrt(g))
    plain = (np.abs(c) < 1e-12) | (se <= 0)
    cs = np.where(plain, 1.0, c)

    def inv(x: np.ndarray) -> np.ndarray:
        return (np.cbrt(1.0 + 3.0 * cs * (x - cs / 2.0)) - 1.0) / cs

    a, b = mean - se * inv(t), mean - se * inv(-t)
    low = np.where(plain, mean - t * se, np.minimum(a, b))
    high = np.where(plain, mean + t * se, np.maximum(a, b))
    return low, high


def interval_bounds(n: np.ndarray, means: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise lower and upper one-sided ``1 - tail`` bounds of the interval evalspec applies to
    studies with cluster sizes ``n`` and cluster means ``means`` (studies x clusters), and which rows
    used the heavy-tailed (CR3, skewness-corrected) form."""
    g = n.shape[1]
    total = n.sum(axis=1, keepdims=True)
    est = np.sum(n * means, axis=1) / total[:, 0]
    resid = n * (means - est[:, None])
    pi = n / total
    q = pi * pi / (1.0 - pi)
    bm = 1.0 / (np.sum(pi * pi, axis=1) + np.sum(q, axis=1) ** 2 - np.sum(q * q, axis=1))
    se2 = np.sqrt(np.sum(resid * resid / (1.0 - pi), axis=1)) / total[:, 0]
    t2 = -special.stdtrit(bm, tail)
    low, high = est - t2 * se2, est + t2 * se2
    heavy = n.std(axis=1) / n.mean(axis=1) > HEAVY_TAIL_SIZE_CV
    if heavy.any():
        r = resid[heavy] / (1.0 - pi[heavy])
        terms = r * r
        ws = np.maximum(1.0, terms.sum(axis=1) ** 2 / np.maximum(np.sum(terms * terms, axis=1), 1e-300))
        df = np.minimum(bm[heavy], ws)
        se3 = np.sqrt(terms.sum(axis=1)) / total[heavy, 0]
        lo3, hi3 = _hall(est[heavy], se3, -special.stdtrit(df, tail), r * g / total[heavy])
        low[heavy], high[heavy] = lo3, hi3
    return low, high, heavy


def simulate_bounds(*, clusters: int, cluster_size: float, icc: float, variance: float, alpha: float = 0.05,
                    size_cv: float = 0.0, sizes: object = None, studies: int = DEFAULT_STUDIES,
                    seed: int = 0) -> SimulatedBounds:
    """Simulate ``studies`` studies of ``clusters`` clusters at a true difference of 0 (module notes).

    ``alpha`` is the two-sided level's complement: each bound is one-sided ``1 - alpha / 2``.
    Below :data:`MIN_POWER_CLUSTERS` clusters the bounds are infinite (the interval decides nothing).
    """
    g = int(clusters)
    if g < 2:
        raise InvalidArgument("clusters", clusters, "need at least 2 clusters")
    if not (cluster_size >= 1.0 and math.isfinite(cluster_size)):
        raise InvalidArgument("cluster_size", cluster_size, "must be a number >= 1")
    if not (0.0 <= icc <= 1.0) or not (variance > 0.0) or not (0.0 <= size_cv < math.inf):
        raise InvalidArgument("icc / variance / size_cv", (icc, variance, size_cv), "icc in [0, 1], variance > 0, "
                              "size_cv >= 0")
    pool = None
    if sizes is not None:
        pool = np.asarray(sizes, dtype=np.float64).ravel()
        if pool.size == 0 or not np.all(np.isfinite(pool)) or np.any(pool < 1):
            raise InvalidArgument("sizes", sizes, "cluster sizes must be numbers >= 1, at least one")
    if g < MIN_POWER_CLUSTERS:
        inf = np.full(studies, np.inf)
        return SimulatedBounds(low=-inf, high=inf, clusters=g, studies=studies, seed=seed, heavy_share=0.0)
    rng = np.random.default_rng([seed, g])
    block = max(1, _BLOCK_CELLS // g)
    lows, highs, heavies = [], [], 0
    for start in range(0, studies, block):
        k = min(block, studies - start)
        n = _sizes(rng, k, g, cluster_size, size_cv, pool)
        means = rng.standard_normal(n.shape) * np.sqrt(variance * (icc + (1.0 - icc) / n))
        low, high, heavy = interval_bounds(n, means, alpha / 2.0)
        lows.append(low)
        highs.append(high)
        heavies += int(heavy.sum())
    return SimulatedBounds(low=np.concatenate(lows), high=np.concatenate(highs), clusters=g, studies=studies,
                           seed=seed, heavy_share=heavies / studies)


def power_from_bounds(b: SimulatedBounds, delta: float, threshold: float = 0.0) -> float:
    """Share of the simulated studies whose lower bound exceeds ``threshold`` at a true difference ``delta``."""
    return float(np.mean(b.low > float(threshold) - float(delta)))


def detectable_from_bounds(b: SimulatedBounds, power: float, threshold: float = 0.0) -> float:
    """The true difference at which a share ``power`` of the studies' lower bounds exceed ``threshold``
    (``inf`` when the interval decides nothing)."""
    low = np.sort(b.low)
    k = min(low.size - 1, max(0, low.size - math.ceil(float(power) * low.size - 1e-9)))
    q = float(low[k])  # the smallest bound among the top share ``power`` of the studies
    return math.inf if not math.isfinite(q) else float(threshold) - q


def simulated_clusters_needed(delta: float, power: float, *, threshold: float = 0.0, max_clusters: int = 100_000,
                              start: int | None = None, **kw: object) -> int | None:
    """Fewest clusters whose simulated power (:func:`power_from_bounds`) reaches ``power``; ``kw`` are
    :func:`simulate_bounds`'s arguments but ``clusters``. None when even ``max_clusters`` do not.

    The detectable difference shrinks about as ``1 / sqrt(G)``, so from ``start`` (for example the
    equal-size answer) a few simulations rescale the count until it moves by less than 1 %, and the
    simulation at the answer must reach ``power``. Each number of clusters is simulated with its own
    fixed seed, so the answer is reproducible; the Monte Carlo error of the power (about 0.9 points at
    80 % with 2000 studies) makes it an approximation to within about 2 %.
    """
    from functools import lru_cache

    target = float(delta) - float(threshold)
    if not target > 0:
        raise InvalidArgument("delta", delta, "must exceed the threshold")

    @lru_cache(maxsize=64)
    def bounds(g: int) -> SimulatedBounds:
        return simulate_bounds(clusters=g, **kw)  # type: ignore[arg-type]

    def ok(g: int) -> bool:
        return power_from_bounds(bounds(g), delta, threshold) >= power

    g = min(max(MIN_POWER_CLUSTERS, int(start or MIN_POWER_CLUSTERS)), max_clusters)
    for _ in range(10):  # rescale: detectable(G) * sqrt(G) is about constant
        d = detectable_from_bounds(bounds(g), power)
        nxt = (min(max_clusters, max(MIN_POWER_CLUSTERS, math.ceil(g * (d / target) ** 2 - 1e-9)))
               if math.isfinite(d) else min(max_clusters, 2 * g))
        done = abs(nxt - g) <= max(1, g // 100)
        g = nxt
        if done:
            break
    while not ok(g):  # the rescaled count is within Monte Carlo error; step up until the simulation agrees
        if g >= max_clusters:
            return None
        g = min(max_clusters, g + max(1, g // 100))
    return g
