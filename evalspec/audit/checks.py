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

import datetime as _dt
from collections.abc import Callable
from typing import Any

from evalspec.audit.evidence import ledger_in_git, lock_in_git
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


def _mapped_column(inputs: AuditInputs, role: str) -> bool:
    """Whether the plan the claim was made from names a results column for ``role`` (data.columns)."""
    plan = inputs.plan_claimed or inputs.promised
    columns = _section(_section(plan, "data"), "columns")
    return bool(columns.get(role)) or not columns  # without the plan's columns, do not blame the plan


def _parse_time(text: Any) -> _dt.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t


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
        led = {d.get("path"): d.get("sha256") for d in entry.get("data") or [] if isinstance(d, dict)}
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
              f"The ledger's {len(inputs.ledger)} entries chain intact and the claim's own entry agrees with it.")


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


def plan_locked(inputs: AuditInputs) -> CheckResult:
    """The plan has an intact lock, and the claim was made from the locked plan."""
    from evalspec.plan.canonical import hash_canonical

    title = "Claim made from the locked plan"
    lock = inputs.lock
    if inputs.lock_problem:
        return _r("plan_locked", title, "fail", f"The lock cannot be read: {inputs.lock_problem}.")
    if lock is None:
        return _r("plan_locked", title, "fail",
                  "The plan was never locked, so nothing shows it was fixed before the results were seen.")
    evidence = []
    stored = hash_canonical(lock.plan)
    if stored != lock.hash:
        return _r("plan_locked", title, "fail",
                  "The lock file was edited: the plan stored in it no longer hashes to the hash it records.",
                  [f"lock records {lock.hash}", f"its plan hashes to {stored}"]
                  + [f"lock's plan vs the plan now: {d}" for d in _diff(inputs.plan_now, lock.plan)])
    claimed = _claim_plan(inputs).get("hash")
    if lock.hash != claimed:
        return _r("plan_locked", title, "fail",
                  "The claim was made from a plan that differs from the locked plan.",
                  [f"lock  {lock.hash} (locked {lock.locked_at})", f"claim {claimed}"]
                  + [f"locked -> as run: {d}" for d in _diff(lock.plan, inputs.plan_claimed)])
    if lock.history:
        evidence = [f"re-locked with --force; earlier lock {h.get('hash')} of {h.get('locked_at')}"
                    for h in lock.history if isinstance(h, dict)]
        return _r("plan_locked", title, "warning",
                  f"The claim matches the lock, but the plan was re-locked {len(lock.history)} time(s) "
                  "after its first lock; check the earlier versions were not changed after seeing results.", evidence)
    return _r("plan_locked", title, "pass", f"The claim was made from the plan as locked at {lock.locked_at}.",
              [lock.hash])


