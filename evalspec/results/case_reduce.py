"""The plan's reduction from attempt rows to its case table, computed by evalspec itself.

:func:`reduce_rows` is the reference for ``evalspec reduce-sql``: the SQL run where the rows
live must give this table (``tests/results/test_reduce_sql.py`` runs it on DuckDB and Spark and
compares). It takes typed attempt rows (:class:`~evalspec.results.table.Tidy`, before the
checks: duplicates and extra repeats are counted, not refused) and gives one row per
candidate × case × model version, the columns of :func:`evalspec.plan.case_table.case_table_columns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalspec.plan.case_table import attribute_columns, case_table_columns
from evalspec.results.table import factorize, missing_mask

__all__ = ["reduce_rows"]


def reduce_rows(tidy: Any, plan: Any) -> Any:
    """The case table of ``tidy`` under ``plan``, as a :class:`pyarrow.Table` (columns in schema order)."""
    import pyarrow as pa

    planned = int(plan.attempts.repeats)
    version = tidy.version.codes if tidy.version is not None else np.zeros(tidy.n, dtype=np.int64)
    order = np.lexsort((np.arange(tidy.n), tidy.repeat, version, tidy.case, tidy.cand))
    cand, case, ver = tidy.cand[order], tidy.case[order], np.asarray(version)[order]
    rep, passed = tidy.repeat[order], tidy.passed[order]
    start = np.r_[True, (cand[1:] != cand[:-1]) | (case[1:] != case[:-1]) | (ver[1:] != ver[:-1])] if tidy.n else \
        np.zeros(0, dtype=bool)
    group = np.cumsum(start) - 1
    starts = np.flatnonzero(start)
    rank = np.arange(tidy.n) - starts[group]
    n_groups = starts.size
    kept = rank < planned

    def per_group(mask: np.ndarray) -> np.ndarray:
        return np.bincount(group[mask], minlength=n_groups).astype(np.int64)

    miss = np.isnan(passed)
    out: dict[str, Any] = {}
    g0 = order[starts]
    out[plan.data.columns.candidate] = pa.array([tidy.candidates[c] for c in tidy.cand[g0].tolist()], pa.string())
    out[plan.units.case] = pa.array(tidy.case_ids[tidy.case[g0]].tolist(), pa.string())
    if plan.units.cluster is not None:
        out[plan.units.cluster] = pa.array(tidy.cluster_ids[tidy.cluster[g0]].tolist(), pa.string())
    if plan.data.columns.model_version is not None:
        labels = np.append(np.asarray(tidy.version.uniques, dtype=object), None)
        out[plan.data.columns.model_version] = pa.array(labels[tidy.version.codes[g0]].tolist(), pa.string())
    distinct_repeats = np.bincount(group[np.r_[True, rep[1:] != rep[:-1]] | start], minlength=n_groups) if tidy.n \
        else np.zeros(0, dtype=np.int64)
    out["attempts"] = per_group(kept)
    out["extra_attempts"] = per_group(~kept)
    out["missing"] = per_group(kept & miss)
    out["passes"] = per_group(kept & (passed >= 1.0))
    out["duplicate_attempts"] = per_group(np.ones(tidy.n, dtype=bool)) - distinct_repeats
    out["unreadable"] = np.zeros(n_groups, dtype=np.int64)  # typed rows: an unreadable one was refused
    if plan.record:
        out["lacking_record"] = per_group(_lacking(tidy, plan)[order])
    answered = kept & ~miss
    answered_rank = np.cumsum(answered) - 1
    answered_rank = answered_rank - np.r_[0, np.cumsum(answered)][starts][group]
    for col in case_table_columns(plan):
        if col.name == "first_outcome":
            out[col.name] = _first(passed, group, kept & (rank == 0), n_groups)
        elif col.name == "first_answered_outcome":
            out[col.name] = _first(passed, group, answered & (answered_rank == 0), n_groups)
        elif col.name.startswith("passes_in_first_"):
            out[col.name] = per_group(kept & (rank < int(plan.attempts.k or 1)) & (passed >= 1.0))
        elif col.name.startswith("missing_in_first_"):
            out[col.name] = per_group(kept & (rank < int(plan.attempts.k or 1)) & miss)
        elif col.name.startswith("answered_passes_in_first_"):
            out[col.name] = per_group(answered & (answered_rank < int(plan.attempts.k or 1)) & (passed >= 1.0))
    if tidy.timestamp is not None:
        t = tidy.timestamp[order]
        good = t != np.iinfo(np.int64).min
        out["first_time"] = _times(t, good, group, n_groups, np.minimum)
        out["last_time"] = _times(t, good, group, n_groups, np.maximum)
    for col in attribute_columns(plan):
        codes, uniq = factorize(tidy.raw[col])
        codes = codes[order]
        has = kept & ~np.append(missing_mask(uniq), True)[codes]
        first = np.full(n_groups, -1, dtype=np.int64)
        idx = np.flatnonzero(has)
        g = group[idx]
        firsts = np.r_[True, g[1:] != g[:-1]] if idx.size else np.zeros(0, dtype=bool)
        first[g[firsts]] = codes[idx[firsts]]
        out[col] = _values(np.append(uniq, None)[first])
        pairs = np.unique(np.stack([group[idx], codes[idx]], axis=1), axis=0) if idx.size else np.zeros((0, 2), int)
        out[f"distinct_{col}"] = np.bincount(pairs[:, 0], minlength=n_groups).astype(np.int64)
    names = [c.name for c in case_table_columns(plan)]
    return pa.table({name: out[name] for name in names})


def _lacking(tidy: Any, plan: Any) -> np.ndarray:
    """Rows lacking any metadata item the plan's ``record`` requires."""
    roles = {"model_version": plan.data.columns.model_version, "timestamp": plan.data.columns.timestamp,
             "candidate": plan.data.columns.candidate, "repeat": plan.data.columns.repeat,
             "outcome": plan.data.columns.outcome}
    out = np.zeros(tidy.n, dtype=bool)
    for item in plan.record:
        col = roles.get(item) or item
        if col in tidy.raw:
            codes, uniq = factorize(tidy.raw[col])
            out |= np.append(missing_mask(uniq), True)[codes]
    return out


def _first(passed: np.ndarray, group: np.ndarray, pick: np.ndarray, n_groups: int) -> Any:
    import pyarrow as pa

    values = np.full(n_groups, np.nan)
    values[group[pick]] = passed[pick]
    return pa.array(values, pa.float64(), from_pandas=True)  # NaN -> null


def _times(t: np.ndarray, good: np.ndarray, group: np.ndarray, n_groups: int, fn: Any) -> Any:
    import pyarrow as pa

    fill = np.iinfo(np.int64).max if fn is np.minimum else np.iinfo(np.int64).min
    out = np.full(n_groups, fill, dtype=np.int64)
    fn.at(out, group[good], t[good])
    mask = out == fill
    return pa.array(out, pa.timestamp("us", tz="UTC"), mask=mask)


def _values(values: np.ndarray) -> Any:
    """An attribute column as Arrow: its values' own type where they share one, else text."""
    import pyarrow as pa

    try:
        return pa.array(values.tolist())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values.tolist()], pa.string())
