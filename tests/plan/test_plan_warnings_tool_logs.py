"""validate warns when a plan reads tool logs without naming the run-time / version columns the adapter writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.cli import cli

PLAN = """evalspec: 1
id: logs
title: Strong against weak
question: Should we move to strong?
decision_owner: evaluation lead
population: arithmetic questions
data:
  results: logs/
  format: {fmt}
{columns}candidates:
  strong: {{model: s}}
  weak: {{model: w}}
baseline: weak
units: {{case: case_id}}
analyses: [{{kind: paired_difference}}]
"""


def _validate(tmp_path: Path, fmt: str, columns: str = "") -> str:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(fmt=fmt, columns=columns), encoding="utf-8")
    res = CliRunner().invoke(cli, ["validate", str(plan)])
    assert res.exit_code == 0, res.output  # a warning leaves the plan valid
    return res.output


@pytest.mark.parametrize(("fmt", "text"), [
    ("inspect", "the inspect logs give the model version served and the run time of each attempt, but data.columns "
                "does not name them: the claim will not record them, so a model update inside the run goes unseen and "
                "the audit cannot show the plan was locked before the results (got 'inspect'); add data.columns: "
                "{model_version: model_version, timestamp: timestamp}"),
    ("lm_eval", "the lm_eval logs give the run time of each attempt, but data.columns does not name it: the claim will "
                "not record it, so the audit cannot show the plan was locked before the results (got 'lm_eval'); add "
                "data.columns: {timestamp: timestamp}"),
])
def test_unmapped_log_columns_are_a_located_warning(tmp_path: Path, fmt: str, text: str) -> None:
    out = _validate(tmp_path, fmt)
    assert f"plan.yaml:9:11: data.format: warning: {text}" in out, out


def test_mapped_columns_and_tables_give_no_such_warning(tmp_path: Path) -> None:
    assert "data.columns does not name" not in _validate(
        tmp_path, "inspect", "  columns: {model_version: model_version, timestamp: timestamp}\n")
    assert "data.columns does not name" not in _validate(tmp_path, "jsonl")
