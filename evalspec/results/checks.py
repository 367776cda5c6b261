"""Checks of the typed results against the plan, before any statistic is computed.

Fatal findings refuse the run (:class:`~evalspec.errors.InputError`, exit 2) with every
offending row located, file and line: a candidate with no rows, a duplicate
(candidate, case, repeat), a case whose cluster differs between rows, a model version
that changes inside a candidate's data without the plan declaring the versions (seed
000: "Do not pool runs across a model update without identifying the versions"), rows
lacking metadata the plan's ``record`` requires, missing outcomes under policy
``error`` or above ``missing.max_fraction``.

Non-fatal findings are never dropped silently; they become claim entries:
``deviations`` (departures from the plan: unpaired cases, more or fewer repeats than
planned, a version other than the declared one) and ``detected`` systematic limits
(missing outcomes, declared versions pooled).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalspec.attempts import attempt_order, attempt_ranks
from evalspec.errors import Diagnostic, InputError
from evalspec.results.hints import no_rows_hint, unnumbered_repeats_hint
from evalspec.results.table import Tidy, _factorize, located, missing_mask

__all__ = ["Checked", "check_results", "candidates_without_rows", "duplicate_attempts", "clusters_that_differ",
           "version_changes", "missing_metadata", "planned_repeats", "missing_outcomes", "unpaired_cases"]


@dataclass
class Checked:
    """Results that passed the checks, with what the checks found along the way."""

    tidy: Tidy
    deviations: list[dict[str, str]] = field(default_factory=list)
    detected: list[dict[str, str]] = field(default_factory=list)
    missing: dict[str, dict[str, Any]] = field(default_factory=dict)
    versions_seen: dict[str, dict[str, int]] = field(default_factory=dict)
    repeats_observed: tuple[int, int] = (1, 1)
    #: :func:`~evalspec.attempts.attempt_order` of ``tidy``'s rows, when the checks kept every row (the
    #: attempt rule reuses it instead of sorting again); None otherwise.
    order: np.ndarray | None = None


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k!r} ({v} rows)" for k, v in counts.items())


def declared_versions(declared: Any) -> list[Any]:
    """A candidate's declared model version(s) as a list (empty when none is declared)."""
    return declared if isinstance(declared, list) else ([declared] if declared is not None else [])


def versions_change(seen: dict[str, int], declared: Any) -> bool:
    """More than one version among the rows, not all of them in a declared list: refused (not pooled)."""
    return len(seen) > 1 and not (isinstance(declared, list) and set(seen) <= set(declared))


def version_change(name: str, seen: dict[str, int], firsts: list[str], key: str, file: Any,
                   line: int | None = None) -> Diagnostic:
    """The refusal of a candidate whose model version changes inside the data (``firsts``: where each began)."""
    return Diagnostic(
        file=file, line=line, key=key,
        message=f"candidate {name!r}: the model version changes inside the data: {_fmt_counts(seen)}; "
        f"evalspec will not pool runs across a model update ({'; '.join(firsts)})",
        hint=f"split the run by version, or, to pool knowingly, declare candidates.{name}.version "
        f"as a list: [{', '.join(seen)}]",
    )


def version_notes(name: str, seen: dict[str, int], declared: Any) -> tuple[dict[str, str] | None,
                                                                            dict[str, str] | None]:
    """(detected, deviation) for versions that are not refused: pooled declared versions, or another version."""
    declared_list = declared_versions(declared)
    if len(seen) > 1:
        return {"code": "pooled_versions",
                "message": f"Candidate {name} pools the declared model versions {_fmt_counts(seen)}; the result "
                "describes the mixture, not one stable configuration."}, None
    if len(seen) == 1 and declared_list and next(iter(seen)) not in [str(d) for d in declared_list]:
        return None, {"code": "version_mismatch",
                      "message": f"Candidate {name} was declared as version {', '.join(map(str, declared_list))} "
                      f"but the results show {next(iter(seen))!r} on every row."}
    return None, None


