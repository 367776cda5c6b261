"""``evalspec run``: plan → results → attempts → analyses → decision → claim record.

:func:`run_plan` does everything in memory and returns the claim as a dict; only
:func:`write_claim` touches the disk, once, atomically. A refused run (bad results, a
model-version change, missing outcomes beyond the policy) raises before anything is
written, so it leaves no partial output.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError

__all__ = ["check_data", "default_out_dir", "load_plan_for_run", "lock_status", "plan_hash", "run_plan", "with_results", "write_claim"]


# -- the plan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PlanHandle:
    plan: Any
    path: Path
    display: str
    text: str
    loaded: Any  # the LoadedPlan (for located diagnostics)

    def diagnostic(self, key: str, message: str, **kw: Any) -> Diagnostic:
        return self.loaded.diagnostic(key, message, **kw)


def load_plan_for_run(path: str | Path) -> _PlanHandle:
    """Load and validate the plan."""
    p = Path(path)
    from evalspec.plan import load_plan

    loaded = load_plan(p, display=str(path))
    return _PlanHandle(plan=loaded.plan, path=p, display=str(path), text=loaded.text, loaded=loaded)


def with_results(handle: _PlanHandle, paths: list[str]) -> _PlanHandle:
    """The same plan reading other results files (``validate --data``: a pilot or a sample log).

    Only ``data.results`` changes; the format, column mapping, candidate names and every
    check stay the plan's. Paths are taken as given (relative to the working folder).
    """
    import dataclasses
    import os

    data = handle.plan.data.model_copy(update={"results": [os.path.abspath(p) for p in paths]})
    return dataclasses.replace(handle, plan=handle.plan.model_copy(update={"data": data}))


def plan_hash(handle: _PlanHandle) -> str:
    """The plan's canonical hash — the same as ``evalspec lock`` records."""
    from evalspec.plan import canonical_hash

    return str(canonical_hash(handle.loaded))


def lock_status(handle: _PlanHandle) -> tuple[dict[str, Any], list[str]]:
    """The claim's ``plan.lock`` entry and the keys changed since locking (if any)."""
    from evalspec.plan import check_lock

    status = check_lock(handle.loaded)
    lock = status.lock
    if lock is None:
        return {"path": None, "exists": False, "matches": None, "locked_at": None, "git_commit": None}, []
    git = lock.git or {}
    changed = [c.describe() for c in status.changes]
    history = [{"hash": h.get("hash"), "locked_at": h.get("locked_at")} for h in lock.history if isinstance(h, dict)]
    return ({"path": _rel(Path(lock.path), handle.path.parent), "exists": True, "matches": status.matches,
             "locked_at": lock.locked_at, "git_commit": git.get("commit"), "history": history}, changed)


def _as_recorded(path: str) -> str:
    """A path as the claim records it: ``./plan.yaml`` and ``plan.yaml`` are one path (same claim bytes)."""
    import os

    return os.path.normpath(path) if path else path


def _rel(p: Path, base: Path) -> str:
    """``p`` relative to ``base`` (``../x`` for a file outside it, so the claim says where it was)."""
    import os

    try:
        return str(p.resolve().relative_to(base.resolve()))
    except ValueError:
        try:
            return os.path.relpath(p.resolve(), base.resolve())
        except ValueError:  # another drive (Windows)
            return str(p.resolve())


