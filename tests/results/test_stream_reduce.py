"""Attempt rows reduced to the case table while read give the in-memory path's claim, byte for byte.

Generated results (duplicates, extra and missing repeats, missing and unreadable outcomes, model
versions, bad timestamps, clusters that differ, slices, critical flags, several files in JSONL,
CSV and Parquet) are run through ``run_plan`` twice: in memory, and reduced while read
(:mod:`evalspec.results.stream_reduce`, forced on by ``EVALSPEC_STREAM_ROWS=0``). The claims
must be identical; where one refuses, so must the other, and the streaming refusal (its own
words: ``EXACT_REFUSAL_ROWS`` is set below every input) names a file for every finding and a
line for every row it locates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
import pyarrow.csv as pcsv  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from evalspec.errors import InputError  # noqa: E402
from evalspec.results import batches, stream_reduce  # noqa: E402

_TIMES = ["2026-10-01T12:00:00Z", "2026-10-02T08:30:00Z", "2026-10-01 09:00:00+02:00"]

PLAN = """evalspec: 1
id: stream-study
title: Streamed against in-memory
question: Is A better than B?
decision_owner: the study's owner
population: invented cases
data:
  results: {results}{missing_values}
  columns: {{candidate: candidate, repeat: repeat, outcome: passed, model_version: ver, timestamp: ts,
             critical: crit}}
candidates:
  A: {{model: m/a, version: {version_a}}}
  B: {{model: m/b, version: v1}}
baseline: B
units: {{case: case_id{cluster}}}
attempts: {{repeats: {repeats}, rule: {rule}{k}}}
missing: {{policy: {policy}, max_fraction: {max_fraction}}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, compare: [A, B], resamples: 100, seed: 3}}
  - {{kind: critical_failures}}
  - {{kind: slices}}{variation}
slices: [{{name: language, column: lang}}]
decision: {{minimum_improvement: 0.02}}
"""


@st.composite
def _study(draw: Any) -> dict[str, Any]:
    """A plan and rows that mostly pass the checks, with the odd row that should not."""
    n_cases = draw(st.integers(1, 9))
    repeats = draw(st.integers(1, 4))
    odd = draw(st.one_of(st.just(0), st.integers(1, 12)))  # how often a row is odd (0, half the time: never)
    declared = draw(st.booleans())  # data.missing_values: [ERROR]
    outcomes = st.sampled_from([True, False, True, False, True, False, None, "pass", 1, 0]
                               + (["ERROR"] if declared else []))
    version = {"A": draw(st.sampled_from(["v1", "v1", "v2", "mixed"])), "B": "v1"}
    rows = []
    for i in range(n_cases):
        case: Any = f"c{i}" if i % 3 else i  # ids as numbers too
        for cand in ("A", "B"):
            top = repeats + (draw(st.integers(0, 2)) if draw(st.integers(0, 4)) == 0 else 0)  # extra repeats
            for r in range(draw(st.sampled_from([0, 1, 1])), top + 1):
                if draw(st.integers(0, 9)) == 0:
                    continue  # a missing attempt: fewer repeats, an unpaired case
                ver = version[cand] if version[cand] != "mixed" else ("v1" if r % 2 else "v2")
                row = {"candidate": cand, "case_id": case, "doc": f"d{i % 3}", "repeat": r,
                       "passed": draw(outcomes), "ver": ver, "ts": draw(st.sampled_from(_TIMES)),
                       "crit": i % 4 == 0, "lang": "en" if i % 2 else "de"}
                if odd and draw(st.integers(0, odd * 10)) == 0:
                    key, value = draw(st.sampled_from([
                        ("passed", "maybe"), ("ts", "yesterday"), ("doc", "d9"), ("repeat", 1), ("candidate", "C"),
                        ("lang", "fr"), ("crit", None), ("lang", None), ("repeat", 70), ("case_id", None),
                        ("passed", "ERROR")]))
                    row[key] = value
                rows.append(row)
    rows = draw(st.permutations(rows)) if draw(st.booleans()) else rows
    if odd and rows and draw(st.integers(0, 3)) == 0:
        rows.append(dict(rows[draw(st.integers(0, len(rows) - 1))]))  # a duplicate attempt
    rule = draw(st.sampled_from(["first", "best_of_k", "majority", "mean", "pass_at_k"]))
    return {"rows": rows, "repeats": repeats, "rule": rule, "policy": draw(st.sampled_from(["count_as_fail", "exclude"])),
            "cluster": draw(st.booleans()), "version_a": "[v1, v2]" if version["A"] == "mixed" and
            draw(st.booleans()) else "v1", "max_fraction": draw(st.sampled_from([0.1, 0.5, 0.5])),
            "missing_values": declared}


def _write(folder: Path, rows: list[dict[str, Any]], fmt: str, files: int) -> str:
    """The rows in ``files`` files of format ``fmt``; the plan's ``data.results`` for them."""
    if fmt == "hive":  # a Hive-partitioned folder: lake/candidate=A/part-0.parquet, no candidate column
        for cand in sorted({str(r["candidate"]) for r in rows}):
            mine = [{k: v for k, v in r.items() if k != "candidate"} for r in rows if str(r["candidate"]) == cand]
            (folder / "lake" / f"candidate={cand}").mkdir(parents=True)
            for k in range(files):
                if mine[k::files]:
                    pq.write_table(pa.Table.from_pylist([{key: None if v is None else str(v) for key, v in r.items()}
                                                         for r in mine[k::files]]),
                                   folder / "lake" / f"candidate={cand}" / f"part-{k}.parquet", row_group_size=4)
        return "lake/"
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
                (folder / name).write_bytes((folder / name).read_bytes().replace(b'"', b""))
            else:
                try:  # native types where the values allow (one type per column), else text
                    table = pa.Table.from_pylist(part)
                except (pa.ArrowInvalid, pa.ArrowTypeError):
                    pass
                pq.write_table(table, folder / name, row_group_size=3)
        names.append(name)
    return json.dumps(names)


