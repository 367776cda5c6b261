"""The summaries every engine reports: a quantity's mean, sd and HDI, theta_i per question, a diagnostic."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalspec.stats.highest_density import hdi_rows

__all__ = ["Diagnostic", "Summary", "ThetaSummary"]


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


def _summary(draws: np.ndarray, prob: float, mean: float | None = None) -> Summary:
    lo, hi = hdi_rows(draws[None, :], prob)
    m = float(np.mean(draws)) if mean is None else float(mean)
    return Summary(mean=m, sd=float(np.std(draws, ddof=1)) if draws.size > 1 else 0.0,
                   low=float(lo[0]), high=float(hi[0]), hdi_prob=prob)
