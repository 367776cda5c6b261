"""A Parquet file read a column at a time: the next column is read (and a text column numbered) in a thread.

The values are the ones the columns give read one after another in the main thread, and a
read that fails in the thread is raised where its column is asked, so the file goes to the
whole-file reader as before; the thread never outlives the read.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.results import batches


def _write(path: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    pq.write_table(pa.table({
        "model": pa.array(rng.choice(["A", "B", None], n).tolist()),
        "case_id": pa.array([f"c{i}" for i in rng.integers(0, n // 2 + 1, n)]),
        "passes": pa.array(rng.integers(0, 5, n)),
        "note": pa.array(rng.choice(["x", "é", ""], n).tolist()),
        "crit": pa.array(rng.random(n) < 0.5),
    }), path)
    return path


def _columns(path: Path) -> dict[str, tuple[list, list]]:
    out = batches.stream_table(path, "parquet", path.name)
    assert out is not None
    return {k: (v.codes.tolist(), list(v.uniques)) for k, v in out.columns.items()}


@settings(max_examples=10)
@given(n=st.integers(1, 3000), seed=st.integers(0, 2**16))
def test_columns_read_ahead_give_the_values_read_in_turn(tmp_path_factory: pytest.TempPathFactory, n: int,
                                                         seed: int) -> None:
    path = _write(tmp_path_factory.mktemp("ahead") / "t.parquet", n, seed)
    ahead = _columns(path)
    original = batches._ColumnByColumn.named

    def in_turn(self: batches._ColumnByColumn):  # type: ignore[no-untyped-def]
        for name in self.schema.names:  # no thread, no numbering ahead
            col = self.pf.read(columns=[name], use_threads=False).column(0)
            yield name, col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)

    try:
        batches._ColumnByColumn.named = in_turn  # type: ignore[method-assign]
        assert _columns(path) == ahead
    finally:
        batches._ColumnByColumn.named = original  # type: ignore[method-assign]


def test_columns_are_taken_as_they_are_read_and_kept_in_the_files_order(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "t.parquet", 2000, 6)
    ahead = _columns(path)
    real, taken = batches._ColumnByColumn._column, []
    later = threading.Event()
    original = batches._ColumnByColumn.named

    def slow_first(self: batches._ColumnByColumn, name: str):  # type: ignore[no-untyped-def]
        if name == "model":  # (the first column is read last: the other thread reads every other one meanwhile)
            assert later.wait(30)
        out = real(self, name)
        if name == "crit":
            later.set()
        return out

    def noted(self: batches._ColumnByColumn):  # type: ignore[no-untyped-def]
        for name, col in original(self):
            taken.append(name)
            yield name, col

    monkeypatch.setattr(batches._ColumnByColumn, "_column", slow_first)
    monkeypatch.setattr(batches._ColumnByColumn, "named", noted)
    out = batches.stream_table(path, "parquet", path.name)
    assert out is not None and list(out.columns) == ["model", "case_id", "passes", "note", "crit"]
    assert taken[-1] == "model"  # (taken as read, not waited for in the file's order)
    assert {k: (v.codes.tolist(), list(v.uniques)) for k, v in out.columns.items()} == ahead


def test_a_read_that_fails_in_the_thread_goes_to_the_whole_file_reader(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "t.parquet", 500, 1)
    real = batches._ColumnByColumn._column

    def failing(self: batches._ColumnByColumn, name: str):  # type: ignore[no-untyped-def]
        if name == "passes":
            raise OSError("the disk went away")
        return real(self, name)

    monkeypatch.setattr(batches._ColumnByColumn, "_column", failing)
    before = {t.ident for t in threading.enumerate()}
    assert batches.stream_table(path, "parquet", path.name) is None  # (read_file then reads it whole)
    assert not [t for t in threading.enumerate() if t.ident not in before and t.name.startswith("evalspec-parquet")]


def test_two_threads_read_each_through_a_file_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "t.parquet", 2000, 2)
    used: dict[str, tuple[str, int]] = {}
    real = batches._ColumnByColumn._column

    def noted(self: batches._ColumnByColumn, name: str):  # type: ignore[no-untyped-def]
        out = real(self, name)
        used[name] = (threading.current_thread().name, id(self._mine.pf))
        return out

    ahead = _columns(path)
    monkeypatch.setattr(batches._ColumnByColumn, "_column", noted)
    assert _columns(path) == ahead
    threads = {t for t, _ in used.values()}
    assert len(used) == 5 and len(threads) <= 2 and all(t.startswith("evalspec-parquet") for t in threads)
    by_thread = {t: {f for u, f in used.values() if u == t} for t in threads}
    assert all(len(files) == 1 for files in by_thread.values())  # each thread keeps its own file ...
    assert len(set.union(*by_thread.values())) == len(threads)  # ... and no two threads share one


def test_a_file_whose_second_opening_differs_is_read_by_one_thread(tmp_path: Path) -> None:
    path, other = _write(tmp_path / "t.parquet", 300, 3), _write(tmp_path / "u.parquet", 400, 4)
    pf = pq.ParquetFile(str(path))
    assert len(batches._ColumnByColumn(pf, path)._files) == 2
    assert batches._ColumnByColumn(pf, other)._files == [pf]  # (another file's metadata: not a second reader)
    assert batches._ColumnByColumn(pf)._files == [pf]


def test_a_column_finished_as_it_is_read_is_the_column_and_takes_no_more_rows() -> None:
    finished, later = batches.Distinct(), batches.Distinct()
    for dist in (finished, later):
        dist.add(np.array([0, 1, -1, 0], dtype=np.int32), pa.array(["b", "a"]))
    finished.finish()
    got, want = finished.column(), later.column()
    assert (got.codes.tolist(), list(got.uniques)) == (want.codes.tolist(), list(want.uniques)) == ([0, 1, -1, 0],
                                                                                                    ["b", "a"])
    assert finished.column() is got
    with pytest.raises(AssertionError):
        finished.add_missing(1)


def _dictionary_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = batches._ColumnByColumn._dictionary_column

    def noted(self: batches._ColumnByColumn, name: str):  # type: ignore[no-untyped-def]
        out = real(self, name)
        if out is not None:
            read.append(name)
        return out

    monkeypatch.setattr(batches._ColumnByColumn, "_dictionary_column", noted)
    return read


def test_text_columns_of_few_values_are_read_as_dictionaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "t.parquet", 3000, 5)  # (model and note: three values each; case_id: many)
    read = _dictionary_reads(monkeypatch)
    ahead = _columns(path)
    assert sorted(read) == ["model", "note"]
    monkeypatch.setattr(batches._ColumnByColumn, "_dictionary_column", lambda self, name: None)
    assert _columns(path) == ahead  # (the texts read and encoded instead: the same codes and values)


def test_a_dictionary_that_is_not_utf8_goes_to_the_whole_file_reader(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    good = pa.array(["a", "b"] * 50)
    offsets, data = np.array([0, 1, 2], dtype=np.int32), np.frombuffer(b"a\xff", dtype=np.uint8)
    bad = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(offsets), pa.py_buffer(data.copy())])
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"ok": good, "broken": pa.concat_arrays([bad] * 50)}), path)
    read = _dictionary_reads(monkeypatch)
    assert batches.stream_table(path, "parquet", path.name) is None  # (read_file then reads it whole)
    assert "ok" in read


@pytest.mark.parametrize(("uniques", "codes"), [
    ([3, 1, 7], [0, 1, 2, 2, -1, 0]),  # the first values, in their order: their own codes
    ([3, None, 7], [0, 1, 2, 2, -1, 0]),  # a None among them: -1
    ([1, 1.0, True, "1"], [3, 2, 1, 0, -1]),  # four values
    ([5, 5, 2.0], [0, 1, 2, 1]),  # one value twice: one code (2.0 is another value)
])
def test_a_first_batch_of_values_gets_the_codes_of_the_values(uniques: list, codes: list) -> None:
    dist = batches.Distinct()
    values = np.empty(len(uniques), dtype=object)
    values[:] = uniques
    got = dist.add(np.array(codes, dtype=np.int32), values)
    kept = dist.values
    assert [None if c < 0 else (type(kept[c]), kept[c]) for c in got.tolist()] == [
        None if c < 0 or uniques[c] is None else (type(uniques[c]), uniques[c]) for c in codes]
