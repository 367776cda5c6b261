"""The audit recomputes and does not trust: forged claims, locks and ledgers that were resealed.

Each forgery rewrites a file *and* everything that would show the edit (the claim's own
SHA-256, the ledger's last entry), as a careful tamperer would. The audit must fail it by
recomputing (the plan hash from the claim's own plan text, the whole claim from the data)
or from evidence outside the files (git, a signature), and say which checks rest on
consistency only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.audit.conftest import Workspace, make_workspace, text_of


def reseal(ws: Workspace, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit the claim, recompute its SHA-256 and rebuild its ledger entry to agree (a careful forgery)."""
    from evalspec.claim import dumps
    from evalspec.ledger import entry_self_hash, entry_line, seal_claim

    claim = ws.read_claim()
    ref = claim["integrity"]["ledger"]
    edit(claim)
    claim.pop("integrity")
    sealed = seal_claim(claim, ledger=ref)
    ws.claim.write_text(dumps(sealed), encoding="utf-8")
    lines = ws.ledger.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[-1])
    entry["claim_sha256"] = sealed["integrity"]["sha256"]
    entry["verdict"] = sealed["decision"]["verdict"]
    entry["plan_hash"] = sealed["plan"]["hash"]
    entry["entry_sha256"] = entry_self_hash(entry)
    lines[-1] = entry_line(entry)
    ws.ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _status(ws: Workspace, *extra: str) -> tuple[int, dict[str, dict]]:
    res = ws.audit(*extra)
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, {c["id"]: c for c in json.loads(res.stdout)["checks"]}


def test_a_resealed_forgery_passes_the_seal_and_is_labelled_consistency(ws: Workspace) -> None:
    def verdict(c: dict) -> None:
        c["decision"]["verdict"] = "worth_acting_on"

    reseal(ws, verdict)
    code, checks = _status(ws)
    assert checks["claim_untampered"]["status"] == "pass"  # the seal was rebuilt ...
    assert checks["claim_untampered"]["basis"] == "consistency"  # ... and the audit says what that shows
    assert checks["reproduction"]["status"] == "fail" and checks["reproduction"]["basis"] == "recomputed"
    assert any(e.startswith("decision.verdict") for e in checks["reproduction"]["evidence"])
    assert code == 1


def test_swapped_plan_source_with_the_old_hash_fails_without_data(ws: Workspace) -> None:
    def looser(c: dict) -> None:
        c["plan"]["source"] = c["plan"]["source"].replace("max_rate: 0.05", "max_rate: 0.9")
        assert "max_rate: 0.9" in c["plan"]["source"]

    reseal(ws, looser)
    code, checks = _status(ws, "--no-reproduce")
    c = checks["claim_plan_recomputed"]
    assert c["status"] == "fail" and c["basis"] == "recomputed", c
    assert any(e.startswith("plan.hash:") for e in c["evidence"]) and code == 1
    _, checks = _status(ws)
    assert checks["reproduction"]["status"] == "fail"


@pytest.mark.parametrize("field, value", [
    (("plan", "question"), "Should we ship A now?"),
    (("plan", "title"), "Another title"),
    (("systematic_limits", "stated"), []),
    (("plan", "population"), "everyone"),
])
def test_edited_plan_fields_are_recomputed_from_the_plan_text(ws: Workspace, field: tuple[str, str],
                                                              value: Any) -> None:
    def edit(c: dict) -> None:
        c[field[0]][field[1]] = value

    reseal(ws, edit)
    code, checks = _status(ws, "--no-reproduce")
    c = checks["claim_plan_recomputed"]
    assert c["status"] == "fail" and code == 1, c
    assert any(e.startswith(".".join(field)) for e in c["evidence"]), c


def test_edited_deviations_and_software_are_caught_by_the_whole_claim_rerun(ws: Workspace) -> None:
    def edit(c: dict) -> None:
        c["deviations"] = [{"code": "none", "message": "nothing happened"}]
        c["software"]["numpy"] = "0.0.1"

    reseal(ws, edit)
    code, checks = _status(ws)
    rep = checks["reproduction"]
    assert rep["status"] == "fail" and code == 1
    assert any(e.startswith("deviations") for e in rep["evidence"])
    assert any(e.startswith("numpy: claim 0.0.1") for e in rep["evidence"])


def test_a_duplicate_key_is_refused_with_its_name(ws: Workspace) -> None:
    text = ws.claim.read_text(encoding="utf-8")
    ws.claim.write_text(text.replace('"decision": {', '"decision": {\n    "verdict": "worth_acting_on",', 1),
                        encoding="utf-8")
    res = ws.audit()
    assert res.exit_code == 2, res.output
    assert "names the key 'verdict' twice" in res.output


