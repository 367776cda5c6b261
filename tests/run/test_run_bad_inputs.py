"""Every bad input of issue 4, point 1: a located message, exit 2, no traceback, no output.

The expected stderr of each case sits beside its fixture (``fixtures/bad/<name>.expected``).
Regenerate them after an intended wording change with ``EVALSPEC_UPDATE_EXPECTED=1``, then
read the diff.
"""

from __future__ import annotations

import os
import re

import pytest
from run_helpers import FIXTURES, Workspace, plan_text

BAD = FIXTURES / "bad"

#: fixture -> plan variant (keyword arguments of plan_text)
CASES: dict[str, dict[str, str]] = {
    "unknown_candidate.jsonl": {},
    "duplicate.jsonl": {},
    "missing_error.jsonl": {"policy": "error"},
    "missing_over_max.jsonl": {},
    "version_change.jsonl": {},
    "cluster_differs.jsonl": {},
    "lacks_metadata.jsonl": {},
    "bad_outcome.jsonl": {},
    "missing_column.jsonl": {},
    "no_case.jsonl": {},
    "bad_repeat.jsonl": {},
    "no_rows_for_candidate.jsonl": {},
    "bad_timestamp.jsonl": {},
    "corrupt_line.jsonl": {},
    "not_object.jsonl": {},
    "corrupt.csv": {},
}


def test_every_fixture_has_a_case() -> None:
    on_disk = {p.name for p in BAD.iterdir() if p.suffix in (".jsonl", ".csv")}
    assert on_disk == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_refused_with_located_message(ws: Workspace, name: str) -> None:
    fixture = BAD / name
    ws.setup(fixture, plan_text("results" + fixture.suffix, **CASES[name]))
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code == 2, res.output
    err = res.stderr
    assert "Traceback" not in err and "internal error" not in err
    # the message names the file and, for row problems, the line
    assert ("results" + fixture.suffix) in err or "plan.yaml" in err
    expected_path = BAD / (name + ".expected")
    if os.environ.get("EVALSPEC_UPDATE_EXPECTED"):
        expected_path.write_text(err, encoding="utf-8")
    assert err == expected_path.read_text(encoding="utf-8")
    # a refused run leaves no output at all
    assert not (ws.path / "out").exists()


def test_version_change_names_versions_and_counts(ws: Workspace) -> None:
    ws.setup(BAD / "version_change.jsonl")
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code == 2
    assert "'v1' (4 rows), 'v2' (4 rows)" in res.stderr
    assert "will not pool" in res.stderr


def test_failed_run_keeps_previous_claim_untouched(ws: Workspace) -> None:
    ws.setup(FIXTURES / "ok" / "base.jsonl")
    assert ws.cli("run", "plan.yaml").exit_code == 0
    claim = ws.path / "out" / "claim.json"
    before = claim.read_bytes()
    ws.setup(BAD / "duplicate.jsonl")
    assert ws.cli("run", "plan.yaml").exit_code == 2
    assert claim.read_bytes() == before
    assert sorted(p.name for p in (ws.path / "out").iterdir()) == ["claim.json"]


def test_missing_results_file_points_at_plan(ws: Workspace) -> None:
    (ws.path / "plan.yaml").write_text(plan_text("nowhere.jsonl"), encoding="utf-8")
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code == 2
    first = res.stderr.splitlines()[0]
    assert re.match(r"plan\.yaml:\d+:\d+: data\.results: no such results file: .*nowhere\.jsonl "
                    r"\(got 'nowhere\.jsonl'\); paths are relative to the plan's folder", first), first
    assert "^" in res.stderr                                   # the excerpt with a caret under the value


def test_no_paired_case_is_refused_at_the_analysis_line(ws: Workspace) -> None:
    import json

    rows = [json.loads(line) for line in (FIXTURES / "ok" / "base.jsonl").read_text().splitlines()]
    for r in rows:  # B ran other cases than A
        if r["candidate"] == "B":
            r["case_id"] = r["case_id"] + "-b"
    (ws.path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (ws.path / "plan.yaml").write_text(plan_text(), encoding="utf-8")
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code == 2
    assert res.stderr.startswith("plan.yaml:19:5: analyses[1]: paired_difference: no case was run for both A and B")
    assert not (ws.path / "out").exists()
