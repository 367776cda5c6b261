"""The hierarchical Beta-Binomial profile of repeated trials: mu, kappa, gamma-bar, theta_i.

The model is the one of "Characterizing LLM performance via a Bayesian lens" (section 2).
Question ``i`` of a condition is answered ``J_i`` times and ``y_i`` answers are correct::

    y_i | theta_i ~ Binomial(J_i, theta_i)
    theta_i       ~ Beta(mu * kappa, (1 - mu) * kappa)
    mu            ~ Beta(1, 1)
    log kappa     ~ Normal(0, 1.5)

Conditions (e.g. exact and rephrased questions) have their own (mu, kappa) with independent
priors, so their posteriors are independent and each is computed on its own.

Two engines compute the posterior of (mu, kappa):

* ``grid`` (default): deterministic quadrature over (logit mu, log kappa). A coarse grid over
  the prior's range locates the posterior, a local optimiser finds its mode and curvature,
  and the final grid covers every point within 20 nats of the maximum. The log-likelihood
  depends on the data only through the distinct (y, J) pairs and their counts and is computed
  that way (vectorised over grid points and pairs), so its cost does not grow with the number
  of questions. Posterior means of mu, kappa, gamma-bar, the Beta variance and theta_i are
  exact quadrature sums, and so are the HDIs of mu, kappa and the Beta variance (the
  shortest interval holding 95 % of the grid's mass); the HDIs of gamma-bar, theta_i and of
  differences come from draws of the grid posterior (cells drawn by their mass, uniformly
  jittered within the cell).
* ``nuts``: the paper's PyMC model, sampled by NUTS (optional ``mcmc`` extra), with R-hat,
  effective sample size and divergences reported as findings with their meaning and remedy.

Derived quantities are computed from hyperparameter draws the same way for both engines:

* Beta variance ``mu (1 - mu) / (kappa + 1)`` per draw.
* theta_i per draw from ``Beta(alpha + y_i, beta + J_i - y_i)``.
* gamma-bar per draw exactly as the paper defines it: the mean over questions of
  ``J_i theta_i (1 - theta_i)`` with theta_i drawn per draw. Questions sharing (y, J) share
  that Beta, so the sum over a group of ``c`` such questions is drawn question by question
  while the study is small enough (:data:`EXACT_DRAW_BUDGET` question-draws) and otherwise
  from the Beta on the sum's range [0, c J / 4] with the sum's exact conditional mean
  ``c J E[theta(1-theta)]`` and variance ``c J^2 Var[theta(1-theta)]`` (a sum of ``c``
  independent bounded terms; a normal there left the range near theta = 0 or 1). Averaging
  the closed-form ``E[theta(1-theta)]`` instead gives the same mean but intervals about ten times narrower than the published ones.
* Posterior predictive check: replicated data sets from the Beta-Binomial likelihood at
  posterior draws (counts per distinct J drawn as a multinomial over y, so the cost does not
  grow with the number of questions), compared with the observed data on four statistics.

Contrasts between two conditions give the posterior of each difference (HDI, P(diff > 0),
whether the HDI excludes zero) and the Bhattacharyya coefficient between the two
conditions' posteriors of each parameter; see :func:`bhattacharyya` for the normalisation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._validation import InvalidArgument, _level

__all__ = [
    "BetaBinomialPosterior",
    "BetaBinomialPrior",
    "BetaBinomialProfile",
    "Contrast",
    "Diagnostic",
    "DifferenceSummary",
    "ENGINES",
    "EXACT_DRAW_BUDGET",
    "EXACT_GROUP_MAX",
    "PPCStatistic",
    "PPCSummary",
    "Summary",
    "ThetaSummary",
    "beta_binomial_contrast",
    "beta_binomial_loglik",
    "beta_binomial_posterior",
    "beta_binomial_profile",
    "beta_binomial_theta",
    "bhattacharyya",
    "gamma_bar_draws",
    "hdi_rows",
    "to_inference_data",
    "weighted_hdi",
]

ENGINES = ("grid", "nuts")

#: Groups of questions sharing (y, J) with at most this many members always have gamma-bar's
#: group sum drawn question by question. See :func:`gamma_bar_draws`.
EXACT_GROUP_MAX = 4

#: Question-draws (questions x posterior draws) drawn one by one before larger groups' sums are
#: drawn from a moment-matched Beta on their range instead. See :func:`_exact_groups`.
EXACT_DRAW_BUDGET = 8_000_000

#: Log-density drop (nats) below the maximum beyond which grid cells are left out.
_GRID_DROP = 20.0

_PARAMS = ("mu", "kappa", "gamma_bar", "variance")


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Summary:
    """Posterior mean, standard deviation and highest-density interval of one quantity."""

    mean: float
    sd: float
    low: float
    high: float
    hdi_prob: float

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "sd": self.sd, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class DifferenceSummary:
    """Posterior of a difference between two conditions (first minus second)."""

    mean: float
    sd: float
    low: float
    high: float
    hdi_prob: float
    p_greater: float
    excludes_zero: bool

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "sd": self.sd, "low": self.low, "high": self.high,
                "p_greater": self.p_greater, "excludes_zero": self.excludes_zero}


@dataclass(frozen=True)
class ThetaSummary:
    """Posterior of theta_i per question (arrays parallel to the input)."""

    successes: np.ndarray
    trials: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    hdi_prob: float
    sd: np.ndarray | None = None


@dataclass(frozen=True)
class Diagnostic:
    """One check of the computation, in the way ArviZ reports one: finding, meaning, remedy."""

    check: str
    ok: bool
    value: float | None
    threshold: float | None
    finding: str
    meaning: str
    remedy: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PPCStatistic:
    """Observed value of a statistic against its posterior predictive distribution."""

    name: str
    observed: float
    replicated_mean: float
    low: float
    high: float
    p_value: float = field(metadata={"doc": "two-sided posterior predictive p-value"})


@dataclass(frozen=True)
class PPCSummary:
    """Posterior predictive check of the per-question proportions y_i / J_i.

    ``bin_edges`` split [0, 1] into bins of y/J; ``observed`` counts questions per bin;
    ``replicated_median``/``replicated_low``/``replicated_high`` are the median and central
    ``band`` interval of those counts over ``replicates`` replicated data sets.
    ``p_min`` is the smallest two-sided p-value of the statistics (below 0.05 flags misfit;
    with four statistics one of them falls below 0.05 by chance about one time in six).
    """

    statistics: tuple[PPCStatistic, ...]
    bin_edges: np.ndarray
    observed: np.ndarray
    replicated_median: np.ndarray
    replicated_low: np.ndarray
    replicated_high: np.ndarray
    band: float
    replicates: int
    p_min: float
    bins_outside: int


@dataclass(frozen=True)
class BetaBinomialPrior:
    """Hyperpriors: mu ~ Beta(mu_a, mu_b), log kappa ~ Normal(log_kappa_mean, log_kappa_sd)."""

    mu_a: float = 1.0
    mu_b: float = 1.0
    log_kappa_mean: float = 0.0
    log_kappa_sd: float = 1.5

    def __post_init__(self) -> None:
        for name in ("mu_a", "mu_b", "log_kappa_sd"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InvalidArgument(name, value, "must be a positive finite number")
        if not math.isfinite(self.log_kappa_mean):
            raise InvalidArgument("log_kappa_mean", self.log_kappa_mean, "must be finite")


@dataclass(frozen=True)
class BetaBinomialPosterior:
    """Posterior profile of one condition.

    ``mu``, ``kappa``, ``gamma_bar``, ``variance`` (the Beta variance mu(1-mu)/(kappa+1)) are
    :class:`Summary` objects; ``theta`` holds theta_i per question; ``draws`` maps each of
    ``mu``, ``kappa``, ``gamma_bar``, ``variance`` (and ``log_kappa``) to its posterior draws.
    """

    engine: str
    hdi_prob: float
    n_questions: int
    n_trials: int
    n_successes: int
    mu: Summary
    kappa: Summary
    gamma_bar: Summary
    variance: Summary
    theta: ThetaSummary
    ppc: PPCSummary
    diagnostics: tuple[Diagnostic, ...]
    draws: dict[str, np.ndarray]
    prior: BetaBinomialPrior
    seed: int | None
    notes: tuple[str, ...] = ()
    #: The sampler's InferenceData (NUTS engine only) for :func:`to_inference_data`.
    trace: Any = None

    @property
    def ok(self) -> bool:
        """True when every diagnostic passed."""
        return all(d.ok for d in self.diagnostics)

    def summary(self, name: str) -> Summary:
        return getattr(self, name)


@dataclass(frozen=True)
class Contrast:
    """Posterior of the differences ``first - second`` between two conditions."""

    first: str
    second: str
    differences: dict[str, DifferenceSummary]
    #: Bhattacharyya coefficient BC in [0, 1] per parameter (1 = identical posteriors).
    bhattacharyya_coefficient: dict[str, float]
    #: Normalised Bhattacharyya distance sqrt(1 - BC) in [0, 1] per parameter.
    bhattacharyya_distance: dict[str, float]


@dataclass(frozen=True)
class BetaBinomialProfile:
    """Posteriors of several conditions and the contrasts between them."""

    conditions: dict[str, BetaBinomialPosterior]
    contrasts: tuple[Contrast, ...]
    engine: str
    hdi_prob: float
    seed: int | None


# --------------------------------------------------------------------------- input
def _counts(successes: ArrayLike, trials: ArrayLike, label: str = "") -> tuple[np.ndarray, np.ndarray]:
    where = f" (condition {label!r})" if label else ""
    try:
        y = np.asarray(successes, dtype=np.float64).ravel()
        j = np.asarray(trials, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise InvalidArgument("successes", successes, f"must be numbers of correct trials per question{where}") from None
    if y.size == 0:
        raise InvalidArgument("successes", successes,
                              f"no questions{where}: the condition has no data; run it or leave it out")
    if y.shape != j.shape:
        raise InvalidArgument("trials", trials, f"must have one entry per question: {j.size} trials for {y.size} "
                              f"successes{where}")
    for name, arr in (("trials", j), ("successes", y)):
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise InvalidArgument(name, arr[bad[0]], f"question {int(bad[0])}{where} has a missing (NaN) or infinite "
                                  f"{name} count; drop the question or record its trials")
        bad = np.flatnonzero((arr < 0) | (arr != np.round(arr)))
        if bad.size:
            raise InvalidArgument(name, arr[bad[0]], f"question {int(bad[0])}{where}: counts must be whole numbers >= 0")
    bad = np.flatnonzero(j == 0)
    if bad.size:
        raise InvalidArgument("trials", 0, f"question {int(bad[0])}{where} has no trials; drop it or record its trials")
    bad = np.flatnonzero(y > j)
    if bad.size:
        i = int(bad[0])
        raise InvalidArgument("successes", y[i], f"question {i}{where}: {int(y[i])} successes out of {int(j[i])} trials")
    return y.astype(np.int64), j.astype(np.int64)


def _unique(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct values of non-negative ints, their counts and each entry's index.

    Counting sort (linear time) when the values are small, else ``np.unique``.
    """
    top = int(x.max()) if x.size else 0
    if top < 4_000_000:
        counts = np.bincount(x, minlength=top + 1)
        values = np.flatnonzero(counts)
        rank = np.zeros(top + 1, dtype=np.int64)
        rank[values] = np.arange(values.size)
        return values, counts[values], rank[x]
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return values, counts, inverse.ravel()