def _case_columns(tidy: Any, columns: list[str]) -> tuple[dict[str, np.ndarray], list[dict[str, str]]]:
    """First non-missing value of each column per case; inconsistent cases become a deviation.

    The first value is the one of the case's first row by (candidate, repeat, row). When every
    case has one value (the usual), that is its only value: the per-case lowest and highest codes
    say so without sorting the rows (10M rows: a lexsort and several 80 MB copies per column).
    """
    from evalspec.results.table import _factorize, _is_missing
    from evalspec.results.values import CodedColumn, held_values

    n_cases = len(tidy.case_ids)
    out: dict[str, np.ndarray] = {}
    devs: list[dict[str, str]] = []
    order = None
    for col in columns:
        raw = tidy.raw[col]
        codes, uniq = _factorize(raw)
        miss_u = np.array([_is_missing(u) for u in uniq] + [True], dtype=bool)
        miss = miss_u[codes]
        rows_case, rows_code = (tidy.case, codes) if not miss.any() else (tidy.case[~miss], codes[~miss])
        del miss
        cmin = np.full(n_cases, np.iinfo(codes.dtype).max, dtype=codes.dtype)  # (the codes' own type: ufunc.at's fast path)
        cmax = np.full(n_cases, -1, dtype=codes.dtype)
        np.minimum.at(cmin, rows_case, rows_code)
        np.maximum.at(cmax, rows_case, rows_code)
        del rows_case, rows_code
        bad = np.flatnonzero((cmax >= 0) & (cmin != cmax))
        if not bad.size:  # one value per case: it is the first
            case_codes = np.where(cmax >= 0, cmin, -1).astype(np.int64)  # -1: the case has no value
        else:
            if order is None:
                order = np.lexsort((tidy.repeat, tidy.cand, tidy.case))
            case_codes = _first_codes(tidy.case, codes, miss_u[codes], order, n_cases)
            case_codes, uniq = held_values(case_codes, uniq)  # (a value only rows of other cases' values had: none's)
            ids = ", ".join(str(tidy.case_ids[i]) for i in bad[:5])
            devs.append({"code": "inconsistent_case_attribute",
                         "message": f"Column {col!r} differs between rows of {bad.size} case(s) ({ids}"
                         f"{', ...' if bad.size > 5 else ''}); the first value of each case was used."})
        out[col] = CodedColumn.of(case_codes, uniq, distinct=True)  # the case's first value; its codes travel along
    return out, devs


def _first_codes(case: np.ndarray, codes: np.ndarray, miss: np.ndarray, order: np.ndarray, n_cases: int) -> np.ndarray:
    """Each case's code on its first non-missing row in ``order`` (by case, candidate, repeat); -1 where none."""
    case_codes = np.full(n_cases, -1, dtype=np.int64)
    o = order[~miss[order]]
    if o.size:
        cases = case[o]
        first = np.r_[True, cases[1:] != cases[:-1]]
        case_codes[cases[first]] = codes[o[first]]
    return case_codes


# -- the run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Record:
    """An analysis as run: what the decision reads (``offers``, ``caveats``) and the claim records."""

    index: int
    kind: str
    label: str
    params: Any
    result: Any
    caveats: list[Any]
    seeds: list[Any]
    offers: Any

    def claim_entry(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "label": self.label, "params": self.params.model_dump(),
                "result": self.result, "caveats": self.caveats, "seeds": self.seeds, "offers": self.offers}


@dataclass(frozen=True)
class _Needs:
    case: list[str]
    row: list[str]


def _needed_columns(handle: _PlanHandle, tidy: Any, kinds: dict[str, Any]) -> _Needs:
    """Columns the analyses read (each kind's ``columns()``); a missing one is an error at its plan line."""
    from evalspec.plan.case_table import column_needs

    need = column_needs(handle.plan)  # column -> (plan key, level)
    found = ", ".join(tidy.raw)
    problems = [
        handle.diagnostic(key, f"column {col!r} is not in the results", got=col, hint=f"columns found: {found}")
        for col, (key, _) in need.items() if col not in tidy.raw
    ]
    if problems:
        raise InputError("the plan names columns the results do not have", problems)
    return _Needs(case=[c for c, (_, lv) in need.items() if lv == "case"],
                  row=[c for c, (_, lv) in need.items() if lv == "row"])


def _primary(records: list[_Record]) -> Any:
    """The first primary interval offered (the decision's own choice is in its record)."""
    return next((r.offers.primary for r in records if r.offers.primary is not None), None)


