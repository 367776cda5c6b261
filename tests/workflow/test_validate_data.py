"""``evalspec validate PLAN --data PATH``: a pilot checked as ``run`` reads it, nothing computed or recorded."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workflow_helpers import ROOT, cli, copy_logs, files_below, study_plan  # noqa: E402


def _study(tmp_path: Path, plan: str | None = None) -> Path:
    (tmp_path / "plan.yaml").write_text(plan or study_plan(), encoding="utf-8")
    copy_logs(tmp_path / "pilot")
    return tmp_path


def test_a_good_pilot_is_read_and_nothing_is_written_or_recorded(tmp_path: Path) -> None:
    study = _study(tmp_path)
    before = files_below(study)
    done = cli(study, "validate", "plan.yaml", "--data", "pilot")
    assert done.exit_code == 0, done.output
    assert "plan.yaml: --data pilot: read as the plan says (60 rows, candidates strong, weak, 10 cases, 3 " \
           "repeat(s) per case); nothing computed, no look recorded" in done.stdout
    assert files_below(study) == before  # no claim, no out/, no ledger, no lock
    quiet = cli(study, "validate", "plan.yaml", "--data", "pilot", "-q")
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""


def test_json_reports_what_was_read(tmp_path: Path) -> None:
    study = _study(tmp_path)
    done = cli(study, "validate", "plan.yaml", "--data", "pilot/coinflip-strong_p0.9.eval", "--data",
               "pilot/coinflip-weak_p0.6.eval", "--format", "json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)["plans"][0]["data"]
    assert data["status"] == "ok" and data["rows"] == 60 and data["cases"] == 10
    assert data["repeats"] == {"planned": 3, "observed_min": 3, "observed_max": 3}


def _run_messages(study: Path, results: str) -> list[str]:
    """The located problem lines ``run`` prints for a plan reading ``results``."""
    text = (study / "plan.yaml").read_text(encoding="utf-8")
    run_plan = study / "run-plan.yaml"
    run_plan.write_text(re.sub(r"results: \S+", f"results: {results}", text), encoding="utf-8")
    done = cli(study, "run", "run-plan.yaml", "--no-report")
    assert done.exit_code == 2, done.output
    return [line.replace("run-plan.yaml", "plan.yaml") for line in done.stderr.splitlines()]


def test_a_wrong_column_gets_runs_located_message_with_a_guess(tmp_path: Path) -> None:
    study = _study(tmp_path, study_plan().replace("cluster: doc_id", "cluster: docid"))
    done = cli(study, "validate", "plan.yaml", "--data", "pilot")
    assert done.exit_code == 2, done.output
    assert "units.cluster" in done.stderr and "did you mean 'doc_id'?" in done.stderr
    assert "plan.yaml: --data pilot: 1 problem; `evalspec run` would refuse these results" in done.stderr
    for line in _run_messages(study, "pilot/"):  # the same located lines as the run gives
        if "units.cluster" in line:
            assert line in done.stderr.splitlines()


def test_a_candidate_name_the_tool_writes_differently_is_named(tmp_path: Path) -> None:
    study = _study(tmp_path, study_plan().replace("coinflip/weak: weak", "coinflip/weak-v2: weak"))
    done = cli(study, "validate", "plan.yaml", "--data", "pilot")
    assert done.exit_code == 2, done.output
    assert "'coinflip/weak'" in done.stderr and "data.candidate_names: {coinflip/weak: weak}" in done.stderr


def test_a_table_with_an_unknown_candidate_close_to_a_plan_key_gets_did_you_mean(tmp_path: Path) -> None:
    rows = [{"candidate": c, "case_id": f"q{i}", "outcome": True} for i in range(3) for c in ("strong", "waek")]
    (tmp_path / "pilot.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = study_plan("results.jsonl").replace("format: inspect", "format: jsonl").replace(
        "columns: {model_version: model_version, timestamp: timestamp}", "columns: {repeat: null}").replace(
        "cluster: doc_id", "cluster: null").replace("repeats: 3, rule: majority", "repeats: 1, rule: first")
    (tmp_path / "plan.yaml").write_text(plan, encoding="utf-8")
    done = cli(tmp_path, "validate", "plan.yaml", "--data", "pilot.jsonl")
    assert done.exit_code == 2, done.output
    assert "unknown candidate 'waek'" in done.stderr and "did you mean 'weak'?" in done.stderr


def test_missing_data_path_and_several_plans_are_usage_errors(tmp_path: Path) -> None:
    study = _study(tmp_path)
    done = cli(study, "validate", "plan.yaml", "--data", "nothere.jsonl")
    assert done.exit_code == 2 and "nothere.jsonl: no such file or folder (given with --data)" in done.stderr
    assert "not read" in done.stderr
    both = cli(study, "validate", "plan.yaml", "plan.yaml", "--data", "pilot")
    assert both.exit_code == 2 and "give exactly one PLAN" in both.output


def test_the_starter_maps_only_what_every_format_has_and_points_at_a_pilot_check() -> None:
    from evalspec.plan.starter import starter_text

    text = starter_text()
    plan = yaml.safe_load(text)
    assert "model_version" not in plan["data"]["columns"] and "model_version" not in plan["record"]
    assert "evalspec validate plan.yaml --data pilot.jsonl" in text


def test_a_promptfoo_pilot_passes_with_the_starters_mapping(tmp_path: Path) -> None:
    """The issue's finding: the starter mapped a model_version column promptfoo logs lack."""
    from evalspec.plan.starter import starter_text

    log = ROOT / "tests" / "results" / "fixtures" / "promptfoo" / "coinflip_repeat3.json"
    (tmp_path / "pilot.json").write_bytes(log.read_bytes())
    text = starter_text().replace("format: auto", "format: promptfoo").replace("cluster: source_doc",
                                                                                 "cluster: metadata.doc")
    text = text.replace("max_fraction: 0.02", "max_fraction: 0.5")  # this pilot lost a few outcomes to errors
    text = text.replace("  outcome:\n", "  candidate_names: {coinflip-strong: candidate, coinflip-weak: current}\n"
                        "  outcome:\n", 1)
    (tmp_path / "plan.yaml").write_text(text, encoding="utf-8")
    done = cli(tmp_path, "validate", "plan.yaml", "--data", "pilot.json")
    assert done.exit_code == 0, done.output
    assert "read as the plan says (" in done.stdout and "candidates candidate, current, 10 cases" in done.stdout


