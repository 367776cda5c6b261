"""The audit's checks: each a small function ``(AuditInputs) -> CheckResult``.

Each returns ``pass``, ``fail`` or ``warning`` with one plain sentence and its evidence.
They follow the ways "Repeat AI evaluations and report uncertainty honestly" says a claim
drifts from its plan: a plan changed after the results were seen, repeated peeking until a
preferred answer appears, subgroups chosen after seeing results, best-of-many passed off as
a first attempt, runs pooled across a model update, outages handled inconsistently, more
data collected without a stopping rule — plus an edited claim or ledger and numbers that do
not reproduce.

"The plan promised" means the plan recorded in the lock (the version fixed before results);
without a lock the claim's own copy of the plan is the only reference, and the lock check
fails.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalspec.audit.evidence import ledger_in_git, lock_in_git
from evalspec import process
from evalspec.audit.model import AuditInputs, CheckResult
from evalspec.audit.recompute import claim_plan_recomputed, claim_text_canonical

__all__ = ["CHECKS"]


def _r(id_: str, title: str, status: str, sentence: str, evidence: list[str] | None = None,
       basis: str = "consistency") -> CheckResult:
    return CheckResult(id_, title, status, sentence, list(evidence or []), basis)  # type: ignore[arg-type]


def _diff(old: Any, new: Any, limit: int = 12) -> list[str]:
    from evalspec.plan import diff_keys

    if not isinstance(old, dict) or not isinstance(new, dict):
        return []
    changes = [c.describe() for c in diff_keys(old, new)]
    return changes[:limit] + ([f"... and {len(changes) - limit} more"] if len(changes) > limit else [])


def _claim_plan(inputs: AuditInputs) -> dict[str, Any]:
    return inputs.claim.get("plan") or {}


def _cov(inputs: AuditInputs) -> dict[str, Any]:
    return inputs.claim.get("coverage") or {}


def _section(plan: dict[str, Any] | None, key: str) -> dict[str, Any]:
    v = (plan or {}).get(key)
    return v if isinstance(v, dict) else {}


# -- integrity ---------------------------------------------------------------------------


def claim_untampered(inputs: AuditInputs) -> CheckResult:
    """The claim's recorded SHA-256 matches its content; its ledger entry agrees with it."""
    from evalspec.ledger import verify_claim_hash

    title = "Claim unchanged since it was written"
    matches, recorded, actual = verify_claim_hash(inputs.claim)
    if matches is None:
        return _r("claim_untampered", title, "warning",
                  "The claim records no SHA-256 of itself, so an edit of the claim cannot be detected from it alone.")
    if matches:
        return _r("claim_untampered", title, "pass", "The claim's content matches the SHA-256 it recorded when written.",
                  [f"sha256 {actual}"])
    evidence = [f"recorded {recorded}", f"content  {actual}"]
    entry = _claim_entry(inputs)
    if entry is not None:
        evidence += [f"differs from its ledger entry: {d}" for d in _entry_vs_claim(entry, inputs.claim)]
    return _r("claim_untampered", title, "fail",
              "The claim was edited after it was written: its content no longer matches the SHA-256 it recorded.",
              evidence)


