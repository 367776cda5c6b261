"""Schemes Arrow has no filesystem for (``hf://``, ``az://``, ...) are read through ``fsspec``.

An in-process store built on ``fsspec``'s memory filesystem stands in for them here (scheme
``memtest://``; each opening gets its own handle, as a real store's does: the memory filesystem
itself hands every opening the one shared file object, so a Parquet object's hashing pass and its
ranged reads would move each other's position, which evalspec refuses as a changed object). It
takes exactly the path such a scheme takes (:func:`evalspec.results.lake._filesystem` falls back to
``fsspec.core.url_to_fs`` wrapped in Arrow's ``PyFileSystem``), without a network. The claim
read from it equals the claim of the same bytes read as local files but for the paths, streamed
or read into memory; a missing key is named; no ETag is recorded (this store sends none).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
fsspec = pytest.importorskip("fsspec")
import pyarrow.parquet as pq  # noqa: E402

from fsspec.implementations.memory import MemoryFile, MemoryFileSystem  # noqa: E402

from evalspec.errors import InputError  # noqa: E402


class _Store(MemoryFileSystem):
    """fsspec's memory filesystem with a handle of its own for each opening to read."""

    protocol = ("memtest",)
    store: dict[str, Any] = {}  # (its own objects, apart from memory://'s)
    pseudo_dirs = [""]

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, str) and path.startswith("memtest://"):
            path = path[len("memtest://"):]
        return super()._strip_protocol(path)

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        path = self._strip_protocol(path)
        if mode == "rb" and path in self.store:
            return MemoryFile(self, path, self.store[path].getvalue())
        return super()._open(path, mode, **kwargs)


fsspec.register_implementation("memtest", _Store, clobber=True)

PLAN = """evalspec: 1
id: fsspec-study
title: Read through fsspec
question: Is A better than B?
decision_owner: the study's owner
population: invented cases
data:
  results: {results}
  format: {fmt}
  columns: {{candidate: candidate, repeat: repeat, outcome: passed}}
candidates:
  A: {{model: m/a}}
  B: {{model: m/b}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts: {{repeats: 2, rule: first}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, compare: [A, B], resamples: 100, seed: 3}}
decision: {{minimum_improvement: 0.02}}
"""


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"candidate": c, "case_id": f"c{i}", "doc": f"d{i % 9}", "repeat": r, "passed": (i * 5 + r + (c == "A")) % 4 > 0}
            for i in range(n) for c in "AB" for r in (1, 2)]


def _bytes(rows: list[dict[str, Any]], fmt: str) -> bytes:
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows), sink, row_group_size=40)
    return sink.getvalue().to_pybytes()


def _claim(plan: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> dict[str, Any]:
    from evalspec.results import stream_read
    from evalspec.run import run_plan

    engaged: list[bool] = []
    real = stream_read._stream_object

    def spy(*a: Any, **k: Any) -> Any:
        engaged.append(real(*a, **k))
        return engaged[-1]

    monkeypatch.setattr(stream_read, "_stream_object", spy)
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0" if streamed else str(10**15))
    claim = json.loads(json.dumps(run_plan(plan), sort_keys=True, default=str))
    assert engaged == ([True, True] if streamed and "memtest://" in plan.read_text() else []), engaged
    return claim


def _numbers(claim: dict[str, Any]) -> Any:
    return [claim["analyses"], claim["decision"], claim["coverage"]]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_an_fsspec_scheme_gives_the_local_claim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    monkeypatch.chdir(tmp_path)
    mem = fsspec.filesystem("memtest")
    rows = _rows(150)
    parts = {"part-0": rows[:250], "part-1": rows[250:]}
    local = tmp_path / "local"
    stored = {}
    for name, cut in parts.items():
        data = _bytes(cut, fmt)
        with mem.open(f"/fsspec-lake/{fmt}/day=2026-10-01/{name}.{fmt}", "wb") as out:
            out.write(data)
        (local / "day=2026-10-01").mkdir(parents=True, exist_ok=True)
        (local / "day=2026-10-01" / f"{name}.{fmt}").write_bytes(data)
        stored[name] = hashlib.sha256(data).hexdigest()
    (tmp_path / "uri.yaml").write_text(PLAN.format(results=f"memtest://fsspec-lake/{fmt}/", fmt=fmt), encoding="utf-8")
    (tmp_path / "local.yaml").write_text(PLAN.format(results="local/", fmt=fmt), encoding="utf-8")
    reference = _claim(tmp_path / "local.yaml", monkeypatch, streamed=False)
    memory = _claim(tmp_path / "uri.yaml", monkeypatch, streamed=False)
    streamed = _claim(tmp_path / "uri.yaml", monkeypatch, streamed=True)
    assert _numbers(memory) == _numbers(reference)
    assert streamed["data"] == memory["data"] and _numbers(streamed) == _numbers(memory)
    files = memory["data"]["files"]
    assert [f["sha256"] for f in files] == [stored["part-0"], stored["part-1"]]
    for f in files:
        assert f["path"].startswith(f"memtest://fsspec-lake/{fmt}/day=2026-10-01/part-")
        assert f["location"]["partition"] == {"day": "2026-10-01"} and "etag" not in f["location"]


def test_a_missing_fsspec_object_is_named(tmp_path: Path) -> None:
    from evalspec.run import run_plan

    (tmp_path / "plan.yaml").write_text(PLAN.format(results="memtest://fsspec-lake/none/results.jsonl", fmt="jsonl"),
                                        encoding="utf-8")
    with pytest.raises(InputError) as err:
        run_plan(tmp_path / "plan.yaml")
    d = err.value.diagnostics[0]
    assert d.file == "memtest://fsspec-lake/none/results.jsonl" and "no object or prefix" in d.message, d