def check_results(tidy: Tidy, plan: Any) -> Checked:
    """Run every check of the results against ``plan``; raise on fatal findings.

    One function per check, in the order their findings are listed: the fatal ones first
    (all raised together), then the planned repeats, the missing-outcome policy and pairing.
    """
    out = Checked(tidy=tidy)
    order = attempt_order(tidy.cand, tidy.case, tidy.repeat)
    problems = (candidates_without_rows(tidy, plan) + duplicate_attempts(tidy, plan, order)
                + clusters_that_differ(tidy, plan) + version_changes(tidy, plan, out) + missing_metadata(tidy, plan))
    if problems:
        raise InputError(f"the results fail {len(problems)} check(s)", problems)
    kept = planned_repeats(tidy, plan, order, out)
    problems = missing_outcomes(kept, plan, out)
    if problems:
        raise InputError("missing outcomes break the plan's missing-outcome policy", problems)
    unpaired_cases(kept, out)
    out.tidy = kept
    out.order = order if kept is tidy else None
    return out


def candidates_without_rows(tidy: Tidy, plan: Any) -> list[Diagnostic]:
    """A candidate of the plan with no row in the results."""
    names = tidy.candidates
    counts = np.bincount(tidy.cand, minlength=len(names))
    return [Diagnostic(file=", ".join(tidy.displays), key=plan.data.columns.candidate,
                       message=f"candidate {name!r} has no rows in the results", hint=no_rows_hint(tidy.displays))
            for j, name in enumerate(names) if counts[j] == 0]


def duplicate_attempts(tidy: Tidy, plan: Any, order: np.ndarray) -> list[Diagnostic]:
    """Rows repeating a (candidate, case, repeat) seen before; ``order`` is :func:`_order` of ``tidy``."""
    same = np.ones(max(0, len(order) - 1), dtype=bool)
    for key in (tidy.cand, tidy.case, tidy.repeat):  # one sorted copy at a time (10M rows: 80 MB each)
        sorted_key = key[order]
        same &= sorted_key[1:] == sorted_key[:-1]
        del sorted_key
    dup_pos = np.flatnonzero(same) + 1
    if not dup_pos.size:
        return []
    rows = np.sort(order[dup_pos])
    file0, line0 = tidy.where(int(order[dup_pos[0] - 1]))
    return located(
        tidy, rows, "row",
        "duplicate (candidate, case, repeat): the same attempt appears twice "
        f"(first copy at {file0}:{line0})",
        hint=("remove the duplicate or number the repeats" if plan.data.columns.repeat in tidy.raw
              else unnumbered_repeats_hint(plan.data.columns.repeat)),
    )


def clusters_that_differ(tidy: Tidy, plan: Any) -> list[Diagnostic]:
    """Rows whose cluster is not the one the case's first row names (a case is in one cluster)."""
    if tidy.cluster is None:
        return []
    n_cases = len(tidy.case_ids)
    kind = tidy.cluster.dtype  # (the codes' own type: ufunc.at's fast path)
    lo = np.full(n_cases, np.iinfo(kind).max, dtype=kind)
    hi = np.full(n_cases, np.iinfo(kind).min, dtype=kind)
    np.minimum.at(lo, tidy.case, tidy.cluster)
    np.maximum.at(hi, tidy.case, tidy.cluster)
    if not (lo < hi).any():  # every case in one cluster (the usual): no sort of every row
        return []
    first_cluster = np.full(n_cases, -1, dtype=np.int64)
    o = np.argsort(tidy.case, kind="stable")
    cases_sorted = tidy.case[o]
    starts = np.r_[0, np.flatnonzero(cases_sorted[1:] != cases_sorted[:-1]) + 1]
    first_cluster[cases_sorted[starts]] = tidy.cluster[o][starts]
    bad = np.flatnonzero(tidy.cluster != first_cluster[tidy.case])
    if not bad.size:
        return []
    cid = tidy.cluster_ids
    assert cid is not None
    i0 = int(bad[0])
    case0 = tidy.case_ids[tidy.case[i0]]
    return located(
        tidy, bad, plan.units.cluster,
        f"the case's cluster differs between rows (case {case0!r} is in cluster "
        f"{cid[first_cluster[tidy.case[i0]]]!r} elsewhere)",
        values=np.array([cid[c] for c in tidy.cluster], dtype=object) if tidy.n < 2_000_000 else None,
        hint="a case belongs to one cluster for every candidate and repeat; fix the cluster column",
    )