def locked_before_results(inputs: AuditInputs) -> CheckResult:
    """The lock (and, in git, the plan's first commit) predates the first result."""
    title = "Plan fixed before the first result"
    dates = _cov(inputs).get("run_dates") or {}
    first = _parse_time(dates.get("first")) if isinstance(dates, dict) else None
    lock = inputs.lock
    if lock is None:
        return _r("locked_before_results", title, "fail",
                  "The plan has no lock, so nothing shows it was fixed before the results.")
    existing, looked = _existing_data(inputs)
    locked = _parse_time(lock.locked_at)
    if looked and first is None:  # no run times to date the results: the lock's own record decides
        return _r("locked_before_results", title, "fail",
                  "The claim analyses results that already existed when the plan was locked: the lock's "
                  "existing-data declaration lists them, so the plan was fixed after they could be seen.",
                  existing + [f"analysed and present at lock: {p}" for p in looked[:10]])
    lock_times = [locked] + [_parse_time(h.get("locked_at")) for h in lock.history if isinstance(h, dict)]
    first_lock = min((t for t in lock_times if t is not None), default=None)
    early = _looks_before_lock(inputs, first_lock)
    if early:
        return _r("locked_before_results", title, "fail",
                  "The ledger of looks shows the data was looked at before the plan was locked.",
                  early + [f"locked {lock.locked_at}"])
    if first is None:
        if not _mapped_column(inputs, "timestamp"):
            return _r("locked_before_results", title, "warning",
                      "The plan maps no time column (data.columns.timestamp), so the claim holds no run times and it "
                      "cannot be shown that the plan was locked before the results; name the results' time column "
                      "there (tool logs: timestamp).", [f"locked {lock.locked_at}"] + existing)
        return _r("locked_before_results", title, "warning",
                  "The results carry no timestamps, so it cannot be shown that the plan was locked before them.",
                  [f"locked {lock.locked_at}"] + existing)
    evidence = [f"first result {dates.get('first')}", f"locked {lock.locked_at}"] + existing
    problems = []
    if locked is not None and locked > first:
        problems.append("the plan as run was locked after the first result")
        if first_lock is not None and first_lock <= first:
            evidence.append("an earlier version was locked before the results and then replaced with --force")
    if inputs.git_first_commit is not None:
        evidence.append(f"plan first committed {inputs.git_first_commit}")
        committed = _parse_time(inputs.git_first_commit)
        if committed is not None and committed > first:
            problems.append("the plan was first committed to git after the first result")
    elif inputs.git_tracked is False:
        evidence.append("the plan is in a git repository but was never committed")
    if problems:
        return _r("locked_before_results", title, "fail",
                  f"The plan was fixed only after results existed: {'; '.join(problems)}.", evidence)
    if inputs.git_tracked is False:
        return _r("locked_before_results", title, "warning",
                  "The plan was locked before the first result, but it is not committed to the repository it is in.",
                  evidence)
    return _r("locked_before_results", title, "pass", "The plan was locked before the first result was recorded.",
              evidence)


def _existing_data(inputs: AuditInputs) -> tuple[list[str], list[str]]:
    """The lock's "existing data" declarations (evidence lines) and the claim's files among them.

    ``evalspec lock`` records which results the plan named were present when it was locked
    (OSF's "existing data"). A pilot that was present but is not analysed is honest; a claim
    analysing those very files (same SHA-256) is a look before the lock.
    """
    lock = inputs.lock
    raw = getattr(lock, "raw", None)
    decls = [raw.get("existing_data")] if isinstance(raw, dict) else []
    decls += [h.get("existing_data") for h in getattr(lock, "history", []) if isinstance(h, dict)]
    present: dict[str, str] = {}
    evidence = []
    for d in decls:
        if not isinstance(d, dict):
            continue
        files = [f for f in d.get("files") or [] if isinstance(f, dict) and isinstance(f.get("sha256"), str)]
        present.update({f["sha256"]: str(f.get("path")) for f in files})
        if d.get("state") == "prior_to_creation":
            evidence.append("existing data when locked: none (the plan's results did not exist yet)")
        elif files:
            evidence.append(f"existing data when locked: {len(files)} file(s) the plan names (e.g. a pilot)")
    claim_files = (inputs.claim.get("data") or {}).get("files") if isinstance(inputs.claim.get("data"), dict) else None
    looked = [str(f.get("path")) for f in claim_files or []
              if isinstance(f, dict) and f.get("sha256") in present]
    if present and not looked:
        evidence.append("the claim analyses none of the files that existed when the plan was locked")
    return evidence, looked


def _looks_before_lock(inputs: AuditInputs, first_lock: _dt.datetime | None) -> list[str]:
    """Ledger entries of this plan made before its first lock, or when it had no lock; and a lock time
    that is not the one the claim recorded."""
    out: list[str] = []
    recorded = _section(_claim_plan(inputs), "lock").get("locked_at")
    lock = inputs.lock
    known = {lock.locked_at} | {h.get("locked_at") for h in lock.history if isinstance(h, dict)}
    if isinstance(recorded, str) and recorded not in known:
        out.append(f"the claim recorded the lock's time as {recorded}; the lock now says {lock.locked_at} "
                   "(the lock was edited after the claim)")
    found = _looks(inputs)
    if found is None:
        return out
    for e in found[0]:
        t = _parse_time(e.get("time"))
        if e.get("lock_hash") is None:
            out.append(f"ledger entry {e.seq} ({e.get('time')}): the data was looked at while the plan had no lock")
        elif t is not None and first_lock is not None and t < first_lock:
            out.append(f"ledger entry {e.seq} ({e.get('time')}) is older than the plan's first lock")
    return out


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


