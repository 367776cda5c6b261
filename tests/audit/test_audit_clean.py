"""A claim made as planned passes every check; exit codes; --all, --json, --report; bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.audit.conftest import EXAMPLES, Workspace, make_workspace

NAMES = sorted(p.parent.name for p in EXAMPLES.glob("*/plan.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_clean_example_passes_every_check(tmp_path: Path, name: str) -> None:
    w = make_workspace(tmp_path, name)
    w.lock()
    w.run()
    res = w.audit()
    data = json.loads(res.stdout)
    bad = [(c["id"], c["status"], c["sentence"], c["evidence"]) for c in data["checks"] if c["status"] != "pass"]
    # outside a git repository every check can pass; the examples keep to their plans
    assert res.exit_code == 0 and not [b for b in bad if b[1] == "fail"], bad
    assert {c["id"] for c in data["checks"]} >= {
        "plan_matches", "plan_locked", "locked_before_results", "analyses_declared", "attempt_rule",
        "model_versions", "missing_within_policy", "units_within_max", "decision_date", "looks_within_plan",
        "claim_untampered", "ledger_untampered", "data_fingerprints", "reproduction"}
    assert data["checks"][-1]["id"] == "reproduction" and data["checks"][-1]["status"] in ("pass",)


def test_text_output_and_exit_code(ws: Workspace) -> None:
    res = ws.cli("audit", str(ws.claim))
    assert res.exit_code == 0, res.output
    assert "PASS  [recomputed]   Numbers reproduce" in res.output and "0 fail" in res.output


def test_all_prints_one_table_and_fails_when_one_claim_fails(tmp_path: Path) -> None:
    a = make_workspace(tmp_path / "one")
    a.lock()
    a.run()
    b = make_workspace(tmp_path / "two")
    b.lock()
    b.run()
    res = a.cli("audit", "--all", str(tmp_path))
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[0].split()[:3] == ["claim", "plan", "verdict"] and len(lines) == 3
    b.edit_plan("minimum_improvement: 0.03", "minimum_improvement: 0.01")
    res = a.cli("audit", "--all", str(tmp_path))
    assert res.exit_code == 1
    row = next(line for line in res.output.splitlines() if "two" in line)
    assert "plan_matches" in row
    res = a.cli("audit", "--all", str(tmp_path), "--json")
    items = json.loads(res.stdout)
    assert isinstance(items, list) and len(items) == 2


def test_report_html(ws: Workspace) -> None:
    res = ws.cli("audit", str(ws.claim), "--report", "--format", "html")
    assert res.exit_code == 0, res.output
    html = (ws.claim.parent / "audit.html").read_text(encoding="utf-8")
    assert 'data-check="reproduction"' in html and 'data-status="pass"' in html
    assert "<script" not in html


def test_report_pdf(ws: Workspace) -> None:
    import os

    required = os.environ.get("EVALSPEC_REQUIRE_TOOLS") == "1"
    if not required:
        pytest.importorskip("weasyprint")
    res = ws.cli("audit", str(ws.claim), "--report", "--format", "pdf")
    if res.exit_code == 2 and "WeasyPrint" in res.output and not required:
        pytest.skip("WeasyPrint's system libraries are missing")
    assert res.exit_code == 0, res.output
    assert (ws.claim.parent / "audit.pdf").read_bytes().startswith(b"%PDF")


def test_bad_input_exits_2(tmp_path: Path, ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ws.cli("audit", str(tmp_path / "nope.json")).exit_code == 2
    monkeypatch.chdir(ws.root)
    ws.run()  # same claim, recorded with the plan path as given
    assert ws.cli("run", "plan.yaml", "--no-report", "--out", "rel").exit_code == 0
    moved = tmp_path / "elsewhere" / "claim.json"
    moved.parent.mkdir()
    moved.write_text((ws.root / "rel" / "claim.json").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = ws.cli("audit", str(moved))
    assert res.exit_code == 2 and "--plan" in res.output
    assert ws.cli("audit", str(moved), "--plan", str(ws.plan)).exit_code == 0
    assert ws.cli("audit", str(ws.claim), "--data", str(tmp_path / "missing.jsonl")).exit_code == 2
    assert ws.cli("audit").exit_code == 2
