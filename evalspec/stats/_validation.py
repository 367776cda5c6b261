"""Argument checks shared by the statistics kernels.

Every public function in :mod:`evalspec.stats` validates its arguments here so that bad
input fails with a :class:`InvalidArgument` naming the argument and the offending value,
instead of a numpy warning, a NaN or a traceback deep inside scipy.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["ClusterLabels", "InvalidArgument", "cluster_labels"]


class InvalidArgument(ValueError):
    """A statistics function was called with an invalid argument.

    Attributes
    ----------
    argument : str
        The name of the argument (as in the function signature).
    value : object
        The value that was passed (possibly abbreviated for arrays).
    """

    def __init__(self, argument: str, value: Any, problem: str) -> None:
        self.argument = argument
        self.value = value
        self.problem = problem
        super().__init__(f"{argument}={_short(value)}: {problem}")


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _count(name: str, value: Any) -> int:
    """Return ``value`` as a non-negative ``int`` or raise :class:`InvalidArgument`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgument(name, value, "must be a non-negative integer count")
    if isinstance(value, numbers.Integral):
        ivalue = int(value)
    else:
        fvalue = float(value)
        if not math.isfinite(fvalue) or fvalue != int(fvalue):
            raise InvalidArgument(name, value, "must be a non-negative integer count")
        ivalue = int(fvalue)
    if ivalue < 0:
        raise InvalidArgument(name, value, "must be a non-negative integer count")
    return ivalue


