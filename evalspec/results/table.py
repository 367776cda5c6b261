"""The tidy results table: one row per (candidate, case, repeat), typed against the plan.

:func:`build_table` maps the plan's column roles onto the raw columns read by
:mod:`evalspec.results.readers`, and turns values into codes and numbers with
vectorised work on the *distinct* values (``pandas.factorize``), not per row, so a
million-row file costs little more than reading it. Anything that cannot be typed (an
unknown candidate, an outcome that is not pass/fail, a repeat that is not an integer, a
missing case id) is a located :class:`~evalspec.errors.Diagnostic`.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.results.readers import RawFile, known_codes

__all__ = ["Tidy", "FileInfo", "build_table", "located", "MAX_LISTED"]

#: At most this many rows are listed per finding; the rest are counted.
MAX_LISTED = 5

_TRUE = {"pass", "passed", "true", "t", "yes", "y", "c", "correct", "1", "1.0", "success", "ok"}
_FALSE = {"fail", "failed", "false", "f", "no", "n", "i", "incorrect", "0", "0.0", "failure"}
_MISSING = {"", "na", "nan", "null", "none"}


@dataclass(frozen=True)
class FileInfo:
    """A results file's fingerprint for the claim."""

    path: str
    sha256: str
    rows: int
    format: str