def _coverage(plan: Any, checked: Any, outcomes: Any, case_cluster: np.ndarray | None,
              primary: Any) -> tuple[dict[str, Any], int, str]:
    """The claim's "what the number covers" block, and the independent units the decision counts."""
    from evalspec.attempts import rule_question
    from evalspec.decision import independent_units

    tidy = checked.tidy
    names = tidy.candidates
    values = outcomes.values
    has = ~np.isnan(values)
    paired_all = has.all(axis=0)
    n_clusters = None
    if case_cluster is not None:
        in_data = has.any(axis=0) if primary is None else has[[names.index(primary.candidate),
                                                               names.index(primary.baseline)]].all(axis=0)
        from evalspec.stats import cluster_sizes

        n_clusters = int(cluster_sizes(case_cluster[in_data]).size)
    n_units_cases = int(paired_all.sum()) if primary is not None else int(has.any(axis=0).sum())
    units, unit_name = independent_units(n_units_cases, n_clusters)
    if n_clusters is not None and plan.units.cluster:
        unit_name = f"clusters ({plan.units.cluster})"
    candidates_cov = {}
    for j, name in enumerate(names):
        c = plan.candidates[name]
        candidates_cov[name] = {
            "model": c.model, "declared_version": c.version, "versions_seen": checked.versions_seen.get(name, {}),
            "settings": c.settings, "rows": _rows(checked, j), "cases": int(has[j].sum()),
        }
    only = {name: int(np.count_nonzero(has[j] & ~paired_all)) for j, name in enumerate(names)}
    run_dates = None
    if tidy.time_range is not None:
        run_dates = {"first": tidy.time_range[0].strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "last": tidy.time_range[1].strftime("%Y-%m-%dT%H:%M:%SZ")}
    interval = None if primary is None else {"method": primary.method, "confidence_level": primary.confidence_level}
    missing = {name: {"missing": int(m["missing"]), "attempts": int(m["attempts"]), "fraction": float(m["fraction"]),
                      "policy": str(m["policy"])} for name, m in checked.missing.items()}
    coverage = {
        "dataset": None if plan.data.dataset is None else plan.data.dataset.model_dump(mode="json"),
        "population": plan.population,
        "candidates": candidates_cov,
        "baseline": plan.baseline,
        "cases": {"total": int(has.any(axis=0).sum()), "paired": int(paired_all.sum()), "only": only},
        "clusters": n_clusters,
        "cluster_column": plan.units.cluster,
        "independent_units": {"count": units, "unit": unit_name},
        "repeats": {"planned": plan.attempts.repeats, "observed_min": checked.repeats_observed[0],
                    "observed_max": checked.repeats_observed[1]},
        "attempt_rule": {"rule": plan.attempts.rule, "k": plan.attempts.k,
                         "question": rule_question(plan.attempts.rule, plan.attempts.k, plan.attempts.repeats)},
        "interval": interval,
        "missing": missing,
        "run_dates": run_dates,
    }
    return coverage, units, unit_name


def _rows(checked: Any, j: int) -> int:
    """Attempt rows of candidate ``j`` analysed (a case table counts them; attempt rows are them)."""
    if hasattr(checked, "rows_of"):
        return int(checked.rows_of(j))
    return int(np.count_nonzero(checked.tidy.cand == j))


def _stopping_deviations(plan: Any, coverage: dict[str, Any]) -> list[dict[str, str]]:
    """Departures from the stopping rule: more units than planned, data after the decision date."""
    out = []
    units = coverage["independent_units"]
    stop = plan.stopping
    if stop.max_units is not None and units["count"] > stop.max_units:
        out.append({"code": "over_max_units",
                    "message": f"{units['count']} independent {units['unit']} were analysed, more than the "
                    f"stopping rule's max_units of {stop.max_units}."})
    dates = coverage.get("run_dates")
    if stop.decision_date is not None and dates is not None and dates["last"][:10] > stop.decision_date.isoformat():
        out.append({"code": "data_after_decision_date",
                    "message": f"Results were collected until {dates['last']}, after the planned decision date "
                    f"{stop.decision_date.isoformat()}."})
    return out