def version_changes(tidy: Tidy, plan: Any, out: Checked) -> list[Diagnostic]:
    """The model versions each candidate's rows show (``out.versions_seen``).

    A change inside a candidate's data that the plan does not declare is fatal; declared
    versions pooled are a detected limit, one version other than the declared one a deviation.
    """
    if tidy.version is None:
        return []
    names = tidy.candidates
    problems: list[Diagnostic] = []
    vcodes_all, vuniq_all = _factorize(tidy.version)  # once; per candidate only counts (labels: no missing)
    for j, name in enumerate(names):
        rows = np.flatnonzero(tidy.cand == j)
        vc = vcodes_all[rows]
        seen: dict[str, int] = {}
        if (vc >= 0).any():
            cnt = np.bincount(vc[vc >= 0], minlength=len(vuniq_all))
            seen = {str(u): int(c) for u, c in sorted(zip(vuniq_all, cnt), key=lambda t: str(t[0])) if c}
        out.versions_seen[name] = seen
        declared = plan.candidates[name].version
        if versions_change(seen, declared):
            firsts = []
            first_rows = []
            code_of = {str(u): k for k, u in enumerate(vuniq_all)}
            for v in seen:  # by code: comparing texts would lose trailing NULs ("1\x00" is not "1")
                i = rows[np.flatnonzero(vc == code_of[v])[0]]
                first_rows.append(int(i))
                f, ln = tidy.where(int(i))
                firsts.append(f"{v!r} first at {f}:{ln}")
            change_file, change_line = tidy.where(sorted(first_rows)[1])
            problems.append(version_change(name, seen, firsts, plan.data.columns.model_version, change_file,
                                           change_line))
            continue
        detected, deviation = version_notes(name, seen, declared)
        out.detected += [detected] if detected else []
        out.deviations += [deviation] if deviation else []
    return problems


def missing_metadata(tidy: Tidy, plan: Any) -> list[Diagnostic]:
    """Rows lacking metadata the plan's ``record`` requires, or no such column at all."""
    problems: list[Diagnostic] = []
    role_cols = {"model_version": plan.data.columns.model_version, "timestamp": plan.data.columns.timestamp,
                 "candidate": plan.data.columns.candidate, "repeat": plan.data.columns.repeat,
                 "outcome": plan.data.columns.outcome}
    for item in plan.record:
        col = role_cols.get(item) or item
        if col not in tidy.raw:
            problems.append(Diagnostic(file=", ".join(tidy.displays), key=f"record: {item}",
                                       message=f"the plan requires metadata {item!r} (column {col!r}) on every row, "
                                       "but the results have no such column",
                                       hint="log it with every result, or change the plan's `record` before running"))
            continue
        missing = _none_mask(tidy.raw[col])
        if missing.any():
            problems += located(tidy, np.flatnonzero(missing), col,
                                f"the row lacks metadata the plan requires ({item!r} is empty)",
                                hint="log it with every result; the plan's `record` lists what each row must carry")
    return problems


def planned_repeats(tidy: Tidy, plan: Any, order: np.ndarray, out: Checked) -> Tidy:
    """Keep the planned number of repeats (the lowest-numbered) of each case; report extra and fewer."""
    names = tidy.candidates
    planned = plan.attempts.repeats
    extra, sizes = _extra_attempts(tidy, order, planned)
    if extra.any():
        per = {names[j]: int(np.count_nonzero(extra & (tidy.cand == j))) for j in range(len(names))}
        out.deviations.append({"code": "extra_repeats",
                               "message": f"More repeats than the {planned} planned: "
                               + ", ".join(f"{k} {v} extra attempt(s)" for k, v in per.items() if v)
                               + f" (up to {int(sizes.max())} per case); only the first {planned} "
                               "of each case (lowest repeat numbers) were analysed."})
        tidy = tidy.subset(~extra)
        sizes = np.minimum(sizes, planned)  # each (candidate, case)'s attempts kept
    observed = (int(sizes.min()), int(sizes.max()))
    out.repeats_observed = observed
    if observed[0] < planned:
        short = sizes[sizes < planned].sum()  # the attempt rows of such cases
        out.deviations.append({"code": "fewer_repeats",
                               "message": f"Some cases have fewer repeats than the {planned} planned "
                               f"(as few as {observed[0]}; {int(short)} attempt rows belong to such cases)."})
    return tidy


