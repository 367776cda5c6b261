"""The columns each kind declares (``columns(params, plan)``) are checked before anything runs:
a missing one is an error at the plan line that names it, whether the key is one of the
analysis's parameters or a top-level key such as a declared slice."""

from __future__ import annotations

import pytest
from run_helpers import FIXTURES, Workspace, plan_text


def _plan(extra_analyses: str, slices: str = "") -> str:
    text = plan_text("results.jsonl")
    text = text.replace("  - {kind: paired_difference, method: newcombe}\n",
                        "  - {kind: paired_difference, method: newcombe}\n" + extra_analyses)
    return text + slices


@pytest.mark.parametrize(("analyses", "slices", "key", "column", "where"), [
    ("  - {kind: clustered_mean, score: rubric}\n", "", "analyses[2].score", "rubric", "score: rubric"),
    ("  - {kind: critical_failures, flag: severe}\n", "", "analyses[2].flag", "severe", "flag: severe"),
    ("  - {kind: slices, exploratory: [lang]}\n", "", "analyses[2].exploratory[0]", "lang", "exploratory: [lang]"),
    ("  - {kind: slices}\n", "slices:\n  - {name: topic, column: topic}\n", "slices[0].column", "topic",
     "column: topic"),
])
def test_a_missing_column_is_refused_at_its_plan_line(ws: Workspace, analyses: str, slices: str, key: str,
                                                       column: str, where: str) -> None:
    plan = _plan(analyses, slices)
    ws.setup(FIXTURES / "ok" / "base.jsonl", plan=plan)
    res = ws.cli("run", "plan.yaml")
    assert res.exit_code == 2, res.output
    line = next(i for i, text in enumerate(plan.splitlines(), start=1) if where in text)
    assert f"plan.yaml:{line}:" in res.stderr and key in res.stderr, res.stderr
    assert f"column {column!r} is not in the results" in res.stderr
    assert "columns found: " in res.stderr and "Traceback" not in res.stderr
    assert not (ws.path / "out" / "claim.json").exists()
