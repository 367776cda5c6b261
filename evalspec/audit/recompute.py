"""Checks that recompute what the claim says about its own plan, without the data.

The claim holds the plan's text (``plan.source``). Everything the claim says about that
plan — its hash, the registered (validated) plan, the id, title, question, decision owner,
population and the stated systematic limits — is derived again from that text here and
compared; a claim whose plan text was swapped while its hash was kept, or whose question
was edited and the claim resealed, fails. This shows the claim agrees with its own plan
text; it cannot show the text is the one that was locked (the lock and git checks do).
"""

from __future__ import annotations

from typing import Any

from evalspec.audit.model import AuditInputs, CheckResult

__all__ = ["claim_plan_recomputed", "claim_text_canonical"]


def _plan_from_source(source: str, name: str) -> tuple[Any, str | None]:
    """(validated Plan, None) or (None, why it does not load)."""
    from evalspec.errors import EvalspecError
    from evalspec.plan.load import validate_document
    from evalspec.plan.source import parse_source

    try:
        doc = parse_source(source, name)
    except EvalspecError as exc:
        return None, str(exc).splitlines()[0]
    plan, diags = validate_document(doc)
    if plan is None:
        return None, diags[0].headline() if diags else "it does not validate"
    return plan, None


def _short(v: Any, limit: int = 70) -> str:
    from evalspec.audit.reproduce import _short as short

    return short(v, limit)


def claim_plan_recomputed(inputs: AuditInputs) -> CheckResult:
    """The claim's plan hash, registered plan and plan fields follow from its own plan text."""
    from evalspec.audit.reproduce import compare
    from evalspec.claim import normalize
    from evalspec.plan.canonical import canonical_data, hash_canonical

    title = "Claim agrees with its own plan text"
    plan = inputs.claim.get("plan") if isinstance(inputs.claim.get("plan"), dict) else {}
    source = plan.get("source")
    if not isinstance(source, str):
        return CheckResult("claim_plan_recomputed", title, "fail",
                           "The claim holds no copy of its plan's text, so its plan hash cannot be recomputed.",
                           basis="recomputed")
    parsed, why = _plan_from_source(source, "plan.source")
    if parsed is None:
        return CheckResult("claim_plan_recomputed", title, "fail",
                           "The plan text the claim holds does not load as a plan, so the claim cannot have been "
                           "made from it.", [str(why)], basis="recomputed")
    data = canonical_data(parsed)
    digest = hash_canonical(data)
    problems: list[str] = []
    if plan.get("hash") != digest:
        problems.append(f"plan.hash: the claim records {plan.get('hash')}, its plan text hashes to {digest}")
    registered = plan.get("registered")
    try:
        reg_hash = hash_canonical(canonical_data(registered)) if isinstance(registered, dict) else None
    except Exception:  # noqa: BLE001 - an edited registered plan that no longer validates
        reg_hash = None
    if reg_hash != digest:
        diffs = compare(normalize(registered), normalize(parsed.model_dump(mode="json")), "plan.registered")
        problems.append("plan.registered is not the plan its text validates to"
                        + (f": {diffs[0]}" if diffs else ""))
        problems += diffs[1:6]
    expect = {"plan.id": parsed.id, "plan.title": parsed.title, "plan.question": parsed.question,
              "plan.decision_owner": parsed.decision_owner, "plan.population": parsed.population,
              "systematic_limits.stated": list(parsed.systematic_limits)}
    limits = inputs.claim.get("systematic_limits") if isinstance(inputs.claim.get("systematic_limits"), dict) else {}
    cov = inputs.claim.get("coverage") if isinstance(inputs.claim.get("coverage"), dict) else {}
    have = {"plan.id": plan.get("id"), "plan.title": plan.get("title"), "plan.question": plan.get("question"),
            "plan.decision_owner": plan.get("decision_owner"), "plan.population": plan.get("population"),
            "systematic_limits.stated": limits.get("stated")}
    if "population" in cov:
        expect["coverage.population"] = parsed.population
        have["coverage.population"] = cov.get("population")
    for key, want in expect.items():
        if normalize(have[key]) != normalize(want):
            problems.append(f"{key}: the claim says {_short(have[key])}, its plan text says {_short(want)}")
    if problems:
        return CheckResult("claim_plan_recomputed", title, "fail",
                           "The claim says things about its plan that its own plan text does not: it was edited "
                           "after it was made (and perhaps resealed).", problems, basis="recomputed")
    return CheckResult("claim_plan_recomputed", title, "pass",
                       "The claim's plan hash, registered plan, question, title and stated limits all follow from "
                       "the plan text it holds.", [digest], basis="recomputed")


def claim_text_canonical(inputs: AuditInputs) -> CheckResult:
    """The claim file is byte for byte the canonical text of its content (as ``evalspec run`` writes it)."""
    from evalspec.claim import dumps

    title = "Claim file as evalspec wrote it"
    text = inputs.claim_text
    if text is None:
        return CheckResult("claim_text_canonical", title, "warning", "The claim's file text was not read.")
    from evalspec.audit.reproduce import compare
    from evalspec.claim import normalize

    raw = inputs.claim_raw if inputs.claim_raw is not None else inputs.claim
    # what the file holds that the record does not (a field the record gained since is not an edit)
    extra = [d for d in compare(normalize(raw), normalize(inputs.claim), "", limit=40)
             if ": not in the claim, re-run gives " not in d][:8]
    if extra:
        return CheckResult("claim_text_canonical", title, "fail",
                           "The claim file holds content the claim record does not have (keys evalspec never writes "
                           "or values of another type): it was edited by hand.", extra, basis="recomputed")
    try:
        again = dumps(raw)
    except (TypeError, ValueError) as exc:
        return CheckResult("claim_text_canonical", title, "fail", "The claim's content cannot be written back as a "
                           "claim.", [f"{type(exc).__name__}: {exc}"], basis="recomputed")
    if again == text:
        return CheckResult("claim_text_canonical", title, "pass",
                           "The claim file is exactly the canonical text of its content (nothing added beside it).",
                           basis="recomputed")
    a, b = text.splitlines(), again.splitlines()
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return CheckResult("claim_text_canonical", title, "warning",
                       "The claim file is not laid out as evalspec writes it: it was reformatted or edited by hand "
                       "(its content is the claim record's; the other checks read that).",
                       [f"first difference at line {at + 1}"], basis="recomputed")
