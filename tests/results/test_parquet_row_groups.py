"""A Parquet file's texts read as dictionaries come a row group at a time (``stream_read._row_group_batches``).

For row groups of any sizes: the batches are the file's rows in order, none spans two row groups or
holds more than ``PARQUET_BATCH_ROWS`` rows, there are never more of them than one pass of fixed-size
batches gives, and the streamed claim is the in-memory one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from evalspec.results import stream_read  # noqa: E402


def _file(path: Path, groups: list[int]) -> pa.Table:
    rows = sum(groups)
    table = pa.table({"case_id": [f"c{i // 3:04d}" for i in range(rows)], "repeat": [i % 3 for i in range(rows)],
                      "topic": [("a", "b", "c")[i % 7 % 3] for i in range(rows)]})
    with pq.ParquetWriter(path, table.schema) as w:
        start = 0
        for g in groups:
            w.write_table(table.slice(start, g))
            start += g
    return table


@settings(max_examples=25)
@given(groups=st.lists(st.integers(1, 60), min_size=1, max_size=6), size=st.integers(4, 50))
def test_row_group_batches(tmp_path_factory: pytest.TempPathFactory, groups: list[int], size: int) -> None:
    path = tmp_path_factory.mktemp("rg") / "part.parquet"
    table = _file(path, groups)
    mp = pytest.MonkeyPatch()
    mp.setattr(stream_read, "PARQUET_BATCH_ROWS", size)
    try:
        pf = pq.ParquetFile(path, read_dictionary=["case_id", "topic"])
        batches = list(stream_read._row_group_batches(pf, True))
        one_pass = list(pf.iter_batches(batch_size=size))
        plain = list(stream_read._row_group_batches(pq.ParquetFile(path), False))
    finally:
        mp.undo()
    assert pa.Table.from_batches(batches).cast(table.schema).equals(table)
    assert pa.Table.from_batches(plain).equals(table) and [b.num_rows for b in plain] == [
        b.num_rows for b in pq.ParquetFile(path).iter_batches(batch_size=size)]  # (no dictionaries: one pass)
    assert len(batches) <= len(one_pass) and all(b.num_rows <= size for b in batches)
    assert len(batches) == sum(-(-g // size) for g in groups)  # (each row group cut only by the batch size)
    ends, start = set(), 0
    for g in groups:
        start += g
        ends.add(start)
    at = 0
    for b in batches:  # none spans a row group's end
        assert not any(at < e < at + b.num_rows for e in ends)
        at += b.num_rows


def test_streamed_claim_of_uneven_row_groups_is_the_in_memory_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.results.test_stream_read_ahead import PLAN, _run

    for cand in "AB":
        out = tmp_path / "lake" / f"candidate={cand}"
        out.mkdir(parents=True)
        rows = [{"case_id": f"c{i // 2:05d}", "repeat": 1 + i % 2, "passed": (i * 7 + (cand == "A")) % 3 > 0}
                for i in range(2000)]
        table = pa.Table.from_pylist(rows)
        with pq.ParquetWriter(out / "part-0.parquet", table.schema) as w:
            for start, end in ((0, 700), (700, 710), (710, 1500), (1500, 2000)):
                w.write_table(table.slice(start, end - start))
    (tmp_path / "plan.yaml").write_text(PLAN, encoding="utf-8")
    monkeypatch.setattr(stream_read, "PARQUET_BATCH_ROWS", 512)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    streamed = _run(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert not streamed[0].startswith("refused") and streamed == _run(tmp_path / "plan.yaml", monkeypatch,
                                                                      streamed=False)
