"""The process checks ``run`` and ``audit`` share: was the claim made the way the plan promised?

One function per check, each ``(ProcessFacts) -> Finding``: the lock (and its re-locks), the
lock's time against the first result, model versions, missing outcomes, the stopping rule
(units, decision date, looks in the ledger) and the run's own deviations (data read from
outside the plan's folder among them). ``evalspec run`` evaluates them when it writes the
claim and records every finding that is not a pass in the claim's ``process`` section
(:func:`process_record`); ``evalspec audit`` runs the very same functions on what it finds
beside the claim (:meth:`evalspec.audit.model.AuditInputs.process_facts`), so the report's
process line and the audit cannot disagree about the same lock, ledger and claim. The audit
may know more (the plan's git history, a lock replaced after the claim): then it says more.

Every finding carries a ``short`` phrase for the report's one-line process status and the
deviation codes it already states (``covers``), so the report says each fact once.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["EXPLORATORY", "PROCESS_CHECKS", "Finding", "ProcessFacts", "attach_process", "claimed_plan", "parse_time",
           "facts_for_run", "process_line", "process_record"]

Status = Literal["pass", "fail", "warning"]

#: Checks whose failure means the claim cannot be read as confirmatory.
EXPLORATORY = frozenset({"plan_locked", "locked_before_results", "looks_within_plan"})


@dataclass(frozen=True)
class Finding:
    """One process check: ``status``, one plain ``sentence``, its ``evidence``.

    ``short`` is the phrase the report's process line uses (None for a pass); ``covers`` the
    codes of the claim's deviations this finding already states.
    """

    id: str
    title: str
    status: Status
    sentence: str
    evidence: list[str] = field(default_factory=list)
    short: str | None = None
    covers: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        return {"check": self.id, "title": self.title, "status": self.status, "sentence": self.sentence,
                "short": self.short, "evidence": list(self.evidence), "covers": list(self.covers)}


@dataclass
class ProcessFacts:
    """What the process checks read: the claim, the lock beside its plan, the ledger of looks.

    ``ledger`` holds the plan's ledger entries up to and including the claim's own look (at
    run time: the entries before it and the entry this run is about to append).
    """

    claim: dict[str, Any]
    lock: Any = None  # evalspec.plan.lock.LockRecord | None
    lock_problem: str | None = None
    plan_claimed: dict[str, Any] | None = None
    #: the plan as it is on disk now (canonical); None: the claim's own plan
    plan_now: dict[str, Any] | None = None
    ledger: list[Any] | None = None
    ledger_path: Any = None
    plan_file: str | None = None
    git_first_commit: str | None = None
    git_tracked: bool | None = None

    @property
    def promised(self) -> dict[str, Any] | None:
        """The plan the team promised: the locked plan when there is a lock, else the claim's own plan."""
        if self.lock is not None and isinstance(getattr(self.lock, "plan", None), dict):
            return dict(self.lock.plan)
        return self.plan_claimed


def _r(id_: str, title: str, status: str, sentence: str, evidence: list[str] | None = None, *,
       short: str | None = None, covers: tuple[str, ...] = ()) -> Finding:
    return Finding(id_, title, status, sentence, list(evidence or []), short, covers)  # type: ignore[arg-type]


def _section(plan: dict[str, Any] | None, key: str) -> dict[str, Any]:
    v = (plan or {}).get(key)
    return v if isinstance(v, dict) else {}


def _cov(facts: ProcessFacts) -> dict[str, Any]:
    cov = facts.claim.get("coverage")
    return cov if isinstance(cov, dict) else {}


def _claim_plan(facts: ProcessFacts) -> dict[str, Any]:
    plan = facts.claim.get("plan")
    return plan if isinstance(plan, dict) else {}


def _mapped_column(facts: ProcessFacts, role: str) -> bool:
    """Whether the plan the claim was made from names a results column for ``role`` (data.columns)."""
    plan = facts.plan_claimed or facts.promised
    columns = _section(_section(plan, "data"), "columns")
    return bool(columns.get(role)) or not columns  # without the plan's columns, do not blame the plan