def model_versions(inputs: AuditInputs) -> CheckResult:
    """No candidate pools runs across model versions the plan did not declare, or ran another version."""
    title = "Model versions as declared"
    cands = _cov(inputs).get("candidates") or {}
    promised = _section(inputs.promised, "candidates")
    plan = "the locked plan" if inputs.lock is not None else "the plan"
    pooled, changed, warns, evidence = [], [], [], []
    for name, c in cands.items():
        if not isinstance(c, dict):
            continue
        seen = c.get("versions_seen") or {}
        declared = (promised.get(name) or {}).get("version") if isinstance(promised.get(name), dict) else None
        allowed = set(declared) if isinstance(declared, list) else ({declared} if declared else set())
        if seen:
            evidence.append(f"{name}: " + ", ".join(f"{v} ({n} rows)" for v, n in seen.items()))
        if len(seen) > 1:
            if isinstance(declared, list) and set(seen) <= allowed:
                warns.append(f"{name} pools versions {', '.join(seen)}, declared for pooling in {plan}")
            else:
                pooled.append(f"{name} pools runs across versions {', '.join(seen)} that {plan} "
                              f"did not declare ({declared!r})")
        elif allowed and seen and not set(seen) <= allowed:
            changed.append(f"{name} ran as version {next(iter(seen))}, {plan} declared {declared!r}")
    if pooled or changed:
        sentence = (f"Runs from different model versions were pooled without {plan} declaring it." if pooled else
                    f"A candidate ran as a model version other than the one {plan} declared (nothing was pooled); "
                    "the result is about the version that ran.")
        if pooled and changed:
            sentence += f" Another candidate ran as a version other than the one {plan} declared."
        return _r("model_versions", title, "fail", sentence, pooled + changed + evidence)
    if warns:
        return _r("model_versions", title, "warning",
                  f"Runs of several model versions were pooled, as {plan} declared; the result is not one "
                  "stable configuration.", warns + evidence)
    if not any(isinstance(c, dict) and c.get("versions_seen") for c in cands.values()):
        if not _mapped_column(inputs, "model_version"):
            return _r("model_versions", title, "warning",
                      "The plan maps no model-version column (data.columns.model_version), so the claim records no "
                      "version served and pooling across a model update cannot be ruled out; name that column there "
                      "(tool logs: model_version).")
        return _r("model_versions", title, "warning",
                  "The results record no model version, so pooling across a model update cannot be ruled out.")
    if not any(isinstance(p, dict) and p.get("version") for p in promised.values()):
        return _r("model_versions", title, "pass", f"Every candidate ran as one model version ({plan} declares no "
                  "version to check it against).", evidence)
    return _r("model_versions", title, "pass", "Every candidate ran as one declared model version.", evidence)


def missing_within_policy(inputs: AuditInputs) -> CheckResult:
    """Missing outcomes handled by the promised policy, within its limit, alike for every candidate."""
    title = "Missing outcomes within policy"
    miss = _cov(inputs).get("missing") or {}
    promised = _section(inputs.promised, "missing")
    policy, limit = promised.get("policy", "count_as_fail"), promised.get("max_fraction", 0.05)
    fails, warns, evidence = [], [], []
    fracs = {}
    for name, m in miss.items():
        if not isinstance(m, dict):
            continue
        frac = m.get("fraction") or 0.0
        fracs[name] = frac
        evidence.append(f"{name}: {m.get('missing', 0)} of {m.get('attempts', '?')} missing ({frac:.1%}), "
                        f"policy {m.get('policy')}")
        if m.get("policy") not in (None, policy):
            fails.append(f"{name}'s missing outcomes were handled as {m.get('policy')!r}; the plan promised {policy!r}")
        if isinstance(limit, (int, float)) and frac > limit:
            fails.append(f"{name} has {frac:.1%} missing, above the plan's limit of {limit:.1%}")
    if len(fracs) > 1:
        hi, lo = max(fracs.values()), min(fracs.values())
        if hi >= 0.01 and hi > 3 * lo + 0.005:
            worst = max(fracs, key=lambda k: fracs[k])
            warns.append(f"{worst} lost far more outcomes ({hi:.1%}) than the others (as low as {lo:.1%}): "
                         "an outage that hit one candidate")
    if fails:
        return _r("missing_within_policy", title, "fail",
                  "Missing outcomes were not handled as the plan promised.", fails + warns + evidence)
    if warns:
        return _r("missing_within_policy", title, "warning",
                  "Missing outcomes are within the policy but uneven between candidates; check the failure record.",
                  warns + evidence)
    return _r("missing_within_policy", title, "pass",
              "Missing outcomes were handled by the planned policy and stayed within its limit.", evidence)