def _seeds(records: list[_Record]) -> dict[str, list[dict[str, Any]]]:
    """Seeds actually used (from each Outcome), and seeds the plan set that no analysis used."""
    used, unused = [], []
    for r in records:
        values = {int(s.seed) for s in r.seeds}
        used += [{"analysis": r.index, "kind": r.kind, "purpose": s.purpose, "seed": int(s.seed)} for s in r.seeds]
        for key in sorted(r.params.model_fields_set):
            value = getattr(r.params, key)
            if (key == "seed" or key.endswith("_seed")) and isinstance(value, int) and value not in values:
                unused.append({"analysis": r.index, "kind": r.kind, "key": key, "seed": value})
    return {"used": used, "declared_unused": unused}


def _analyse(handle: _PlanHandle, ctx: Any, kinds: dict[str, Any]) -> list[_Record]:
    """Run every analysis of the plan the same way: params -> compute -> record."""
    from evalspec.analyses.contract import AnalysisRefused

    records = []
    for i, params in enumerate(handle.plan.analyses):
        kind = kinds[params.kind]
        try:
            out = kind.compute(ctx, params)
        except AnalysisRefused as exc:
            raise InputError(f"analyses[{i}] ({params.kind}) cannot run on these results",
                             [handle.diagnostic(f"analyses[{i}]", f"{params.kind}: {exc}")]) from None
        records.append(_Record(index=i, kind=params.kind, label=params.label or params.kind, params=params,
                               result=out.result, caveats=list(out.caveats), seeds=list(out.seeds),
                               offers=out.offers))
    return records


def check_data(handle: _PlanHandle) -> tuple[Any, _Needs, dict[str, Any]]:
    """Read the plan's results and check them against it, as ``run`` does before any statistic.

    The one place that reads and checks: ``evalspec run`` and ``evalspec validate --data``
    (a pilot or sample log checked against the plan) both call it, so both give the same
    located messages. Returns the checked results, the columns the analyses read and the
    analysis kinds; raises :class:`InputError` at the first fatal finding (all of its
    problems at once). Computes no statistic and writes nothing.
    """
    from evalspec.analyses.registry import get_kind
    from evalspec.attempts import attempt_columns
    from evalspec.results import load_results

    plan = handle.plan
    kinds = {name: get_kind(name) for name in dict.fromkeys(a.kind for a in plan.analyses)}
    if plan.data.format == "case_table":  # pre-aggregated: one row per candidate x case
        from evalspec.results.case_table import load_case_table

        checked: Any = load_case_table(plan, handle.path, handle.diagnostic)
    else:  # attempt rows: reduced to a case table while read where every analysis is served from counts
        from evalspec.results.stream_reduce import stream_results

        checked = stream_results(plan, handle.path, handle.diagnostic)
        if checked is None:
            checked = load_results(plan, handle.path, handle.diagnostic)
    needs = _needed_columns(handle, checked.tidy, kinds)
    attempt_columns(plan, checked.tidy.raw)  # the attempt rule's own columns (majority_answer)
    return checked, needs, kinds


