"""Fuzzed results reduced while read (the streaming path, forced on) through `evalspec run`: exit 0/1/2, never 70
or a traceback; every error names its file and line or key; a refused run leaves the previous outputs as they were.

The streaming path's own refusals are used (``EXACT_REFUSAL_ROWS`` below every input), in JSONL and
Parquet, with Hive partition folders now and then.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from fuzz_strategies import FUZZ, check_one_set, check_outcome, plan_kinds, plan_variant, plant_old_set, \
    results_files, results_rows, run_cli


@pytest.fixture(autouse=True)
def _streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.results import batches, stream_reduce

    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)
    monkeypatch.setattr(batches, "BATCH_BYTES", 300)  # several batches per file


@FUZZ
@given(data=results_files(), kind=plan_kinds)
def test_fuzzed_jsonl_reduced_while_read_never_crashes(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    folder = tmp_path_factory.mktemp("fuzzstream")
    (folder / "results.jsonl").write_bytes(data)
    (folder / "plan.yaml").write_text(plan_variant(kind), encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(result)
    check_one_set(folder / "out", result.exit_code)


class _one_file:  # noqa: N801 - the result as check_outcome reads it, a partition's file named as the folder
    def __init__(self, result: Any) -> None:
        self._result = result

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._result, name)
        if name in ("output", "stderr") and isinstance(value, str):
            return re.sub(r"results\.parquet/part=\d+/data\.parquet", "results.parquet", value)
        return value


@FUZZ
@given(rows=results_rows(), kind=plan_kinds, partitioned=st.booleans())
def test_fuzzed_parquet_reduced_while_read_never_crashes(tmp_path_factory: Any, rows: list[dict[str, Any]],
                                                          kind: str, partitioned: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder: Path = tmp_path_factory.mktemp("fuzzstreampq")
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: as text
        table = pa.Table.from_pylist([{k: None if v is None else str(v) for k, v in r.items()} for r in rows])
    if partitioned and "model_version" in table.column_names:
        parts = {str(v) for v in table.column("model_version").to_pylist()}
        for k, value in enumerate(sorted(parts)):
            sub = folder / "results.parquet" / f"part={k}"
            sub.mkdir(parents=True)
            keep = [str(v) == value for v in table.column("model_version").to_pylist()]
            pq.write_table(table.filter(pa.array(keep)), sub / "data.parquet", row_group_size=4)
    else:
        pq.write_table(table, folder / "results.parquet", row_group_size=4)
    text = plan_variant(kind).replace("results: results.jsonl", "results: results.parquet")
    (folder / "plan.yaml").write_text(text, encoding="utf-8")
    plant_old_set(folder / "out")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    event(f"exit {result.exit_code}")
    check_outcome(_one_file(result))
    check_one_set(folder / "out", result.exit_code)
