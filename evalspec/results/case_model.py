"""A checked case table: per candidate × case matrices, what the checks found, and the attempt rule on counts.

Built by :func:`evalspec.results.case_table.load_case_table`; ``evalspec run`` reads it where it
reads :class:`~evalspec.results.checks.Checked` for attempt rows.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalspec.analyses.contract import CaseCounts
from evalspec.attempts import CaseOutcomes, pass_at, pass_hat
from evalspec.results.table import FileInfo

__all__ = ["CaseTable", "micros_range", "outcomes_from_counts"]

_NO_TIME = np.iinfo(np.int64).min
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass
class CaseTable:
    """A checked case table: per candidate × case matrices and what the checks found.

    Shaped where ``evalspec run`` reads it like :class:`~evalspec.results.checks.Checked` and its
    ``tidy`` (``deviations``, ``detected``, ``missing``, ``versions_seen``, ``repeats_observed``;
    ``files``, ``candidates``, ``case_ids``, ``raw``, ``time_range``).
    """

    files: list[FileInfo]
    candidates: list[str]
    case_ids: np.ndarray
    cluster_ids: np.ndarray | None
    case_cluster: np.ndarray | None
    raw: dict[str, np.ndarray]
    time_range: tuple[_dt.datetime, _dt.datetime] | None
    attempts: np.ndarray
    missing_counts: np.ndarray
    passes: np.ndarray
    rule_counts: dict[str, np.ndarray]
    case_columns: dict[str, np.ndarray] = field(default_factory=dict)
    attribute_deviations: list[dict[str, str]] = field(default_factory=list)
    deviations: list[dict[str, str]] = field(default_factory=list)
    detected: list[dict[str, str]] = field(default_factory=list)
    missing: dict[str, dict[str, Any]] = field(default_factory=dict)
    versions_seen: dict[str, dict[str, int]] = field(default_factory=dict)
    repeats_observed: tuple[int, int] = (1, 1)

    @property
    def tidy(self) -> CaseTable:
        """The table itself (where the run reads ``checked.tidy``)."""
        return self

    @property
    def n(self) -> int:
        """Attempt rows analysed, all candidates (what ``Tidy.n`` is for attempt rows)."""
        return int(self.attempts.sum())

    def rows_of(self, j: int) -> int:
        """Attempt rows of candidate ``j`` that were analysed (the claim's ``coverage.candidates.*.rows``)."""
        return int(self.attempts[j].sum())

    def any_missing(self) -> bool:
        return bool(self.missing_counts.any())

    def case_counts(self, policy: str) -> CaseCounts:
        """Counts with the missing-outcome ``policy`` applied (``exclude`` leaves missing outcomes out)."""
        trials = self.attempts - self.missing_counts if policy == "exclude" else self.attempts
        return CaseCounts(trials=trials, passes=self.passes, missing=self.missing_counts)

    def outcomes(self, rule: str, k: int | None, policy: str) -> CaseOutcomes:
        """The attempt rule on counts: what :func:`evalspec.attempts.reduce_attempts` gives from the rows."""
        return outcomes_from_counts(self.attempts, self.missing_counts, self.passes, self.rule_counts, rule, k, policy)


def _all_positive(counts: np.ndarray) -> bool:
    """Whether every cell of ``counts`` is above zero (one value read where it is one value broadcast)."""
    if not counts.size:
        return True
    if not any(counts.strides):
        return bool(counts.flat[0] > 0)
    return bool(counts.min() > 0)


def outcomes_from_counts(attempts: np.ndarray, missing: np.ndarray, passes: np.ndarray,
                         rule_counts: dict[str, np.ndarray], rule: str, k: int | None, policy: str) -> CaseOutcomes:
    """Case outcomes by ``rule`` from candidate × case count matrices (the columns of a case table).

    ``attempts`` kept attempts, ``missing`` of them without an outcome, ``passes`` passed;
    ``rule_counts`` the rule's own columns (``first_outcome``, ``passes_in_first_K``, ...).
    """
    used = attempts - missing if policy == "exclude" else attempts
    every = _all_positive(used)  # (every cell has attempts: each is given its value below, none left NaN or 0)
    cells = None if every else used.ravel() > 0  # the cells with attempts (every cell: no mask to apply)
    values = np.empty(used.shape) if every else np.full(used.shape, np.nan)
    taken = np.empty(used.shape, dtype=np.int64) if every else np.zeros(used.shape, dtype=np.int64)

    def at(matrix: np.ndarray) -> np.ndarray:  # (every cell: the matrix itself, a broadcast count not made whole)
        return matrix if cells is None else matrix.ravel()[cells]

    def put(out: np.ndarray, cell_values: Any) -> None:
        if cells is None:
            out[...] = cell_values
        else:
            out.reshape(-1)[cells] = cell_values  # (a view of the fresh matrix, in cell order)

    exclude = policy == "exclude"
    if rule == "first":
        first = at(rule_counts["first_answered_outcome" if exclude else "first_outcome"])
        put(values, np.where(np.isnan(first), 0.0, first))
        put(taken, 1)
    elif rule == "best_of_k":
        kk = int(k or 1)
        hits = at(rule_counts[f"answered_passes_in_first_{kk}" if exclude else f"passes_in_first_{kk}"])
        put(values, (hits > 0).astype(np.float64))
        put(taken, np.minimum(at(used), kk))
    else:
        n, c = at(used), at(passes)
        if rule == "majority":
            put(values, (2 * c > n).astype(np.float64))
        elif rule in ("pass_at_k", "pass_hat_k"):
            estimator = pass_at if rule == "pass_at_k" else pass_hat
            flat_n, flat_c = np.broadcast_to(n, np.broadcast_shapes(n.shape, c.shape)).ravel(), c.ravel()
            pairs, inverse = np.unique(np.stack([flat_n, flat_c], axis=1), axis=0, return_inverse=True)
            table = np.array([estimator(int(a), int(b), int(k or 1)) for a, b in pairs], dtype=np.float64)
            put(values, table[np.asarray(inverse).reshape(-1)].reshape(c.shape))
        elif rule == "mean":
            if cells is None:
                np.divide(c, n, out=values)  # (float64 of each, divided: as below, into the matrix itself)
            else:
                put(values, c.astype(np.float64) / n)
        else:
            raise ValueError(f"the attempt rule {rule!r} does not run on a case table")
        if every and used.dtype == taken.dtype:  # each cell's attempts are those analysed: the counts themselves,
            taken = used.view()  # read only (no copy of every cell; the matrix above was never written)
            taken.flags.writeable = False
        else:
            put(taken, n)
    return CaseOutcomes(values=values, attempts=taken, rule=rule, k=k)


def micros_range(first: np.ndarray, last: np.ndarray) -> tuple[_dt.datetime, _dt.datetime] | None:
    """The run dates of the attempts: earliest first time, latest last time (None without any)."""
    a, b = first[first != _NO_TIME], last[last != _NO_TIME]
    if not a.size or not b.size:
        return None
    return (_EPOCH + _dt.timedelta(microseconds=int(a.min())), _EPOCH + _dt.timedelta(microseconds=int(b.max())))
