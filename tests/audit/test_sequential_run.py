"""A sequential plan end to end: `evalspec run` on partial data says whether to continue; the audit counts its looks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalspec.analyses.context import AnalysisContext
from tests.audit.conftest import Workspace, make_workspace

PAIRED = ("  - kind: paired_difference\n    compare: [A, B]\n    method: cluster_bootstrap\n"
          "    resamples: 10000\n    seed: 7\n")
SEQUENTIAL = "  - kind: sequential_difference\n    compare: [A, B]\n"

needs_plan_in_context = pytest.mark.skipif(
    not hasattr(AnalysisContext, "stopping"),
    reason="the pipeline does not pass the plan's stopping rule to analyses yet (the analysis contract port)")


def _sequential(tmp_path: Path) -> Workspace:
    w = make_workspace(tmp_path)
    w.edit_plan(PAIRED, SEQUENTIAL)
    w.edit_plan("  rule: fixed\n  max_units: 400", "  rule: sequential\n  max_units: 80")
    w.edit_plan("  looks: 1", "  looks: 4")
    w.lock()
    return w


def _keep_clusters(w: Workspace, n: int) -> str:
    results = w.root / "results.jsonl"
    full = results.read_text(encoding="utf-8")
    rows = [json.loads(x) for x in full.splitlines()]
    keep = sorted({r["policy_doc"] for r in rows})[:n]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows if r["policy_doc"] in keep), encoding="utf-8")
    return full


@needs_plan_in_context
def test_partial_data_says_continue_and_the_audit_counts_looks(tmp_path: Path) -> None:
    w = _sequential(tmp_path)
    full = _keep_clusters(w, 10)
    res = w.cli("run", str(w.plan), "--no-report", day="2026-11-10")
    assert res.exit_code == 0, res.output
    assert "sequential: look 1 of 4: continue" in res.output
    claim = w.read_claim()
    assert not [d for d in claim["deviations"] if d["code"] == "inconsistent_case_attribute"]
    seq = next(a for a in claim["analyses"] if a["kind"] == "sequential_difference")["result"]
    assert seq["units"] == 10 and seq["unit"] == "clusters (policy_doc)" and seq["order"] == "timestamp"
    assert seq["method"].startswith("anytime-valid confidence sequence")
    (w.root / "results.jsonl").write_text(full, encoding="utf-8")
    w.run()
    checks = w.checks()
    assert checks["looks_within_plan"]["status"] == "pass"
    assert checks["looks_within_plan"]["sentence"] == "2 look(s) at the data, within the planned 4."
    assert checks["analyses_declared"]["status"] == "pass"
    assert checks["reproduction"]["status"] == "pass"


def test_sequential_claim_reproduces(tmp_path: Path) -> None:
    w = _sequential(tmp_path)
    w.run()
    checks = w.checks()
    assert checks["reproduction"]["status"] == "pass", checks["reproduction"]
    assert any(a["kind"] == "sequential_difference" for a in w.read_claim()["analyses"])