def case_evidence(ctx: Any, kinds: dict[str, Any], records: list[Any], attempt_kw: dict[str, Any],
                  readings: Any = None) -> Any:
    """The case outcomes the decision's estimand guard reads, and the other readings the verdict must survive.

    Each reading (:mod:`evalspec.sensitivity_views`: the primary candidate's missing and never-run
    attempts counted as failures; candidate and baseline cut to the same number of attempts) is
    a context of its own, on which every analysis that offers the decision a primary interval or
    a critical-failure status runs again; the decision reaches the verdict on each and compares.
    ``kinds``: kind name -> kind (its ``compute``); ``attempt_kw``: the attempt rule's extra columns
    (:func:`evalspec.attempts.attempt_columns`), aligned with ``ctx.repeats``; ``readings``: where the
    readings come from (default :mod:`evalspec.sensitivity_views`, from the attempt rows; a case
    table's :class:`evalspec.case_views.CaseTableReadings`, from its counts).
    """
    from dataclasses import replace

    from evalspec.analyses.contract import AnalysisRefused
    from evalspec.decision import Alternative, CaseEvidence
    if readings is None:
        from evalspec import sensitivity_views as readings

    offering = [r for r in records if r.offers.primary is not None or r.offers.critical]
    if not offering:
        return CaseEvidence.from_context(ctx)
    primary = next((r.offers.primary for r in records if r.offers.primary is not None), None)
    pair = (primary.candidate, primary.baseline) if primary is not None else ctx.primary
    if pair is None:  # no comparison: every candidate's critical-failure status is read, each its own reading
        adopting = dict.fromkeys(s.candidate for r in offering for s in r.offers.critical if s.adopting)
        views = [replace(v, code=f"missing_as_failures:{name}") for name in adopting
                 if (v := readings.missing_as_failures(ctx, name, None, **attempt_kw)) is not None]
    else:
        views = [readings.missing_as_failures(ctx, pair[0], pair[1], **attempt_kw)]
    if primary is not None:
        views.append(readings.equal_attempts(ctx, pair[0], pair[1], **attempt_kw))
        views.append(readings.missing_against_candidate(ctx, pair[0], pair[1], **attempt_kw))
    alternatives = []
    for view in views:
        if view is None:
            continue
        redone: list[Any] = []
        refused = None
        for r in offering:
            try:
                out = kinds[r.kind].compute(view.ctx, r.params)
            except AnalysisRefused as exc:  # the reading cannot be analysed: said beside the verdict
                refused = f"analyses[{r.index}] ({r.kind}): {exc}"
                break
            redone.append(replace(r, result=out.result, caveats=list(out.caveats), seeds=list(out.seeds),
                                  offers=out.offers))
        alternatives.append(Alternative(code=view.code, values=view.ctx.outcomes.values,
                                        records=[] if refused else redone, cases=view.cases, more=view.more,
                                        refused=refused))
    return CaseEvidence.from_context(ctx, alternatives=tuple(alternatives))


def _evidence(handle: _PlanHandle, ctx: Any, kinds: dict[str, Any], records: list[Any], checked: Any) -> Any:
    """:func:`case_evidence` for the run: from the attempt rows, or from the case table's counts."""
    from evalspec.attempts import attempt_columns

    if not _counted(checked):
        return case_evidence(ctx, kinds, records, attempt_columns(handle.plan, checked.tidy.raw))
    from evalspec.case_views import CaseTableReadings, ReadingUnavailable
    from evalspec.results.stream_finish import StreamedTable
    from evalspec.stream_views import StreamedReadings

    readings = StreamedReadings(checked) if isinstance(checked, StreamedTable) else CaseTableReadings(checked)
    try:
        return case_evidence(ctx, kinds, records, {}, readings=readings)
    except ReadingUnavailable as exc:
        raise InputError("the case table cannot give a reading the verdict must survive", [handle.diagnostic(
            "attempts.rule", str(exc), hint="read the attempt rows (data.format: parquet, jsonl or csv): "
            "evalspec's documentation, 'A pre-aggregated case table', says which rules and readings "
            "counts serve")]) from None


def _counted(checked: Any) -> bool:
    """Whether the checked results are a case table (read as one, or reduced to one while read)."""
    from evalspec.results.case_model import CaseTable

    return isinstance(checked, CaseTable)