def test_deleted_ledger_after_three_looks_still_fails(ws: Workspace) -> None:
    for day in ("2026-11-21", "2026-11-22"):
        rows = (ws.root / "results.jsonl").read_text(encoding="utf-8").splitlines()
        (ws.root / "results.jsonl").write_text("\n".join(rows[:-1]) + "\n", encoding="utf-8")
        ws.run(day=day)
    assert ws.read_claim()["integrity"]["ledger"]["seq"] == 3
    shutil.rmtree(ws.root / ".evalspec")
    code, checks = _status(ws, "--no-reproduce")
    assert checks["ledger_untampered"]["status"] == "fail"
    assert checks["looks_within_plan"]["status"] == "fail" and "look 3" in checks["looks_within_plan"]["sentence"]
    assert code == 1


def test_a_lock_time_edited_after_the_claim_fails(ws: Workspace) -> None:
    lock = ws.root / "plan.yaml.lock.json"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["locked_at"] = "2025-06-01T00:00:00Z"
    lock.write_text(json.dumps(data, indent=2), encoding="utf-8")
    _, checks = _status(ws, "--no-reproduce")
    c = checks["locked_before_results"]
    assert c["status"] == "fail" and "the lock was edited after the claim" in text_of(c), c


def test_a_look_before_the_lock_fails_without_timestamps(tmp_path: Path) -> None:
    w = make_workspace(tmp_path)
    w.edit_plan("    timestamp: timestamp\n", "")
    w.edit_plan("record: [model_version, timestamp]", "record: [model_version]")
    w.run(day="2026-01-01")  # a look with no lock
    results = w.root / "results.jsonl"
    kept = results.read_bytes()
    results.unlink()  # gone while locking: the lock's existing-data record cannot tell
    w.lock(day="2026-01-02")
    results.write_bytes(kept)
    w.run(day="2026-11-20")
    _, checks = _status(w, "--no-reproduce")
    c = checks["locked_before_results"]
    assert c["status"] == "fail" and "while the plan had no lock" in text_of(c), c


def test_every_line_says_its_basis(ws: Workspace) -> None:
    res = ws.cli("audit", str(ws.claim), "--no-reproduce")
    lines = [ln for ln in res.output.splitlines() if ln.startswith(("  PASS", "  WARN", "  FAIL"))]
    assert lines and all(any(f"[{b}]" in ln for b in ("consistency", "recomputed", "evidence")) for ln in lines)
    assert "pass on evidence outside the files" in res.output


# -- git ---------------------------------------------------------------------------------------

def _git(root: Path, *args: str, date: str = "2026-01-03T10:00:00Z") -> None:
    env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_SYSTEM=os.devnull)
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr


def _need_git() -> None:
    """Skip where git is missing (a fresh machine); CI installs it and requires it."""
    if shutil.which("git") is None:
        if os.environ.get("EVALSPEC_REQUIRE_TOOLS"):
            pytest.fail("git is required (EVALSPEC_REQUIRE_TOOLS)")
        pytest.skip("git is not installed")


@pytest.fixture()
def repo(tmp_path: Path) -> Workspace:
    """policy-migration in git: the lock committed before the results, the ledger after the run."""
    _need_git()
    w = make_workspace(tmp_path)
    _git(w.root, "init", "-q", date="2026-01-01T09:00:00Z")
    _git(w.root, "add", "plan.yaml", date="2026-01-01T09:00:00Z")
    _git(w.root, "commit", "-q", "-m", "plan", date="2026-01-01T09:00:00Z")
    w.lock()  # 2026-01-02
    _git(w.root, "add", "plan.yaml.lock.json")
    _git(w.root, "commit", "-q", "-m", "lock")  # 2026-01-03, before the first result
    w.run()
    _git(w.root, "add", ".evalspec/ledger.jsonl", date="2026-11-20T12:00:00Z")
    _git(w.root, "commit", "-q", "-m", "look", date="2026-11-20T12:00:00Z")
    return w


def test_git_anchors_pass(repo: Workspace) -> None:
    _, checks = _status(repo, "--no-reproduce")
    for key in ("lock_in_git", "ledger_in_git"):
        assert checks[key]["status"] == "pass" and checks[key]["basis"] == "evidence", checks[key]


