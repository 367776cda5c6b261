"""Draws of gamma-bar, the mean over questions of ``J_i theta_i (1 - theta_i)``, exactly as the paper defines it.

Questions sharing (y, J) share their Beta, so a group's sum is drawn question by question
while the study is small and from a moment-matched Beta on the sum's range otherwise.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats.beta_binomial.counts import _pairs

__all__ = ["EXACT_DRAW_BUDGET", "EXACT_GROUP_MAX", "gamma_bar_draws"]


#: Groups of questions sharing (y, J) with at most this many members always have gamma-bar's
#: group sum drawn question by question. See :func:`gamma_bar_draws`.
EXACT_GROUP_MAX = 4

#: Question-draws (questions x posterior draws) drawn one by one before larger groups' sums are
#: drawn from a moment-matched Beta on their range instead. See :func:`_exact_groups`.
EXACT_DRAW_BUDGET = 8_000_000


def _theta_moments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of v = theta(1 - theta) for theta ~ Beta(a, b) (elementwise)."""
    n = a + b
    m1 = a * b / (n * (n + 1.0))
    m2 = a * (a + 1.0) * b * (b + 1.0) / (n * (n + 1.0) * (n + 2.0) * (n + 3.0))
    return m1, np.maximum(m2 - m1 * m1, 0.0)


def _exact_groups(cnt: np.ndarray, n_draws: int, exact_max: int | None) -> np.ndarray:
    """Which (y, J) groups have gamma-bar's group sum drawn question by question.

    With ``exact_max`` given: the groups of at most that many questions. Otherwise every group
    of at most :data:`EXACT_GROUP_MAX`, plus the smallest others while the question-draws stay
    within :data:`EXACT_DRAW_BUDGET` (so studies of a few hundred questions are drawn exactly).
    """
    if exact_max is not None:
        return cnt <= exact_max
    order = np.argsort(cnt, kind="stable")
    within = np.cumsum(cnt[order]) * float(n_draws) <= EXACT_DRAW_BUDGET
    exact = cnt <= EXACT_GROUP_MAX
    exact[order[within]] = True
    return exact


def _scaled_beta_sum(mean: np.ndarray, var: np.ndarray, upper: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw a group sum from the Beta on [0, upper] with the sum's exact mean and variance.

    The sum of ``c`` terms ``J theta (1 - theta)`` lies in [0, c J / 4]; a moment-matched Beta on
    that range stays inside it (a normal does not: near theta = 0 or 1 the terms are tiny and
    skewed, and a normal sum went below zero -- the gamma-bar HDI of -0.0066 to 0.0145 in
    issue 18). The Bhatia-Davis inequality ``var <= mean (upper - mean)`` makes the match
    always possible; a degenerate group (zero variance) is its mean.
    """
    m = np.clip(mean / upper, 0.0, 1.0)
    v = var / (upper * upper)
    room = m * (1.0 - m)
    ok = (v > 0) & (room > 0)
    nu = np.where(ok, np.maximum(room / np.where(ok, v, 1.0) - 1.0, 1e-12), 1.0)
    a = np.where(ok, np.maximum(m * nu, 1e-300), 1.0)
    b = np.where(ok, np.maximum((1.0 - m) * nu, 1e-300), 1.0)
    draw = rng.beta(a, b)
    return np.where(ok, upper * draw, mean)


def gamma_bar_draws(alpha: np.ndarray, beta: np.ndarray, y: ArrayLike, j: ArrayLike, rng: np.random.Generator, *,
                    exact_max: int | None = None, grouped: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw gamma-bar = mean_i J_i theta_i (1 - theta_i) at each hyperparameter draw.

    theta_i ~ Beta(alpha + y_i, beta + J_i - y_i) independently per question and draw (the
    paper's draw-level definition). With ``grouped`` (the default) questions sharing (y, J)
    are handled together: the groups chosen by :func:`_exact_groups` are drawn question by
    question (every group when the study is small enough); a larger group's sum
    ``sum_{i in group} J theta_i (1 - theta_i)`` is drawn from the Beta on [0, c J / 4] with its
    exact conditional mean ``c J m`` and variance ``c J^2 v`` (m, v: mean and variance of
    theta(1 - theta) under that Beta), so every draw lies in gamma-bar's range [0, max J / 4].
    ``grouped=False`` draws every question (the plain computation; for tests).

    Returns ``(gamma_bar, theta_pairs, pair_index)``: the gamma-bar draws, one theta draw per
    distinct pair and draw (shape draws x pairs), and the pair of each question.
    """
    y = np.asarray(y, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    alpha = np.asarray(alpha, dtype=np.float64)[:, None]
    beta = np.asarray(beta, dtype=np.float64)[:, None]
    n_q = y.size
    n_draws = alpha.shape[0]
    uy, uj, cnt, inverse = _pairs(y, j)
    if not grouped:
        th = rng.beta(alpha + y[None, :], beta + (j - y)[None, :])
        gb = (j[None, :] * th * (1.0 - th)).sum(axis=1) / n_q
        first = np.full(uy.size, -1)
        for q in range(n_q - 1, -1, -1):
            first[inverse[q]] = q
        return gb, th[:, first], inverse
    exact = _exact_groups(cnt, n_draws, exact_max)
    a_all = alpha + uy[None, :]
    b_all = beta + (uj - uy)[None, :]
    theta_pairs = rng.beta(a_all, b_all)  # one draw per pair: the first member of its group
    total = np.zeros(n_draws)
    ex = np.flatnonzero(exact)
    if ex.size:
        total += (uj[ex][None, :] * theta_pairs[:, ex] * (1.0 - theta_pairs[:, ex])).sum(axis=1)
        # the other members of exact groups, drawn in chunks of columns to bound memory
        rest = np.repeat(ex, (cnt[ex] - 1).astype(np.int64))
        step = max(1, int(2_000_000 // max(n_draws, 1)))
        for s0 in range(0, rest.size, step):
            cols = rest[s0:s0 + step]
            th = rng.beta(a_all[:, cols], b_all[:, cols])
            total += (uj[cols][None, :] * th * (1.0 - th)).sum(axis=1)
    big = np.flatnonzero(~exact)
    if big.size:
        m, v = _theta_moments(a_all[:, big], b_all[:, big])
        c = cnt[big][None, :]
        jj = uj[big][None, :].astype(np.float64)
        total += _scaled_beta_sum(c * jj * m, c * jj * jj * v, np.broadcast_to(c * jj / 4.0, m.shape), rng).sum(axis=1)
    return total / n_q, theta_pairs, inverse
