"""Fuzzed case tables (``data.format: case_table``) through `evalspec run`: exit 0/1/2, never 70 or a traceback;
every error names its file and row or key; a refused run leaves the previous outputs as they were.

A valid case table (the one evalspec reduces a small invented study to) is damaged: hostile values
in any column and row, a column dropped, a row repeated or removed, a column of another Arrow type.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from fuzz_strategies import FUZZ, check_one_set, check_outcome, hostile_values, plant_old_set, run_cli

PLAN_ANALYSES = """  - {kind: proportion}
  - {kind: paired_difference, compare: [A, B], method: cluster_bootstrap, resamples: 200, seed: 3}
  - {kind: critical_failures}
  - {kind: slices}"""


@cache
def _base(rule: str) -> tuple[str, tuple[str, ...]]:
    """(plan text, case-table rows as JSON lines) of a small study under ``rule``, policy exclude."""
    import tempfile

    from tests.results.case_table_study import plan_text, reference_case_table, study_rows, write_study

    with tempfile.TemporaryDirectory() as tmp:
        folder = write_study(Path(tmp), rule, "exclude", rows=study_rows(n_cases=12), analyses=PLAN_ANALYSES)
        table = reference_case_table(folder)
    rows = []
    for r in table.to_pylist():
        rows.append(json.dumps({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()}))
    text = plan_text(rule, "exclude", analyses=PLAN_ANALYSES).replace(
        "results: raw.parquet", "results: results.jsonl\n  format: case_table")
    return text, tuple(rows)


COLUMNS = ["model", "case_id", "doc", "ver", "attempts", "extra_attempts", "missing", "passes", "duplicate_attempts",
           "unreadable", "first_outcome", "first_answered_outcome", "passes_in_first_2", "answered_passes_in_first_2",
           "missing_in_first_2", "first_time", "last_time", "crit", "distinct_crit", "lang", "distinct_lang"]


@FUZZ
@given(rule=st.sampled_from(["first", "best_of_k", "mean"]),
       changes=st.lists(st.tuples(st.integers(0, 23), st.sampled_from(COLUMNS), hostile_values), max_size=4),
       drop=st.one_of(st.none(), st.sampled_from(COLUMNS)),
       repeat_row=st.one_of(st.none(), st.integers(0, 23)), remove_row=st.one_of(st.none(), st.integers(0, 23)))
def test_fuzzed_case_tables_never_crash(tmp_path_factory: Any, rule: str, changes: list, drop: str | None,
                                        repeat_row: int | None, remove_row: int | None) -> None:
    text, lines = _base(rule)
    rows = [json.loads(line) for line in lines]
    for i, col, value in changes:
        if col in rows[i % len(rows)]:
            rows[i % len(rows)][col] = value
    if drop is not None:
        for r in rows:
            r.pop(drop, None)
    if repeat_row is not None:
        rows.append(dict(rows[repeat_row % len(rows)]))
    if remove_row is not None:
        rows.pop(remove_row % len(rows))
    folder = tmp_path_factory.mktemp("fuzzcase")
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "plan.yaml").write_text(text, encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


@FUZZ
@given(changes=st.lists(st.tuples(st.sampled_from(COLUMNS), st.sampled_from(
    ["string", "float", "bool", "timestamp", "list", "null", "negative", "huge"])), max_size=3))
def test_fuzzed_parquet_case_table_types_never_crash(tmp_path_factory: Any, changes: list) -> None:
    """Case-table columns of other Arrow types than the reduction writes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text, lines = _base("first")
    rows = [json.loads(line) for line in lines]
    cols = {k: [r.get(k) for r in rows] for k in rows[0]}
    arrays: dict[str, Any] = {k: pa.array(v) for k, v in cols.items()}
    n = len(rows)
    for name, typ in changes:
        if name not in cols:
            continue
        arrays[name] = _typed(cols[name], typ, n)
    folder = tmp_path_factory.mktemp("fuzzcasepq")
    pq.write_table(pa.table(arrays), folder / "results.parquet")
    (folder / "plan.yaml").write_text(text.replace("results.jsonl", "results.parquet"), encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


def _typed(v: list, typ: str, n: int) -> Any:
    """A column of ``n`` values of the Arrow type ``typ`` (``v``: the column as the reduction wrote it)."""
    import datetime as dt

    import pyarrow as pa

    if typ == "string":
        return pa.array([None if x is None else str(x) for x in v], pa.string())
    if typ == "float":
        return pa.array([float(i % 3) + 0.5 * (i % 2) for i in range(n)])
    if typ == "bool":
        return pa.array([i % 2 == 0 for i in range(n)])
    if typ == "timestamp":
        return pa.array([dt.datetime(2026, 10, 1, 12, i % 60) for i in range(n)], pa.timestamp("ms"))
    if typ == "list":
        return pa.array([[i] for i in range(n)])
    if typ == "null":
        return pa.nulls(n)
    if typ == "negative":
        return pa.array([-1 - i for i in range(n)])
    return pa.array([2**62 + i for i in range(n)], pa.int64())
