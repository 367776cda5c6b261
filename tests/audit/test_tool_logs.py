"""Audit of claims made from tool logs: the re-run finds every file the run read, wherever it was started.

Regression: a claim made from lm-eval logs failed "Numbers reproduce" (the re-run folder held the
samples file but not the results file beside it), and a claim made from inspect_ai logs failed it
too (the provenance recorded the log paths relative to the working folder, so a re-run elsewhere
gave different paths). Both said the numbers did not reproduce when they did.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.cli import cli
from tests.results.logs_helpers import LMEVAL, STRONG, WEAK, write_plan

ENV = {"SOURCE_DATE_EPOCH": "1796126400", "EVALSPEC_NO_REPORT": "1"}


def _invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), env=ENV, catch_exceptions=False)


def _lm_eval_study(root: Path) -> Path:
    for name in ("coinflip-strong", "coinflip-weak"):
        shutil.copytree(LMEVAL / name, root / "logs" / name)
    return write_plan(root, """  results: logs/
  format: lm_eval
  select: {task: evalspec_gen, filter: first, case_field: id}
  candidate_names: {coinflip-strong: strong, coinflip-weak: weak}""", repeats=1, rule="first")


def _inspect_study(root: Path) -> Path:
    (root / "logs").mkdir(parents=True)
    for f in (STRONG, WEAK):
        shutil.copyfile(f, root / "logs" / f.name)
    return write_plan(root, """  results: logs/
  format: inspect
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}""")


def _checks(claim: Path, *extra: str) -> dict[str, dict]:
    res = _invoke("audit", str(claim), "--json", *extra)
    return {c["id"]: c for c in json.loads(res.stdout)["checks"]}


@pytest.mark.parametrize("study", [_lm_eval_study, _inspect_study], ids=["lm_eval", "inspect"])
def test_a_claim_from_tool_logs_reproduces_when_run_from_another_folder(
        study, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = study(tmp_path / "study")
    monkeypatch.chdir(tmp_path)  # the run starts one folder above the plan, as `evalspec run study/plan.yaml`
    res = _invoke("run", "study/plan.yaml", "--no-report")
    assert res.exit_code == 0, res.output
    claim = plan.parent / "out" / "claim.json"
    record = json.loads(claim.read_text(encoding="utf-8"))
    read = [f["path"] for entry in record["data"]["files"] for f in entry["provenance"]["files"]]
    assert read and all(p.startswith("logs/") for p in read), read  # relative to the plan, not the working folder
    assert record["systematic_limits"]["detected"] or study is _inspect_study
    for limit in record["systematic_limits"]["detected"]:  # lm-eval's reduced repeats name the log the same way
        assert " log logs/" in limit["message"] and "study/" not in limit["message"], limit
    checks = _checks(claim)
    assert checks["data_fingerprints"]["status"] == "pass", checks["data_fingerprints"]
    assert checks["reproduction"]["status"] == "pass", checks["reproduction"]


def test_the_lm_eval_results_file_is_fingerprinted_too(tmp_path: Path) -> None:
    plan = _lm_eval_study(tmp_path)
    assert _invoke("run", str(plan), "--no-report").exit_code == 0
    results = next((tmp_path / "logs" / "coinflip-weak").glob("results_*.json"))
    results.write_text(results.read_text(encoding="utf-8").replace('"model_name": "coinflip-weak"',
                                                                    '"model_name": "coinflip-weak" '), encoding="utf-8")
    fp = _checks(plan.parent / "out" / "claim.json")["data_fingerprints"]
    assert fp["status"] == "fail"
    assert any(e.startswith(f"logs/coinflip-weak/{results.name}: SHA-256 ") for e in fp["evidence"]), fp


def test_lm_eval_data_given_elsewhere_brings_its_results_file(tmp_path: Path) -> None:
    plan = _lm_eval_study(tmp_path / "study")
    assert _invoke("run", str(plan), "--no-report").exit_code == 0
    archive = tmp_path / "archive"
    shutil.copytree(plan.parent / "logs", archive)
    shutil.rmtree(plan.parent / "logs")
    given = sorted(str(p) for p in archive.glob("*/samples_evalspec_gen_*.jsonl"))
    checks = _checks(plan.parent / "out" / "claim.json", *[x for g in given for x in ("--data", g)])
    assert checks["data_fingerprints"]["status"] == "pass", checks["data_fingerprints"]
    assert checks["reproduction"]["status"] == "pass", checks["reproduction"]



def _locked_inspect_run(root: Path, columns: str = "") -> Path:
    (root / "logs").mkdir(parents=True)
    plan = write_plan(root, """  results: logs/
  format: inspect
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}""" + columns)
    assert _invoke("lock", str(plan)).exit_code == 0  # before the logs exist (the lock records that)
    for f in (STRONG, WEAK):
        shutil.copyfile(f, root / "logs" / f.name)
    assert _invoke("run", str(plan), "--no-report").exit_code == 0
    return plan.parent / "out" / "claim.json"


def test_unmapped_log_columns_are_blamed_on_the_plan_not_on_the_logs(tmp_path: Path) -> None:
    """The logs carry run times and versions; a plan that does not map them must not hear 'the results carry none'."""
    checks = _checks(_locked_inspect_run(tmp_path))
    when, versions = checks["locked_before_results"], checks["model_versions"]
    assert when["status"] == "warning" and when["sentence"].startswith(
        "The plan maps no time column (data.columns.timestamp), so the claim holds no run times")
    assert versions["status"] == "warning" and versions["sentence"].startswith(
        "The plan maps no model-version column (data.columns.model_version)")
    assert "The results carry no timestamps" not in when["sentence"]


def test_mapped_log_columns_let_the_audit_date_the_results(tmp_path: Path) -> None:
    checks = _checks(_locked_inspect_run(tmp_path, "\n  columns: {model_version: model_version, timestamp: timestamp}"))
    when = checks["locked_before_results"]
    assert when["status"] == "fail"  # the fixture logs were written on 2026-11-29, before this lock (SOURCE_DATE_EPOCH)
    assert any(e.startswith("first result 2026-11-29T11:36") for e in when["evidence"]), when
    versions = checks["model_versions"]
    assert versions["status"] == "pass" and versions["sentence"] == (
        "Every candidate ran as one model version (the locked plan declares no version to check it against).")