def test_lock_records_existing_data_and_the_audit_tells_a_pilot_from_a_look(tmp_path: Path) -> None:
    # 1. an honest study: the plan is locked before its results exist
    honest = tmp_path / "honest"
    honest.mkdir()
    (honest / "plan.yaml").write_text(study_plan(minimum_units=2), encoding="utf-8")
    assert cli(honest, "lock", "plan.yaml").exit_code == 0
    lock = json.loads((honest / "plan.yaml.lock.json").read_text(encoding="utf-8"))
    assert lock["existing_data"]["state"] == "prior_to_creation" and lock["existing_data"]["files"] == []
    # 2. results collected first, then locked: the lock lists them, and the audit fails the claim analysing them
    looked = tmp_path / "looked"
    looked.mkdir()
    (looked / "plan.yaml").write_text(study_plan(minimum_units=2).replace(", timestamp: timestamp", ""),
                                      encoding="utf-8")  # no run times: the lock's declaration decides
    copy_logs(looked / "logs")
    done = cli(looked, "lock", "plan.yaml")
    assert done.exit_code == 0 and "already exist; the lock records them as existing data" in done.stderr
    lock = json.loads((looked / "plan.yaml.lock.json").read_text(encoding="utf-8"))
    assert lock["existing_data"]["state"] == "prior_to_analysis" and len(lock["existing_data"]["files"]) == 2
    assert cli(looked, "run", "plan.yaml", "--no-report").exit_code == 0
    audit = cli(looked, "audit", "out/claim.json", "--json", "--no-reproduce")
    check = next(c for c in json.loads(audit.stdout)["checks"] if c["id"] == "locked_before_results")
    assert check["status"] == "warning" and "already existed when the plan was locked" in check["sentence"]
    assert "nothing shows this plan was fixed before these results" in check["sentence"]
    # 3. a pilot left at the results path when locking, then replaced by fresh results: not a look
    pilot = tmp_path / "pilot"
    pilot.mkdir()
    (pilot / "plan.yaml").write_text(TABLE_PLAN, encoding="utf-8")
    _table(pilot / "results.jsonl", seed=1)  # the pilot
    assert cli(pilot, "validate", "plan.yaml", "--data", "results.jsonl").exit_code == 0
    assert cli(pilot, "lock", "plan.yaml").exit_code == 0
    _table(pilot / "results.jsonl", seed=2, start="2026-12-02T10:00:00Z")  # the study's own results
    assert cli(pilot, "run", "plan.yaml", "--no-report").exit_code == 0
    audit = cli(pilot, "audit", "out/claim.json", "--json", "--no-reproduce")
    check = next(c for c in json.loads(audit.stdout)["checks"] if c["id"] == "locked_before_results")
    assert check["status"] != "fail", check
    assert "the claim analyses none of the files that existed when the plan was locked" in check["evidence"]


