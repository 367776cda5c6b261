"""Fuzzed results files through `evalspec run`: exit 0/1/2, never 70 or a traceback; every error
names its file and line or key; a refused run leaves the previous outputs as they were, a
finished one replaces them whole."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from fuzz_strategies import FUZZ, check_one_set, check_outcome, plan_kinds, plan_variant, plant_old_set, \
    results_csv_files, \
    results_files, run_cli


@FUZZ
@given(data=results_files(), kind=plan_kinds)
def test_fuzzed_results_never_crash(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "results.jsonl").write_bytes(data)
    (folder / "plan.yaml").write_text(plan_variant(kind), encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


@FUZZ
@given(data=results_csv_files(), kind=plan_kinds)
def test_fuzzed_csv_results_never_crash(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    folder = tmp_path_factory.mktemp("fuzzcsv")
    (folder / "results.csv").write_bytes(data)
    (folder / "plan.yaml").write_text(plan_variant(kind).replace("results: results.jsonl", "results: results.csv"),
                                      encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


@FUZZ
@given(kind=plan_kinds, changes=st.lists(
    st.tuples(
        st.sampled_from(["candidate", "case_id", "doc", "repeat", "passed", "model_version", "ts"]),
        st.sampled_from(
            ["binary", "large_string", "timestamp", "date", "float", "list", "struct", "null", "dictionary",
             "bad_utf8", "decimal", "uint64"])), max_size=3))
def test_fuzzed_parquet_types_never_crash(tmp_path_factory: Any, kind: str, changes: list) -> None:
    """Parquet columns of every Arrow type a tool may write, in any role."""
    import datetime as dt
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    from fuzz_strategies import BASE_ROWS

    cols = {k: [r[k] for r in BASE_ROWS] for k in BASE_ROWS[0]}
    arrays: dict[str, Any] = {k: pa.array(v) for k, v in cols.items()}
    n = len(BASE_ROWS)
    for name, typ in changes:
        v = cols[name]
        if typ == "binary":
            arrays[name] = pa.array([str(x).encode() for x in v], type=pa.binary())
        elif typ == "large_string":
            arrays[name] = pa.array([str(x) for x in v], type=pa.large_string())
        elif typ == "timestamp":
            arrays[name] = pa.array([dt.datetime(2026, 10, 1, 12, i % 60) for i in range(n)], type=pa.timestamp("ms"))
        elif typ == "date":
            arrays[name] = pa.array([dt.date(2026, 10, 1 + i % 28) for i in range(n)], type=pa.date32())
        elif typ == "float":
            arrays[name] = pa.array([float(i % 3) for i in range(n)])
        elif typ == "list":
            arrays[name] = pa.array([[i] for i in range(n)])
        elif typ == "struct":
            arrays[name] = pa.array([{"a": i} for i in range(n)])
        elif typ == "null":
            arrays[name] = pa.nulls(n)
        elif typ == "dictionary":
            arrays[name] = pa.array([str(x) for x in v]).dictionary_encode()
        elif typ == "bad_utf8":
            arrays[name] = pa.array([b"\xff" + str(x).encode() for x in v], type=pa.binary())
        elif typ == "decimal":
            arrays[name] = pa.array([decimal.Decimal(i % 2) for i in range(n)], type=pa.decimal128(5, 2))
        elif typ == "uint64":
            arrays[name] = pa.array([2**64 - 1 - i for i in range(n)], type=pa.uint64())
    folder = tmp_path_factory.mktemp("fuzzpq")
    pq.write_table(pa.table(arrays), folder / "results.parquet")
    (folder / "plan.yaml").write_text(plan_variant(kind).replace("results: results.jsonl", "results: results.parquet"),
                                      encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)