# -- stopping -----------------------------------------------------------------------------


def units_within_max(inputs: AuditInputs) -> CheckResult:
    title = "Units within max_units"
    stop = _section(inputs.promised, "stopping")
    units = _cov(inputs).get("independent_units") or {}
    count, limit = units.get("count"), stop.get("max_units")
    if limit is None:
        return _r("units_within_max", title, "warning",
                  "The plan sets no max_units, so collecting more data until a preferred answer appears is not ruled "
                  "out by a stopping rule.", [f"{count} {units.get('unit')} analysed"])
    if isinstance(count, int) and count > limit:
        return _r("units_within_max", title, "fail",
                  f"{count} independent {units.get('unit')} were analysed, more than the plan's max_units of {limit}.",
                  [f"max_units {limit}", f"analysed {count}"])
    return _r("units_within_max", title, "pass",
              f"{count} independent {units.get('unit')} were analysed, within the planned {limit}.")


def decision_date(inputs: AuditInputs) -> CheckResult:
    title = "On or before the decision date"
    stop = _section(inputs.promised, "stopping")
    date = stop.get("decision_date")
    dates = _cov(inputs).get("run_dates") or {}
    created = inputs.claim.get("created")
    if not date:
        return _r("decision_date", title, "warning", "The plan sets no decision date.")
    evidence = [f"decision date {date}", f"claim made {created}"]
    late = []
    if isinstance(dates, dict) and dates.get("last"):
        evidence.append(f"last result {dates.get('last')}")
        if str(dates["last"])[:10] > str(date):
            late.append(f"results were collected until {dates['last']}")
    if isinstance(created, str) and created[:10] > str(date):
        late.append(f"the claim was made on {created[:10]}")
    if late:
        return _r("decision_date", title, "fail", f"The run went past the planned decision date {date}: "
                  f"{'; '.join(late)}.", evidence)
    return _r("decision_date", title, "pass", f"Results and claim are dated on or before the decision date {date}.",
              evidence)


def _looks(inputs: AuditInputs) -> tuple[list[Any], int] | None:
    """Ledger entries of this plan up to the claim's entry, and the number of distinct data states."""
    if inputs.ledger is None:
        return None
    ref = (inputs.claim.get("integrity") or {}).get("ledger") if isinstance(inputs.claim.get("integrity"), dict) \
        else None
    upto = ref.get("seq") if isinstance(ref, dict) and isinstance(ref.get("seq"), int) else None
    plan = _claim_plan(inputs)
    name = inputs.plan_path.name if inputs.plan_path is not None else None
    mine = [e for e in inputs.ledger if e.get("plan_file") == name and e.get("plan_id") == plan.get("id")
            and (upto is None or (isinstance(e.seq, int) and e.seq <= upto))]
    states = {repr([(d.get("path"), d.get("sha256")) for d in e.get("data") or [] if isinstance(d, dict)])
              for e in mine}
    return mine, len(states)


