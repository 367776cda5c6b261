"""What an audit reads (:class:`AuditInputs`) and what it reports (:class:`CheckResult`, :class:`AuditReport`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["AuditInputs", "AuditReport", "Basis", "BASIS_WORDS", "CheckResult", "Status"]

Status = Literal["pass", "fail", "warning"]

#: What a check's PASS can show (docs/audit.md, "The trust model"):
#: ``consistency``: the files evalspec wrote agree with each other; whoever can rewrite all of them
#: (claim, lock, ledger) can make it pass. ``recomputed``: evalspec derived the value again from the
#: claim's own inputs (its plan source, the data given); it shows the claim follows from those inputs.
#: ``evidence``: something outside those files that a tamperer cannot rewrite: git history, a
#: signature made with a key the auditor trusts.
Basis = Literal["consistency", "recomputed", "evidence"]
BASIS_WORDS: dict[str, str] = {
    "consistency": "consistency only: the files agree; whoever can rewrite them all can make this pass",
    "recomputed": "recomputed from the claim's inputs (its plan source, the data given)",
    "evidence": "evidence outside the files (git history, a signature)",
}


@dataclass(frozen=True)
class CheckResult:
    """One check: ``status``, one plain ``sentence`` for a reader, and the ``evidence`` behind it."""

    id: str
    title: str
    status: Status
    sentence: str
    evidence: list[str] = field(default_factory=list)
    basis: Basis = "consistency"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status, "sentence": self.sentence,
                "evidence": list(self.evidence), "basis": self.basis}


@dataclass
class AuditInputs:
    """Everything the checks read, located and parsed once (see :func:`evalspec.audit.core.gather`)."""

    claim: dict[str, Any]
    claim_path: Path
    #: the claim's JSON object as written (before validation) and the file's text
    claim_raw: dict[str, Any] | None = None
    claim_text: str | None = None
    plan_path: Path | None = None
    #: the plan as it is now (LoadedPlan) and its canonical data; None when it does not load
    loaded: Any = None
    plan_now: dict[str, Any] | None = None
    plan_problem: str | None = None
    #: the lock record and the plan it holds (the promise)
    lock: Any = None
    lock_problem: str | None = None
    #: the plan the claim was made from (canonical data of the claim's registered plan)
    plan_claimed: dict[str, Any] | None = None
    ledger_path: Path | None = None
    ledger: list[Any] | None = None
    ledger_problem: str | None = None
    #: data files to fingerprint and re-run: (path recorded in the claim, file on disk)
    data: list[tuple[str, Path]] | None = None
    #: objects the claim read from an object store (``s3://...``): re-read there, never copied
    remote: list[str] = field(default_factory=list)
    data_problem: str | None = None
    data_given: bool = False
    git_first_commit: str | None = None
    git_tracked: bool | None = None
    reproduce: bool = True
    #: the git work tree holding the plan (:class:`evalspec.audit.evidence.GitView`), None outside git
    git: Any = None
    #: ``--verify``: the allowed-signers file the statement's signature is checked against
    verify: Path | None = None

    def process_facts(self) -> Any:
        """What the process checks shared with ``run`` read (:class:`evalspec.process.ProcessFacts`)."""
        from evalspec.process import ProcessFacts

        return ProcessFacts(claim=self.claim, lock=self.lock, lock_problem=self.lock_problem,
                            plan_claimed=self.plan_claimed, plan_now=self.plan_now, ledger=self.ledger,
                            ledger_path=self.ledger_path,
                            plan_file=self.plan_path.name if self.plan_path is not None else None,
                            git_first_commit=self.git_first_commit, git_tracked=self.git_tracked)

    @property
    def promised(self) -> dict[str, Any] | None:
        """The plan the team promised: the locked plan when there is a lock, else the claim's own plan."""
        if self.lock is not None and isinstance(getattr(self.lock, "plan", None), dict):
            return self.lock.plan
        return self.plan_claimed


@dataclass(frozen=True)
class AuditReport:
    """All checks of one claim."""

    claim_path: Path
    plan_path: Path | None
    plan_id: str | None
    verdict: str | None
    checks: list[CheckResult]
    #: the claim file's bytes as audited (a report of this audit is written only beside these bytes)
    claim_bytes: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def warnings(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "warning"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        counts = {s: sum(c.status == s for c in self.checks) for s in ("pass", "warning", "fail")}
        return {"claim": str(self.claim_path), "plan": None if self.plan_path is None else str(self.plan_path),
                "plan_id": self.plan_id, "verdict": self.verdict, "ok": self.ok, "counts": counts,
                "checks": [c.to_dict() for c in self.checks]}