def _attempts_context(handle: _PlanHandle, checked: Any, needs: _Needs) -> tuple[Any, list[dict[str, str]]]:
    """The analyses' context from checked attempt rows: the attempt rule applied to them."""
    from evalspec.analyses.context import AnalysisContext
    from evalspec.analyses.contract import Repeats
    from evalspec.attempts import attempt_columns, reduce_attempts

    plan, tidy = handle.plan, checked.tidy
    read = {*needs.case, *needs.row, *(getattr(plan.attempts, role) for role in attempt_columns(plan, tidy.raw))}
    tidy.raw = {name: col for name, col in tidy.raw.items() if name in read}  # the checks were the last to read
    # the others (the roles' columns as read: 10M rows, ~140 MB of codes); what the analyses read stays
    outcomes = reduce_attempts(tidy.cand, tidy.case, tidy.repeat, tidy.passed, n_candidates=len(tidy.candidates),
                               n_cases=len(tidy.case_ids), rule=plan.attempts.rule, k=plan.attempts.k,
                               missing_policy=plan.missing.policy, order=getattr(checked, "order", None),
                               **attempt_columns(plan, tidy.raw))
    checked.order = None  # (the checks' sort of the rows, reused above: 8 bytes a row)
    case_cols, attr_devs = _case_columns(tidy, needs.case)
    case_cluster = None
    if tidy.cluster is not None:
        case_cluster = np.zeros(len(tidy.case_ids), dtype=np.int64)
        case_cluster[tidy.case] = tidy.cluster
    ctx = AnalysisContext(
        candidates=tidy.candidates, baseline=plan.baseline, case_ids=tidy.case_ids, case_cluster=case_cluster,
        cluster_ids=tidy.cluster_ids, case_columns=case_cols, outcomes=outcomes,
        repeats=Repeats(cand=tidy.cand, case=tidy.case, repeat=tidy.repeat, passed=tidy.passed, score=tidy.score,
                        columns={c: tidy.raw[c] for c in needs.row}),
        plan=plan, plan_dir=handle.path.parent,
    )
    return ctx, attr_devs


def _case_table_context(handle: _PlanHandle, table: Any) -> tuple[Any, list[dict[str, str]]]:
    """The analyses' context from a checked case table: the attempt rule on its counts, no attempt rows."""
    from evalspec.analyses.context import AnalysisContext, NoAttemptRows

    from evalspec.stats import cluster_labels

    plan = handle.plan
    policy = plan.missing.policy
    case_cluster = None if table.case_cluster is None else cluster_labels(table.case_cluster)  # (counted once
    ctx = AnalysisContext(  # for every analysis that reads every case's cluster)
        candidates=table.candidates, baseline=plan.baseline, case_ids=table.case_ids, case_cluster=case_cluster,
        cluster_ids=table.cluster_ids, case_columns=table.case_columns,
        outcomes=table.outcomes(plan.attempts.rule, plan.attempts.k, policy), repeats=NoAttemptRows(),  # type: ignore[arg-type]
        plan=plan, plan_dir=handle.path.parent, counts=table.case_counts(policy),
    )
    return ctx, list(table.attribute_deviations)


#: Imported in a thread while the results are read (:func:`_import_ahead`): every run's intervals need
#: ``scipy.special``, whose import (about 0.2 s of Python: its array-API layer loads ``numpy.testing`` and
#: ``numpy.f2py``) then runs while Arrow parses the results in C with the GIL released, instead of after.
#: Only third-party modules that import nothing of evalspec's, so the two threads' imports never wait on
#: each other.
IMPORT_AHEAD = ("scipy.special",)


def _import_ahead(names: tuple[str, ...]) -> Any:
    """A started thread importing ``names``; join it. A failed import is left to the code that needs the module,
    which imports it again and says what is missing (nothing is printed from the thread)."""
    import importlib
    import threading

    def work() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S110 - imported again where used, which raises it there
                pass

    thread = threading.Thread(target=work, name="evalspec-import-ahead", daemon=True)
    thread.start()
    return thread