def _pairs(y: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (y, J) pairs, their counts, and the pair index of each question."""
    width = int(j.max()) + 1
    key = j.astype(np.int64) * width + y
    values, counts, inverse = _unique(key)
    return values % width, values // width, counts.astype(np.float64), inverse


# --------------------------------------------------------------------------- likelihood
def _gammaln():
    from scipy.special import gammaln

    return gammaln


class _Likelihood:
    """Beta-Binomial log-likelihood of one condition, through its distinct values.

    ``sum_i [lnB(a + y_i, b + J_i - y_i) - lnB(a, b)]`` is written as sums over the distinct
    success counts, failure counts and trial counts (each weighted by how many questions have
    it) of ``lnGamma(a + u) - lnGamma(a)`` and the like, so a grid of G points costs
    G x (distinct values) gamma-function evaluations whatever the number of questions.
    """

    def __init__(self, y: np.ndarray, j: np.ndarray) -> None:
        from scipy.special import gammaln

        self.n = float(y.size)
        self.su, self.sw, _ = _unique(y)
        self.fu, self.fw, _ = _unique(j - y)
        self.tu, self.tw, _ = _unique(j)
        self.sw = self.sw.astype(np.float64)
        self.fw = self.fw.astype(np.float64)
        self.tw = self.tw.astype(np.float64)
        # log binomial coefficients (constant in the parameters), over the distinct values too
        self.const = float(self.tw @ gammaln(self.tu + 1.0) - self.sw @ gammaln(self.su + 1.0)
                           - self.fw @ gammaln(self.fu + 1.0))

    @staticmethod
    def _rising(x: np.ndarray, u: np.ndarray, w: np.ndarray, chunk: int = 1 << 22) -> np.ndarray:
        """sum_k w_k [lnGamma(x + u_k) - lnGamma(x)] for every x (vectorised, chunked)."""
        gammaln = _gammaln()
        keep = u > 0
        u, w = u[keep].astype(np.float64), w[keep]
        out = np.zeros(x.shape, dtype=np.float64)
        if u.size == 0:
            return out
        flat = x.ravel()
        res = out.ravel()
        top = int(u.max())
        if top <= 512:
            # lnGamma(x + u) - lnGamma(x) = sum_{t < u} ln(x + t): weight each t by how many
            # questions have u > t, so one matrix-vector product of logs does every pair.
            tail = np.zeros(top)
            np.add.at(tail, u.astype(np.int64) - 1, w)
            tail = np.cumsum(tail[::-1])[::-1]
            t = np.arange(top, dtype=np.float64)
            step = max(1, chunk // top)
            for s in range(0, flat.size, step):
                res[s:s + step] = np.log(flat[s:s + step, None] + t[None, :]) @ tail
            return out
        base = gammaln(flat)
        step = max(1, chunk // u.size)
        for s in range(0, flat.size, step):
            xs = flat[s:s + step, None]
            res[s:s + step] = (gammaln(xs + u[None, :]) - base[s:s + step, None]) @ w
        return res.reshape(x.shape)

    def __call__(self, alpha: np.ndarray, beta: np.ndarray, *, with_constant: bool = False) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=np.float64)
        beta = np.asarray(beta, dtype=np.float64)
        ll = (self._rising(alpha, self.su, self.sw) + self._rising(beta, self.fu, self.fw)
              - self._rising(alpha + beta, self.tu, self.tw))
        return ll + self.const if with_constant else ll


def beta_binomial_loglik(successes: ArrayLike, trials: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> np.ndarray:
    """Beta-Binomial log-likelihood ``sum_i log BetaBin(y_i | J_i, alpha, beta)``.

    Includes the binomial coefficients. ``alpha`` and ``beta`` broadcast together (e.g. a
    grid); the data enter through their distinct values only.
    """
    y, j = _counts(successes, trials)
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    if np.any(~(a > 0)) or np.any(~(b > 0)):
        raise InvalidArgument("alpha", alpha, "alpha and beta must be positive")
    a, b = np.broadcast_arrays(a, b)
    return _Likelihood(y, j)(a, b, with_constant=True)


def beta_binomial_theta(successes: ArrayLike, trials: ArrayLike, alpha: float, beta: float,
                        hdi_prob: float = 0.95) -> dict[str, np.ndarray]:
    """Posterior of each theta_i for *known* (alpha, beta): Beta(alpha + y_i, beta + J_i - y_i).

    The empirical-Bayes step (e.g. with a method-of-moments prior): returns ``mean``, ``sd``,
    ``low`` and ``high`` (HDI) arrays. The full-Bayes engines average this over the
    posterior of (alpha, beta).
    """
    from evalspec.stats.highest_density import beta_hdi

    y, j = _counts(successes, trials)
    hdi_prob = _level("hdi_prob", hdi_prob)
    if not (alpha > 0 and beta > 0):
        raise InvalidArgument("alpha", alpha, "alpha and beta must be positive")
    a = alpha + y
    b = beta + j - y
    n = a + b
    mean = a / n
    sd = np.sqrt(a * b / (n * n * (n + 1.0)))
    lo = np.empty(y.size)
    hi = np.empty(y.size)
    for i in range(y.size):
        r = beta_hdi(float(a[i]), float(b[i]), hdi_prob)
        lo[i], hi[i] = r.low, r.high
    return {"mean": mean, "sd": sd, "low": lo, "high": hi}


# --------------------------------------------------------------------------- grid engine
def _log_prior_eta_lambda(eta: np.ndarray, lam: np.ndarray, prior: BetaBinomialPrior) -> np.ndarray:
    """Log prior density on (eta = logit mu, lambda = log kappa), Jacobian included."""
    from scipy.special import betaln

    # log mu = -log(1 + e^-eta), log(1 - mu) = -log(1 + e^eta)
    log_mu = -np.logaddexp(0.0, -eta)
    log_1mu = -np.logaddexp(0.0, eta)
    lp_mu = prior.mu_a * log_mu + prior.mu_b * log_1mu - betaln(prior.mu_a, prior.mu_b)  # Beta pdf * mu(1-mu)
    z = (lam - prior.log_kappa_mean) / prior.log_kappa_sd
    lp_k = -0.5 * z * z - math.log(prior.log_kappa_sd * math.sqrt(2.0 * math.pi))
    return lp_mu + lp_k


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return expit(x)


class _GridPosterior:
    """Log posterior on (eta, lambda) and the adaptive grid built from it."""

    def __init__(self, y: np.ndarray, j: np.ndarray, prior: BetaBinomialPrior, points: int) -> None:
        self.lik = _Likelihood(y, j)
        self.prior = prior
        self.points = points
        a_min = min(prior.mu_a, prior.mu_b)
        half = min(60.0, 25.0 / a_min)
        self.eta_range = (-half, half)
        width = math.sqrt(2.0 * 25.0) * prior.log_kappa_sd
        self.lam_range = (prior.log_kappa_mean - width, prior.log_kappa_mean + width)
        self.notes: list[str] = []

    def logp(self, eta: np.ndarray, lam: np.ndarray) -> np.ndarray:
        mu = _expit(eta)
        kappa = np.exp(lam)
        alpha = np.maximum(mu * kappa, 1e-300)
        beta = np.maximum((1.0 - mu) * kappa, 1e-300)
        return self.lik(alpha, beta) + _log_prior_eta_lambda(eta, lam, self.prior)

    def _grid(self, e_lo: float, e_hi: float, l_lo: float, l_hi: float, n: int):
        he = (e_hi - e_lo) / n
        hl = (l_hi - l_lo) / n
        ev = e_lo + he * (np.arange(n) + 0.5)
        lv = l_lo + hl * (np.arange(n) + 0.5)
        eg, lg = np.meshgrid(ev, lv, indexing="ij")
        return ev, lv, eg, lg, self.logp(eg, lg), he, hl

    def _mode(self, e0: float, l0: float) -> tuple[float, float, np.ndarray]:
        from scipy import optimize

        def f(x: np.ndarray) -> float:
            v = float(self.logp(np.array([x[0]]), np.array([x[1]]))[0])
            return -v if math.isfinite(v) else 1e300

        res = optimize.minimize(f, np.array([e0, l0]), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 2000})
        x = res.x
        # Hessian by central differences with a step scaled to the curvature
        cov = np.eye(2)
        for step in (1e-2, 1e-3):
            h = np.array([step, step])
            hess = np.empty((2, 2))
            f0 = f(x)
            for a in range(2):
                for b in range(2):
                    ea = np.eye(2)[a] * h[a]
                    eb = np.eye(2)[b] * h[b]
                    hess[a, b] = (f(x + ea + eb) - f(x + ea - eb) - f(x - ea + eb) + f(x - ea - eb)) / (4 * h[a] * h[b])
            del f0
            try:
                c = np.linalg.inv(hess)
                if np.all(np.diag(c) > 0) and np.all(np.isfinite(c)):
                    cov = c
                    if math.sqrt(min(np.diag(c))) > 10 * step:
                        break
            except np.linalg.LinAlgError:
                continue
        return float(x[0]), float(x[1]), cov

    def build(self):
        """Coarse pass over the prior's range, mode and curvature, then zoom to the mass."""
        e_lo, e_hi = self.eta_range
        l_lo, l_hi = self.lam_range
        ev, lv, eg, lg, lp, he, hl = self._grid(e_lo, e_hi, l_lo, l_hi, 64)
        k = int(np.nanargmax(lp))
        e0, l0 = float(eg.ravel()[k]), float(lg.ravel()[k])
        em, lm, cov = self._mode(e0, l0)
        se, sl = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
        # box: the Laplace approximation's +-9 sd, united with the coarse cells near the maximum
        near = lp >= np.nanmax(lp) - _GRID_DROP
        box = [min(em - 9 * se, eg[near].min() - he), max(em + 9 * se, eg[near].max() + he),
               min(lm - 9 * sl, lg[near].min() - hl), max(lm + 9 * sl, lg[near].max() + hl)]
        if not (se < 0.5 * (e_hi - e_lo) and sl < 0.5 * (l_hi - l_lo)):
            box = [eg[near].min() - he, eg[near].max() + he, lg[near].min() - hl, lg[near].max() + hl]
        box = self._clip(box)
        for _ in range(8):  # grow any side that still carries mass, then shrink to the mass
            ev, lv, eg, lg, lp, he, hl = self._grid(*box, 96)
            top = np.nanmax(lp)
            grew = False
            edges = {0: lp[0, :], 1: lp[-1, :], 2: lp[:, 0], 3: lp[:, -1]}
            for side, vals in edges.items():
                if np.nanmax(vals) > top - _GRID_DROP and not self._at_limit(box, side):
                    width = (box[1] - box[0]) if side < 2 else (box[3] - box[2])
                    box[side] += (-1 if side in (0, 2) else 1) * 0.5 * width
                    grew = True
            box = self._clip(box)
            if not grew:
                break
        near = lp >= top - _GRID_DROP
        box = self._clip([eg[near].min() - he, eg[near].max() + he, lg[near].min() - hl, lg[near].max() + hl])
        for _ in range(6):  # final grid; widen any side whose edge still lies within the drop
            ev, lv, eg, lg, lp, he, hl = self._grid(*box, self.points)
            top = np.nanmax(lp)
            grew = False
            edges = {0: lp[0, :], 1: lp[-1, :], 2: lp[:, 0], 3: lp[:, -1]}
            for side, vals in edges.items():
                if np.nanmax(vals) > top - _GRID_DROP + 1.0 and not self._at_limit(box, side):
                    width = (box[1] - box[0]) if side < 2 else (box[3] - box[2])
                    box[side] += (-1 if side in (0, 2) else 1) * 0.25 * width
                    grew = True
            box = self._clip(box)
            if not grew:
                break
        return ev, lv, eg, lg, lp, he, hl, box

    def _clip(self, box: list[float]) -> list[float]:
        e_lo, e_hi = self.eta_range
        l_lo, l_hi = self.lam_range
        return [max(box[0], e_lo), min(box[1], e_hi), max(box[2], l_lo), min(box[3], l_hi)]

    def _at_limit(self, box: list[float], side: int) -> bool:
        limits = [self.eta_range[0], self.eta_range[1], self.lam_range[0], self.lam_range[1]]
        return abs(box[side] - limits[side]) < 1e-12


def _grid_engine(y: np.ndarray, j: np.ndarray, prior: BetaBinomialPrior, points: int, n_draws: int,
                 rng: np.random.Generator):
    post = _GridPosterior(y, j, prior, points)
    ev, lv, eg, lg, lp, he, hl, box = post.build()
    flat = lp.ravel()
    finite = np.isfinite(flat)
    top = flat[finite].max()
    w = np.where(finite, np.exp(flat - top), 0.0)
    w /= w.sum()
    # draws: cells by mass, uniform within the cell
    idx = rng.choice(w.size, size=n_draws, p=w)
    eta = eg.ravel()[idx] + (rng.random(n_draws) - 0.5) * he
    lam = lg.ravel()[idx] + (rng.random(n_draws) - 0.5) * hl
    # diagnostics: resolution and mass at the box edge
    m_eta = float(w @ eg.ravel())
    m_lam = float(w @ lg.ravel())
    sd_eta = math.sqrt(max(float(w @ (eg.ravel() - m_eta) ** 2), 0.0))
    sd_lam = math.sqrt(max(float(w @ (lg.ravel() - m_lam) ** 2), 0.0))
    per_sd = min(sd_eta / he if he > 0 else math.inf, sd_lam / hl if hl > 0 else math.inf)
    edge = max(lp[0, :].max(), lp[-1, :].max(), lp[:, 0].max(), lp[:, -1].max()) - top
    diags = [
        Diagnostic(
            check="grid_resolution", ok=bool(per_sd >= 4.0), value=round(float(per_sd), 2), threshold=4.0,
            finding=f"the final grid has {per_sd:.1f} points per posterior standard deviation "
                    f"({points} x {points} points)",
            meaning="quadrature sums and drawn intervals are accurate when the grid resolves the posterior"
                    if per_sd >= 4.0 else "the posterior is narrower than the grid spacing: summaries are coarse",
            remedy="none needed" if per_sd >= 4.0 else "raise grid_points or use the nuts engine"),
        Diagnostic(
            check="grid_boundary", ok=bool(edge <= -_GRID_DROP + 1e-9 or edge <= -15.0), value=round(float(edge), 2),
            threshold=-15.0,
            finding=f"the log posterior at the grid's edge is {edge:.1f} nats below its maximum",
            meaning="no posterior mass is cut off" if edge <= -15.0 else
                    "the posterior reaches the edge of the priors' range: some mass may be cut off",
            remedy="none needed" if edge <= -15.0 else "check the data (all right or all wrong?) and the priors"),
    ]
    return {
        "eta_cells": eg.ravel(), "lam_cells": lg.ravel(), "weights": w, "he": he, "hl": hl,
        "eta_axis": ev, "lam_axis": lv, "shape": lp.shape,
        "eta": eta, "lam": lam, "diagnostics": diags, "box": box,
    }


# --------------------------------------------------------------------------- derived
def hdi_rows(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval of each row of ``draws`` (same rule as :func:`evalspec.stats.hdi`).

    The narrowest window of ``k = ceil(prob * n)`` sorted draws; ties go to the lowest.
    """
    arr = np.sort(np.atleast_2d(draws), axis=1)
    n = arr.shape[1]
    k = max(1, min(n, math.ceil(prob * n - 1e-9)))
    widths = arr[:, k - 1:] - arr[:, : n - k + 1]
    i = np.argmin(widths, axis=1)
    rows = np.arange(arr.shape[0])
    return arr[rows, i], arr[rows, i + k - 1]


def weighted_hdi(values: np.ndarray, weights: np.ndarray, prob: float) -> tuple[float, float]:
    """Shortest interval holding ``prob`` of the weight of weighted atoms (deterministic HDI)."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    cum = np.concatenate([[0.0], np.cumsum(weights[order])])
    cum /= cum[-1]
    # for each start i, the first end k with cum[k + 1] - cum[i] >= prob
    ends = np.searchsorted(cum, cum[:-1] + prob - 1e-12, side="left") - 1
    ok = ends < v.size
    starts = np.flatnonzero(ok)
    widths = v[ends[ok]] - v[starts]
    best = int(np.argmin(widths))
    return float(v[starts[best]]), float(v[ends[ok][best]])


def _grid_hdis(quad: dict[str, Any], prob: float, sub_1d: int = 64, sub_2d: int = 3) -> dict[str, tuple[float, float]]:
    """HDIs of mu, kappa and the Beta variance straight from the grid (no Monte Carlo error).

    The grid density is piecewise constant over cells (the same density the draws are
    jittered from) for the variance, which depends on both axes: each cell's mass is spread
    over ``sub_2d x sub_2d`` points. mu and kappa depend on one axis each: their HDIs come from
    the 1-D marginal, its log density interpolated linearly between cell centres at
    ``sub_1d`` points per cell (so the ends are tied neither to the cell spacing nor to a
    piecewise-constant density).
    """
    W = quad["weights"].reshape(quad["shape"])
    out: dict[str, tuple[float, float]] = {}
    offs1 = (np.arange(sub_1d) + 0.5) / sub_1d - 0.5
    for name, axis, marg, step, fn in (("mu", quad["eta_axis"], W.sum(axis=1), quad["he"], _expit),
                                       ("kappa", quad["lam_axis"], W.sum(axis=0), quad["hl"], np.exp)):
        pts = (axis[:, None] + offs1[None, :] * step).ravel()
        with np.errstate(divide="ignore"):
            logm = np.log(marg)
        # log-linear interpolation of the marginal between cell centres (second-order accurate)
        logd = np.interp(pts, axis, np.maximum(logm, logm.max() - 745.0))
        wts = np.exp(logd - logd.max())
        out[name] = weighted_hdi(fn(pts), wts / wts.sum(), prob)
    keep = quad["weights"] > 0
    w = quad["weights"][keep]
    offs = (np.arange(sub_2d) + 0.5) / sub_2d - 0.5
    de, dl = np.meshgrid(offs * quad["he"], offs * quad["hl"], indexing="ij")
    eta = (quad["eta_cells"][keep][:, None] + de.ravel()[None, :]).ravel()
    lam = (quad["lam_cells"][keep][:, None] + dl.ravel()[None, :]).ravel()
    mu = _expit(eta)
    out["variance"] = weighted_hdi(mu * (1.0 - mu) / (np.exp(lam) + 1.0), np.repeat(w / sub_2d**2, sub_2d**2), prob)
    return out


def _summary(draws: np.ndarray, prob: float, mean: float | None = None) -> Summary:
    lo, hi = hdi_rows(draws[None, :], prob)
    m = float(np.mean(draws)) if mean is None else float(mean)
    return Summary(mean=m, sd=float(np.std(draws, ddof=1)) if draws.size > 1 else 0.0,
                   low=float(lo[0]), high=float(hi[0]), hdi_prob=prob)


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


def _ppc(y: np.ndarray, j: np.ndarray, alpha: np.ndarray, beta: np.ndarray, rng: np.random.Generator,
         band: float = 0.9, bins: int = 10) -> PPCSummary:
    """Replicated data sets at posterior draws vs the observed data."""
    from scipy.special import betaln, gammaln

    n_rep = alpha.size
    tu, tw, _ = _unique(j)
    edges = np.linspace(0.0, 1.0, bins + 1)
    stats_rep = {"mean proportion": np.zeros(n_rep), "sd of proportions": np.zeros(n_rep),
                 "share always right": np.zeros(n_rep), "share always wrong": np.zeros(n_rep)}
    hist_rep = np.zeros((n_rep, bins))
    s1 = np.zeros(n_rep)
    s2 = np.zeros(n_rep)
    n = float(y.size)
    for jv, nq in zip(tu.tolist(), tw.tolist(), strict=True):
        yy = np.arange(jv + 1, dtype=np.float64)
        a = alpha[:, None]
        b = beta[:, None]
        logpmf = (gammaln(jv + 1.0) - gammaln(yy + 1.0) - gammaln(jv - yy + 1.0)
                  + betaln(a + yy, b + jv - yy) - betaln(a, b))
        pmf = np.exp(logpmf - logpmf.max(axis=1, keepdims=True))
        pmf /= pmf.sum(axis=1, keepdims=True)
        counts = rng.multinomial(int(nq), pmf)  # (n_rep, jv + 1)
        p = yy / jv
        s1 += counts @ p
        s2 += counts @ (p * p)
        stats_rep["share always right"] += counts[:, -1]
        stats_rep["share always wrong"] += counts[:, 0]
        b_idx = np.minimum(np.searchsorted(edges, p, side="right") - 1, bins - 1)
        for bi in range(bins):
            sel = b_idx == bi
            if sel.any():
                hist_rep[:, bi] += counts[:, sel].sum(axis=1)
    stats_rep["mean proportion"] = s1 / n
    stats_rep["sd of proportions"] = np.sqrt(np.maximum(s2 / n - (s1 / n) ** 2, 0.0) * n / max(n - 1.0, 1.0))
    stats_rep["share always right"] /= n
    stats_rep["share always wrong"] /= n
    p_obs = y / j
    observed = {
        "mean proportion": float(p_obs.mean()),
        "sd of proportions": float(p_obs.std(ddof=1)) if y.size > 1 else 0.0,
        "share always right": float(np.mean(y == j)),
        "share always wrong": float(np.mean(y == 0)),
    }
    out = []
    tail = (1.0 - band) / 2.0
    for name, rep in stats_rep.items():
        obs = observed[name]
        p_ge = float(np.mean(rep >= obs - 1e-12))
        p_le = float(np.mean(rep <= obs + 1e-12))
        pval = min(1.0, 2.0 * min(p_ge, p_le))
        out.append(PPCStatistic(name=name, observed=obs, replicated_mean=float(rep.mean()),
                                low=float(np.quantile(rep, tail)), high=float(np.quantile(rep, 1 - tail)),
                                p_value=pval))
    b_obs = np.minimum(np.searchsorted(edges, p_obs, side="right") - 1, bins - 1)
    obs_hist = np.bincount(b_obs, minlength=bins).astype(np.float64)
    lo = np.quantile(hist_rep, tail, axis=0)
    hi = np.quantile(hist_rep, 1 - tail, axis=0)
    outside = int(np.sum((obs_hist < lo) | (obs_hist > hi)))
    return PPCSummary(statistics=tuple(out), bin_edges=edges, observed=obs_hist,
                      replicated_median=np.median(hist_rep, axis=0), replicated_low=lo, replicated_high=hi,
                      band=band, replicates=n_rep, p_min=min(s.p_value for s in out), bins_outside=outside)


def _theta_summary(theta_pairs: np.ndarray, inverse: np.ndarray, y: np.ndarray, j: np.ndarray, prob: float,
                   exact_mean: np.ndarray | None) -> ThetaSummary:
    lo, hi = hdi_rows(theta_pairs.T, prob)
    mean = theta_pairs.mean(axis=0) if exact_mean is None else exact_mean
    sd = theta_pairs.std(axis=0, ddof=1)
    return ThetaSummary(successes=y, trials=j, mean=np.asarray(mean)[inverse], low=lo[inverse], high=hi[inverse],
                        hdi_prob=prob, sd=sd[inverse])


def _derive(y: np.ndarray, j: np.ndarray, mu: np.ndarray, lam: np.ndarray, prob: float, rng: np.random.Generator,
            *, quad: dict[str, Any] | None, ppc_draws: int, engine: str, diagnostics: list[Diagnostic],
            prior: BetaBinomialPrior, seed: int | None, trace: Any = None) -> BetaBinomialPosterior:
    kappa = np.exp(lam)
    alpha = mu * kappa
    beta = (1.0 - mu) * kappa
    variance = mu * (1.0 - mu) / (kappa + 1.0)
    gb, theta_pairs, inverse = gamma_bar_draws(alpha, beta, y, j, rng)
    uy, uj, cnt, _ = _pairs(y, j)
    means: dict[str, float | None] = dict.fromkeys(_PARAMS)
    theta_mean = None
    if quad is not None:  # exact quadrature means of the grid posterior
        w = quad["weights"]
        keep = w > 0
        w = w[keep]
        qm = _expit(quad["eta_cells"][keep])
        qk = np.exp(quad["lam_cells"][keep])
        qa, qb = qm * qk, (1.0 - qm) * qk
        means["mu"] = float(w @ qm)
        means["kappa"] = float(w @ qk)
        means["variance"] = float(w @ (qm * (1.0 - qm) / (qk + 1.0)))
        a = qa[:, None] + uy[None, :]
        b = qb[:, None] + (uj - uy)[None, :]
        m1, _ = _theta_moments(a, b)
        means["gamma_bar"] = float(w @ ((m1 * uj[None, :]) @ cnt) / y.size)
        theta_mean = w @ (a / (a + b))
    draws = {"mu": mu, "kappa": kappa, "log_kappa": lam, "gamma_bar": gb, "variance": variance}
    sums = {name: _summary(draws[name], prob, means[name]) for name in _PARAMS}
    if quad is not None:  # deterministic HDIs of the hyperparameter functions
        for name, (lo, hi) in _grid_hdis(quad, prob).items():
            sums[name] = dataclasses.replace(sums[name], low=lo, high=hi)
    n_ppc = min(ppc_draws, mu.size)
    pick = rng.choice(mu.size, size=n_ppc, replace=False) if n_ppc < mu.size else np.arange(mu.size)
    ppc = _ppc(y, j, alpha[pick], beta[pick], rng)
    notes = []
    if y.size == 1:
        notes.append("only one question: the spread between questions (kappa) is barely informed by the data, "
                     "so its wide posterior rests mostly on its prior")
    if np.all(y == j):
        notes.append("every trial of every question was correct: mu's posterior is bounded below by the data but "
                     "its upper end rests on the prior")
    elif np.all(y == 0):
        notes.append("every trial of every question was wrong: mu's posterior is bounded above by the data but "
                     "its lower end rests on the prior")
    if np.all(j == 1):
        notes.append("one trial per question: kappa (spread between questions) is not identified from single trials "
                     "and gamma-bar only restates mu")
    return BetaBinomialPosterior(
        engine=engine, hdi_prob=prob, n_questions=int(y.size), n_trials=int(j.sum()), n_successes=int(y.sum()),
        mu=sums["mu"], kappa=sums["kappa"], gamma_bar=sums["gamma_bar"], variance=sums["variance"],
        theta=_theta_summary(theta_pairs, inverse, y, j, prob, theta_mean), ppc=ppc,
        diagnostics=tuple(diagnostics), draws=draws, prior=prior, seed=seed, notes=tuple(notes), trace=trace)


# --------------------------------------------------------------------------- NUTS engine
def _nuts_diagnostics(idata: Any, names: Sequence[str], chains: int) -> dict[str, list[Diagnostic]]:
    import arviz as az

    rhat = az.rhat(idata, var_names=["mu", "log_kappa"])
    ess_b = az.ess(idata, var_names=["mu", "log_kappa"], method="bulk")
    ess_t = az.ess(idata, var_names=["mu", "log_kappa"], method="tail")
    div = idata.sample_stats["diverging"].values  # (chain, draw)
    n_div = int(div.sum())
    min_ess = 100 * chains
    out: dict[str, list[Diagnostic]] = {}
    for c, name in enumerate(names):
        r = max(float(rhat[v].values[c]) for v in ("mu", "log_kappa"))
        eb = min(float(ess_b[v].values[c]) for v in ("mu", "log_kappa"))
        et = min(float(ess_t[v].values[c]) for v in ("mu", "log_kappa"))
        ds = [
            Diagnostic(
                check="r_hat", ok=bool(r <= 1.01), value=round(r, 4), threshold=1.01,
                finding=f"largest R-hat of mu and log kappa is {r:.3f}" + ("" if r <= 1.01 else " (above 1.01)"),
                meaning="the chains agree on the posterior" if r <= 1.01 else
                        "the chains have not mixed: they disagree about the posterior, so its summaries may be wrong",
                remedy="none needed" if r <= 1.01 else "run longer (more tune and draws) or use the grid engine"),
            Diagnostic(
                check="ess", ok=bool(min(eb, et) >= min_ess), value=round(min(eb, et), 1), threshold=float(min_ess),
                finding=f"smallest effective sample size (bulk {eb:.0f}, tail {et:.0f})"
                        + ("" if min(eb, et) >= min_ess else f" is below {min_ess} (100 per chain)"),
                meaning="enough independent information for stable means and interval ends" if min(eb, et) >= min_ess
                        else "few effectively independent draws: means and especially HDI ends are noisy",
                remedy="none needed" if min(eb, et) >= min_ess else "draw more samples"),
            Diagnostic(
                check="divergences", ok=bool(n_div == 0), value=float(n_div), threshold=0.0,
                finding=f"{n_div} divergent transitions after warm-up",
                meaning="the sampler explored the posterior without trouble" if n_div == 0 else
                        "the sampler met curvature it could not follow: the posterior may be explored incompletely "
                        "and its summaries biased",
                remedy="none needed" if n_div == 0 else "raise target_accept (e.g. 0.95) or use the grid engine"),
        ]
        out[name] = ds
    return out


def _nuts_engine(data: dict[str, tuple[np.ndarray, np.ndarray]], prior: BetaBinomialPrior, *, chains: int, tune: int,
                 draws: int, seed: int | None, progressbar: bool, target_accept: float, cores: int | None):
    try:
        import pymc as pm
    except ImportError:
        raise InvalidArgument("engine", "nuts", "needs PyMC: pip install 'evalspec[mcmc]' (or use engine 'grid')") \
            from None
    names = list(data)
    ys = np.concatenate([data[n][0] for n in names])
    js = np.concatenate([data[n][1] for n in names])
    idx = np.concatenate([np.full(data[n][0].size, c) for c, n in enumerate(names)])
    with pm.Model(coords={"condition": names}):
        mu = pm.Beta("mu", alpha=prior.mu_a, beta=prior.mu_b, dims="condition")
        log_kappa = pm.Normal("log_kappa", mu=prior.log_kappa_mean, sigma=prior.log_kappa_sd, dims="condition")
        kappa = pm.Deterministic("kappa", pm.math.exp(log_kappa), dims="condition")
        pm.BetaBinomial("y", n=js, alpha=(mu * kappa)[idx], beta=((1.0 - mu) * kappa)[idx], observed=ys)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores or 1, random_seed=seed,
                          progressbar=progressbar, target_accept=target_accept, compute_convergence_checks=False)
    diags = _nuts_diagnostics(idata, names, chains)
    post = idata.posterior
    out = {}
    for c, name in enumerate(names):
        mu_d = post["mu"].values[:, :, c].ravel()
        lam_d = post["log_kappa"].values[:, :, c].ravel()
        out[name] = (mu_d, lam_d, diags[name])
    return out, idata


# --------------------------------------------------------------------------- API
def _seed_int(seed: int | None) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgument("seed", seed, "must be a non-negative integer or None")
    return int(seed)


def beta_binomial_profile(data: Mapping[str, tuple[ArrayLike, ArrayLike]], *, engine: str = "grid",
                          contrasts: Sequence[tuple[str, str]] | None = None, hdi_prob: float = 0.95,
                          seed: int | None = None, prior: BetaBinomialPrior | None = None, draws: int = 20_000,
                          grid_points: int = 96, chains: int = 4, tune: int = 2_000, nuts_draws: int = 2_000,
                          target_accept: float = 0.9, cores: int | None = None, progressbar: bool = False,
                          ppc_draws: int = 500) -> BetaBinomialProfile:
    """Posterior profile of several conditions, and contrasts between pairs of them.

    Parameters
    ----------
    data : mapping
        Condition name -> ``(successes, trials)``: per-question counts of correct trials and
        of trials.
    engine : {'grid', 'nuts'}
        ``grid``: adaptive quadrature (default, deterministic given ``seed``). ``nuts``: the
        paper's PyMC model (one joint model over the conditions), needs the ``mcmc`` extra.
    contrasts : list of (first, second), optional
        Pairs to contrast (first minus second); default every pair in the given order.
    hdi_prob : float
        Mass of every highest-density interval (0.95).
    seed : int, optional
        Seed of every random draw (grid draws, theta and gamma-bar draws, PPC, NUTS).
    prior : BetaBinomialPrior, optional
        Hyperpriors; default the paper's mu ~ Beta(1, 1), log kappa ~ Normal(0, 1.5).
    draws : int
        Grid engine: posterior draws for intervals and derived quantities.
    grid_points : int
        Grid engine: points per axis of the final grid.
    chains, tune, nuts_draws, target_accept, cores, progressbar
        NUTS engine settings (the paper: 4 chains, 50,000 warm-up, 200,000 draws in all).
    ppc_draws : int
        Replicated data sets in the posterior predictive check.
    """
    engine = str(engine)
    if engine not in ENGINES:
        raise InvalidArgument("engine", engine, "must be 'grid' or 'nuts'")
    hdi_prob = _level("hdi_prob", hdi_prob)
    seed = _seed_int(seed)
    prior = prior or BetaBinomialPrior()
    for name, value, lo in (("draws", draws, 100), ("grid_points", grid_points, 16), ("chains", chains, 1),
                            ("tune", tune, 0), ("nuts_draws", nuts_draws, 10), ("ppc_draws", ppc_draws, 10)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
            raise InvalidArgument(name, value, f"must be an integer >= {lo}")
    if not isinstance(data, Mapping) or not data:
        raise InvalidArgument("data", data, "must map at least one condition name to (successes, trials)")
    clean = {str(k): _counts(v[0], v[1], str(k)) for k, v in data.items()}
    names = list(clean)
    if contrasts is None:
        contrasts = [(names[a], names[b]) for a in range(len(names)) for b in range(a + 1, len(names))]
    for pair in contrasts:
        for n in pair:
            if n not in clean:
                raise InvalidArgument("contrasts", list(pair), f"condition {n!r} has no data; known: {', '.join(names)}")
        if pair[0] == pair[1]:
            raise InvalidArgument("contrasts", list(pair), "contrasts a condition with itself")
    root = np.random.SeedSequence(seed)
    children = root.spawn(len(names) + 1)
    posts: dict[str, BetaBinomialPosterior] = {}
    if engine == "grid":
        for c, name in enumerate(names):
            rng = np.random.default_rng(children[c])
            y, j = clean[name]
            g = _grid_engine(y, j, prior, int(grid_points), int(draws), rng)
            posts[name] = _derive(y, j, _expit(g["eta"]), g["lam"], hdi_prob, rng, quad=g, ppc_draws=int(ppc_draws),
                                  engine="grid", diagnostics=g["diagnostics"], prior=prior, seed=seed)
    else:
        nuts_seed = int(np.random.default_rng(children[-1]).integers(2**31 - 1))
        res, idata = _nuts_engine(clean, prior, chains=int(chains), tune=int(tune), draws=int(nuts_draws),
                                  seed=nuts_seed, progressbar=progressbar, target_accept=target_accept, cores=cores)
        for c, name in enumerate(names):
            rng = np.random.default_rng(children[c])
            y, j = clean[name]
            mu_d, lam_d, diags = res[name]
            posts[name] = _derive(y, j, mu_d, lam_d, hdi_prob, rng, quad=None, ppc_draws=int(ppc_draws),
                                  engine="nuts", diagnostics=diags, prior=prior, seed=seed, trace=idata)
    cons = tuple(beta_binomial_contrast(posts[a], posts[b], first_name=a, second_name=b, hdi_prob=hdi_prob)
                 for a, b in contrasts)
    return BetaBinomialProfile(conditions=posts, contrasts=cons, engine=engine, hdi_prob=hdi_prob, seed=seed)


def beta_binomial_posterior(successes: ArrayLike, trials: ArrayLike, *, engine: str = "grid",
                            hdi_prob: float = 0.95, seed: int | None = None, **kwargs: Any) -> BetaBinomialPosterior:
    """Posterior profile (mu, kappa, gamma-bar, Beta variance, theta_i, PPC, diagnostics) of one condition.

    ``successes[i]`` correct answers out of ``trials[i]`` for question ``i``. Keyword
    arguments are those of :func:`beta_binomial_profile`. Returns a
    :class:`BetaBinomialPosterior`; e.g. ``post.mu.mean``, ``post.mu.low``, ``post.mu.high``.
    """
    prof = beta_binomial_profile({"condition": (successes, trials)}, engine=engine, hdi_prob=hdi_prob, seed=seed,
                                 contrasts=[], **kwargs)
    return prof.conditions["condition"]


def bhattacharyya(x: np.ndarray, y: np.ndarray, *, bins: int = 80, log_scale: bool = False) -> float:
    """Bhattacharyya coefficient BC = integral of sqrt(p q) between two posteriors, from draws.

    Estimated with a common histogram (``bins`` equal bins over the pooled 0.05 %-99.95 %
    range; on the log scale when ``log_scale``, which leaves BC unchanged for the true
    densities since BC is invariant under a monotone change of variable). BC is 1 for
    identical posteriors and 0 for disjoint ones. The distance reported is normalised to
    [0, 1] as ``sqrt(1 - BC)`` (the Hellinger distance); the unbounded ``-ln BC`` follows
    from BC if wanted.
    """
    a = np.log(x) if log_scale else np.asarray(x, dtype=np.float64)
    b = np.log(y) if log_scale else np.asarray(y, dtype=np.float64)
    pooled = np.concatenate([a, b])
    lo, hi = np.quantile(pooled, [0.0005, 0.9995])
    if not hi > lo:
        return 1.0
    edges = np.linspace(lo, hi, bins + 1)
    pa = np.histogram(np.clip(a, lo, hi), edges)[0] / a.size
    pb = np.histogram(np.clip(b, lo, hi), edges)[0] / b.size
    return float(min(1.0, np.sum(np.sqrt(pa * pb))))


def beta_binomial_contrast(first: BetaBinomialPosterior, second: BetaBinomialPosterior, *, first_name: str = "first",
                           second_name: str = "second", hdi_prob: float | None = None) -> Contrast:
    """Posterior of the differences first - second for mu, kappa, gamma-bar and the Beta variance.

    The conditions' posteriors are independent, so draw k of one is paired with draw k of
    the other (both drawn independently). Each difference has a mean, HDI, ``P(diff > 0)``
    and whether its HDI excludes zero; each parameter a Bhattacharyya coefficient and the
    normalised distance ``sqrt(1 - BC)`` (see :func:`bhattacharyya`).
    """
    prob = first.hdi_prob if hdi_prob is None else _level("hdi_prob", hdi_prob)
    n = min(first.draws["mu"].size, second.draws["mu"].size)
    diffs: dict[str, DifferenceSummary] = {}
    bc: dict[str, float] = {}
    dist: dict[str, float] = {}
    for p in _PARAMS:
        a = first.draws[p][:n]
        b = second.draws[p][:n]
        d = a - b
        s = _summary(d, prob, getattr(first, p).mean - getattr(second, p).mean)
        diffs[p] = DifferenceSummary(mean=s.mean, sd=s.sd, low=s.low, high=s.high, hdi_prob=prob,
                                     p_greater=float(np.mean(d > 0)), excludes_zero=bool(s.low > 0 or s.high < 0))
        coef = bhattacharyya(first.draws[p], second.draws[p], log_scale=(p == "kappa"))
        bc[p] = coef
        dist[p] = math.sqrt(max(0.0, 1.0 - coef))
    return Contrast(first=first_name, second=second_name, differences=diffs, bhattacharyya_coefficient=bc,
                    bhattacharyya_distance=dist)


def to_inference_data(profile: BetaBinomialProfile) -> Any:
    """ArviZ InferenceData of a profile (posterior draws of every condition, the observed counts).

    The NUTS engine's own trace (chains kept) is returned with derived quantities added; the
    grid engine's draws form one chain. Needs ArviZ (the ``mcmc`` extra).
    """
    try:
        import arviz as az
    except ImportError:
        raise InvalidArgument("save_posterior", "netcdf", "needs ArviZ: pip install 'evalspec[mcmc]'") from None
    names = list(profile.conditions)
    first = profile.conditions[names[0]]
    n = min(p.draws["mu"].size for p in profile.conditions.values())
    post = {k: np.stack([profile.conditions[c].draws[k][:n] for c in names], axis=-1)[None, ...]
            for k in ("mu", "kappa", "log_kappa", "gamma_bar", "variance")}
    observed = {}
    for c in names:
        p = profile.conditions[c]
        observed[f"successes__{c}"] = p.theta.successes
        observed[f"trials__{c}"] = p.theta.trials
    if profile.engine == "nuts" and first.trace is not None:
        chains = first.trace.posterior.sizes["chain"]
        post = {k: v.reshape(chains, -1, len(names)) for k, v in post.items()}
    idata = az.from_dict(posterior=post, observed_data=observed, coords={"condition": names},
                         dims={k: ["condition"] for k in post},
                         attrs={"engine": profile.engine, "hdi_prob": profile.hdi_prob,
                                "seed": -1 if profile.seed is None else profile.seed,
                                "model": "y_i ~ BetaBinomial(J_i, mu kappa, (1 - mu) kappa); mu ~ Beta(1, 1); "
                                         "log kappa ~ Normal(0, 1.5) (Characterizing LLM performance via a "
                                         "Bayesian lens, section 2)"})
    if profile.engine == "nuts" and first.trace is not None and "sample_stats" in first.trace.groups():
        idata.add_groups(sample_stats=first.trace.sample_stats)
    return idata

