"""Reproduction with the data; a changed results file; `run --locked` refusals writing nothing; the ledger API."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.audit.conftest import Workspace, make_workspace, text_of


def test_reproduction_with_data_given(ws: Workspace, tmp_path: Path) -> None:
    copy = tmp_path / "archive" / "results.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(ws.root / "results.jsonl", copy)
    (ws.root / "results.jsonl").unlink()  # only the archived copy is left
    res = ws.audit("--data", str(copy))
    assert res.exit_code == 0, res.output
    checks = {c["id"]: c for c in json.loads(res.stdout)["checks"]}
    assert checks["data_fingerprints"]["status"] == "pass"
    assert checks["reproduction"]["status"] == "pass"
    assert "seeds: 7" in text_of(checks["reproduction"])


def test_changed_results_file_given(ws: Workspace, tmp_path: Path) -> None:
    changed = tmp_path / "results.jsonl"
    text = (ws.root / "results.jsonl").read_text(encoding="utf-8")
    changed.write_text(text.replace('"passed": true', '"passed": false', 1), encoding="utf-8")
    res = ws.audit("--data", str(changed))
    assert res.exit_code == 1
    checks = {c["id"]: c for c in json.loads(res.stdout)["checks"]}
    fp = checks["data_fingerprints"]
    assert fp["status"] == "fail" and fp["evidence"][0].startswith("results.jsonl: SHA-256 ")
    assert "differs from the claim's" in fp["evidence"][0]


def test_no_data_means_not_reproduced(ws: Workspace) -> None:
    (ws.root / "results.jsonl").unlink()
    checks = ws.checks()
    assert checks["data_fingerprints"]["status"] == "warning"
    assert checks["reproduction"]["status"] == "warning"


def test_data_with_a_name_the_claim_does_not_know(ws: Workspace, tmp_path: Path) -> None:
    a, b = tmp_path / "x.jsonl", tmp_path / "y.jsonl"
    a.write_text("{}\n", encoding="utf-8")
    b.write_text("{}\n", encoding="utf-8")
    checks = ws.checks("--data", str(a), "--data", str(b))
    assert checks["data_fingerprints"]["status"] == "fail" and "x.jsonl" in checks["data_fingerprints"]["sentence"]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_run_locked_refuses_an_unlocked_plan(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    before = _snapshot(w.root)
    res = w.cli("run", str(w.plan), "--locked")
    assert res.exit_code == 1
    assert "no lock" in res.output and "evalspec lock" in res.output
    assert _snapshot(w.root) == before  # no out/, no ledger, no report


def test_run_locked_refuses_a_plan_changed_after_its_lock(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.lock()
    w.edit_plan("minimum_improvement: 0.03", "minimum_improvement: 0.02")
    before = _snapshot(w.root)
    res = w.cli("run", str(w.plan), "--locked", "--out", str(w.root / "elsewhere"))
    assert res.exit_code == 1
    assert "changed after it was locked" in res.output
    assert "decision.minimum_improvement: 0.03 -> 0.02" in res.output
    assert _snapshot(w.root) == before


def test_run_locked_runs_a_locked_plan(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.lock()
    w.run("--locked")
    assert w.claim.is_file() and w.ledger.is_file()


def test_run_without_locked_records_the_deviation(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.run()
    assert [d["code"] for d in w.read_claim()["deviations"]][0] == "plan_not_locked"


# -- the ledger API -------------------------------------------------------------------------


def test_claim_hash_same_in_memory_and_on_disk(ws: Workspace) -> None:
    from evalspec.ledger import claim_sha256, verify_claim_hash

    claim = ws.read_claim()
    assert verify_claim_hash(claim) == (True, claim["integrity"]["sha256"], claim_sha256(claim))
    claim["created"] = "2026-11-21T00:00:00Z"
    assert verify_claim_hash(claim)[0] is False


def test_ledger_entry_records_the_look(ws: Workspace) -> None:
    from evalspec.ledger import read_ledger, verify

    entries = read_ledger(ws.ledger)
    assert len(entries) == 1 and verify(entries).ok
    e = entries[0].data
    claim = ws.read_claim()
    assert e["seq"] == 1 and e["prev_sha256"] == "0" * 64
    assert e["plan_hash"] == claim["plan"]["hash"] == e["lock_hash"]
    assert e["data"][0]["sha256"] == claim["data"]["files"][0]["sha256"]
    assert e["units_seen"] == {"count": 20, "unit": "clusters (policy_doc)"}
    assert e["verdict"] == "blocked" and e["claim_sha256"] == claim["integrity"]["sha256"]
    assert claim["integrity"]["ledger"] == {"file": ".evalspec/ledger.jsonl", "seq": 1, "prev_sha256": "0" * 64}


def test_identical_rerun_gives_identical_bytes_and_no_new_entry(ws: Workspace) -> None:
    first = ws.claim.read_bytes()
    ws.run()
    assert ws.claim.read_bytes() == first
    assert len(ws.ledger.read_text(encoding="utf-8").splitlines()) == 1


def test_reruns_at_other_times_are_new_entries_and_not_hashed_again(ws: Workspace, monkeypatch) -> None:
    """Only an entry with the claim's own creation time can hold that claim: re-runs of the same data
    at other times (CI on every commit) are not re-sealed one by one, and the identical re-run still
    finds its entry among them."""
    import evalspec.looks as looks

    for day in ("2026-11-17", "2026-11-18", "2026-11-19"):
        ws.run(day=day)
    assert len(ws.ledger.read_text(encoding="utf-8").splitlines()) == 4
    on_18 = json.loads(ws.ledger.read_text(encoding="utf-8").splitlines()[2])
    sealed: list[int] = []
    real = looks.sealed_normal

    def counting(claim, **kw):
        sealed.append(1)
        return real(claim, **kw)

    monkeypatch.setattr(looks, "sealed_normal", counting)
    ws.run(day="2026-11-18")  # the same claim as the third entry's: found, sealed once, nothing appended
    assert len(sealed) == 1 and len(ws.ledger.read_text(encoding="utf-8").splitlines()) == 4
    assert ws.read_claim()["integrity"]["sha256"] == on_18["claim_sha256"]
    ws.run(day="2026-11-16")  # a new time: one seal for the new entry, none for the four before it
    assert len(sealed) == 2 and len(ws.ledger.read_text(encoding="utf-8").splitlines()) == 5


def test_ledger_folder_that_is_a_file_is_exit_2_and_no_claim(tmp_path: Path) -> None:
    """The same refusal as below, in a form root cannot write through (it runs in CI, which is root)."""
    w = make_workspace(tmp_path)
    (w.root / ".evalspec").write_text("not a folder\n", encoding="utf-8")
    res = w.cli("run", str(w.plan), "--no-report")
    assert res.exit_code == 2 and "ledger" in res.output, res.output
    assert "Traceback" not in res.output
    assert not w.claim.exists()


def test_unwritable_ledger_is_exit_2_and_no_claim(tmp_path: Path) -> None:
    import os

    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    w = make_workspace(tmp_path)
    (w.root / ".evalspec").mkdir()
    (w.root / ".evalspec").chmod(0o500)
    try:
        res = w.cli("run", str(w.plan), "--no-report")
        assert res.exit_code == 2 and "ledger" in res.output
        assert not w.claim.exists()
    finally:
        (w.root / ".evalspec").chmod(0o700)


def test_concurrent_runs_keep_the_chain(tmp_path: Path) -> None:
    """Looks recorded from several threads at once still form one intact chain."""
    import threading

    from evalspec.ledger import read_ledger, verify
    from evalspec.looks import record_look

    w = make_workspace(tmp_path)
    base = {"claim_format": 2, "created": "2026-11-20T00:00:00Z", "plan": {"id": "p", "hash": "sha256:x", "lock": {}},
            "data": {"files": []}, "coverage": {}, "decision": {"verdict": "inconclusive"}, "analyses": []}
    sealed: list[dict] = []

    def look(i: int) -> None:
        sealed.append(record_look({**base, "created": f"2026-11-20T00:00:{i:02d}Z"}, w.plan))

    threads = [threading.Thread(target=look, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = read_ledger(w.ledger)
    assert len(entries) == 12 and verify(entries).ok
    assert sorted(c["integrity"]["ledger"]["seq"] for c in sealed) == list(range(1, 13))