def run_plan(plan_path: str | Path, *, command: list[str] | None = None) -> dict[str, Any]:
    """Run the plan at ``plan_path`` and return the claim record (nothing is written).

    A pure function of the plan, the results files, the seeds in the plan and
    ``SOURCE_DATE_EPOCH``: no module-level state is read or written, so two runs in one
    process or in worker processes give the same claim.
    """
    from evalspec.results.ahead import read_ahead

    with read_ahead(plan_path):  # the results file's scan and parse, begun while the plan is validated
        from evalspec._version import __version__
        from evalspec.claim import created_time, software_versions
        from evalspec.claim_model import CLAIM_FORMAT, claim_model
        from evalspec.decision import decide

        handle = load_plan_for_run(plan_path)
        plan = handle.plan
        created = created_time()
        ahead = _import_ahead(IMPORT_AHEAD)
        try:
            checked, needs, kinds = check_data(handle)
        finally:
            ahead.join()
    tidy = checked.tidy
    if _counted(checked):
        ctx, attr_devs = _case_table_context(handle, checked)
    else:
        ctx, attr_devs = _attempts_context(handle, checked, needs)
    outcomes, case_cluster = ctx.outcomes, ctx.case_cluster
    records = _analyse(handle, ctx, kinds)

    coverage, units, unit_name = _coverage(plan, checked, outcomes, case_cluster, _primary(records))
    evidence = _evidence(handle, ctx, kinds, records, checked)
    decision = decide(plan, records, units=units, unit_name=unit_name, missing=checked.missing, evidence=evidence)

    digest = plan_hash(handle)
    lock, changed = lock_status(handle)
    deviations = list(checked.deviations) + attr_devs
    if not lock["exists"]:
        deviations.insert(0, {"code": "plan_not_locked",
                              "message": "The plan was not locked (no lock file next to it), so nothing shows it "
                              "was fixed before the results were seen; run `evalspec lock` before collecting results."})
    elif not lock["matches"]:
        deviations.insert(0, {"code": "lock_mismatch",
                              "message": "The plan differs from the version recorded in its lock: it was changed "
                              "after locking" + (f" ({', '.join(changed[:10])})" if changed else "")
                              + ". The analysis follows the current plan."})
    deviations += _stopping_deviations(plan, coverage)
    plan_dir = handle.path.parent
    data_files = []
    for f in tidy.files:
        location = getattr(f, "location", None)  # an object-store object or a partitioned file
        shown = f.path if location and "uri" in location else _rel(Path(f.path), plan_dir)
        entry: dict[str, Any] = {"path": shown, "sha256": f.sha256, "rows": f.rows, "format": f.format}
        if location:
            entry["location"] = location
        provenance = getattr(f, "provenance", None)  # tool logs only
        if provenance:
            entry["provenance"] = provenance
        data_files.append(entry)
    claim = claim_model(kinds).model_validate({  # the union of the kinds this plan names
        "claim_format": CLAIM_FORMAT,
        "evalspec_version": __version__,
        "created": created,
        "command": list(command) if command is not None else ["evalspec", "run", _as_recorded(str(plan_path))],
        "plan": {
            "path": _as_recorded(handle.display), "id": plan.id, "title": plan.title, "question": plan.question,
            "decision_owner": plan.decision_owner, "population": plan.population, "hash": digest, "lock": lock,
            "registered": plan.model_dump(mode="json"), "source": handle.text,
        },
        "data": {"files": data_files},
        "software": software_versions(),
        "seeds": _seeds(records),
        "coverage": coverage,
        "analyses": [r.claim_entry() for r in records],
        "decision": decision,
        "deviations": [{"code": d["code"], "message": d["message"]} for d in deviations],
        "systematic_limits": {"stated": list(plan.systematic_limits),
                              "detected": [{"code": d["code"], "message": d["message"]} for d in checked.detected]},
    })
    from evalspec.process import attach_process

    # the process checks the audit makes, on the lock and the ledger as they stand (made again
    # when the look is recorded, under the ledger's lock: see evalspec.looks.seal_run)
    return attach_process(dict(claim.model_dump(mode="json", exclude={"integrity", "process"})), handle.path)


def default_out_dir(plan_path: str | Path) -> Path:
    """``<plan dir>/out``."""
    return Path(plan_path).parent / "out"


def write_claim(claim: dict[str, Any], out_dir: Path, *, normal: dict[str, Any] | None = None) -> Path:
    """Write ``claim.json`` into ``out_dir`` atomically and return its path.

    ``normal``: the claim normalised already (:func:`evalspec.looks.look_recorded`), written as it is.
    """
    from evalspec._atomic import write_text_atomic
    from evalspec.claim import dumps

    text = dumps(claim) if normal is None else dumps(normal, normalized=True)
    path = out_dir / "claim.json"
    write_text_atomic(path, text)
    return path