def parse_time(text: Any) -> _dt.datetime | None:
    """An ISO 8601 time as recorded in claims, locks and ledgers (UTC when it has no zone); None when unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t


def _day(text: Any) -> str:
    return str(text)[:10] if text else "an unknown date"


def claimed_plan(claim: dict[str, Any]) -> dict[str, Any] | None:
    """Canonical data of the plan the claim was made from (its registered copy)."""
    from evalspec.plan import canonical_data

    plan = claim.get("plan")
    registered = plan.get("registered") if isinstance(plan, dict) else None
    if not isinstance(registered, dict):
        return None
    try:
        return dict(canonical_data(registered))
    except Exception:  # noqa: BLE001 - a claim from another plan format: compare by hash only
        return None


# -- the lock -------------------------------------------------------------------------------


_LOCK_CODES = ("plan_not_locked", "lock_mismatch")


def plan_locked(facts: ProcessFacts) -> Finding:
    """The plan has an intact lock, and the claim was made from the locked plan; re-locks are named."""
    from evalspec.plan import diff_keys
    from evalspec.plan.canonical import hash_canonical

    title = "Claim made from the locked plan"
    lock = facts.lock
    if facts.lock_problem:
        return _r("plan_locked", title, "fail", f"The lock cannot be read: {facts.lock_problem}.",
                  short="the plan's lock cannot be read", covers=_LOCK_CODES)
    if lock is None:
        return _r("plan_locked", title, "fail",
                  "The plan was never locked, so nothing shows it was fixed before the results were seen.",
                  short="the plan was never locked", covers=_LOCK_CODES)
    stored = hash_canonical(lock.plan)
    if stored != lock.hash:
        return _r("plan_locked", title, "fail",
                  "The lock file was edited: the plan stored in it no longer hashes to the hash it records.",
                  [f"lock records {lock.hash}", f"its plan hashes to {stored}"]
                  + [f"lock's plan vs the plan now: {c.describe()}"
                     for c in diff_keys(facts.plan_now or facts.plan_claimed or {}, lock.plan)][:12],
                  short="the lock file was edited", covers=_LOCK_CODES)
    claimed = _claim_plan(facts).get("hash")
    if lock.hash != claimed:
        changes = [f"locked -> as run: {c.describe()}" for c in diff_keys(lock.plan, facts.plan_claimed or {})][:12] \
            if isinstance(facts.plan_claimed, dict) else []
        return _r("plan_locked", title, "fail", "The claim was made from a plan that differs from the locked plan.",
                  [f"lock  {lock.hash} (locked {lock.locked_at})", f"claim {claimed}"] + changes,
                  short="the plan was changed after it was locked", covers=_LOCK_CODES)
    history = [h for h in lock.history if isinstance(h, dict)]
    if history:
        n = len(history)
        evidence = [f"re-locked with --force; earlier lock {h.get('hash')} of {h.get('locked_at')}" for h in history]
        times = "once" if n == 1 else f"{n} times"
        return _r("plan_locked", title, "warning",
                  f"The claim matches the lock, but the plan was re-locked {times} after its first lock "
                  f"(last on {_day(lock.locked_at)}); check the earlier versions were not changed after seeing "
                  "results.", evidence, short=f"the plan was re-locked {times}, last on {_day(lock.locked_at)}")
    return _r("plan_locked", title, "pass", f"The claim was made from the plan as locked at {lock.locked_at}.",
              [lock.hash])


def locked_before_results(facts: ProcessFacts) -> Finding:
    """The lock (and, where git is known, the plan's first commit) predates the first result."""
    title = "Plan fixed before the first result"
    dates = _cov(facts).get("run_dates") or {}
    first = parse_time(dates.get("first")) if isinstance(dates, dict) else None
    lock = facts.lock
    if lock is None:
        return _r("locked_before_results", title, "fail",
                  "The plan has no lock, so nothing shows it was fixed before the results.",
                  short="the plan was never locked")
    existing, looked = _existing_data(facts)
    locked = parse_time(lock.locked_at)
    if looked and first is None:  # no run times to date the results: the lock's own record is the evidence
        # a warning, not a failure: the lock's declaration is what the disk held when it was written, which
        # cannot tell "collected first and looked at" from "copied in place, unseen"; run times can
        return _r("locked_before_results", title, "warning",
                  "The claim analyses results that already existed when the plan was locked (the lock's "
                  "existing-data declaration lists them), and they carry no run times to show they were not seen "
                  "first: nothing shows this plan was fixed before these results.",
                  existing + [f"analysed and present at lock: {p}" for p in looked[:10]],
                  short="the results analysed already existed when the plan was locked")
    lock_times = [locked] + [parse_time(h.get("locked_at")) for h in lock.history if isinstance(h, dict)]
    first_lock = min((t for t in lock_times if t is not None), default=None)
    early = _looks_before_lock(facts, first_lock)
    if early:
        return _r("locked_before_results", title, "fail",
                  "The ledger of looks shows the data was looked at before the plan was locked.",
                  early + [f"locked {lock.locked_at}"], short="the data was looked at before the plan was locked")
    if first is None:
        short = "not shown to be locked before the results (they carry no times)"
        if not _mapped_column(facts, "timestamp"):
            return _r("locked_before_results", title, "warning",
                      "The plan maps no time column (data.columns.timestamp), so the claim holds no run times and it "
                      "cannot be shown that the plan was locked before the results; name the results' time column "
                      "there (tool logs: timestamp).", [f"locked {lock.locked_at}"] + existing, short=short)
        return _r("locked_before_results", title, "warning",
                  "The results carry no timestamps, so it cannot be shown that the plan was locked before them.",
                  [f"locked {lock.locked_at}"] + existing, short=short)
    evidence = [f"first result {dates.get('first')}", f"locked {lock.locked_at}"] + existing
    problems = []
    if locked is not None and locked > first:
        problems.append("the plan as run was locked after the first result")
        if first_lock is not None and first_lock <= first:
            evidence.append("an earlier version was locked before the results and then replaced with --force")
    if facts.git_first_commit is not None:
        evidence.append(f"plan first committed {facts.git_first_commit}")
        committed = parse_time(facts.git_first_commit)
        if committed is not None and committed > first:
            problems.append("the plan was first committed to git after the first result")
    elif facts.git_tracked is False:
        evidence.append("the plan is in a git repository but was never committed")
    if problems:
        return _r("locked_before_results", title, "fail",
                  f"The plan was fixed only after results existed: {'; '.join(problems)}.", evidence,
                  short="the plan was locked after the results")
    if facts.git_tracked is False:
        return _r("locked_before_results", title, "warning",
                  "The plan was locked before the first result, but it is not committed to the repository it is in.",
                  evidence, short="the plan is not committed to its repository")
    return _r("locked_before_results", title, "pass", "The plan was locked before the first result was recorded.",
              evidence)


def _existing_data(facts: ProcessFacts) -> tuple[list[str], list[str]]:
    """The lock's "existing data" declarations (evidence lines) and the claim's files among them.

    ``evalspec lock`` records which results the plan named were present when it was locked
    (OSF's "existing data"). A pilot that was present but is not analysed is honest; a claim
    analysing those very files (same SHA-256) is a look before the lock.
    """
    lock = facts.lock
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
    claim_files = (facts.claim.get("data") or {}).get("files") if isinstance(facts.claim.get("data"), dict) else None
    looked = [str(f.get("path")) for f in claim_files or []
              if isinstance(f, dict) and f.get("sha256") in present]
    if present and not looked:
        evidence.append("the claim analyses none of the files that existed when the plan was locked")
    return evidence, looked


def _looks_before_lock(facts: ProcessFacts, first_lock: _dt.datetime | None) -> list[str]:
    """Ledger entries of this plan made before its first lock, or when it had no lock; and a lock time
    that is not the one the claim recorded."""
    out: list[str] = []
    recorded = _section(_claim_plan(facts), "lock").get("locked_at")
    lock = facts.lock
    known = {lock.locked_at} | {h.get("locked_at") for h in lock.history if isinstance(h, dict)}
    if isinstance(recorded, str) and recorded not in known:
        out.append(f"the claim recorded the lock's time as {recorded}; the lock now says {lock.locked_at} "
                   "(the lock was edited after the claim)")
    found = _looks(facts)
    if found is None:
        return out
    for e in found[0]:
        t = parse_time(e.get("time"))
        if e.get("lock_hash") is None:
            out.append(f"ledger entry {e.seq} ({e.get('time')}): the data was looked at while the plan had no lock")
        elif t is not None and first_lock is not None and t < first_lock:
            out.append(f"ledger entry {e.seq} ({e.get('time')}) is older than the plan's first lock")
    return out


# -- what ran ------------------------------------------------------------------------------


def model_versions(facts: ProcessFacts) -> Finding:
    """No candidate pools runs across model versions the plan did not declare, or ran another version."""
    title = "Model versions as declared"
    cands = _cov(facts).get("candidates") or {}
    promised = _section(facts.promised, "candidates")
    plan = "the locked plan" if facts.lock is not None else "the plan"
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
    covers = ("version_mismatch",)
    if pooled or changed:
        sentence = (f"Runs from different model versions were pooled without {plan} declaring it." if pooled else
                    f"A candidate ran as a model version other than the one {plan} declared (nothing was pooled); "
                    "the result is about the version that ran.")
        if pooled and changed:
            sentence += f" Another candidate ran as a version other than the one {plan} declared."
        short = ("runs of undeclared model versions were pooled" if pooled else
                 "a model version the plan did not declare was run; the result is about the version that ran")
        return _r("model_versions", title, "fail", sentence, pooled + changed + evidence, short=short, covers=covers)
    if warns:
        return _r("model_versions", title, "warning",
                  f"Runs of several model versions were pooled, as {plan} declared; the result is not one "
                  "stable configuration.", warns + evidence, short="several model versions pooled, as declared")
    if not any(isinstance(c, dict) and c.get("versions_seen") for c in cands.values()):
        short = "the model versions that ran are not recorded"
        if not _mapped_column(facts, "model_version"):
            return _r("model_versions", title, "warning",
                      "The plan maps no model-version column (data.columns.model_version), so the claim records no "
                      "version served and pooling across a model update cannot be ruled out; name that column there "
                      "(tool logs: model_version).", short=short)
        return _r("model_versions", title, "warning",
                  "The results record no model version, so pooling across a model update cannot be ruled out.",
                  short=short)
    if not any(isinstance(p, dict) and p.get("version") for p in promised.values()):
        return _r("model_versions", title, "pass", f"Every candidate ran as one model version ({plan} declares no "
                  "version to check it against).", evidence)
    return _r("model_versions", title, "pass", "Every candidate ran as one declared model version.", evidence)


def missing_within_policy(facts: ProcessFacts) -> Finding:
    """Missing outcomes handled by the promised policy, within its limit, alike for every candidate."""
    title = "Missing outcomes within policy"
    miss = _cov(facts).get("missing") or {}
    promised = _section(facts.promised, "missing")
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
                  "Missing outcomes were not handled as the plan promised.", fails + warns + evidence,
                  short="missing outcomes were not handled as planned")
    if warns:
        return _r("missing_within_policy", title, "warning",
                  "Missing outcomes are within the policy but uneven between candidates; check the failure record.",
                  warns + evidence, short="one candidate lost far more outcomes than the others")
    return _r("missing_within_policy", title, "pass",
              "Missing outcomes were handled by the planned policy and stayed within its limit.", evidence)