TABLE_PLAN = """\
evalspec: 1
id: table-study
title: A against B
question: Should we move from B to A?
decision_owner: test owner
population: invented cases
data:
  results: results.jsonl
  columns: {repeat: null, timestamp: ts}
candidates:
  A: {model: m-a}
  B: {model: m-b}
baseline: B
units: {case: case_id}
analyses:
  - {kind: paired_difference, method: newcombe}
decision: {minimum_units: 2}
systematic_limits: [Invented cases.]
"""


def _table(path: Path, seed: int, start: str = "2026-11-01T10:00:00Z") -> None:
    import random

    rng = random.Random(seed)
    rows = [{"candidate": c, "case_id": f"q{i:02d}", "outcome": rng.random() < 0.7, "ts": start}
            for i in range(20) for c in ("A", "B")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_pilot_whose_model_version_changes_is_refused_at_its_rows(tmp_path: Path) -> None:
    """The guide 'Repeat AI evaluations and report uncertainty honestly': do not pool runs across a model update without identifying the versions."""
    from workflow_helpers import table_plan, write_table

    (tmp_path / "plan.yaml").write_text(table_plan(), encoding="utf-8")
    write_table(tmp_path / "pilot.jsonl", seed=1, p_a=0.9, p_b=0.5, n=10)
    rows = [json.loads(line) for line in (tmp_path / "pilot.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[-2]["model_version"] = "v2"  # candidate A's last case was served by an updated model
    (tmp_path / "pilot.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = cli(tmp_path, "validate", "plan.yaml", "--data", "pilot.jsonl")
    assert done.exit_code == 2, done.output
    assert "pilot.jsonl:" in done.stderr and "'v2'" in done.stderr and "version" in done.stderr


def test_existing_data_is_found_for_every_pattern_and_outside_the_folder(tmp_path: Path) -> None:
    from evalspec.commands.validate_data import existing_data
    from workflow_helpers import table_plan, write_table

    study = tmp_path / "study"
    study.mkdir()
    write_table(tmp_path / "outside.jsonl", seed=1, p_a=0.9, p_b=0.5, n=3)
    write_table(study / "b.jsonl", seed=2, p_a=0.9, p_b=0.5, n=3)
    plan = table_plan().replace("results: results.jsonl", "results: [missing.jsonl, ../outside.jsonl, b.jsonl]")
    (study / "plan.yaml").write_text(plan, encoding="utf-8")
    found = existing_data(study / "plan.yaml")
    assert found["state"] == "prior_to_analysis"
    assert sorted(f["path"] for f in found["files"]) == ["../outside.jsonl", "b.jsonl"]
    assert all(len(f["sha256"]) == 64 for f in found["files"])