def _level(name: str, value: Any) -> float:
    """Return ``value`` as a float strictly between 0 and 1 or raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgument(name, value, "must be a number strictly between 0 and 1")
    fvalue = float(value)
    if not (0.0 < fvalue < 1.0):  # also rejects NaN
        raise InvalidArgument(name, value, "must be a number strictly between 0 and 1")
    return fvalue


def _choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed`` or raise, listing the choices."""
    if not isinstance(value, str) or value not in allowed:
        raise InvalidArgument(name, value, "must be one of " + ", ".join(repr(a) for a in allowed))
    return value


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` >= ``minimum`` or raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise InvalidArgument(name, value, f"must be an integer >= {minimum}")
    return int(value)


def _finite_array(name: str, values: Any, *, unit_interval: bool = False) -> np.ndarray:
    """Return ``values`` as a non-empty 1-D float64 array of finite numbers.

    With ``unit_interval`` every value must also lie in [0, 1] (per-case outcomes).
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidArgument(name, values, "must be a 1-D array of numbers") from None
    if arr.ndim != 1:
        raise InvalidArgument(name, values, f"must be 1-D (got an array of shape {arr.shape})")
    if arr.size == 0:
        raise InvalidArgument(name, values, "must not be empty")
    with np.errstate(over="ignore", invalid="ignore"):  # (no warning: what is not finite is said below)
        total = arr.sum()
    if not np.isfinite(total):  # (a finite sum has no NaN or infinity in it; one that overflowed is looked into)
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidArgument(name, values, f"must be finite (element {i} is {arr[i]!r})")
    if unit_interval:
        out = (arr < 0.0) | (arr > 1.0)
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise InvalidArgument(name, values, f"must lie in [0, 1] (element {i} is {arr[i]!r})")
    return arr


class ClusterLabels(np.ndarray):
    """Integer cluster labels, one per row, that keep their factorisation once made (:func:`cluster_labels`).

    A group's or a pair's clusters are counted by several kernels in a row (the number of
    clusters, their sizes, the residual totals: up to eight times per paired interval, each an
    O(n) pass over millions of cases); labels of this type are factorised once and every kernel
    reads the same codes and sizes. They are read-only (the codes could otherwise go stale), and
    anything derived from them (a slice, a copy, arithmetic) is a plain array again, factorised
    afresh: the codes travel with the labels themselves, never in a cache keyed by identity.
    Only time changes, never a result (``tests/stats/test_cluster_labels.py``).
    """

    _bins: Any  # (labels - min, rows per label) or False (no modest range); None: not counted yet
    _codes: Any  # (codes, number of clusters, rows per cluster); None: not made yet

    def __array_finalize__(self, obj: Any) -> None:
        self._bins = None
        self._codes = None

    def __reduce__(self) -> Any:  # pickles as a plain array
        return np.asarray(self).view(np.ndarray).__reduce__()

    def __repr__(self) -> str:  # (shown as the plain array it is, in messages too)
        return repr(self.view(np.ndarray))


def cluster_labels(labels: np.ndarray) -> np.ndarray:
    """``labels`` (a 1-D integer array, not changed afterwards) as :class:`ClusterLabels`: read-only, factorised
    once by whichever kernel asks first; any other array (or labels of this type already) is returned as it is."""
    if type(labels) is ClusterLabels or not (isinstance(labels, np.ndarray) and labels.ndim == 1 and labels.dtype.kind in "iu"):
        return labels
    out = labels.view(ClusterLabels)
    out.flags.writeable = False
    return out


def _frozen(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False


def _integer_bins(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(labels - min as intp, rows per label from min to max)`` of non-empty 1-D integer labels over a modest
    range (at most ``4 n + 1024`` values: counted in O(n)), else None (counted once for :class:`ClusterLabels`)."""
    if type(arr) is ClusterLabels:
        if arr._bins is None:
            bins = _count_bins(arr.view(np.ndarray))
            if bins is not None:
                _frozen(*bins)
            arr._bins = False if bins is None else bins
        return arr._bins or None
    return _count_bins(arr)


def _count_bins(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    lo, hi = int(arr.min()), int(arr.max())
    if hi - lo > 4 * arr.shape[0] + 1024:
        return None
    shifted = (arr - lo).astype(np.intp, copy=False) if lo else arr.astype(np.intp, copy=False)
    return shifted, np.bincount(shifted, minlength=hi - lo + 1)


def _cluster_codes(clusters: Any, n: int, name: str = "clusters") -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 for cluster labels, in a canonical (sorted) label order.

    The codes do not depend on the order of the rows, so neither does any result computed
    from them (including seeded bootstrap draws). Labels may be any hashable values; numpy
    arrays of numbers or strings take a fast path.

    Returns
    -------
    codes : ndarray of intp, shape (n,)
    n_clusters : int
    """
    if type(clusters) is ClusterLabels and clusters.shape[0] == n:  # (factorised once: see ClusterLabels)
        if clusters._codes is None:
            codes, n_clusters = _make_cluster_codes(clusters, n, name)
            bins = _integer_bins(clusters) if n else None  # (its sizes counted already: the labels' bins)
            sizes = np.bincount(codes, minlength=n_clusters) if bins is None else bins[1][bins[1] > 0]
            _frozen(codes, sizes)
            clusters._codes = (codes, n_clusters, sizes)
        return clusters._codes[0], clusters._codes[1]
    return _make_cluster_codes(clusters, n, name)


def _cluster_sizes_of(clusters: Any, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """Rows per cluster of ``codes`` (:func:`_cluster_codes` of ``clusters``), int64; kept by :class:`ClusterLabels`."""
    if type(clusters) is ClusterLabels and clusters._codes is not None and clusters._codes[0] is codes:
        return clusters._codes[2]
    return np.bincount(codes, minlength=n_clusters)


def _make_cluster_codes(clusters: Any, n: int, name: str) -> tuple[np.ndarray, int]:
    if isinstance(clusters, (str, bytes)) or not isinstance(clusters, (Iterable, np.ndarray)):
        raise InvalidArgument(name, clusters, "must be a sequence of cluster labels, one per row")
    arr = clusters if isinstance(clusters, np.ndarray) else None
    if arr is None:
        seq = list(clusters)
        if len(seq) != n:
            raise InvalidArgument(name, clusters, f"must have one label per row: got {len(seq)} labels for {n} rows")
        try:
            arr = np.asarray(seq)
        except (TypeError, ValueError):
            arr = None
        if arr is None or (arr.dtype.kind in "US" and not all(isinstance(v, (str, bytes)) for v in seq)):
            # mixed label types: numpy would turn 1 and "1" into the same string
            arr = np.empty(len(seq), dtype=object)
            arr[:] = seq
    if arr.ndim != 1:
        if arr.ndim == 2 and arr.shape[0] == n:  # e.g. tuples of labels became a 2-D array
            obj = np.empty(n, dtype=object)
            obj[:] = [tuple(row) for row in arr.tolist()]
            arr = obj
        else:
            raise InvalidArgument(name, clusters, f"must be 1-D (got shape {arr.shape})")
    if arr.shape[0] != n:
        raise InvalidArgument(name, clusters, f"must have one label per row: got {arr.shape[0]} labels for {n} rows")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise InvalidArgument(name, clusters, "must not contain NaN labels")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.intp)
    if arr.dtype.kind in "iu" and n > 0:
        # integer labels over a modest range: O(n) factorisation, same sorted order as np.unique
        bins = _integer_bins(arr)
        if bins is not None:
            shifted, counts = bins
            present = counts > 0
            if present.all():  # labels 0..G-1 (after the shift), each used: they are their own codes
                return shifted, int(present.size)
            rank = np.cumsum(present, dtype=np.intp) - 1
            return rank[shifted], int(rank[-1] + 1)
    if arr.dtype.kind != "O":
        uniq, codes = np.unique(arr, return_inverse=True)
        return codes.astype(np.intp, copy=False).reshape(-1), int(uniq.size)
    for i, label in enumerate(arr.tolist()):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            raise InvalidArgument(name, clusters, f"must not contain missing labels (row {i} is {label!r})")
    try:
        labels = sorted(set(arr.tolist()))
    except TypeError:  # mixed, unorderable label types: order by type name, then repr
        labels = sorted(set(arr.tolist()), key=lambda v: (type(v).__name__, repr(v)))
    index = {label: k for k, label in enumerate(labels)}
    codes = np.fromiter((index[v] for v in arr.tolist()), dtype=np.intp, count=n)
    return codes, len(labels)