# -- stopping -----------------------------------------------------------------------------


def units_within_max(facts: ProcessFacts) -> Finding:
    title = "Units within max_units"
    stop = _section(facts.promised, "stopping")
    units = _cov(facts).get("independent_units") or {}
    count, limit = units.get("count"), stop.get("max_units")
    if limit is None:
        return _r("units_within_max", title, "warning",
                  "The plan sets no max_units, so collecting more data until a preferred answer appears is not ruled "
                  "out by a stopping rule.", [f"{count} {units.get('unit')} analysed"],
                  short="the plan sets no limit on how much data to collect")
    if isinstance(count, int) and count > limit:
        return _r("units_within_max", title, "fail",
                  f"{count} independent {units.get('unit')} were analysed, more than the plan's max_units of {limit}.",
                  [f"max_units {limit}", f"analysed {count}"],
                  short=f"more data than planned ({count} units, {limit} planned)", covers=("over_max_units",))
    return _r("units_within_max", title, "pass",
              f"{count} independent {units.get('unit')} were analysed, within the planned {limit}.")


def decision_date(facts: ProcessFacts) -> Finding:
    title = "On or before the decision date"
    stop = _section(facts.promised, "stopping")
    date = stop.get("decision_date")
    dates = _cov(facts).get("run_dates") or {}
    created = facts.claim.get("created")
    if not date:
        return _r("decision_date", title, "warning", "The plan sets no decision date.",
                  short="the plan sets no decision date")
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
                  f"{'; '.join(late)}.", evidence, short=f"made after the planned decision date ({date})",
                  covers=("data_after_decision_date",))
    return _r("decision_date", title, "pass", f"Results and claim are dated on or before the decision date {date}.",
              evidence)


