"""Issue 13: documented size limits give a clear error at validate or read time.

The limits themselves (evalspec.limits) are tested here, not timings: a plan or results set
beyond a limit is refused with its place named, instead of a run that never finishes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec import limits
from hardening_helpers import Space, base_rows, first_line, plan_text


def test_title_too_long(space: Space) -> None:
    space.write(plan=plan_text().replace("title: Fixture plan", "title: " + "T" * (limits.MAX_TITLE_CHARS + 1)))
    result = space.cli("validate", "plan.yaml")
    assert result.exit_code == 1
    assert first_line(result) == (f"plan.yaml:3:8: title: {limits.MAX_TITLE_CHARS + 1} characters; at most "
                                  f"{limits.MAX_TITLE_CHARS} are accepted here; shorten it; details belong in a "
                                  "linked document")


def test_too_many_analyses(space: Space) -> None:
    many = "".join("  - {kind: proportion}\n" for _ in range(limits.MAX_ANALYSES + 1))
    plan = plan_text().replace("  - {kind: proportion}\n  - {kind: paired_difference, method: newcombe}\n", many)
    space.write(plan=plan)
    result = space.cli("validate", "plan.yaml")
    assert result.exit_code == 1
    assert first_line(result) == (f"plan.yaml:18:3: analyses: {limits.MAX_ANALYSES + 1} analyses; a plan may have at "
                                  f"most {limits.MAX_ANALYSES}; split the study into several plans")


def test_too_many_slices(space: Space) -> None:
    n = limits.MAX_SLICES + 1
    plan = plan_text() + "slices:\n" + "".join(f"  - {{name: s{i}, column: doc}}\n" for i in range(n))
    space.write(plan=plan)
    result = space.cli("validate", "plan.yaml")
    assert result.exit_code == 1
    assert f"slices: {n} slices; a plan may have at most {limits.MAX_SLICES}" in result.stderr


def test_too_many_slice_levels(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("evalspec.results.table.MAX_SLICE_LEVELS", 3)
    rows = base_rows()
    for i, r in enumerate(rows):
        r["topic"] = f"t{i}"
    space.write(rows, plan_text() + "slices: [{name: topic, column: topic}]\n")
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result) == ("plan.yaml:23:32: slices[0].column: slice column 'topic' has 16 distinct values, "
                                  "more than the 3 a slice may have; slice by a coarser column (a topic, not an id)")


def test_too_many_cases_for_the_case_table(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    """No limit on rows: the case table (candidates x cases) is limited, refused at the row of the case too many."""
    monkeypatch.setattr("evalspec.results.table.MAX_CASE_CELLS", 6)
    space.write()
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2
    assert first_line(result).startswith("results.jsonl:")
    assert ("this row names case 4: 2 candidate(s) x more than 3 cases is more than the 6 candidate x case cells "
            "evalspec analyses in one run") in result.output
    assert "analyse a preregistered sample of the cases" in result.output


def test_file_bigger_than_the_limit(tmp_path: Path) -> None:
    from evalspec.errors import InputError
    from evalspec.results.files import read_bytes

    (tmp_path / "r.jsonl").write_text(json.dumps({"a": 1}) * 10, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_bytes(tmp_path / "r.jsonl", "r.jsonl", limit=20)
    assert exc.value.render() == ("r.jsonl: the file is 80 bytes, more than the 20 evalspec reads; split the results "
                                  "into several files, or summarise them before the analysis")


def test_limits_are_documented() -> None:
    assert set(limits.LIMITS) == set(limits.__all__) - {"LIMITS"}
    for name, (value, what) in limits.LIMITS.items():
        assert getattr(limits, name) == value and what


def test_reading_a_small_file_allocates_little(tmp_path: Path) -> None:
    """Found by the fuzz suite: read(limit + 1) made Python allocate the whole 4 GiB limit per file."""
    import tracemalloc

    from evalspec.results.files import read_bytes

    (tmp_path / "r.jsonl").write_text('{"a": 1}\n' * 100, encoding="utf-8")
    tracemalloc.start()
    try:
        data = read_bytes(tmp_path / "r.jsonl", "r.jsonl")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(data) == 900
    assert peak < 1 << 20, peak
