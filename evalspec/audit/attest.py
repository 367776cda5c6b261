"""Attestations: an in-toto Statement about a claim, for its owner to sign, and its verification.

``evalspec attest CLAIM`` writes ``claim.intoto.json`` beside the claim: an in-toto Statement
v1 (https://in-toto.io/Statement/v1) whose subjects are the claim, its reports and its data
files (by SHA-256) and whose predicate records what an auditor wants fixed: the plan hash,
the lock (hash, time, git commit), the ledger entry of this look and the ledger's head, the
software versions and the verdict. evalspec ships no key and signs nothing: the team signs
the statement with a key it already trusts, for example an SSH key::

    ssh-keygen -Y sign -f ~/.ssh/id_ed25519 -n evalspec out/claim.intoto.json

(which writes ``out/claim.intoto.json.sig``) or with Sigstore's cosign
(``cosign attest-blob --predicate ...``, see docs/audit.md). ``evalspec audit CLAIM --verify
ALLOWED_SIGNERS`` checks the SSH signature with ``ssh-keygen -Y verify`` against an
allowed-signers file and then checks that the claim, reports, data, lock and ledger on disk
are the ones the signed statement names. A signature is evidence a tamperer without the key
cannot make again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from evalspec.audit.model import AuditInputs, CheckResult

__all__ = ["NAMESPACE", "PREDICATE_TYPE", "STATEMENT_TYPE", "statement", "statement_path", "verify_signature",
           "write_statement"]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://evalspec.org/attestation/claim/v1"
#: The ``-n`` namespace of ``ssh-keygen -Y sign`` / ``verify`` for evalspec statements.
NAMESPACE = "evalspec"
REPORT_NAMES = ("report.html", "report.pdf")


def statement_path(claim_path: Path) -> Path:
    """``out/claim.json`` -> ``out/claim.intoto.json``."""
    return claim_path.with_name(claim_path.stem + ".intoto.json")


def _sha_file(path: Path) -> str:
    from evalspec._files import read_regular

    raw = read_regular(path, what="a file the statement names")
    assert raw is not None
    return hashlib.sha256(raw).hexdigest()


def _ledger_facts(inputs: AuditInputs) -> dict[str, Any]:
    integrity = inputs.claim.get("integrity") if isinstance(inputs.claim.get("integrity"), dict) else {}
    ref = integrity.get("ledger") if isinstance(integrity.get("ledger"), dict) else {}
    entries = inputs.ledger or []
    mine = next((e for e in entries if e.seq == ref.get("seq")), None)
    head = entries[-1] if entries else None
    return {"file": ref.get("file"), "seq": ref.get("seq"),
            "entry_sha256": None if mine is None else mine.get("entry_sha256"),
            "head_seq": None if head is None else head.seq,
            "head_sha256": None if head is None else hashlib.sha256(head.text.encode("utf-8")).hexdigest()}


def statement(inputs: AuditInputs) -> dict[str, Any]:
    """The in-toto Statement v1 for the audited claim (see the module docstring)."""
    claim = inputs.claim
    cpath = inputs.claim_path
    subjects = [{"name": cpath.name, "digest": {"sha256": _sha_file(cpath)}}]
    for name in REPORT_NAMES:
        p = cpath.with_name(name)
        if p.is_file():
            subjects.append({"name": name, "digest": {"sha256": _sha_file(p)}})
    for f in (claim.get("data") or {}).get("files") or []:
        if isinstance(f, dict) and isinstance(f.get("sha256"), str):
            subjects.append({"name": f"data/{f.get('path')}", "digest": {"sha256": f["sha256"]}})
    plan = claim.get("plan") or {}
    lock = inputs.lock
    predicate = {
        "claim_sha256": (claim.get("integrity") or {}).get("sha256"),
        "plan": {"id": plan.get("id"), "hash": plan.get("hash")},
        "lock": None if lock is None else {"hash": lock.hash, "locked_at": lock.locked_at, "git": lock.git},
        "ledger": _ledger_facts(inputs),
        "software": claim.get("software"),
        "evalspec_version": claim.get("evalspec_version"),
        "verdict": (claim.get("decision") or {}).get("verdict"),
        "created": claim.get("created"),
    }
    return {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": PREDICATE_TYPE, "predicate": predicate}


def write_statement(inputs: AuditInputs, claim_path: Path, out: Path | None = None) -> Path:
    """Write the statement for the claim at ``claim_path`` (``inputs``: its audit inputs, gathered
    without the re-run) atomically; return its path."""
    from evalspec._atomic import write_text_atomic

    target = out if out is not None else statement_path(claim_path)
    text = json.dumps(statement(inputs), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_text_atomic(target, text)
    return target


def _r(status: str, sentence: str, evidence: list[str] | None = None) -> CheckResult:
    return CheckResult("signature", "Signed statement verified", status, sentence,  # type: ignore[arg-type]
                       list(evidence or []), basis="evidence")


def _ssh(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes] | None:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        return None
    try:
        return subprocess.run([exe, *args], input=stdin, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None


def verify_signature(inputs: AuditInputs) -> CheckResult:
    """The statement beside the claim is signed by an allowed signer and names the files on disk."""
    from evalspec._files import loads_json, read_regular
    from evalspec.errors import InputError

    allowed = inputs.verify
    assert allowed is not None
    spath = statement_path(inputs.claim_path)
    sig = spath.with_name(spath.name + ".sig")
    try:
        body = read_regular(spath, what="the signed statement", limit=64 * 1024**2,
                            hint="write it with `evalspec attest CLAIM` and sign it")
        signature = read_regular(sig, what="the statement's signature", limit=1024**2,
                                 hint=f"sign it: ssh-keygen -Y sign -f KEY -n {NAMESPACE} {spath}")
    except InputError as exc:
        return _r("fail", "--verify was asked for, but the signed statement is not there.", [str(exc)])
    assert body is not None and signature is not None
    with tempfile.TemporaryDirectory(prefix="evalspec-verify-") as tmp:
        sig_copy = Path(tmp) / "statement.sig"  # ssh-keygen reads the signature by name: a checked copy
        sig_copy.write_bytes(signature)
        found = _ssh(["-Y", "find-principals", "-s", str(sig_copy), "-f", str(allowed)], b"")
        if found is None:
            return _r("fail", "ssh-keygen (OpenSSH 8.2 or later) is needed to verify the signature and was not "
                      "found.")
        principals = [p for p in found.stdout.decode("utf-8", "replace").split() if p]
        if found.returncode != 0 or not principals:
            return _r("fail", "The statement is not signed by any key in the allowed-signers file.",
                      [f"allowed signers: {allowed}", found.stderr.decode("utf-8", "replace").strip()[:200]])
        principal = principals[0]
        ok = _ssh(["-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE, "-s", str(sig_copy)], body)
    if ok is None or ok.returncode != 0:
        why = "" if ok is None else (ok.stderr or ok.stdout).decode("utf-8", "replace").strip()[:200]
        return _r("fail", "The signature does not verify: the statement was changed after it was signed, or signed "
                  "for another purpose.", [why])
    try:
        signed = loads_json(body.decode("utf-8", "replace"), display=str(spath), what="the signed statement")
    except InputError as exc:
        return _r("fail", "The signed statement is not JSON.", [str(exc)])
    problems = _compare(signed, statement(inputs))
    evidence = [f"signed by {principal} (allowed signers {allowed})"]
    if problems:
        return _r("fail", "The signature is valid, but the files on disk are not the ones it signed: "
                  + problems[0] + ".", problems + evidence)
    return _r("pass", f"The statement is signed by {principal}, and the claim, reports, data, lock and ledger on disk "
              "are the ones it names.", evidence)


def _compare(signed: Any, now: dict[str, Any]) -> list[str]:
    if not isinstance(signed, dict) or signed.get("_type") != STATEMENT_TYPE \
            or signed.get("predicateType") != PREDICATE_TYPE:
        return ["the signed file is not an evalspec claim statement"]
    out = []
    was = {s.get("name"): (s.get("digest") or {}).get("sha256") for s in signed.get("subject") or []
           if isinstance(s, dict)}
    is_ = {s["name"]: s["digest"]["sha256"] for s in now["subject"]}
    for name in sorted(set(was) | set(is_), key=str):
        if was.get(name) != is_.get(name):
            if name not in is_:
                out.append(f"{name} was signed and is no longer there")
            elif name not in was:
                out.append(f"{name} is there but was not signed (written after the signature)")
            else:
                out.append(f"{name} changed since it was signed (SHA-256 {str(is_[name])[:16]}..., signed "
                           f"{str(was[name])[:16]}...)")
    from evalspec.audit.reproduce import compare

    sp = signed.get("predicate")
    np_ = dict(now["predicate"])
    if isinstance(sp, dict):
        # the ledger may have grown since (later looks); what was signed must still be there
        sl, nl = sp.get("ledger") or {}, np_.pop("ledger")
        if isinstance(sl, dict) and sl.get("entry_sha256") != nl.get("entry_sha256"):
            out.append(f"the claim's ledger entry {sl.get('seq')} is not the one signed (the ledger was rewritten)")
        sp = {k: v for k, v in sp.items() if k != "ledger"}
    out += compare(sp, np_, "predicate")
    return out
