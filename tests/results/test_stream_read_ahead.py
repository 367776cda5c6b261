"""The reader thread that decodes a file's batches ahead of the fold (:class:`~evalspec.results.stream_read.ReadAhead`).

Its items come in order; an error in the thread is raised in the consumer in its place (the same
object); at most ``depth`` items wait; leaving stops and joins the thread, closing the iterator;
a thread that ends without a word leaves nobody waiting. Through ``run_plan``: a Parquet file of
a dataset corrupted part-way, and a JSONL file with a broken line part-way, are refused in the
in-memory path's words, naming the file, with the thread's error handled as before; a refusal mid-file leaves no reader thread behind; a reader
thread that vanishes makes the file be read whole, same claim.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from evalspec.errors import InputError  # noqa: E402
from evalspec.results import stream_read  # noqa: E402
from evalspec.results.stream_read import ReadAhead, ReaderStopped  # noqa: E402


class _Boom(Exception):
    pass


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "evalspec-read-ahead" and t.is_alive()]


@given(items=st.lists(st.integers(), max_size=30), depth=st.integers(1, 3),
       fail_at=st.one_of(st.none(), st.integers(0, 30)))
def test_items_come_in_order_and_an_error_in_its_place(items: list[int], depth: int, fail_at: int | None) -> None:
    boom = _Boom("decoding failed")

    def make() -> Any:
        for i, x in enumerate(items):
            if i == fail_at:
                raise boom
            yield x

    got: list[int] = []
    with ReadAhead(make, depth) as ahead:
        if fail_at is not None and fail_at < len(items):
            with pytest.raises(_Boom) as err:
                got.extend(ahead)
            assert err.value is boom
            assert got == items[:fail_at]
        else:
            got.extend(ahead)
            assert got == items
        assert next(ahead, "end") == "end"  # (after the end or the error: nothing more)
    assert not _readers()


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_thread_holds_at_most_depth_items_and_leaving_closes_its_iterator(depth: int) -> None:
    made: list[int] = []
    closed = threading.Event()

    def make() -> Any:
        try:
            for i in range(1000):
                made.append(i)
                yield i
        finally:
            closed.set()

    with ReadAhead(make, depth) as ahead:
        assert next(ahead) == 0
        time.sleep(0.5)  # (room for the thread to run ahead: whatever it is given, it stops at the bound)
        # the item taken, ``depth`` waiting, one made and waiting for room
        assert len(made) <= 1 + depth + 1, made
    assert closed.is_set()
    assert not _readers()


def test_a_thread_that_ends_without_a_word_does_not_leave_the_reader_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ReadAhead, "_produce", lambda self, make: None)  # (as if the thread vanished)
    with ReadAhead(lambda: iter([1, 2, 3])) as ahead, pytest.raises(ReaderStopped):
        next(ahead)


PLAN = """evalspec: 1
id: read-ahead
title: Read ahead
question: Is A better than B?
decision_owner: the study's owner
population: invented cases
data:
  results: lake/
  columns: {candidate: candidate, repeat: repeat, outcome: passed}
candidates:
  A: {model: m/a, version: v1}
  B: {model: m/b, version: v1}
baseline: B
units: {case: case_id}
attempts: {repeats: 2, rule: first}
missing: {policy: count_as_fail, max_fraction: 0.1}
analyses:
  - {kind: proportion}
  - {kind: paired_difference, compare: [A, B], resamples: 100, seed: 3}
decision: {minimum_improvement: 0.02}
"""


def _lake(folder: Path, *, duplicate: bool = False) -> Path:
    """Two candidates' Parquet files of 3,000 rows in row groups (batches) of 250: plain pages, no dictionary."""
    for cand in "AB":
        out = folder / "lake" / f"candidate={cand}"
        out.mkdir(parents=True)
        rows = [{"case_id": f"c{i // 2:05d}", "repeat": 1 + i % 2, "passed": (i * 7 + (cand == "A")) % 3 > 0}
                for i in range(3000)]
        if duplicate and cand == "B":
            rows[2100] = dict(rows[2098])
        pq.write_table(pa.Table.from_pylist(rows), out / "part-0.parquet", row_group_size=250, compression="none",
                       use_dictionary=False)
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    return folder / "plan.yaml"


def _garble(path: Path) -> None:
    """Bytes of a row group two thirds into the file overwritten: the first batches read, a later one not."""
    data = bytearray(path.read_bytes())
    mid = len(data) * 2 // 3
    data[mid:mid + 400] = b"\xff" * 400
    path.write_bytes(bytes(data))