def test_git_shows_a_rewritten_lock_time(repo: Workspace) -> None:
    lock = repo.root / "plan.yaml.lock.json"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["locked_at"] = "2025-12-01T00:00:00Z"
    lock.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def same_time(c: dict) -> None:  # the claim agrees with the forged lock: only git can tell
        c["plan"]["lock"]["locked_at"] = "2025-12-01T00:00:00Z"

    reseal(repo, same_time)
    _, checks = _status(repo, "--no-reproduce")
    c = checks["lock_in_git"]
    assert c["status"] == "fail" and "edited after it was committed" in text_of(c), c
    assert "before the commit it records" in text_of(c)


def test_git_shows_a_rewritten_ledger(repo: Workspace) -> None:
    def verdict(c: dict) -> None:
        c["decision"]["verdict"] = "worth_acting_on"

    reseal(repo, verdict)  # rebuilds the committed last entry
    _, checks = _status(repo, "--no-reproduce")
    assert checks["ledger_untampered"]["status"] == "pass"  # consistent ...
    c = checks["ledger_in_git"]
    assert c["status"] == "fail" and "line 1 was edited or replaced" in text_of(c), c  # ... but not what git holds


def test_an_uncommitted_lock_is_named(tmp_path: Path) -> None:
    _need_git()
    w = make_workspace(tmp_path)
    _git(w.root, "init", "-q")
    w.lock()
    w.run()
    _, checks = _status(w, "--no-reproduce")
    assert checks["lock_in_git"]["status"] == "warning" and "not committed" in checks["lock_in_git"]["sentence"]
    assert checks["ledger_in_git"]["status"] == "warning"


# -- signatures ----------------------------------------------------------------------------------

@pytest.fixture()
def signer(tmp_path: Path) -> tuple[Path, Path]:
    """A key made for this test and an allowed-signers file naming it (evalspec ships no key)."""
    if shutil.which("ssh-keygen") is None:
        if os.environ.get("EVALSPEC_REQUIRE_TOOLS"):
            pytest.fail("ssh-keygen is required (EVALSPEC_REQUIRE_TOOLS)")
        pytest.skip("ssh-keygen is not installed")
    key = tmp_path / "keys" / "id_ed25519"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "auditor", "-f", str(key)], check=True)
    allowed = tmp_path / "keys" / "allowed_signers"
    kind, blob = key.with_suffix(".pub").read_text(encoding="utf-8").split()[:2]
    allowed.write_text(f"release-team {kind} {blob}\n", encoding="utf-8")
    return key, allowed


def _sign(ws: Workspace, key: Path) -> Path:
    res = ws.cli("attest", str(ws.claim))
    assert res.exit_code == 0, res.output
    statement = ws.claim.with_name("claim.intoto.json")
    data = json.loads(statement.read_text(encoding="utf-8"))
    assert data["_type"] == "https://in-toto.io/Statement/v1"
    assert {s["name"] for s in data["subject"]} >= {"claim.json", "data/results.jsonl"}
    assert data["predicate"]["plan"]["hash"] == ws.read_claim()["plan"]["hash"]
    assert data["predicate"]["verdict"] == ws.read_claim()["decision"]["verdict"]
    subprocess.run(["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", "evalspec", str(statement)], check=True,
                   capture_output=True)
    return statement


def test_signed_statement_verifies_end_to_end(ws: Workspace, signer: tuple[Path, Path]) -> None:
    key, allowed = signer
    _sign(ws, key)
    code, checks = _status(ws, "--no-reproduce", "--verify", str(allowed))
    c = checks["signature"]
    assert c["status"] == "pass" and c["basis"] == "evidence" and "release-team" in c["sentence"], c


def test_a_resealed_forgery_breaks_the_signature(ws: Workspace, signer: tuple[Path, Path]) -> None:
    key, allowed = signer
    _sign(ws, key)

    def verdict(c: dict) -> None:
        c["decision"]["verdict"] = "worth_acting_on"

    reseal(ws, verdict)
    code, checks = _status(ws, "--no-reproduce", "--verify", str(allowed))
    c = checks["signature"]
    assert c["status"] == "fail" and "claim.json changed since it was signed" in text_of(c) and code == 1, c


def test_a_statement_signed_by_another_key_fails(ws: Workspace, signer: tuple[Path, Path], tmp_path: Path) -> None:
    _, allowed = signer
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    _sign(ws, other)
    _, checks = _status(ws, "--no-reproduce", "--verify", str(allowed))
    assert checks["signature"]["status"] == "fail"


def test_verify_without_a_signature_fails(ws: Workspace, signer: tuple[Path, Path]) -> None:
    _, allowed = signer
    _, checks = _status(ws, "--no-reproduce", "--verify", str(allowed))
    assert checks["signature"]["status"] == "fail" and "not there" in checks["signature"]["sentence"]