def _extra_attempts(tidy: Tidy, order: np.ndarray, planned: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row: is it beyond the ``planned`` lowest-numbered attempts of its (candidate, case)? And each group's size.

    :func:`~evalspec.attempts.attempt_ranks` in the sorted order itself: one boolean a row
    instead of two int64 arrays a row (10M rows: 160 MB).
    """
    n = len(order)
    if n == 0:
        rank, group_size = attempt_ranks(tidy.cand, tidy.case, order)
        return rank >= planned, group_size
    c, i = tidy.cand[order], tidy.case[order]
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(c[1:], c[:-1], out=starts[1:])
    starts[1:] |= i[1:] != i[:-1]
    del c, i
    first = np.flatnonzero(starts)
    del starts
    sizes = np.diff(np.r_[first, n])
    extra = np.zeros(n, dtype=bool)
    if sizes.size and int(sizes.max()) > planned:  # (else no row is extra: no per-row ranks)
        extra[order] = np.arange(n) - np.repeat(first, sizes) >= planned
    return extra, sizes


def missing_outcomes(tidy: Tidy, plan: Any, out: Checked) -> list[Diagnostic]:
    """Missing outcomes per candidate against the plan's policy (``out.missing``); a breach is fatal."""
    problems: list[Diagnostic] = []
    policy = plan.missing.policy
    miss = np.isnan(tidy.passed)
    for j, name in enumerate(tidy.candidates):
        rows = tidy.cand == j
        m = int(np.count_nonzero(miss & rows))
        a = int(np.count_nonzero(rows))
        frac = m / a if a else 0.0
        out.missing[name] = {"missing": m, "attempts": a, "fraction": frac, "policy": policy}
        if m and policy == "error":
            problems += located(tidy, np.flatnonzero(miss & rows), plan.data.columns.outcome,
                                f"missing outcome for candidate {name!r} and the plan's missing.policy is 'error' "
                                f"({m} of {a} attempts missing)",
                                hint="rerun the missing attempts, or preregister another policy")
        elif frac > plan.missing.max_fraction:
            problems += located(tidy, np.flatnonzero(miss & rows), plan.data.columns.outcome,
                                f"candidate {name!r} has {m} of {a} outcomes missing ({frac:.1%}), above the plan's "
                                f"missing.max_fraction {plan.missing.max_fraction:.1%}",
                                hint="rerun the missing attempts under the same policy; do not change the limit after "
                                "seeing the results")
        elif m:
            treat = "counted as failures" if policy == "count_as_fail" else "excluded from the analysis"
            out.detected.append({"code": "missing_outcomes",
                                 "message": f"Candidate {name}: {m} of {a} attempts ({frac:.1%}) have no outcome and "
                                 f"were {treat} (missing.policy {policy}); if they are not random failures the "
                                 "estimate is biased."})
    return problems


def unpaired_cases(tidy: Tidy, out: Checked) -> None:
    """Cases not run for every candidate: paired analyses use the intersection; a deviation says how many."""
    names = tidy.candidates
    if len(names) < 2:
        return
    has = np.zeros((len(names), len(tidy.case_ids)), dtype=bool)
    has[tidy.cand, tidy.case] = True
    deviation = unpaired_deviation(names, has)
    if deviation is not None:
        out.deviations.append(deviation)


def unpaired_deviation(names: Any, has: np.ndarray) -> dict[str, str] | None:
    """The ``unpaired_cases`` deviation, where ``has`` (candidates x cases) shows a case some candidate lacks.

    One home for its words: the attempt-row checks and the case-table checks both use it.
    """
    every = has.all(axis=0)
    if every.all():
        return None
    parts = []
    for j, name in enumerate(names):
        lack = int(np.count_nonzero(~has[j] & has.any(axis=0)))
        parts.append(f"{name} lacks {lack} case(s)" if lack else f"{name} has all cases")
    return {"code": "unpaired_cases",
            "message": f"Not every case was run for every candidate ({'; '.join(parts)}); "
            f"paired comparisons use the {int(every.sum())} cases every candidate has, "
            "single-candidate results use each candidate's own cases."}


def _none_mask(col: np.ndarray) -> np.ndarray:
    """Rows whose value is missing (None, NaN or empty text), vectorised over distinct values."""
    codes, uniq = _factorize(col)
    mask = missing_mask(uniq)
    if not mask.any() and not (codes.size and int(codes.min()) < 0):  # (no value is missing: no gather of every row)
        return np.zeros(codes.shape[0], dtype=bool)
    return np.append(mask, True)[codes]


