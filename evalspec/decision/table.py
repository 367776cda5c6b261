"""The verdict table: which cell of the preregistered rule an interval falls in (numbers only, no words).

``[L, H]`` is the primary interval, ``d`` the minimum improvement, ``m`` the margin. Every
comparison is **strict**: a bound touching a threshold does not clear it. Each cell names one
row of the table in ``docs/decision.md``; :data:`CELL_VERDICT` gives its verdict code and
:mod:`evalspec.decision.wording` its words. The same function decides the verdict and the
verdicts of the sensitivity intervals (missing outcomes counted as failures), so the two can
only differ because the intervals differ.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["CELL_VERDICT", "Cell", "cell_of", "verdict_of"]

Cell = Literal[
    "above_minimum", "may_be_too_small", "below_minimum", "regression", "gain_or_loss", "no_material_gain",
    "unsure_no_minimum", "unsure", "non_inferior", "ni_regression", "not_non_inferior", "equivalent",
    "beyond_margin", "not_equivalent",
]

CELL_VERDICT: dict[str, str] = {
    "above_minimum": "worth_acting_on",
    "may_be_too_small": "too_small",       # 0 < L <= d <= H: better, maybe not by enough
    "below_minimum": "too_small",          # 0 < L, H < d: better, and shown to be below the minimum
    "regression": "regression",
    "gain_or_loss": "inconclusive",        # L < -d and H > d
    "no_material_gain": "no_material_gain",
    "unsure_no_minimum": "inconclusive",   # d <= 0 and the interval holds 0
    "unsure": "inconclusive",              # holds 0 and a gain of d or more
    "non_inferior": "non_inferior",
    "ni_regression": "regression",
    "not_non_inferior": "not_non_inferior",
    "equivalent": "equivalent",
    "beyond_margin": "not_equivalent",     # the whole interval beyond the margin: a clear difference
    "not_equivalent": "not_equivalent",
}


def cell_of(goal: str, low: float, high: float, d: float, m: float | None) -> Cell:
    """The cell of the verdict table that ``[low, high]`` falls in for ``goal``."""
    if goal == "superiority":
        if low > d:
            return "above_minimum"
        if low > 0:
            return "below_minimum" if d > 0 and high < d else "may_be_too_small"
        if high < 0:
            return "regression"
        if d > 0 and low < -d and high > d:
            return "gain_or_loss"
        if high < d:
            return "no_material_gain"
        return "unsure_no_minimum" if d <= 0 else "unsure"
    assert m is not None, "non-inferiority and equivalence need a margin (validate enforces it)"
    if goal == "non_inferiority":
        if low > -m:
            return "non_inferior"
        return "ni_regression" if high < 0 else "not_non_inferior"
    if -m < low and high < m:
        return "equivalent"
    if high < -m or low > m:
        return "beyond_margin"
    return "not_equivalent"


def verdict_of(goal: str, low: float, high: float, d: float, m: float | None) -> str:
    """The verdict code the table gives ``[low, high]`` (an informative interval)."""
    return CELL_VERDICT[cell_of(goal, low, high, d, m)]
