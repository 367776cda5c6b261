"""The verdict gate: is this claim's verdict one the team accepts, reached by a sound process?

``evalspec gate CLAIM`` is the step a CI job ends with. It passes (exit 0) when the claim's
verdict is in the acceptable list — the plan's ``decision.acceptable``, or ``--accept`` on the
command line — *and* the claim's process checks pass; it fails (exit 1) otherwise, with one
line saying why; bad input (no such claim, a corrupt claim, an unknown verdict name, no
acceptable list anywhere) is exit 2, as everywhere in evalspec (:class:`~evalspec.exit_codes.ExitCode`).

The process checks are the audit's (:func:`evalspec.audit.core.audit_claim`) without the
re-run of the numbers, which the CI recipe runs once, in ``evalspec audit``: plan and lock
hashes, locked before the first result, declared analyses, one attempt rule, no pooling across
model versions, missing outcomes, stopping rule, looks, an untampered claim and ledger, data
fingerprints. Warnings do not fail the gate (as in the audit); failures do. Nothing is written
unless ``--junit FILE`` asks for a JUnit XML report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["GateResult", "accepted_list", "gate_claim", "junit_xml"]


@dataclass(frozen=True)
class GateResult:
    """What the gate decided, and why, in one line (:attr:`line`) and as data (:meth:`to_dict`)."""

    claim: str
    plan_id: str | None
    verdict: str | None
    acceptable: list[str]
    acceptable_from: str  # "plan" (decision.acceptable) or "--accept"
    failed_checks: list[tuple[str, str, str]] = field(default_factory=list)  # (id, title, sentence)
    warnings: list[tuple[str, str, str]] = field(default_factory=list)
    checks: list[tuple[str, str, str, str]] = field(default_factory=list)  # (id, title, status, sentence)

    @property
    def verdict_ok(self) -> bool:
        return self.verdict in self.acceptable

    @property
    def passed(self) -> bool:
        return self.verdict_ok and not self.failed_checks

    @property
    def line(self) -> str:
        listed = ", ".join(self.acceptable)
        src = "the plan's decision.acceptable" if self.acceptable_from == "plan" else "--accept"
        if self.passed:
            warn = f" ({len(self.warnings)} warning(s))" if self.warnings else ""
            return f"{self.claim}: gate passed: verdict {self.verdict} is acceptable ({src}: {listed}); process " \
                   f"checks pass{warn}"
        why = []
        if not self.verdict_ok:
            why.append(f"verdict {self.verdict} is not acceptable ({src}: {listed})")
        if self.failed_checks:
            names = "; ".join(f"{title}" for _, title, _ in self.failed_checks[:4])
            more = f" and {len(self.failed_checks) - 4} more" if len(self.failed_checks) > 4 else ""
            why.append(f"{len(self.failed_checks)} process check(s) failed: {names}{more} (run `evalspec audit "
                       f"{self.claim}` for the evidence)")
        return f"{self.claim}: gate failed: " + "; ".join(why)

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "plan_id": self.plan_id, "passed": self.passed, "verdict": self.verdict,
                "verdict_acceptable": self.verdict_ok, "acceptable": list(self.acceptable),
                "acceptable_from": self.acceptable_from, "message": self.line,
                "failed_checks": [{"id": i, "title": t, "sentence": s} for i, t, s in self.failed_checks],
                "warnings": [{"id": i, "title": t, "sentence": s} for i, t, s in self.warnings]}


def accepted_list(claim: dict[str, Any], accept: list[str] | None) -> tuple[list[str], str]:
    """The acceptable verdicts: ``--accept`` if given, else the claim's plan ``decision.acceptable``.

    Raises :class:`~evalspec.errors.InputError` (exit 2) on an unknown verdict name (with a
    "did you mean") or when neither says which verdicts are acceptable.
    """
    import difflib

    from evalspec.decision import VERDICTS
    from evalspec.errors import InputError, one_line

    if accept is not None:
        if not accept:
            raise InputError("--accept: name at least one verdict, e.g. --accept worth_acting_on,non_inferior")
        bad = [v for v in accept if v not in VERDICTS]
        if bad:
            close = difflib.get_close_matches(bad[0], list(VERDICTS), n=1, cutoff=0.6)
            guess = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"--accept: unknown verdict {one_line(bad[0])!r}{guess} (verdicts: {', '.join(VERDICTS)})")
        return list(dict.fromkeys(accept)), "--accept"
    registered = (claim.get("plan") or {}).get("registered") if isinstance(claim.get("plan"), dict) else None
    decision = registered.get("decision") if isinstance(registered, dict) else None
    listed = decision.get("acceptable") if isinstance(decision, dict) else None
    if not isinstance(listed, list) or not listed or not all(isinstance(v, str) for v in listed):
        raise InputError("the plan names no acceptable verdicts: add `decision.acceptable: [worth_acting_on, ...]` "
                         "to the plan (before locking it), or give --accept VERDICT,...")
    return list(listed), "plan"


def gate_claim(claim_path: str | Path, *, accept: list[str] | None = None, plan: str | Path | None = None) -> GateResult:
    """Gate the claim at ``claim_path``; raise :class:`~evalspec.errors.InputError` on bad input."""
    from evalspec.audit.core import audit_claim
    from evalspec.report.load import load_claim

    claim = load_claim(Path(claim_path))  # exit 2 on a missing, corrupt or foreign file, before any check
    acceptable, source = accepted_list(claim, accept)
    report = audit_claim(Path(claim_path), plan=plan, reproduce=False)
    checks = [(c.id, c.title, c.status, c.sentence) for c in report.checks if c.id != "reproduction"]
    decision = claim.get("decision") if isinstance(claim.get("decision"), dict) else {}
    return GateResult(
        claim=str(claim_path), plan_id=report.plan_id, verdict=decision.get("verdict"), acceptable=acceptable,
        acceptable_from=source, checks=checks,
        failed_checks=[(i, t, s) for i, t, st, s in checks if st == "fail"],
        warnings=[(i, t, s) for i, t, st, s in checks if st == "warning"])


def junit_xml(results: list[GateResult]) -> str:
    """A JUnit XML report: one test suite per claim, one test case for the verdict and one per process check.

    CI systems that read JUnit (GitLab, Jenkins, Azure, CircleCI) show a failed gate as failed
    tests with the reason as the failure message; warnings are passing cases with a note in
    ``system-out``.
    """
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="evalspec gate")
    total = failures = 0
    for r in results:
        suite = ET.SubElement(root, "testsuite", name=f"evalspec gate: {r.plan_id or r.claim}")
        cases: list[tuple[str, str, str | None, str | None]] = [
            ("verdict", f"verdict {r.verdict}", None if r.verdict_ok else
             f"verdict {r.verdict} is not acceptable (acceptable: {', '.join(r.acceptable)})", None)]
        cases += [(i, t, s if st == "fail" else None, s if st == "warning" else None) for i, t, st, s in r.checks]
        for ident, title, failure, note in cases:
            case = ET.SubElement(suite, "testcase", classname=f"evalspec.gate.{r.plan_id or 'claim'}",
                                 name=f"{ident}: {title}")
            if failure is not None:
                ET.SubElement(case, "failure", message=failure, type="evalspec.gate").text = failure
            if note is not None:
                ET.SubElement(case, "system-out").text = "warning: " + note
        n_fail = sum(f is not None for _, _, f, _ in cases)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(n_fail))
        suite.set("errors", "0")
        total += len(cases)
        failures += n_fail
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