def _run(plan: Path, monkeypatch: pytest.MonkeyPatch, *, streamed: bool) -> tuple[str, list[Any]]:
    from evalspec.run import run_plan

    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0" if streamed else str(10**15))
    try:
        return json.dumps(run_plan(plan), sort_keys=True, default=str), []
    except InputError as exc:
        return f"refused: {exc}", [(d.file, d.line, d.message) for d in exc.diagnostics]


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Batches that came through a reader thread (so the streamed runs below are known to use one)."""
    seen: list[int] = []
    real = ReadAhead.__next__

    def spy(self: ReadAhead) -> Any:
        item = real(self)
        if hasattr(item, "raw"):  # a typed batch (not a decoded one, from the decoding thread behind it)
            seen.append(item.raw.rows)
        return item

    monkeypatch.setattr(ReadAhead, "__next__", spy)
    monkeypatch.setattr(stream_read, "PARQUET_BATCH_ROWS", 250)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    return seen


def test_a_file_corrupted_part_way_is_refused_as_in_memory_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      spied: list[int]) -> None:
    plan = _lake(tmp_path)
    _garble(tmp_path / "lake" / "candidate=B" / "part-0.parquet")
    streamed = _run(plan, monkeypatch, streamed=True)
    assert len(spied) > 12, spied  # file A whole, then part of B before the broken row group
    memory = _run(plan, monkeypatch, streamed=False)
    assert streamed == memory
    assert streamed[0].startswith("refused: ") and "lake/candidate=B/part-0.parquet: not a readable Parquet file" \
        in streamed[0], streamed
    assert not _readers()


def test_a_refusal_mid_file_leaves_no_reader_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    spied: list[int]) -> None:
    from evalspec.results import stream_reduce

    monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)  # (the stream's own refusal, at the row)
    message, diagnostics = _run(_lake(tmp_path, duplicate=True), monkeypatch, streamed=True)
    assert message.startswith("refused"), message
    assert [(f, line) for f, line, m in diagnostics if "duplicate" in m] == [
        (str(tmp_path / "lake" / "candidate=B" / "part-0.parquet"), 2101)], diagnostics
    assert sum(spied) < 6000  # the rest of the file was not folded
    assert not _readers()


def test_a_reader_thread_that_vanishes_makes_the_file_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  spied: list[int]) -> None:
    plan = _lake(tmp_path)
    memory = _run(plan, monkeypatch, streamed=False)

    def dies_after_some(self: ReadAhead, make: Any) -> None:  # three batches, then the thread ends: no end, no error
        try:
            for i, item in enumerate(make()):
                if i == 3:
                    return
                self._put((self._ITEM, item))
        except ReaderStopped:  # (the decoding thread behind this one vanished too: this one vanishes with it)
            return

    monkeypatch.setattr(ReadAhead, "_produce", dies_after_some)
    stopped: list[str] = []
    real_whole = stream_read._whole_file
    monkeypatch.setattr(stream_read, "_whole_file", lambda red, j, path, *a: (stopped.append(str(path)),
                                                                              real_whole(red, j, path, *a)))
    assert _run(plan, monkeypatch, streamed=True) == memory
    assert sorted(set(stopped)) == sorted(str(p) for p in (tmp_path / "lake").glob("*/*.parquet")), stopped
    assert spied  # (each read whole after its reader thread stopped part-way)
    assert not _readers()


def test_a_jsonl_file_broken_part_way_is_refused_as_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              spied: list[int]) -> None:
    """A line that is not JSON two thirds into a file read in batches: the thread's error, then the file read
    whole, which locates it, in the in-memory path's words."""
    from evalspec.results import batches

    monkeypatch.setattr(batches, "BATCH_BYTES", 4096)
    lines = [json.dumps({"candidate": c, "case_id": f"c{i:04d}", "repeat": r, "passed": (i + r) % 3 > 0})
             for i in range(600) for c in "AB" for r in (1, 2)]
    lines[1700] = '{"candidate": "A", "case_id": "c0425", "repeat": 1, "passed": tru'
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN.replace("results: lake/", "results: results.jsonl"), encoding="utf-8")
    streamed = _run(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert len(spied) > 2, spied  # batches folded before the broken one
    memory = _run(tmp_path / "plan.yaml", monkeypatch, streamed=False)
    assert streamed == memory
    assert streamed[0].startswith("refused: ") and "1701" in streamed[0] + str(streamed[1]), streamed
    assert not _readers()
