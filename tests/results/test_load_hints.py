"""What a refused results table adds to the message: the data.candidate_names line, every accepted outcome, the CSV separator."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from evalspec.cli import cli

PLAN = """evalspec: 1
id: names
title: Two models
question: Should we move to model a?
decision_owner: evaluation lead
population: support questions
data:
  results: r.jsonl
  columns: {{candidate: model, outcome: ok}}
candidates:
  a: {{model: {a}}}
  b: {{model: {b}}}
baseline: b
units: {{case: case}}
analyses: [{{kind: paired_difference}}]
"""


def _run(tmp_path: Path, model_a: str, model_b: str = "gpt-b") -> str:
    rows = [{"model": m, "case": f"c{i}", "ok": i % 3 != 0} for m in ("gpt-a", "gpt-b") for i in range(12)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN.format(a=model_a, b=model_b), encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml"), "--no-report"])
    assert res.exit_code == 2, res.output
    return res.stderr


def test_names_that_are_the_candidates_models_get_the_mapping_to_write(tmp_path: Path) -> None:
    err = _run(tmp_path, "gpt-a")
    assert ("r.jsonl:1: model: unknown candidate 'gpt-a', 'gpt-b'; the plan's candidates are a, b (got 'gpt-a'); "
            "the results name candidates by their model; map them to the plan's keys with "
            "data.candidate_names: {gpt-a: a, gpt-b: b}") in err
    assert "remove these rows" not in err


def test_names_that_match_no_model_are_offered_the_mapping_among_the_fixes(tmp_path: Path) -> None:
    err = _run(tmp_path, "vendor/a", "vendor/b")
    assert ("(got 'gpt-a'); map the name to a plan key with data.candidate_names: {NAME: KEY}, add it under "
            "`candidates` in the plan, or remove these rows") in err


def test_only_the_names_that_are_models_are_mapped(tmp_path: Path) -> None:
    err = _run(tmp_path, "vendor/a")  # gpt-b is b's model; gpt-a is no candidate's
    assert "data.candidate_names: {gpt-b: b}" in err and "gpt-a: a" not in err


def test_an_outcome_that_is_not_pass_fail_lists_every_accepted_spelling(tmp_path: Path) -> None:
    rows = [{"model": m, "case": f"c{i}", "ok": "ERROR" if i == 3 else "yes"} for m in ("a", "b") for i in range(12)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN.format(a="gpt-a", b="gpt-b"), encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml"), "--no-report"])
    assert res.exit_code == 2
    assert ("r.jsonl:4: ok: the outcome is not a pass/fail value (got 'ERROR'); use true/false, 1/0, pass/fail, C/I, "
            "correct/incorrect or yes/no; list values that mean 'no outcome' (ERROR, timeout) in "
            "data.missing_values;") in res.stderr


def test_a_semicolon_separated_csv_is_named_as_such_first(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("model;case;ok\n" + "".join(f"{m};c{i};1\n" for m in "ab" for i in range(12)),
                                    encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN.format(a="gpt-a", b="gpt-b").replace("r.jsonl", "r.csv"),
                                        encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml"), "--no-report"])
    assert res.exit_code == 2
    first = res.stderr.splitlines()[0]
    assert first.endswith("r.csv:1: the header is one column, 'model;case;ok': the file is separated by semicolons, "
                          "and evalspec reads CSV separated by commas; save it with commas (a spreadsheet's "
                          "'CSV UTF-8, comma-delimited'), or as JSONL"), first


def test_a_column_the_results_lack_gets_the_closest_column_found(tmp_path: Path) -> None:
    import shutil

    from tests.results.logs_helpers import STRONG, WEAK, write_plan

    (tmp_path / "logs").mkdir()
    for f in (STRONG, WEAK):
        shutil.copyfile(f, tmp_path / "logs" / f.name)
    plan = write_plan(tmp_path, """  results: logs/
  format: inspect
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}
  columns: {outcome: passed, timestamp: timestamps}""", cluster="Doc-ID")
    plan.write_text(plan.read_text(encoding="utf-8").replace("case: case_id", "case: sample"), encoding="utf-8")
    res = CliRunner().invoke(cli, ["run", str(plan), "--no-report"])
    assert res.exit_code == 2
    err = res.stderr
    # a typo, a name differing in case and separators, the name the adapters give the role
    assert ("the plan names column 'timestamps' for data.columns.timestamp, but no results file has it; did you mean "
            "'timestamp'? columns found in") in err
    assert "column 'Doc-ID' for units.cluster, but no results file has it; did you mean 'doc_id'?" in err
    assert "column 'passed' for data.columns.outcome, but no results file has it; did you mean 'outcome'?" in err
    assert "column 'sample' for units.case, but no results file has it; did you mean 'case_id'?" in err


def test_repeats_without_a_repeat_column_are_called_what_they_are(tmp_path: Path) -> None:
    rows = [{"model": m, "case": f"c{i}", "ok": (i + r) % 2 == 0} for m in ("a", "b") for i in range(12) for r in range(3)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(PLAN.format(a="gpt-a", b="gpt-b"), encoding="utf-8")  # three rows a case
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml"), "--no-report"])
    assert res.exit_code == 2
    assert ("r.jsonl:2: row: duplicate (candidate, case, repeat): the same attempt appears twice (first copy at "
            in res.stderr)
    assert ("the results have no repeat column ('repeat', data.columns.repeat), so every attempt of a case counts as "
            "repeat 1: if these are repeats, add a column numbering them 1, 2, ... (and set attempts.repeats); else "
            "remove the duplicates") in res.stderr
