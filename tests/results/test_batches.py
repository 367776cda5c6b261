"""Results read in record batches give the claim the whole-file readers give, byte for byte.

Generated results sets (duplicates, version changes, bad timestamps, missing outcomes,
unknown candidates, mixed value types, several files) are written as JSONL, CSV or Parquet
and run through ``run_plan`` twice: once read in batches (tiny batches, so every file is many
of them) and once whole. The claim, or the located refusal, must be the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
from run_helpers import plan_text  # noqa: E402

pa = pytest.importorskip("pyarrow")
import pyarrow.csv as pcsv  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from evalspec.errors import InputError  # noqa: E402

_TIMES = ["2026-10-01T12:00:00Z", "2026-10-02T08:30:00Z", "2026-10-01 09:00:00+02:00", "yesterday"]

_row = st.fixed_dictionaries({
    "candidate": st.sampled_from(["A", "A", "B", "B", "C"]),
    "case_id": st.sampled_from(["c1", "c2", "c3", "c4", "c5", "c6"]),
    "doc": st.sampled_from(["d1", "d1", "d2", "d3"]),
    "repeat": st.sampled_from([1, 2, 1, 2, 3]),
    "passed": st.sampled_from([True, False, True, False, None, "pass", "fail", 1, 0, "maybe"]),
    "model_version": st.sampled_from(["v1", "v1", "v1", "v2"]),
    "ts": st.sampled_from(_TIMES),
})


@st.composite
def _grid(draw: Any) -> list[dict[str, Any]]:
    """Rows that mostly pass the checks: every candidate x case x repeat once, a few dropped or odd."""
    n_cases = draw(st.integers(1, 8))
    repeats = draw(st.integers(1, 3))
    outcomes = st.sampled_from([True, False, True, False, None, "pass", 1, 0])
    version = {"A": draw(st.sampled_from(["v1", "v1", "v2"])), "B": "v1"}  # v2 throughout: a deviation
    rows = []
    for i in range(n_cases):
        for cand in ("A", "B"):
            for r in range(1, repeats + 1):
                if draw(st.integers(0, 9)) == 0:
                    continue  # a missing attempt: fewer repeats, an unpaired case
                case: Any = f"c{i}" if i % 3 else i  # ids as numbers too
                rows.append({"candidate": cand, "case_id": case, "doc": f"d{i % 3}", "repeat": r,
                             "passed": draw(outcomes), "model_version": version[cand],
                             "ts": draw(st.sampled_from(_TIMES[:3]))})
    return draw(st.permutations(rows)) if draw(st.booleans()) else rows


def _write(folder: Path, rows: list[dict[str, Any]], fmt: str, files: int) -> str:
    """The rows in ``files`` files of format ``fmt``; the plan's ``data.results`` for them."""
    parts = [rows[i::files] for i in range(files)] if len(rows) >= files else [rows]
    names = []
    for k, part in enumerate(parts):
        name = f"results-{k}.{fmt}"
        if fmt == "jsonl":
            (folder / name).write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
        else:
            text = [{key: (None if v is None else str(v).lower() if isinstance(v, bool) else str(v))
                     for key, v in r.items()} for r in part]
            table = pa.Table.from_pylist(text)
            if fmt == "csv":
                pcsv.write_csv(table, folder / name, pcsv.WriteOptions(quoting_style="none"))
                body = (folder / name).read_bytes()
                (folder / name).write_bytes(body.replace(b'"', b""))  # a plain header, as exporters write it
            else:
                try:  # native types where the values allow (one type per column), else text
                    table = pa.Table.from_pylist(part)
                except (pa.ArrowInvalid, pa.ArrowTypeError):
                    pass
                pq.write_table(table, folder / name, row_group_size=3)
        names.append(name)
    return json.dumps(names)


