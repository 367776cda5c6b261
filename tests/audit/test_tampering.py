"""Tampering: each edit is detected by the audit with a message naming what changed."""

from __future__ import annotations

import json

from tests.audit.conftest import Workspace, text_of


def _failed(ws: Workspace) -> dict[str, dict]:
    res = ws.audit()
    assert res.exit_code == 1, res.output
    return {c["id"]: c for c in json.loads(res.stdout)["checks"] if c["status"] == "fail"}


def test_edited_plan_value(ws: Workspace) -> None:
    ws.edit_plan("minimum_improvement: 0.03", "minimum_improvement: 0.02")
    failed = _failed(ws)
    assert set(failed) == {"plan_matches"}
    assert "changed decision.minimum_improvement: 0.03 -> 0.02" in text_of(failed["plan_matches"])


def test_edited_lock(ws: Workspace) -> None:
    lock_file = ws.plan.with_name("plan.yaml.lock.json")
    lock = json.loads(lock_file.read_text(encoding="utf-8"))
    lock["plan"]["decision"]["minimum_improvement"] = 0.01
    lock_file.write_text(json.dumps(lock, indent=2), encoding="utf-8")
    failed = _failed(ws)
    assert "plan_locked" in failed
    text = text_of(failed["plan_locked"])
    assert "lock file was edited" in text and "decision.minimum_improvement" in text


def test_edited_lock_hash(ws: Workspace) -> None:
    lock_file = ws.plan.with_name("plan.yaml.lock.json")
    lock = json.loads(lock_file.read_text(encoding="utf-8"))
    lock["hash"] = "sha256:" + "0" * 64
    lock_file.write_text(json.dumps(lock, indent=2), encoding="utf-8")
    failed = _failed(ws)
    assert "hashes to" in text_of(failed["plan_locked"])


def test_edited_results_row(ws: Workspace) -> None:
    results = ws.root / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[5])
    row["passed"] = not row["passed"]
    lines[5] = json.dumps(row)
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    checks = ws.checks()
    assert checks["data_fingerprints"]["status"] == "fail"
    assert "results.jsonl: SHA-256" in text_of(checks["data_fingerprints"])
    assert checks["reproduction"]["status"] == "warning"  # not re-run on other data


def test_edited_claim_verdict(ws: Workspace) -> None:
    claim = ws.read_claim()
    assert claim["decision"]["verdict"] == "blocked"
    claim["decision"]["verdict"] = "worth_acting_on"
    ws.write_claim(claim)
    failed = _failed(ws)
    assert "claim_untampered" in failed and "ledger_untampered" in failed
    assert "verdict: ledger entry 1 records 'blocked', the claim says 'worth_acting_on'" in text_of(
        failed["claim_untampered"])
    assert "decision.verdict: claim \"worth_acting_on\", re-run \"blocked\"" in text_of(failed["reproduction"])


def test_edited_claim_number(ws: Workspace) -> None:
    claim = ws.read_claim()
    claim["analyses"][1]["result"]["low"] = 0.031
    ws.write_claim(claim)
    failed = _failed(ws)
    assert "claim_untampered" in failed
    assert "analyses[1].result.low: claim 0.031" in text_of(failed["reproduction"])


def _two_looks(ws: Workspace) -> list[str]:
    """A second run on the same day-later (same data): two ledger entries; the claim is the second."""
    ws.run(day="2026-11-21")
    lines = ws.ledger.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    return lines


def test_edited_ledger_entry_before_the_claims(ws: Workspace) -> None:
    lines = _two_looks(ws)
    first = json.loads(lines[0])
    first["verdict"] = "worth_acting_on"
    lines[0] = json.dumps(first, sort_keys=True, separators=(",", ":"))
    ws.ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = text_of(_failed(ws)["ledger_untampered"])
    assert "entry 1 (line 1) was edited" in text
    assert "entry 2 (line 2) does not chain to the line before it" in text


def test_edited_ledger_entry_of_the_claim(ws: Workspace) -> None:
    lines = _two_looks(ws)
    last = json.loads(lines[1])
    last["units_seen"]["count"] = 12
    lines[1] = json.dumps(last, sort_keys=True, separators=(",", ":"))
    ws.ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = text_of(_failed(ws)["ledger_untampered"])
    assert "entry 2 (line 2) was edited" in text
    assert "units seen: ledger entry 2 records 12, the claim says 20" in text


def test_deleted_ledger_entry(ws: Workspace) -> None:
    lines = _two_looks(ws)
    ws.ledger.write_text(lines[1] + "\n", encoding="utf-8")
    text = text_of(_failed(ws)["ledger_untampered"])
    assert "entry 1 missing before entry 2 (line 1): deleted from the ledger" in text


def test_deleted_last_ledger_entry(ws: Workspace) -> None:
    lines = _two_looks(ws)
    ws.ledger.write_text(lines[0] + "\n", encoding="utf-8")
    text = text_of(_failed(ws)["ledger_untampered"])
    assert "entry 2, which the claim names as its own, is not in the ledger (deleted; the ledger's last entry is 1)" in text


def test_reordered_ledger_entries(ws: Workspace) -> None:
    lines = _two_looks(ws)
    ws.ledger.write_text(lines[1] + "\n" + lines[0] + "\n", encoding="utf-8")
    text = text_of(_failed(ws)["ledger_untampered"])
    assert "entry 1 (line 2) follows entry 2: the entries were reordered or duplicated" in text


def test_ledger_line_not_json_is_a_located_failure(ws: Workspace) -> None:
    ws.ledger.write_text(ws.ledger.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    failed = _failed(ws)
    assert "line 2" in text_of(failed["ledger_untampered"])