def _first_of_two(folder: Path) -> None:
    """``plan.yaml`` in ``folder``: its ``results.jsonl`` read with two repeats, the first attempt kept."""
    study = {"repeats": 2, "rule": "first", "policy": "count_as_fail", "max_fraction": 0.1, "cluster": False,
             "version_a": "v1"}
    (folder / "plan.yaml").write_text(_plan(study, "results.jsonl"), encoding="utf-8")


def _plan(study: dict[str, Any], results: str) -> str:
    rule = study["rule"]
    return PLAN.format(results=results, repeats=study["repeats"], rule=rule,
                       k=f", k: {min(2, study['repeats'])}" if rule in ("best_of_k", "pass_at_k") else "", policy=study["policy"],
                       max_fraction=study["max_fraction"], cluster=", cluster: doc" if study["cluster"] else "",
                       version_a=study["version_a"],
                       variation="\n  - {kind: run_variation}" if study["repeats"] > 1 else "",
                       missing_values="\n  missing_values: [ERROR]" if study.get("missing_values") else "")


def _run(plan: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> tuple[str, Any]:
    """``(claim or refusal, the refusal's diagnostics)``; asserts the path taken was the one asked for."""
    from evalspec.run import run_plan

    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0" if streamed else str(10**15))
    try:
        return json.dumps(run_plan(plan), sort_keys=True, default=str), None
    except InputError as exc:
        return "refused", exc.diagnostics


def _compare(folder: Path, monkeypatch: pytest.MonkeyPatch, seen: dict[str, int]) -> None:
    memory, _ = _run(folder / "plan.yaml", monkeypatch, streamed=False)
    engaged = []
    real = stream_reduce.stream_results

    def spy(*a: Any, **k: Any) -> Any:
        try:
            out = real(*a, **k)
        except InputError:
            engaged.append(True)  # refused while streaming
            raise
        engaged.append(out is not None)
        return out

    monkeypatch.setattr(stream_reduce, "stream_results", spy)
    streamed, diagnostics = _run(folder / "plan.yaml", monkeypatch, streamed=True)
    monkeypatch.setattr(stream_reduce, "stream_results", real)
    if memory == "refused" or streamed == "refused":
        assert memory == streamed == "refused"
        for d in diagnostics or []:
            assert d.file, d
    else:
        assert streamed == memory
    seen[("streamed " if any(engaged) else "in memory ") + ("refused" if memory == "refused" else "claim")] += 1


_PATHS = ("streamed claim", "streamed refused", "in memory claim", "in memory refused")


def _plain_study(*, duplicate: bool) -> dict[str, Any]:
    """Six cases in clusters, two attempts each: a claim both ways, or (one attempt twice) a refusal both ways."""
    rows = [{"candidate": cand, "case_id": f"c{i}", "doc": f"d{i % 3}", "repeat": r, "passed": (i + r) % 3 != 0,
             "ver": "v1", "ts": _TIMES[i % 2], "crit": i % 4 == 0, "lang": "en" if i % 2 else "de"}
            for i in range(6) for cand in ("A", "B") for r in (1, 2)]
    if duplicate:
        rows.append(dict(rows[5]))
    return {"rows": rows, "repeats": 2, "rule": "first", "policy": "exclude", "cluster": True, "version_a": "v1",
            "max_fraction": 0.5, "missing_values": False}


def test_streamed_reduction_gives_the_in_memory_claim(tmp_path_factory: pytest.TempPathFactory) -> None:
    seen = dict.fromkeys(_PATHS, 0)

    @settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None, derandomize=True,
              database=None)
    @given(study=_study(), fmt=st.sampled_from(["jsonl", "csv", "parquet", "hive"]), files=st.integers(1, 3))
    @example(study=_plain_study(duplicate=False), fmt="jsonl", files=2)
    @example(study=_plain_study(duplicate=False), fmt="parquet", files=1)
    @example(study=_plain_study(duplicate=True), fmt="csv", files=2)
    @example(study=_plain_study(duplicate=True), fmt="hive", files=1)
    def one(study: dict[str, Any], fmt: str, files: int) -> None:
        if not study["rows"]:
            return
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
            monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)  # the streaming path's own refusals
            monkeypatch.setattr(batches, "BATCH_BYTES", 512)  # several batches per file
            folder = tmp_path_factory.mktemp("stream")
            (folder / "plan.yaml").write_text(_plan(study, _write(folder, study["rows"], fmt, files)),
                                              encoding="utf-8")
            _compare(folder, monkeypatch, seen)

    one()
    # Not only handed back to the in-memory path: the four explicit studies are streamed (two claims, two
    # refusals) whatever else is drawn, and the drawn ones are streamed too. (Which studies Hypothesis draws
    # can differ with what ran before it in the process, so the drawn ones get a loose floor, not a count.)
    assert seen["streamed claim"] >= 2 + 3 and seen["streamed refused"] >= 2 + 3, seen


