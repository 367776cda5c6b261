"""Each audit check fails on its own crafted case: the drifts named in "Repeat AI evaluations and report
uncertainty honestly" (peeking, pooling across a model update, a subgroup chosen after the results,
best-of-many passed off as the planned rule, a late run, more data than planned)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.audit.conftest import Workspace, make_workspace, text_of

SLICE_ANALYSIS = "  - kind: slices\n    names: [topic]\n"
SLICE_BLOCK = "slices:\n  - name: topic\n    column: topic\n"


def _fresh(tmp_path: Path, name: str = "policy-migration") -> Workspace:
    return make_workspace(tmp_path, name)


def test_peeking_on_a_fixed_design(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.lock()
    results = w.root / "results.jsonl"
    full = results.read_text(encoding="utf-8")
    rows = [json.loads(x) for x in full.splitlines()]
    early = sorted({r["case_id"] for r in rows})[:50]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows if r["case_id"] in early), encoding="utf-8")
    w.run(day="2026-11-10")  # an interim look the fixed design did not plan
    results.write_text(full, encoding="utf-8")
    w.run()
    c = w.checks()["looks_within_plan"]
    assert c["status"] == "fail"
    assert "looked at 2 times" in c["sentence"] and "fixed design" in c["sentence"]
    assert "no longer hold at the stated 95% level" in c["sentence"]
    assert "entry 1" in text_of(c) and "entry 2" in text_of(c)


def test_the_same_data_run_twice_is_one_look(ws: Workspace) -> None:
    ws.run(day="2026-11-21")
    c = ws.checks()["looks_within_plan"]
    assert c["status"] == "pass" and c["sentence"].startswith("1 look(s)")


def test_pooling_across_a_model_update(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.lock()
    results = w.root / "results.jsonl"
    rows = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["candidate"] == "A" and r["case_id"] > "q050":
            r["model_version"] = "2026-10-20"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # the run refuses an undeclared version change, so the plan is edited after locking to pool them
    w.edit_plan('version: "2026-10-01"', 'version: ["2026-10-01", "2026-10-20"]')
    w.run()
    c = w.checks()["model_versions"]
    assert c["status"] == "fail"
    assert "A pools runs across versions 2026-10-01, 2026-10-20" in text_of(c)


def test_pooling_declared_before_locking_is_a_warning(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.edit_plan('version: "2026-10-01"', 'version: ["2026-10-01", "2026-10-20"]')
    w.lock()
    results = w.root / "results.jsonl"
    rows = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["candidate"] == "A" and r["case_id"] > "q050":
            r["model_version"] = "2026-10-20"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    w.run()
    c = w.checks()["model_versions"]
    assert c["status"] == "warning" and "declared for pooling" in text_of(c)


def test_subgroup_chosen_after_the_results(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    text = w.plan.read_text(encoding="utf-8")
    assert SLICE_ANALYSIS in text and SLICE_BLOCK in text
    w.plan.write_text(text.replace(SLICE_ANALYSIS, "").replace(SLICE_BLOCK, ""), encoding="utf-8")
    w.lock()
    w.plan.write_text(text, encoding="utf-8")  # the slice is added once the results are in
    w.run()
    c = w.checks()["analyses_declared"]
    assert c["status"] == "fail"
    assert "slice 'topic' (column 'topic') is reported as confirmatory but was not declared" in text_of(c)
    assert "analysis 3 (slices" in text_of(c)


def test_best_of_many_instead_of_the_planned_rule(tmp_path: Path) -> None:
    w = _fresh(tmp_path, "support-triage")
    w.lock()
    w.edit_plan("rule: majority", "rule: best_of_k\n  k: 3")
    w.run()
    c = w.checks()["attempt_rule"]
    assert c["status"] == "fail"
    assert "the plan promised majority; the claim reports best_of_k (k=3)" in text_of(c)


def test_late_run(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.edit_plan("decision_date: 2026-12-15", "decision_date: 2026-10-01")
    w.lock()
    w.run()
    c = w.checks()["decision_date"]
    assert c["status"] == "fail"
    assert "went past the planned decision date 2026-10-01" in c["sentence"]
    assert "results were collected until 2026-10-02" in c["sentence"]


def test_more_units_than_planned(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.edit_plan("max_units: 400", "max_units: 10")
    w.lock()
    w.run()
    c = w.checks()["units_within_max"]
    assert c["status"] == "fail"
    assert c["sentence"] == "20 independent clusters (policy_doc) were analysed, more than the plan's max_units of 10."


def test_locked_after_the_results(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.lock(day="2026-10-05")  # the example's results are from 2026-10-02
    w.run()
    c = w.checks()["locked_before_results"]
    assert c["status"] == "fail" and "locked after the first result" in c["sentence"]


def test_never_locked(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.run()
    checks = w.checks()
    assert checks["plan_locked"]["status"] == "fail" and "never locked" in checks["plan_locked"]["sentence"]
    dev = checks["deviations_disclosed"]
    assert dev["status"] == "warning" and dev["evidence"][0].startswith("plan_not_locked: ")


def test_a_deleted_ledger_fails_when_the_claim_names_its_entry(ws: Workspace) -> None:
    ws.ledger.unlink()
    checks = ws.checks()
    assert checks["looks_within_plan"]["status"] == "warning"  # look 1 of 1 planned: nothing more is claimed
    assert checks["ledger_untampered"]["status"] == "fail"
    assert "records that it was look 1" in checks["ledger_untampered"]["sentence"]


def test_sequential_plan_without_an_anytime_valid_method(tmp_path: Path) -> None:
    w = _fresh(tmp_path)
    w.edit_plan("  rule: fixed\n", "  rule: sequential\n")
    w.edit_plan("  looks: 1", "  looks: 3")
    w.lock()
    results = w.root / "results.jsonl"
    full = results.read_text(encoding="utf-8")
    results.write_text("".join(x + "\n" for x in full.splitlines()[:60]) + "".join(
        x + "\n" for x in full.splitlines()[100:160]), encoding="utf-8")
    w.run(day="2026-11-10")
    results.write_text(full, encoding="utf-8")
    w.run()
    c = w.checks()["looks_within_plan"]
    assert c["status"] == "fail" and "without an anytime-valid method" in c["sentence"]


def test_another_version_than_declared_is_not_called_pooling(tmp_path: Path) -> None:
    w = _fresh(tmp_path)  # never locked: the check must not speak of a locked plan
    results = w.root / "results.jsonl"
    rows = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["candidate"] == "A":
            r["model_version"] = "2026-10-20"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    w.run()
    c = w.checks()["model_versions"]
    assert c["status"] == "fail" and c["title"] == "Model versions as declared"
    assert c["sentence"].startswith("A candidate ran as a model version other than the one the plan declared "
                                    "(nothing was pooled)")
    assert "A ran as version 2026-10-20, the plan declared '2026-10-01'" in text_of(c)
    assert "locked plan" not in text_of(c) and "pooled without" not in c["sentence"]