@dataclass
class Tidy:
    """Typed results: parallel arrays over rows, codes into label lists.

    ``passed`` is 1.0/0.0 and NaN where the outcome is missing; ``score`` holds numeric
    scores (for ``outcome.type: score``) or equals ``passed``. ``cand`` indexes
    ``candidates`` (the plan's order); ``case`` indexes ``case_ids`` (sorted);
    ``cluster`` indexes ``cluster_ids`` or is ``None`` when the plan declares no cluster.
    ``raw`` keeps every column as read, for slices, flags and required metadata.
    """

    files: list[FileInfo]
    displays: list[str]
    units: list[str]
    candidates: list[str]
    cand: np.ndarray
    case: np.ndarray
    case_ids: np.ndarray
    repeat: np.ndarray
    passed: np.ndarray
    score: np.ndarray
    cluster: np.ndarray | None
    cluster_ids: np.ndarray | None
    version: np.ndarray | None
    timestamp: np.ndarray | None
    file_idx: np.ndarray
    line: np.ndarray
    raw: dict[str, np.ndarray] = field(default_factory=dict)
    time_range: tuple[_dt.datetime, _dt.datetime] | None = None

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.cand.shape[0])

    def subset(self, keep: np.ndarray) -> Tidy:
        """The rows where the boolean mask ``keep`` is true (labels kept)."""

        def take(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[keep]

        return Tidy(
            files=self.files, displays=self.displays, units=self.units, candidates=self.candidates,
            cand=self.cand[keep], case=self.case[keep], case_ids=self.case_ids, repeat=self.repeat[keep],
            passed=self.passed[keep], score=self.score[keep], cluster=take(self.cluster),
            cluster_ids=self.cluster_ids, version=take(self.version), timestamp=take(self.timestamp),
            file_idx=self.file_idx[keep], line=self.line[keep],
            raw={k: v[keep] for k, v in self.raw.items()}, time_range=self.time_range,
        )

    def where(self, i: int) -> tuple[str, int]:
        """``(file, line)`` of row ``i``."""
        return self.displays[int(self.file_idx[i])], int(self.line[i])


def located(tidy_or_files: Any, rows: np.ndarray, key: str | None, message: str, *, values: np.ndarray | None = None,
            hint: str | None = None) -> list[Diagnostic]:
    """Diagnostics for the first :data:`MAX_LISTED` of ``rows``, plus a count of the rest."""
    out: list[Diagnostic] = []
    rows = np.asarray(rows)
    for i in rows[:MAX_LISTED]:
        file, line = tidy_or_files.where(int(i))
        kw: dict[str, Any] = {}
        if values is not None:
            kw = {"got": values[int(i)], "has_got": True}
        out.append(Diagnostic(file=file, line=line, key=key, message=message, hint=hint, **kw))
    if rows.shape[0] > MAX_LISTED:
        file, _ = tidy_or_files.where(int(rows[0]))
        out.append(Diagnostic(file=file, message=f"... and {rows.shape[0] - MAX_LISTED} more rows like these ({key})"))
    return out


class _Concat:
    """Raw columns of several files concatenated, with row locations."""

    def __init__(self, raws: list[RawFile]) -> None:
        self.displays = [r.display for r in raws]
        self.units = [r.unit for r in raws]
        names: dict[str, None] = {}
        for r in raws:
            for k in r.columns:
                names.setdefault(k, None)
        self.present = {k: [k in r.columns for r in raws] for k in names}
        self.columns: dict[str, np.ndarray] = {}
        for k in names:
            parts = []
            for r in raws:
                if k in r.columns:
                    parts.append(r.columns[k])
                else:
                    parts.append(np.full(r.rows, None, dtype=object))
            self.columns[k] = np.concatenate(parts) if len(parts) > 1 else parts[0]
        self.file_idx = np.concatenate([np.full(r.rows, j, dtype=np.int32) for j, r in enumerate(raws)])
        self.line = np.concatenate([r.lines for r in raws])

    def where(self, i: int) -> tuple[str, int]:
        return self.displays[int(self.file_idx[i])], int(self.line[i])


def _factorize(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of an object column; code -1 = None/NaN (known codes reused)."""
    import pandas as pd

    known = known_codes(col)
    if known is not None:
        return known
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING


def _label(value: Any) -> str:
    """Text label of an identifier value (17 and "17" are the same case)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _labels(col: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, sorted labels, missing mask)`` of an identifier column."""
    codes, uniques = _factorize(col)
    ulabels = np.array([_label(u) for u in uniques], dtype=object)
    umissing = np.array([_is_missing(u) for u in uniques], dtype=bool)
    good = ulabels[~umissing] if len(ulabels) else ulabels
    sorted_labels = np.array(sorted(set(good.tolist())), dtype=object)
    index = {lab: j for j, lab in enumerate(sorted_labels.tolist())}
    remap = np.array([(-1 if m else index[lab]) for lab, m in zip(ulabels.tolist(), umissing.tolist())] + [-1],
                     dtype=np.int64)
    out = remap[codes]  # code -1 picks the trailing -1
    return out, sorted_labels, out < 0


def _parse_binary(value: Any) -> float | None:
    """1.0 / 0.0 for a pass/fail value, NaN when missing, ``None`` when unreadable."""
    if _is_missing(value):
        return math.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value) if value in (0, 1) else None
    if isinstance(value, str):
        s = value.strip().lower()
        if s in _TRUE:
            return 1.0
        if s in _FALSE:
            return 0.0
    return None


def _parse_score(value: Any) -> float | None:
    if _is_missing(value):
        return math.nan
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        try:
            v = float(value.strip())
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


def _parse_repeat(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def parse_timestamp(value: Any) -> _dt.datetime | None:
    """An ISO 8601 time as an aware UTC datetime (naive times are taken as UTC)."""
    if not isinstance(value, str):
        return None
    try:
        t = _dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.astimezone(_dt.timezone.utc)


def _map_unique(col: np.ndarray, fn: Any, dtype: Any, bad: Any) -> tuple[np.ndarray, np.ndarray]:
    """Apply ``fn`` to the distinct values of ``col``; ``(mapped, unreadable mask)``."""
    codes, uniques = _factorize(col)
    mapped = [fn(u) for u in uniques]
    na = fn(None)
    ok = np.array([m is not None for m in mapped] + [na is not None], dtype=bool)
    vals = np.array([bad if m is None else m for m in mapped] + [bad if na is None else na], dtype=dtype)
    return vals[codes], ~ok[codes]


def build_table(raws: list[RawFile], plan: Any, plan_diagnostic: Any = None) -> Tidy:
    """Type the raw columns against ``plan``'s roles; raise all located problems at once.

    ``plan_diagnostic(key, message, hint=...)``, when given, makes a diagnostic at the plan
    line of ``key`` (a column the plan names but the results lack points at the plan).
    """
    cat = _Concat(raws)
    cols = plan.data.columns
    problems: list[Diagnostic] = []
    found = ", ".join(sorted(cat.columns)) or "none"

    def need(name: str | None, role: str) -> np.ndarray | None:
        if name is None:
            return None
        if name not in cat.columns:
            message = f"the plan names column {name!r} for {role}, but no results file has it"
            hint = f"columns found in {', '.join(cat.displays)}: {found}; fix the plan's column name or the results"
            if plan_diagnostic is not None:
                problems.append(plan_diagnostic(role, message, hint=hint))
            else:
                problems.append(Diagnostic(file=", ".join(cat.displays), key=role, message=message, hint=hint))
            return None
        missing_in = [d for d, p in zip(cat.displays, cat.present[name]) if not p]
        if missing_in:
            problems.append(
                Diagnostic(file=missing_in[0], key=role, message=f"this file has no column {name!r} ({role})",
                           hint="every results file must have the same columns")
            )
        return cat.columns[name]

    cand_col = need(cols.candidate, "data.columns.candidate")
    case_col = need(plan.units.case, "units.case")
    out_col = need(cols.outcome, "data.columns.outcome")
    cluster_col = need(plan.units.cluster, "units.cluster")
    version_col = need(cols.model_version, "data.columns.model_version")
    time_col = need(cols.timestamp, "data.columns.timestamp")
    if cols.repeat is not None and cols.repeat not in cat.columns and plan.attempts.repeats == 1:
        repeat_col = None  # one attempt per case: a repeat column is optional
    else:
        repeat_col = need(cols.repeat, "data.columns.repeat")
    if problems:
        raise InputError("the results do not have the columns the plan names", problems)
    assert cand_col is not None and case_col is not None and out_col is not None

    n = cand_col.shape[0]
    names = list(plan.candidates)
    # candidate
    ccodes, cuniq = _factorize(cand_col)
    ulab = [_label(u) for u in cuniq]
    remap = np.array([names.index(lab) if lab in names else -1 for lab in ulab] + [-2], dtype=np.int64)
    cand = remap[ccodes]
    unknown = np.flatnonzero(cand == -1)
    if unknown.size:
        seen = sorted({ulab[c] for c in ccodes[unknown]})
        problems += located(cat, unknown, cols.candidate,
                            f"unknown candidate {', '.join(map(repr, seen))}; the plan's candidates are {', '.join(names)}",
                            values=cand_col, hint="add it under `candidates` in the plan or remove these rows")
    nocand = np.flatnonzero(cand == -2)
    if nocand.size:
        problems += located(cat, nocand, cols.candidate, "the row names no candidate", hint="fill in the candidate")
    # case
    case, case_ids, case_missing = _labels(case_col)
    if case_missing.any():
        problems += located(cat, np.flatnonzero(case_missing), plan.units.case, "the row has no case id",
                            values=case_col, hint="every row needs the id of its case")
    # repeat
    if repeat_col is None:
        repeat = np.ones(n, dtype=np.int64)
    else:
        repeat, bad = _map_unique(repeat_col, _parse_repeat, np.int64, -1)
        if bad.any():
            problems += located(cat, np.flatnonzero(bad), cols.repeat, "the repeat number is not an integer",
                                values=repeat_col, hint="number the repeats of a case 1, 2, 3, ...")
    # outcome
    if plan.data.outcome.type == "score":
        score, bad = _map_unique(out_col, _parse_score, np.float64, np.nan)
        if bad.any():
            problems += located(cat, np.flatnonzero(bad), cols.outcome, "the score is not a number",
                                values=out_col, hint="scores must be numbers; leave missing outcomes empty (null)")
        with np.errstate(invalid="ignore"):
            passed = np.where(np.isnan(score), np.nan, (score >= plan.data.outcome.pass_threshold).astype(np.float64))
    else:
        passed, bad = _map_unique(out_col, _parse_binary, np.float64, np.nan)
        if bad.any():
            problems += located(
                cat, np.flatnonzero(bad), cols.outcome, "the outcome is not a pass/fail value", values=out_col,
                hint="use true/false, 1/0, pass/fail or C/I; for numeric scores set data.outcome.type: score "
                "with a pass_threshold; leave missing outcomes null",
            )
        score = passed
    # cluster
    cluster = cluster_ids = None
    if cluster_col is not None:
        cluster, cluster_ids, cl_missing = _labels(cluster_col)
        if cl_missing.any():
            problems += located(cat, np.flatnonzero(cl_missing), plan.units.cluster, "the row has no cluster id",
                                values=cluster_col, hint="every case needs its cluster (units.cluster)")
    # version and timestamp stay as text
    version = None
    if version_col is not None:
        vcodes, vuniq = _factorize(version_col)
        vlab = np.array([None if _is_missing(u) else _label(u) for u in vuniq] + [None], dtype=object)
        version = vlab[vcodes]
    timestamp = None
    time_range = None
    if time_col is not None:
        tcodes, tuniq = _factorize(time_col)
        parsed = [parse_timestamp(u) for u in tuniq]
        bad_u = np.array([p is None and not _is_missing(u) for p, u in zip(parsed, tuniq)] + [False], dtype=bool)
        if bad_u[tcodes].any():
            problems += located(cat, np.flatnonzero(bad_u[tcodes]), cols.timestamp,
                                "the timestamp is not an ISO 8601 time", values=time_col,
                                hint="write times like 2026-10-01T12:00:00Z")
        timestamp = np.array(parsed + [None], dtype=object)[tcodes]
        good = [p for p in parsed if p is not None]
        if good:
            time_range = (min(good), max(good))
    if problems:
        raise InputError(f"{len(problems)} problem(s) in the results", problems)
    files = [FileInfo(path=r.display, sha256=r.sha256, rows=r.rows, format=r.format) for r in raws]
    return Tidy(
        files=files, displays=cat.displays, units=cat.units, candidates=names, cand=cand.astype(np.int64),
        case=case, case_ids=case_ids, repeat=repeat, passed=passed, score=score, cluster=cluster,
        cluster_ids=cluster_ids, version=version, timestamp=timestamp, file_idx=cat.file_idx, line=cat.line,
        raw=cat.columns, time_range=time_range,
    )