def test_a_large_results_set_is_refused_at_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A duplicate attempt in a results set too large for the in-memory path is refused at its line, the rest unread."""
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)
    monkeypatch.setattr(batches, "BATCH_BYTES", 4096)
    rows = [{"candidate": c, "case_id": f"c{i}", "doc": "d1", "repeat": r, "passed": True, "ver": "v1",
             "ts": _TIMES[0], "crit": False, "lang": "en"} for i in range(400) for c in "AB" for r in (1, 2)]
    rows.insert(30, dict(rows[3]))
    with (tmp_path / "results.jsonl").open("w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    _first_of_two(tmp_path)
    from evalspec.run import run_plan

    with pytest.raises(InputError) as err:
        run_plan(tmp_path / "plan.yaml")
    d = err.value.diagnostics[0]
    assert (d.line, "duplicate" in d.message) == (31, True), d


def test_what_counts_cannot_hold_goes_to_the_in_memory_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeat numbered 64 or more does not fit the masks: the rows are read in memory, same claim."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows = [{"candidate": c, "case_id": f"c{i}", "doc": "d1", "repeat": r, "passed": (i + r) % 3 > 0, "ver": "v1",
             "ts": _TIMES[0], "crit": False, "lang": "en"} for i in range(20) for c in "AB" for r in (1, 100)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _first_of_two(tmp_path)
    seen = dict.fromkeys(_PATHS, 0)
    _compare(tmp_path, monkeypatch, seen)
    assert seen["in memory claim"] == 1, seen


def test_what_counts_cannot_hold_is_refused_with_the_reason_when_too_large_for_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the rows the in-memory path may read, the reason is said instead (here: a repeat numbered 100)."""
    monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0")
    monkeypatch.setattr(stream_reduce, "IN_MEMORY_ROWS", -1)
    rows = [{"candidate": c, "case_id": f"c{i}", "doc": "d1", "repeat": r, "passed": True, "ver": "v1",
             "ts": _TIMES[0], "crit": False, "lang": "en"} for i in range(5) for c in "AB" for r in (1, 100)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _first_of_two(tmp_path)
    from evalspec.run import run_plan

    with pytest.raises(InputError) as err:
        run_plan(tmp_path / "plan.yaml")
    d = err.value.diagnostics[0]
    assert "results.jsonl:2 has repeat number 100" in d.message and d.key == "data.results", d


@pytest.mark.parametrize("rule", ["majority", "best_of_k"])
@pytest.mark.parametrize("policy", ["count_as_fail", "exclude"])
def test_the_equal_attempts_reading_is_cut_from_the_masks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          rule: str, policy: str) -> None:
    """A has three attempts where B has two: the verdict's equal-attempts reading, made from the masks, is the rows'."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    rows = [{"candidate": c, "case_id": f"c{i}", "doc": f"d{i % 4}", "repeat": r, "passed": (i * 7 + r * 3 + (c == "A"))
             % 4 != 0 if (i + r) % 11 else None, "ver": "v1", "ts": _TIMES[i % 3], "crit": False, "lang": "en" if i % 2 else "de"}
            for i in range(40) for c in "AB" for r in range(1, 4) if not (c == "B" and r == 3 and i % 3 == 0)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = {"repeats": 3, "rule": rule, "policy": policy, "max_fraction": 0.2, "cluster": True, "version_a": "v1"}
    (tmp_path / "plan.yaml").write_text(_plan(study, "results.jsonl"), encoding="utf-8")
    seen = dict.fromkeys(_PATHS, 0)
    _compare(tmp_path, monkeypatch, seen)
    assert seen["streamed claim"] == 1, seen
    claim, _ = _run(tmp_path / "plan.yaml", monkeypatch, streamed=True)
    assert "equal_attempts" in claim


def test_a_refusal_at_its_rows_lists_the_times_problems_in_their_place(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The fold types a batch's times (on the main thread) and puts their problems where the typing thread would
    have: after the repeats', before the record's (the in-memory path, which reads every row first, lists the
    record's before the times')."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    monkeypatch.setattr(stream_reduce, "EXACT_REFUSAL_ROWS", -1)
    rows = [{"candidate": c, "case_id": f"c{i}", "doc": "d1", "repeat": r, "passed": True, "ver": "v1",
             "ts": _TIMES[i % 2], "crit": False, "lang": "en"} for i in range(40) for c in "AB" for r in (1, 2)]
    rows[7]["ver"] = None  # (the record's problem, listed last)
    rows[5]["ts"] = "yesterday"  # (the time's)
    rows[9]["repeat"] = "x"  # (the repeat's, listed first)
    with (tmp_path / "results.jsonl").open("w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    _first_of_two(tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace("missing:", "record: [model_version]\nmissing:"),
                    encoding="utf-8")
    what, diagnostics = _run(plan, monkeypatch, streamed=True)
    assert what == "refused"
    got = [(d.line, d.message.split(" (")[0]) for d in diagnostics]
    assert got == [(10, "the repeat number is not an integer"), (6, "the timestamp is not an ISO 8601 time"),
                   (8, "the row lacks metadata the plan requires")], got