def _claim_seq(inputs: AuditInputs) -> int | None:
    """The ledger sequence number the claim records for its own look (``integrity.ledger.seq``)."""
    integrity = inputs.claim.get("integrity")
    ref = integrity.get("ledger") if isinstance(integrity, dict) else None
    seq = ref.get("seq") if isinstance(ref, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 else None


def _claim_entry(inputs: AuditInputs) -> Any:
    ref = (inputs.claim.get("integrity") or {}).get("ledger") if isinstance(inputs.claim.get("integrity"), dict) \
        else None
    if not isinstance(ref, dict) or inputs.ledger is None:
        return None
    for e in inputs.ledger:
        if e.seq == ref.get("seq"):
            return e
    return None


def _entry_vs_claim(entry: Any, claim: dict[str, Any]) -> list[str]:
    """Fields of a ledger entry that disagree with the claim, named."""
    plan = claim.get("plan") or {}
    cov = claim.get("coverage") or {}
    units = (cov.get("independent_units") or {}).get("count")
    data = [{"path": f.get("path"), "sha256": f.get("sha256"), "rows": f.get("rows")}
            for f in (claim.get("data") or {}).get("files") or [] if isinstance(f, dict)]
    out = []
    pairs = [("verdict", entry.get("verdict"), (claim.get("decision") or {}).get("verdict")),
             ("plan hash", entry.get("plan_hash"), plan.get("hash")),
             ("units seen", (entry.get("units_seen") or {}).get("count"), units),
             ("time", entry.get("time"), claim.get("created"))]
    for name, led, cl in pairs:
        if led != cl:
            out.append(f"{name}: ledger entry {entry.seq} records {led!r}, the claim says {cl!r}")
    if entry.get("data") != data:
        led = {d.get("path"): d.get("sha256") for d in (entry.get("data") if isinstance(entry.get("data"), list) else [])
               if isinstance(d, dict)}
        cl = {d["path"]: d["sha256"] for d in data}
        for path in sorted(set(led) | set(cl), key=str):
            if led.get(path) != cl.get(path):
                out.append(f"data fingerprint of {path}: ledger entry {entry.seq} records "
                           f"{str(led.get(path))[:16]}..., the claim {str(cl.get(path))[:16]}...")
        if not out or not any(o.startswith("data") for o in out):
            out.append(f"data files: ledger entry {entry.seq} and the claim list different files or rows")
    return out


def ledger_untampered(inputs: AuditInputs) -> CheckResult:
    """The ledger's hash chain is intact and the claim's own entry is in it, agreeing with the claim."""
    from evalspec.ledger import verify, verify_claim_hash

    title = "Ledger of looks intact"
    if inputs.ledger_problem:
        return _r("ledger_untampered", title, "fail", f"The ledger of looks cannot be read: {inputs.ledger_problem}.")
    ref_seq = _claim_seq(inputs)
    if inputs.ledger is None:
        if ref_seq is not None:
            return _r("ledger_untampered", title, "fail",
                      f"The ledger of looks is missing, although the claim records that it was look {ref_seq} in "
                      "it: the ledger was deleted or moved, so the looks before this claim cannot be counted.",
                      [f"expected {inputs.ledger_path}", f"the claim names ledger entry {ref_seq}"])
        return _r("ledger_untampered", title, "warning",
                  "There is no ledger of looks beside the plan, so removed or repeated looks cannot be checked.",
                  [f"expected {inputs.ledger_path}"])
    check = verify(inputs.ledger)
    evidence = [p.message for p in check.problems]
    integrity = inputs.claim.get("integrity") if isinstance(inputs.claim.get("integrity"), dict) else {}
    ref = integrity.get("ledger") if isinstance(integrity.get("ledger"), dict) else None
    if ref is None:
        evidence.append("the claim does not name its ledger entry")
    else:
        entry = _claim_entry(inputs)
        head = max((e.seq for e in inputs.ledger if isinstance(e.seq, int)), default=0)
        if entry is None:
            evidence.append(f"entry {ref.get('seq')}, which the claim names as its own, is not in the ledger "
                            f"(deleted; the ledger's last entry is {head})")
        else:
            _, recorded, _ = verify_claim_hash(inputs.claim)
            if entry.get("prev_sha256") != ref.get("prev_sha256"):
                evidence.append(f"entry {entry.seq}'s link to the entry before it differs from the one the claim "
                                "recorded (the ledger was rewritten before it)")
            if entry.get("claim_sha256") != recorded:
                evidence.append(f"entry {entry.seq} records claim SHA-256 {str(entry.get('claim_sha256'))[:16]}..., "
                                f"the claim {str(recorded)[:16]}...")
            evidence += _entry_vs_claim(entry, inputs.claim)
    if evidence:
        first = check.problems[0].message if check.problems else evidence[0]
        return _r("ledger_untampered", title, "fail",
                  f"The ledger of looks was altered: {first}.", evidence)
    return _r("ledger_untampered", title, "pass",
              f"The ledger's {_entries(len(inputs.ledger))} chain intact and the claim's own entry agrees with it.")


def _entries(n: int) -> str:
    return "one entry" if n == 1 else f"{n} entries"


# -- plan and lock --------------------------------------------------------------------------


def plan_matches(inputs: AuditInputs) -> CheckResult:
    """The plan on disk is the plan the claim was made from."""
    title = "Plan unchanged since the claim"
    if inputs.plan_now is None:
        return _r("plan_matches", title, "fail",
                  f"The plan no longer loads, so it cannot be compared with the claim: {inputs.plan_problem}.")
    from evalspec.plan.canonical import hash_canonical

    now = hash_canonical(inputs.plan_now)
    claimed = _claim_plan(inputs).get("hash")
    if now == claimed:
        return _r("plan_matches", title, "pass", "The plan's hash equals the hash recorded in the claim.", [now])
    return _r("plan_matches", title, "fail",
              "The plan was changed after the claim was made: its hash differs from the one in the claim.",
              [f"claim {claimed}", f"plan  {now}"] + _diff(inputs.plan_claimed, inputs.plan_now))


# -- what was run -------------------------------------------------------------------------


def _norm(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {str(k): _norm(x) for k, x in v.items() if x is not None}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    return v


def _declared_key(a: dict[str, Any]) -> Any:
    params = dict(a)
    params.pop("label", None)
    return repr(sorted(_norm(params).items()))


def analyses_declared(inputs: AuditInputs) -> CheckResult:
    """Every analysis and confirmatory slice in the claim was declared in the locked plan."""
    title = "Analyses as declared"
    promised = inputs.promised
    if promised is None:
        return _r("analyses_declared", title, "warning", "There is no plan to compare the claim's analyses with.")
    declared = [a for a in promised.get("analyses") or [] if isinstance(a, dict)]
    run = [a for a in inputs.claim.get("analyses") or [] if isinstance(a, dict)]
    todo = [_declared_key(a) for a in declared]
    fails, notes = [], []
    for a in run:
        params = a.get("params") if isinstance(a.get("params"), dict) else {"kind": a.get("kind")}
        key = _declared_key(params)
        if key in todo:
            todo.remove(key)
            continue
        label = f"analysis {a.get('index')} ({a.get('kind')}{', ' + str(a.get('label')) if a.get('label') else ''})"
        if params.get("exploratory") is True or "exploratory" in str(a.get("label") or "").lower():
            notes.append(f"{label} was not in the plan and is labelled exploratory")
        else:
            same_kind = [d for d in declared if d.get("kind") == a.get("kind")]
            detail = ""
            if same_kind:
                detail = "; declared as " + ", ".join(_diff(_norm(same_kind[0]), _norm(params), 4))
            fails.append(f"{label} differs from every declared analysis and is not labelled exploratory{detail}")
    for key in todo:
        fails.append(f"a declared analysis was not run: {key[:120]}")
    promised_slices = {s.get("name"): s for s in promised.get("slices") or [] if isinstance(s, dict)}
    claimed_slices = (_claim_plan(inputs).get("registered") or {}).get("slices") or []
    for s in claimed_slices:
        if isinstance(s, dict) and s.get("name") not in promised_slices:
            fails.append(f"slice {s.get('name')!r} (column {s.get('column')!r}) is reported as confirmatory but was "
                         "not declared in the locked plan: a subgroup chosen after seeing results")
        elif isinstance(s, dict) and _norm(promised_slices[s.get("name")]) != _norm(s):
            fails.append(f"slice {s.get('name')!r} was redefined after locking: "
                         + "; ".join(_diff(_norm(promised_slices[s.get('name')]), _norm(s), 4)))
    if fails:
        return _r("analyses_declared", title, "fail",
                  "The claim reports analyses or slices the plan did not declare, without labelling them exploratory.",
                  fails + notes)
    if notes:
        return _r("analyses_declared", title, "warning",
                  "Every declared analysis was run; the extra ones are labelled exploratory.", notes)
    return _r("analyses_declared", title, "pass",
              f"The claim runs exactly the {len(declared)} analyses and {len(promised_slices)} slice(s) declared.")


def attempt_rule(inputs: AuditInputs) -> CheckResult:
    """One attempt rule for every candidate, the one the plan promised."""
    title = "One attempt rule for all candidates"
    cov = _cov(inputs)
    used = cov.get("attempt_rule") or {}
    promised = _section(inputs.promised, "attempts")
    fails, warns, evidence = [], [], []
    p_rule, p_k = promised.get("rule", "first"), promised.get("k")
    if used.get("rule") != p_rule or (used.get("k") or None) != (p_k or None):
        def show(rule: Any, k: Any) -> str:
            return f"{rule} (k={k})" if rule in ("best_of_k", "pass_at_k", "pass_hat_k") else str(rule)
        fails.append(f"the plan promised {show(p_rule, p_k)}; the claim reports {show(used.get('rule'), used.get('k'))}")
    planned = promised.get("repeats", (cov.get("repeats") or {}).get("planned"))
    reps = cov.get("repeats") or {}
    if isinstance(planned, int) and isinstance(reps.get("observed_max"), int) and reps["observed_max"] > planned:
        warns.append(f"up to {reps['observed_max']} attempts per case were recorded, {planned} planned")
    per = {}
    for name, c in (cov.get("candidates") or {}).items():
        if isinstance(c, dict) and c.get("cases"):
            per[name] = c.get("rows", 0) / c["cases"]
    if len(per) > 1 and max(per.values()) > min(per.values()) * 1.5 + 1e-9:
        fails.append("attempts per case differ between candidates: "
                     + ", ".join(f"{n} {v:.2g}" for n, v in per.items()))
    evidence.append(f"rule used: {used.get('rule')}" + (f" (k={used.get('k')})" if used.get("k") else ""))
    if fails:
        return _r("attempt_rule", title, "fail",
                  "The attempt rule is not the one the plan promised for every candidate: "
                  "best-of-many and first-attempt answer different questions.", fails + warns + evidence)
    if warns:
        return _r("attempt_rule", title, "warning",
                  "The planned attempt rule was applied to every candidate, but more attempts were made than planned.",
                  warns + evidence)
    return _r("attempt_rule", title, "pass", "The attempt rule the plan promised was applied to every candidate.",
              evidence)


# -- data and reproduction --------------------------------------------------------------


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a regular file's bytes (as the results reader records it); anything else is an InputError."""
    from evalspec._files import special_kind
    from evalspec.errors import InputError
    from evalspec.limits import MAX_RESULTS_BYTES

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        kind = special_kind(st.st_mode)
        if kind is not None or st.st_size > MAX_RESULTS_BYTES:
            raise InputError(f"{path}: not a results file evalspec reads ({kind or 'larger than the limit'})")
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def data_fingerprints(inputs: AuditInputs) -> CheckResult:
    title = "Data is the data the claim was made from"
    if inputs.data_problem:
        return _r("data_fingerprints", title, "fail", f"The data given does not match the claim: {inputs.data_problem}.")
    if inputs.data is None:
        return _r("data_fingerprints", title, "warning",
                  "No results files were given or found, so the data fingerprints were not checked.")
    files = [f for f in (inputs.claim.get("data") or {}).get("files") or [] if isinstance(f, dict)]
    recorded = {f.get("path"): f for f in files}
    for f in files:  # files a tool log was read with (an lm-eval results file), from its provenance
        for extra in (f.get("provenance") or {}).get("files") or []:
            if isinstance(extra, dict):
                recorded.setdefault(extra.get("path"), extra)
    fails, evidence = [], []
    for rel, path in inputs.data:
        want = (recorded.get(rel) or {}).get("sha256")
        got = sha256_file(path)
        if want != got:
            fails.append(f"{rel}: SHA-256 {got[:16]}... differs from the claim's {str(want)[:16]}... "
                         f"(file {path})")
        else:
            evidence.append(f"{rel}: {got}")
    unreachable = _remote_fingerprints(inputs, recorded, fails, evidence)
    if fails:
        return _r("data_fingerprints", title, "fail",
                  "The results changed since the claim was made: a file's fingerprint differs from the one recorded.",
                  fails + evidence, basis="recomputed")
    if unreachable:
        return _r("data_fingerprints", title, "warning",
                  "Some results objects could not be re-read from their object store, so their fingerprints were not "
                  "checked.", unreachable + evidence, basis="recomputed")
    return _r("data_fingerprints", title, "pass", "Every results file has the SHA-256 recorded in the claim.", evidence,
              basis="recomputed")


def _remote_fingerprints(inputs: AuditInputs, recorded: dict[Any, Any], fails: list[str],
                         evidence: list[str]) -> list[str]:
    """Re-read each object-store object of the claim where it is; the ones that could not be read.

    The SHA-256 is of the bytes the store serves now (the run recorded the SHA-256 of the bytes
    it read), so a replaced object is caught whatever its ETag or modification time says; the
    ETag the run recorded (S3 reports one) is compared too and said beside it.
    """
    from evalspec.results.lake import object_sha256

    unreachable = []
    for uri in inputs.remote:
        record = recorded.get(uri) or {}
        want = record.get("sha256")
        got, why = object_sha256(uri)
        if got is None:
            unreachable.append(f"{uri}: could not be re-read ({why})")
        elif got != want:
            fails.append(f"{uri}: SHA-256 {got[:16]}... of the object now differs from the claim's {str(want)[:16]}...")
        else:
            evidence.append(f"{uri}: {got} (re-read from the object store{_etag_words(record, why)})")
    return unreachable


def _etag_words(record: dict[str, Any], etag_now: str) -> str:
    """What the object's ETag says beside a matching SHA-256 (an ETag is the store's, not a hash of the bytes)."""
    etag_then = (record.get("location") or {}).get("etag") if isinstance(record.get("location"), dict) else None
    if not etag_then:
        return "; the claim recorded no ETag"
    if etag_then == etag_now:
        return f"; ETag {etag_then} as recorded"
    return f"; its ETag is now {etag_now or 'not reported'}, recorded {etag_then}: rewritten with the same bytes"


def reproduction(inputs: AuditInputs) -> CheckResult:
    from evalspec.audit.reproduce import reproduce

    title = "Numbers reproduce"
    if not inputs.reproduce:
        return _r("reproduction", title, "warning", "Reproduction was not asked for (--no-reproduce).")
    if inputs.data is None or inputs.data_problem:
        return _r("reproduction", title, "warning",
                  "The numbers were not re-run: the claim's results files were not given or not found.")
    fp = data_fingerprints(inputs)
    if fp.status == "fail":
        return _r("reproduction", title, "warning",
                  "The numbers were not re-run because the data differs from the claim's (see the data check).")
    return reproduce(inputs)


def _shared(check: Callable[[Any], Any]) -> Callable[[AuditInputs], CheckResult]:
    """An audit check made by the process check ``run`` also records (:mod:`evalspec.process`)."""

    def audit_check(inputs: AuditInputs) -> CheckResult:
        f = check(inputs.process_facts())
        return _r(f.id, f.title, f.status, f.sentence, f.evidence)

    audit_check.__name__ = check.__name__
    audit_check.__doc__ = check.__doc__
    return audit_check


plan_locked = _shared(process.plan_locked)
locked_before_results = _shared(process.locked_before_results)
model_versions = _shared(process.model_versions)
missing_within_policy = _shared(process.missing_within_policy)
units_within_max = _shared(process.units_within_max)
decision_date = _shared(process.decision_date)
looks_within_plan = _shared(process.looks_within_plan)
period_data_fresh = _shared(process.period_data_fresh)
deviations_disclosed = _shared(process.deviations_disclosed)

#: Every check, in the order printed. Each result says what its PASS can show (``basis``): see
#: :data:`evalspec.audit.model.BASIS_WORDS` and docs/audit.md.
CHECKS: list[Callable[[AuditInputs], CheckResult]] = [
    plan_matches, plan_locked, locked_before_results, lock_in_git, analyses_declared, attempt_rule, model_versions,
    missing_within_policy, units_within_max, decision_date, looks_within_plan, period_data_fresh, deviations_disclosed,
    claim_untampered,
    claim_text_canonical, claim_plan_recomputed, ledger_untampered, ledger_in_git, data_fingerprints, reproduction,
]