def _seq(claim: dict[str, Any]) -> int | None:
    integrity = claim.get("integrity")
    ref = integrity.get("ledger") if isinstance(integrity, dict) else None
    seq = ref.get("seq") if isinstance(ref, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 else None


def _looks(facts: ProcessFacts) -> tuple[list[Any], int] | None:
    """Ledger entries of this plan up to the claim's entry, and the number of distinct data states."""
    if facts.ledger is None:
        return None
    upto = _seq(facts.claim)
    plan = _claim_plan(facts)
    period = _period(facts.claim)
    mine = [e for e in facts.ledger if e.get("plan_file") == facts.plan_file and e.get("plan_id") == plan.get("id")
            and e.get("period") == period  # a recurring evaluation: each period is a look budget of its own
            and (upto is None or (isinstance(e.seq, int) and e.seq <= upto))]
    states = {repr([(d.get("path"), d.get("sha256")) for d in (e.get("data") if isinstance(e.get("data"), list) else []) if isinstance(d, dict)])
              for e in mine}
    return mine, len(states)


def _period(claim: dict[str, Any]) -> str | None:
    """The plan's ``period`` (a recurring evaluation), or None."""
    plan = claim.get("plan")
    registered = plan.get("registered") if isinstance(plan, dict) else None
    period = registered.get("period") if isinstance(registered, dict) else None
    return period if isinstance(period, str) else None


def period_data_fresh(facts: ProcessFacts) -> Finding:
    """A recurring evaluation: no results file of this period was already analysed for another period."""
    title = "Each period's data analysed once"
    period = _period(facts.claim)
    if period is None:
        return _r("period_data_fresh", title, "pass", "The plan is not one period of a recurring evaluation.")
    if facts.ledger is None:
        return _r("period_data_fresh", title, "warning",
                  f"Period {period}: there is no ledger of looks, so it cannot be checked that this period's data "
                  "was not already analysed for another period.", short="no ledger to check earlier periods")
    plan_id = _claim_plan(facts).get("id")
    mine = {d.get("sha256"): d.get("path") for d in (facts.claim.get("data") or {}).get("files") or []
            if isinstance(d, dict) and isinstance(d.get("sha256"), str)}
    upto = _seq(facts.claim)
    reused = []
    for e in facts.ledger:
        if e.get("plan_id") != plan_id or e.get("period") == period or (
                upto is not None and isinstance(e.seq, int) and e.seq > upto):
            continue
        for d in (e.get("data") if isinstance(e.get("data"), list) else []):
            if isinstance(d, dict) and d.get("sha256") in mine:
                reused.append(f"{mine[d['sha256']]}: analysed for period {e.get('period') or '(none)'} at ledger "
                              f"entry {e.seq} ({e.get('time')})")
    if reused:
        return _r("period_data_fresh", title, "fail",
                  f"Period {period} analyses results already analysed for another period of {plan_id}: re-analysing "
                  "old data under a new period is another look at it, not a fresh one.", reused[:12],
                  short="results of an earlier period analysed again")
    return _r("period_data_fresh", title, "pass",
              f"Period {period}: none of its results files was analysed for another period of {plan_id}.")


def looks_within_plan(facts: ProcessFacts) -> Finding:
    """Looks at the data (distinct data states in the ledger) within the planned number."""
    title = "Looks within the planned number"
    stop = _section(facts.promised, "stopping")
    planned = stop.get("looks", 1)
    rule = stop.get("rule", "fixed")
    found = _looks(facts)
    if found is None:
        seq = _seq(facts.claim)
        if seq is not None and seq > planned:
            return _r("looks_within_plan", title, "fail",
                      f"The ledger of looks is missing, and the claim records that it was look {seq} in it, more "
                      f"than the {planned} planned: without the ledger nothing shows those looks were at other "
                      "plans.", [f"the claim names ledger entry {seq}", f"expected {facts.ledger_path}"],
                      short=f"this was look {seq} at the data, {planned} planned, and the ledger of looks is missing")
        return _r("looks_within_plan", title, "warning",
                  "There is no ledger of looks, so how often the data was looked at cannot be checked.",
                  short="no ledger of looks, so repeated looks cannot be ruled out")
    entries, looks = found
    hashes = sorted({str(e.get("plan_hash")) for e in entries})
    evidence = [f"entry {e.seq}: {e.get('time')}, {_units_count(e)} units, verdict "
                f"{e.get('verdict')}" for e in entries[-12:]]
    if len(hashes) > 1:
        evidence.append(f"the plan changed between looks ({len(hashes)} different plan hashes)")
    level = _section(facts.promised, "decision").get("confidence_level", 0.95)
    from evalspec.analyses.registry import is_sequential

    anytime = any(isinstance(a, dict) and is_sequential(a.get("kind")) for a in facts.claim.get("analyses") or [])
    short = f"the data was looked at {looks} times, {planned} planned"
    if rule == "sequential" and looks > 1 and not anytime:
        return _r("looks_within_plan", title, "fail",
                  f"The data was looked at {looks} times under a sequential plan, but the claim's intervals are "
                  f"fixed-sample ones: without an anytime-valid method they no longer hold at the stated {level:.0%} "
                  "level.", evidence + ["no sequential_difference analysis in the claim"], short=short)
    if looks > planned:
        if rule == "fixed":
            sentence = (f"The data was looked at {looks} times, but the plan is a fixed design with one look: its "
                        f"intervals no longer hold at the stated {level:.0%} level (repeated peeking).")
        else:
            sentence = f"The data was looked at {looks} times, more than the {planned} planned looks."
        return _r("looks_within_plan", title, "fail", sentence, evidence, short=short)
    if len(hashes) > 1:
        return _r("looks_within_plan", title, "warning",
                  f"{looks} look(s), within the planned {planned}, but the plan changed between looks.", evidence,
                  short="the plan changed between looks at the data")
    return _r("looks_within_plan", title, "pass", f"{looks} look(s) at the data, within the planned {planned}.",
              evidence)


# -- the run's own record --------------------------------------------------------------------


def deviations_disclosed(facts: ProcessFacts) -> Finding:
    """The deviations the run itself recorded, listed for the reader (never a failure on their own)."""
    title = "Deviations recorded by the run"
    devs = [d for d in facts.claim.get("deviations") or [] if isinstance(d, dict)]
    if not devs:
        return _r("deviations_disclosed", title, "pass", "The run recorded no deviation from the plan.")
    covered = {code for f in _other_findings(facts) if f.status != "pass" for code in f.covers}
    rest = [d for d in devs if d.get("code") not in covered]
    short = None
    if rest:
        short = (f"{len(rest)} other deviation{'s' if len(rest) != 1 else ''} from the plan"
                 if len(rest) != len(devs) else f"{len(rest)} deviation{'s' if len(rest) != 1 else ''} from the plan")
    return _r("deviations_disclosed", title, "warning",
              f"The run recorded {len(devs)} deviation(s) from the plan; they are disclosed in the claim and report.",
              [f"{d.get('code')}: {d.get('message')}" for d in devs], short=short)


#: The checks in the order the audit lists them and the report states them.
PROCESS_CHECKS: list[Callable[[ProcessFacts], Finding]] = [
    plan_locked, locked_before_results, model_versions, missing_within_policy, units_within_max, decision_date,
    looks_within_plan, period_data_fresh, deviations_disclosed,
]


def _other_findings(facts: ProcessFacts) -> list[Finding]:
    return [check(facts) for check in PROCESS_CHECKS if check is not deviations_disclosed]


# -- the claim's record --------------------------------------------------------------------


def process_line(findings: list[Finding]) -> tuple[str, str, bool]:
    """(status, one line for page 1, exploratory) from the findings that are not passes.

    Status: ``as_planned`` (nothing found), ``unverified`` (warnings only: something the
    plan or the data does not let anyone check) or ``departed`` (a check failed).
    """
    open_ = [f for f in findings if f.status != "pass"]
    fails = [f for f in open_ if f.status == "fail"]
    exploratory = any(f.id in EXPLORATORY for f in fails)
    phrases = list(dict.fromkeys(f.short for f in fails + [f for f in open_ if f.status == "warning"] if f.short))
    if not open_:
        return "as_planned", "as planned", False
    shown = phrases[:3] + ([f"{len(phrases) - 3} more"] if len(phrases) > 3 else [])
    text = "; ".join(shown)
    if not fails:
        return "unverified", f"nothing found against the plan, but not everything could be checked: {text}", False
    tail = " — treat the result as exploratory" if exploratory else ""
    return "departed", text + tail, exploratory


def process_record(facts: ProcessFacts) -> dict[str, Any]:
    """The claim's ``process`` section: status, the page-1 line and one entry per finding that holds."""
    findings = [check(facts) for check in PROCESS_CHECKS]
    status, line, exploratory = process_line(findings)
    return {"status": status, "line": line, "exploratory": exploratory,
            "findings": [f.to_record() for f in findings if f.status != "pass"]}


def facts_for_run(claim: dict[str, Any], plan_path: str | Path, previous: list[Any] | None = None) -> ProcessFacts:
    """The facts a run has: the lock beside the plan and the ledger with this run's look appended.

    ``previous`` are the ledger's entries as read under the ledger's lock (None: read them now).
    """
    from evalspec.errors import EvalspecError
    from evalspec.ledger import LedgerEntry, entry_line, ledger_path, new_entry, read_ledger
    from evalspec.plan import read_lock

    path = Path(plan_path)
    facts = ProcessFacts(claim=claim, plan_claimed=claimed_plan(claim), plan_file=path.name)
    try:
        facts.lock = read_lock(path)
    except EvalspecError as exc:
        facts.lock_problem = str(exc).splitlines()[0]
    if previous is None:
        try:
            lp = ledger_path(path)
            previous = read_ledger(lp) if lp.exists() else []
        except EvalspecError:
            previous = None
    facts.ledger_path = ledger_path(path)
    if previous is not None:
        pending = new_entry(claim, path.name, previous)
        pending["lock_hash"] = getattr(facts.lock, "hash", None)  # as seal_run records it
        facts.ledger = list(previous) + [LedgerEntry(line=len(previous) + 1, text=entry_line(pending), data=pending)]
    return facts


def attach_process(claim: dict[str, Any], plan_path: str | Path, previous: list[Any] | None = None) -> dict[str, Any]:
    """``claim`` with its ``process`` section (re)computed for a run of the plan at ``plan_path``."""
    from evalspec.claim_model import ProcessRecord

    body = {k: v for k, v in claim.items() if k != "process"}
    record = process_record(facts_for_run(body, plan_path, previous))
    body["process"] = ProcessRecord.model_validate(record).model_dump(mode="json")
    return body


def _units_count(entry: Any) -> Any:
    """The units a ledger entry says it saw (``None`` when a hand-edited entry holds no such count)."""
    seen = entry.get("units_seen")
    return seen.get("count") if isinstance(seen, dict) else None
