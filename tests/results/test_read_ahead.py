"""The results file read ahead (:mod:`evalspec.results.ahead`): the same values and claim as the read made in
its turn, used only for the very file read, unchanged, and never made for a file the run would not read whole.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

from evalspec.claim import dumps  # noqa: E402
from evalspec.results import ahead, batches, readers  # noqa: E402
from evalspec.results.formats import jsonl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

_value = st.one_of(
    st.integers(-5, 5), st.sampled_from([0.5, 2.0, 1e300, 2.0**53 + 2]), st.booleans(), st.none(),
    st.sampled_from(["x", "é", "", "2026-10-01T12:00:00Z", "2026-10-02", "1"]), st.just([1, 2]),
)
_line = st.dictionaries(st.sampled_from(["a", "b", "c"]), _value, max_size=3)
_PAD = "".join(json.dumps({"a": i % 3, "b": f"p{i % 5}", "c": i % 2 == 0}) + "\n" for i in range(2500))


@pytest.fixture
def whole(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Small files read as a large one is (parsed whole by the batch reader, read ahead); the names of the threads
    that called Arrow's parse."""
    monkeypatch.setattr(readers, "SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(batches, "BATCH_BYTES", 4096)
    parsers: list[str] = []
    real = jsonl.jsonl_arrow_table

    def counted(*args: Any, **kw: Any) -> Any:
        parsers.append(threading.current_thread().name)
        return real(*args, **kw)

    monkeypatch.setattr(jsonl, "jsonl_arrow_table", counted)
    monkeypatch.setattr(ahead, "jsonl_arrow_table", counted)
    return parsers


def _plan(folder: Path, results: str = "r.jsonl", fmt: str = "auto") -> Path:
    plan = folder / "plan.yaml"
    plan.write_text(f"evalspec: 1\ndata:\n  results: {results}\n  format: {fmt}\n", encoding="utf-8")
    return plan


def _read(path: Path) -> Any:
    streamed = batches.stream_table(path, "jsonl", "r")
    if streamed is None:
        return None
    return (streamed.rows, streamed.source.sha256, streamed.source.display,
            {name: [(type(v).__name__, v) for v in list(col)] for name, col in streamed.columns.items()})


@settings(max_examples=40, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_line, min_size=1, max_size=20), pad=st.booleans())
def test_a_file_read_ahead_reads_as_it_reads_in_its_turn(tmp_path_factory: pytest.TempPathFactory,
                                                         whole: list[str], lines: list[dict[str, Any]],
                                                         pad: bool) -> None:
    folder = tmp_path_factory.mktemp("ahead")
    path = folder / "r.jsonl"
    path.write_text((_PAD if pad else "") + "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    in_turn = _read(path)
    whole.clear()
    with ahead.read_ahead(_plan(folder)):
        read_ahead = _read(path)
    assert read_ahead == in_turn
    if in_turn is not None:  # (Arrow parsed it: once, ahead)
        assert whole == ["evalspec-read-ahead"]


def test_a_run_read_ahead_gives_the_claim_of_a_run_that_reads_in_its_turn(tmp_path: Path, whole: list[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from evalspec.run import run_plan

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796126400")
    study = tmp_path / "study"
    shutil.copytree(ROOT / "examples" / "support-triage", study)
    plan = study / "plan.yaml"
    claim = dumps(run_plan(plan))
    assert whole == ["evalspec-read-ahead"]
    whole.clear()
    monkeypatch.setattr(ahead, "start", lambda plan_path: None)
    assert dumps(run_plan(plan)) == claim
    assert whole == ["MainThread"]


def _started(plan: Path) -> ahead.ReadAhead:
    made = ahead.start(plan)
    assert made is not None and made.thread is not None
    made.thread.join()
    assert made.thread.daemon and made.table is not None and made.source is not None
    return made


def test_a_file_changed_after_the_read_ahead_began_is_read_again(tmp_path: Path, whole: list[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(_PAD, encoding="utf-8")
    plan = _plan(tmp_path)
    for change in ("rewritten", "touched", "replaced"):
        made = _started(plan)
        if change == "rewritten":  # other values, the same size
            path.write_text(_PAD.replace('"p1"', '"q1"'), encoding="utf-8")
        elif change == "touched":
            st_ = path.stat()
            os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000_000))
        else:  # another file (inode) of the same bytes and times
            st_ = path.stat()
            other = tmp_path / "other.jsonl"
            other.write_bytes(path.read_bytes())
            os.utime(other, ns=(st_.st_atime_ns, st_.st_mtime_ns))
            other.replace(path)
        assert made.take(path, path.read_bytes()[: 1 << 16], "r") is None, change
    made = _started(plan)
    assert made.take(tmp_path / "r2.jsonl", path.read_bytes()[: 1 << 16], "r") is None  # another file
    made = _started(plan)
    assert made.take(path, b"another head", "r") is None
    made = _started(plan)
    assert made.take(path, path.read_bytes()[: 1 << 16], "r") is not None
    assert made.take(path, path.read_bytes()[: 1 << 16], "r") is None  # (given once)


def test_a_block_inside_a_block_for_the_same_plan_uses_the_outer_read_ahead(tmp_path: Path, whole: list[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(_PAD, encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    (other / "r.jsonl").write_text(_PAD, encoding="utf-8")
    with ahead.read_ahead(_plan(tmp_path)):
        outer = batches.READ_AHEAD.get()
        with ahead.read_ahead(tmp_path / "plan.yaml"):
            assert batches.READ_AHEAD.get() is outer
            read = _read(path)
        with ahead.read_ahead(_plan(other)):  # another plan: its own
            made = batches.READ_AHEAD.get()
            assert made not in (None, outer) and made.thread is not None
            made.thread.join()
    assert read is not None and whole == ["evalspec-read-ahead"] * 2 and batches.READ_AHEAD.get() is None


def test_a_read_ahead_left_unused_keeps_nothing(tmp_path: Path, whole: list[str]) -> None:
    (tmp_path / "r.jsonl").write_text(_PAD, encoding="utf-8")
    with ahead.read_ahead(_plan(tmp_path)):
        made = batches.READ_AHEAD.get()
        assert made is not None
    assert made.thread is not None
    made.thread.join()
    assert made.table is None and made.source is None and batches.READ_AHEAD.get() is None


@pytest.mark.parametrize("case", ["outside", "link outside", "fifo", "glob", "list", "csv", "parquet", "uri",
                                  "missing", "folder", "not yaml", "not a mapping", "too small", "streamed"])
def test_nothing_is_read_ahead_but_a_jsonl_file_in_the_plans_folder_read_whole(
        tmp_path: Path, whole: list[str], monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "r.jsonl").write_text(_PAD, encoding="utf-8")
    (tmp_path / "outside.jsonl").write_text(_PAD, encoding="utf-8")
    plan = _plan(folder)
    if case == "outside":
        plan = _plan(folder, "../outside.jsonl")
    elif case == "link outside":
        (folder / "link.jsonl").symlink_to(tmp_path / "outside.jsonl")
        plan = _plan(folder, "link.jsonl")
    elif case == "fifo":
        os.mkfifo(folder / "pipe.jsonl")
        plan = _plan(folder, "pipe.jsonl")
    elif case == "glob":
        plan = _plan(folder, "r*.jsonl")
    elif case == "list":
        plan = _plan(folder, "[r.jsonl]")
    elif case in ("csv", "parquet"):
        plan = _plan(folder, fmt=case)
    elif case == "uri":
        plan = _plan(folder, "s3://bucket/r.jsonl")
    elif case == "missing":
        plan = _plan(folder, "gone.jsonl")
    elif case == "folder":
        (folder / "dir.jsonl").mkdir()
        plan = _plan(folder, "dir.jsonl")
    elif case == "not yaml":
        plan.write_text("data: [\n", encoding="utf-8")
    elif case == "not a mapping":
        plan.write_text("- data\n", encoding="utf-8")
    elif case == "too small":
        monkeypatch.setattr(readers, "SMALL_FILE_BYTES", 1 << 20)
    else:  # large enough for the reduction while read, which reads files its own way
        monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    assert ahead.start(plan) is None
    assert whole == []


def test_the_run_command_reads_ahead_once_and_never_before_its_lock_check(tmp_path: Path, whole: list[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from evalspec.cli import cli

    study = tmp_path / "study"
    shutil.copytree(ROOT / "examples" / "support-triage", study)
    started: list[Path] = []
    real = ahead.start

    def recorded(plan_path: Any) -> Any:
        started.append(Path(plan_path))
        return real(plan_path)

    monkeypatch.setattr(ahead, "start", recorded)
    res = CliRunner().invoke(cli, ["run", str(study / "plan.yaml"), "--locked", "--no-report"])
    assert res.exit_code == 1 and started == [] and whole == []  # (refused unlocked: nothing read)
    res = CliRunner().invoke(cli, ["run", str(study / "plan.yaml"), "--no-report"])
    assert res.exit_code == 0, res.output
    assert started == [study / "plan.yaml"] and whole == ["evalspec-read-ahead"]  # (begun by the command, used by the run)
    assert batches.READ_AHEAD.get() is None