def _outcome(plan: Path, monkeypatch: pytest.MonkeyPatch, stream: bool, whole_table: bool = False) -> str:
    """The claim (or the refusal) of ``plan``: read whole by the whole-file readers (``stream=False``), or by the
    batch reader (:func:`~evalspec.results.batches.stream_table`), in many batches or, ``whole_table``, as one
    table parsed whole by Arrow."""
    from evalspec.results import batches, readers
    from evalspec.run import run_plan

    monkeypatch.setattr(readers, "SMALL_FILE_BYTES", 0)  # every file through Arrow: batches or whole
    monkeypatch.setattr(readers, "STREAM", stream)
    monkeypatch.setattr(batches, "WHOLE_FILE_BYTES", 1 << 30 if whole_table else -1)
    monkeypatch.setattr(batches, "BATCH_BYTES", 256)  # many batches per file
    monkeypatch.setattr(batches, "PARQUET_BATCH_BYTES", 64)  # (Parquet too)
    try:
        return json.dumps(run_plan(plan), sort_keys=True, default=str)
    except InputError as exc:
        return "refused: " + str(exc) + json.dumps([d.as_json() for d in exc.diagnostics], sort_keys=True, default=str)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          deadline=None, derandomize=True, database=None)
@given(rows=st.one_of(_grid(), _grid(), st.lists(_row, min_size=1, max_size=60)),
       fmt=st.sampled_from(["jsonl", "csv", "parquet"]), files=st.integers(1, 3), rule=st.sampled_from(["first", "majority"]),
       policy=st.sampled_from(["count_as_fail", "exclude"]))
def test_batches_give_the_claim_of_the_whole_file_read(tmp_path_factory: pytest.TempPathFactory,
                                                        monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]],
                                                        fmt: str, files: int, rule: str, policy: str) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    folder = tmp_path_factory.mktemp("study")
    if not rows:
        return
    results = _write(folder, rows, fmt, files)
    (folder / "plan.yaml").write_text(plan_text(results, rule=rule, policy=policy).replace("record: [model_version]\n",
                                      ""), encoding="utf-8")
    whole = _outcome(folder / "plan.yaml", monkeypatch, stream=False)
    streamed = _outcome(folder / "plan.yaml", monkeypatch, stream=True)
    assert streamed == whole
    assert _outcome(folder / "plan.yaml", monkeypatch, stream=True, whole_table=True) == whole