def looks_within_plan(inputs: AuditInputs) -> CheckResult:
    """Looks at the data (distinct data states in the ledger) within the planned number."""
    title = "Looks within the planned number"
    stop = _section(inputs.promised, "stopping")
    planned = stop.get("looks", 1)
    rule = stop.get("rule", "fixed")
    found = _looks(inputs)
    if found is None:
        seq = _claim_seq(inputs)
        if seq is not None and seq > planned:
            return _r("looks_within_plan", title, "fail",
                      f"The ledger of looks is missing, and the claim records that it was look {seq} in it, more "
                      f"than the {planned} planned: without the ledger nothing shows those looks were at other "
                      "plans.", [f"the claim names ledger entry {seq}", f"expected {inputs.ledger_path}"])
        return _r("looks_within_plan", title, "warning",
                  "There is no ledger of looks, so how often the data was looked at cannot be checked.")
    entries, looks = found
    hashes = sorted({str(e.get("plan_hash")) for e in entries})
    evidence = [f"entry {e.seq}: {e.get('time')}, {(e.get('units_seen') or {}).get('count')} units, verdict "
                f"{e.get('verdict')}" for e in entries[-12:]]
    if len(hashes) > 1:
        evidence.append(f"the plan changed between looks ({len(hashes)} different plan hashes)")
    level = _section(inputs.promised, "decision").get("confidence_level", 0.95)
    anytime = any(isinstance(a, dict) and a.get("kind") == "sequential_difference"
                  for a in inputs.claim.get("analyses") or [])
    if rule == "sequential" and looks > 1 and not anytime:
        return _r("looks_within_plan", title, "fail",
                  f"The data was looked at {looks} times under a sequential plan, but the claim's intervals are "
                  f"fixed-sample ones: without an anytime-valid method they no longer hold at the stated {level:.0%} "
                  "level.", evidence + ["no sequential_difference analysis in the claim"])
    if looks > planned:
        if rule == "fixed":
            sentence = (f"The data was looked at {looks} times, but the plan is a fixed design with one look: its "
                        f"intervals no longer hold at the stated {level:.0%} level (repeated peeking).")
        else:
            sentence = f"The data was looked at {looks} times, more than the {planned} planned looks."
        return _r("looks_within_plan", title, "fail", sentence, evidence)
    if len(hashes) > 1:
        return _r("looks_within_plan", title, "warning",
                  f"{looks} look(s), within the planned {planned}, but the plan changed between looks.", evidence)
    return _r("looks_within_plan", title, "pass", f"{looks} look(s) at the data, within the planned {planned}.",
              evidence)


# -- data and reproduction --------------------------------------------------------------


def data_fingerprints(inputs: AuditInputs) -> CheckResult:
    from evalspec.audit.core import sha256_file

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
    if fails:
        return _r("data_fingerprints", title, "fail",
                  "The results changed since the claim was made: a file's fingerprint differs from the one recorded.",
                  fails + evidence, basis="recomputed")
    return _r("data_fingerprints", title, "pass", "Every results file has the SHA-256 recorded in the claim.", evidence,
              basis="recomputed")


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


def deviations_disclosed(inputs: AuditInputs) -> CheckResult:
    """The deviations the run itself recorded, listed for the reader (never a failure on their own)."""
    title = "Deviations recorded by the run"
    devs = [d for d in inputs.claim.get("deviations") or [] if isinstance(d, dict)]
    if not devs:
        return _r("deviations_disclosed", title, "pass", "The run recorded no deviation from the plan.")
    return _r("deviations_disclosed", title, "warning",
              f"The run recorded {len(devs)} deviation(s) from the plan; they are disclosed in the claim and report.",
              [f"{d.get('code')}: {d.get('message')}" for d in devs])


#: Every check, in the order printed. Each result says what its PASS can show (``basis``): see
#: :data:`evalspec.audit.model.BASIS_WORDS` and docs/audit.md.
CHECKS: list[Callable[[AuditInputs], CheckResult]] = [
    plan_matches, plan_locked, locked_before_results, lock_in_git, analyses_declared, attempt_rule, model_versions,
    missing_within_policy, units_within_max, decision_date, looks_within_plan, deviations_disclosed, claim_untampered,
    claim_text_canonical, claim_plan_recomputed, ledger_untampered, ledger_in_git, data_fingerprints, reproduction,
]
