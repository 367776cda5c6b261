"""The input of the Beta-Binomial kernels: per-question counts checked, and their distinct values.

The likelihood and the draws depend on the data only through the distinct (y, J) pairs and
how many questions share each, so these helpers reduce the questions to those.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from evalspec.stats._validation import InvalidArgument

__all__: list[str] = []


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
