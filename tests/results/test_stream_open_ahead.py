"""The next local file opened ahead (:class:`~evalspec.results.stream_read._Ahead`): decoded and coded while the
file before it is read, typed only once that file has been typed.

Through ``run_plan`` on a dataset of several Parquet files: the typing of two files never
overlaps and goes in file order; a refusal in the first file, a first file corrupted part-way
(read again whole), and a later file that cannot be opened give the in-memory path's claim or
refusal, in its words, and leave no reader thread behind.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

from evalspec.errors import Diagnostic, InputError  # noqa: E402
from evalspec.results import stream_read  # noqa: E402
from evalspec.results.stream_batch import Typer  # noqa: E402

from tests.results.test_stream_read_ahead import PLAN, _garble, _readers, _run  # noqa: E402


def _lake(folder: Path, *, duplicate: bool = False) -> list[Path]:
    """Three files a candidate (1,000 rows each, row groups of 250), the cases split between them."""
    paths = []
    for cand in "AB":
        out = folder / "lake" / f"candidate={cand}"
        out.mkdir(parents=True)
        for k in range(3):
            rows = [{"case_id": f"c{i // 2:05d}", "repeat": 1 + i % 2, "passed": (i * 7 + (cand == "A")) % 3 > 0}
                    for i in range(1000 * k, 1000 * (k + 1))]
            if duplicate and cand == "A" and k == 0:
                rows[700] = dict(rows[698])
            pq.write_table(pa.Table.from_pylist(rows), out / f"part-{k}.parquet", row_group_size=250,
                           compression="none", use_dictionary=False)
            paths.append(out / f"part-{k}.parquet")
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    return paths


@pytest.fixture
def typing_log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each typed batch's file, in the order typed; fails if two typings overlap."""
    log: list[str] = []
    busy = threading.Lock()
    real = Typer.typed

    def typed(self: Typer, raw: Any, *, first: bool) -> Any:
        assert busy.acquire(blocking=False), "two files typed at once"
        try:
            log.append(raw.display)
            if len(log) in (3, 4):  # (a file's last batches typed slowly: the next file, opened ahead, must wait)
                time.sleep(0.3)
            return real(self, raw, first=first)
        finally:
            busy.release()

    monkeypatch.setattr(Typer, "typed", typed)
    monkeypatch.setattr(stream_read, "PARQUET_BATCH_ROWS", 250)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    return log


def test_files_are_typed_one_at_a_time_in_order_and_give_the_in_memory_claim(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typing_log: list[str]) -> None:
    paths = _lake(tmp_path)
    memory = _run(tmp_path / "plan.yaml", monkeypatch, streamed=False)
    typing_log.clear()
    opened: list[int] = []
    real_open = stream_read._Ahead.open_after
    monkeypatch.setattr(stream_read._Ahead, "open_after", lambda self, j, ev: (
        real_open(self, j, ev), opened.append(self.j) if self.opened is not None else None))
    assert _run(tmp_path / "plan.yaml", monkeypatch, streamed=True) == memory
    files = [str(p) for p in paths]
    assert len(typing_log) == 24 and typing_log == sorted(typing_log, key=files.index)
    assert set(opened) == {1, 2, 3, 4, 5}  # (every file after the first was opened ahead)
    assert not _readers()


def test_a_refusal_in_a_file_with_the_next_opened_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        typing_log: list[str]) -> None:
    from evalspec.results import stream_reduce

    monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)  # (the stream's own refusal, at the row)
    paths = _lake(tmp_path, duplicate=True)
    message, diagnostics = _run(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert message.startswith("refused"), message
    assert [(f, line) for f, line, m in diagnostics if "duplicate" in m] == [(str(paths[0]), 701)], diagnostics
    assert str(paths[2]) not in typing_log  # (the file after the next was never opened)
    assert not _readers()


def test_a_first_file_corrupted_part_way_is_refused_as_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             typing_log: list[str]) -> None:
    paths = _lake(tmp_path)
    _garble(paths[0])
    streamed = _run(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    memory = _run(tmp_path / "plan.yaml", monkeypatch, streamed=False)
    assert streamed == memory  # (the garbled bytes read as bad values here: located at their rows, as in memory)
    assert streamed[0].startswith("refused") and {f for f, _, _ in streamed[1]} == {str(paths[0])}, streamed
    assert not _readers()


def test_a_later_file_that_cannot_be_opened_is_refused_in_its_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   typing_log: list[str]) -> None:
    """Opening ahead fails (as if the file went away): nothing is said until that file's turn, then the same words."""
    from evalspec.results import files

    paths = _lake(tmp_path)
    real_peek = files.peek
    peeked: list[str] = []

    def peek(path: Path, display: str) -> bytes:
        peeked.append(str(path))
        if str(path) == str(paths[1]):
            raise InputError(f"{display}: cannot read the results file", [Diagnostic(file=display, message="gone")])
        return real_peek(path, display)

    monkeypatch.setattr(files, "peek", peek)
    message, diagnostics = _run(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert message.startswith("refused") and "cannot read the results file" in message, message
    assert peeked.count(str(paths[1])) == 2  # ahead (said nothing), then in its turn (refused)
    assert set(typing_log) == {str(paths[0])}  # the first file was read whole before the refusal
    assert not _readers()