def test_a_file_is_read_in_batches_as_lazy_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch path is taken (not a silent fallback), and its columns are codes, not objects."""
    from evalspec.results import batches, readers
    from evalspec.results.values import LazyCoded

    monkeypatch.setattr(batches, "BATCH_BYTES", 128)
    monkeypatch.setattr(batches, "WHOLE_FILE_BYTES", -1)  # (a small file is parsed whole otherwise)
    monkeypatch.setattr(batches, "PARQUET_BATCH_BYTES", 64)  # (Parquet too)
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"c": f"x{i % 7}", "v": i % 3, "f": i / 2}) + "\n" for i in range(500)))
    seen: list[int] = []
    monkeypatch.setattr(batches, "_progress", lambda display: seen.append)
    streamed = batches.stream_table(path, "jsonl", "r.jsonl")
    assert streamed is not None and streamed.rows == 500 and len(seen) > 10  # many batches
    assert all(isinstance(c, LazyCoded) for c in streamed.columns.values())
    assert streamed.columns["c"].codes.dtype == np.int8
    changed = streamed.columns["c"].copy()  # a changeable copy carries no codes a change would leave stale
    assert getattr(changed, "codes", None) is None
    changed[0] = None
    assert changed[0] is None and streamed.columns["c"][0] == "x0"
    monkeypatch.setattr(readers, "STREAM", False)
    whole = readers.read_file(path, "jsonl")
    for name, col in streamed.columns.items():
        assert list(col) == list(whole.columns[name])


@pytest.mark.parametrize("body", [
    b'{"a": 1}\n\n{"a": 2}\n',  # a blank line: Arrow would skip it and shift the line numbers
    b'{"a": 1}\r\n{"a": 2}\r\n',  # carriage returns
    b'{"a": [1, 2]}\n{"a": [3]}\n',  # nested values
    b'{"a": 9007199254740993.0}\n',  # beyond 2**53 as a float
])
def test_what_the_batches_cannot_read_exactly_goes_to_the_whole_file_reader(tmp_path: Path, body: bytes) -> None:
    from evalspec.results import batches

    path = tmp_path / "r.jsonl"
    path.write_bytes(body)
    assert batches.stream_table(path, "jsonl", "r.jsonl") is None


def test_the_case_table_limit_stops_the_read_at_the_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused at the first row of the case one too many, while reading (the rest is not read)."""
    from evalspec.results import batches, readers, table
    from evalspec.run import run_plan

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(readers, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(batches, "BATCH_BYTES", 512)
    monkeypatch.setattr(batches, "WHOLE_FILE_BYTES", -1)  # read in batches
    monkeypatch.setattr(batches, "PARQUET_BATCH_BYTES", 64)  # (Parquet too)
    monkeypatch.setattr(table, "MAX_CASE_CELLS", 20)  # 2 candidates: 10 cases
    seen: list[int] = []
    monkeypatch.setattr(batches, "_progress", lambda display: seen.append)
    rows = [{"candidate": c, "case_id": f"q{i:03d}", "doc": "d", "repeat": r, "passed": True, "model_version": "v1",
             "ts": _TIMES[0]} for i in range(200) for c in ("A", "B") for r in (1, 2)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "plan.yaml").write_text(plan_text("results.jsonl"), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        run_plan(tmp_path / "plan.yaml")
    assert str(exc.value).startswith("results.jsonl:41: ")  # case 11's first row: 10 cases x 4 rows before it
    assert "this row names case 11: 2 candidate(s) x more than 10 cases" in str(exc.value)
    assert exc.value.diagnostics[0].line == 41
    assert max(seen) < len(rows)  # stopped early


def test_the_case_table_limit_counts_cases_over_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cases named in two files are one case each; the refusal names the row of the 11th distinct case."""
    from evalspec.results import batches, readers, table
    from evalspec.run import run_plan

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(readers, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(batches, "BATCH_BYTES", 512)
    monkeypatch.setattr(batches, "WHOLE_FILE_BYTES", -1)  # read in batches
    monkeypatch.setattr(batches, "PARQUET_BATCH_BYTES", 64)  # (Parquet too)
    monkeypatch.setattr(table, "MAX_CASE_CELLS", 20)

    def rows(cases: range, repeats: tuple[int, int]) -> str:
        return "".join(json.dumps({"candidate": c, "case_id": f"q{i:03d}", "doc": "d", "repeat": r, "passed": True,
                                   "model_version": "v1", "ts": _TIMES[0]}) + "\n"
                       for i in cases for c in ("A", "B") for r in repeats)

    (tmp_path / "one.jsonl").write_text(rows(range(0, 8), (1, 2)))
    (tmp_path / "two.jsonl").write_text(rows(range(4, 14), (3, 4)))  # q004-q007 again, then q008, q009, q010 (the 11th)
    (tmp_path / "plan.yaml").write_text(plan_text('["one.jsonl", "two.jsonl"]'), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        run_plan(tmp_path / "plan.yaml")
    assert str(exc.value).startswith("two.jsonl:25: ")  # q010 is the 7th case of two.jsonl: 6 x 4 rows before it
    monkeypatch.setattr(table, "MAX_CASE_CELLS", 28)  # 14 cases: runs
    assert run_plan(tmp_path / "plan.yaml")["coverage"]["cases"]["total"] == 14


def test_an_empty_parquet_file_reads_as_the_whole_file_reader_reads_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Its columns are there, with no rows: the run says which candidate has no rows, not that columns are missing."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows = [{"candidate": "A", "case_id": "c1", "doc": "d1", "repeat": 1, "passed": True, "model_version": "v1",
             "ts": _TIMES[0]}]
    pq.write_table(pa.Table.from_pylist(rows).slice(0, 0), tmp_path / "results.parquet")
    (tmp_path / "plan.yaml").write_text(plan_text(json.dumps(["results.parquet"])).replace(
        "record: [model_version]\n", ""), encoding="utf-8")
    whole = _outcome(tmp_path / "plan.yaml", monkeypatch, stream=False)
    streamed = _outcome(tmp_path / "plan.yaml", monkeypatch, stream=True)
    assert streamed == whole and "has no rows" in whole
