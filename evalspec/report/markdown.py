"""The claim as a short Markdown summary: for a pull-request comment or a CI step summary.

``evalspec report CLAIM --format markdown`` prints it; ``evalspec run`` appends it to
``$GITHUB_STEP_SUMMARY`` when that is set. Like the HTML report it computes no statistic: the
verdict, the primary interval against the thresholds, the caveats that bear on the verdict, the
systematic limits, the process as the claim records it (lock, look, deviations) and, when the
caller ran one, the audit's status. It renders the same in GitHub's and GitLab's Markdown
(CommonMark with tables; tested with markdown-it-py). Every value from the claim is escaped, so
a title holding ``<script>`` or ``|`` prints as characters and never breaks the table.
"""

from __future__ import annotations

import re
from typing import Any

from evalspec.report import fmt

__all__ = ["markdown_summary", "md_text"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!&{}])")


def md_text(value: Any, limit: int = 600) -> str:
    """``value`` as inline Markdown text: one line, Markdown and HTML characters escaped, length capped."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _SPECIAL.sub(r"\\\1", text)


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _interval_line(primary: dict[str, Any]) -> str:
    cand, base = md_text(primary.get("candidate", "?")), md_text(primary.get("baseline", "?"))
    if not primary.get("informative", True):
        why = primary.get("why_uninformative")
        return f"{cand} − {base}: no usable interval" + (f" ({md_text(why)})" if why else "")
    return (f"{cand} − {base}: {fmt.pts(primary.get('estimate'))}, {fmt.level(primary.get('confidence_level'))} "
            f"interval {fmt.interval(primary.get('low'), primary.get('high'), 'pts')}")


def _threshold_line(decision: dict[str, Any]) -> str:
    t = _d(decision.get("thresholds"))
    goal = decision.get("goal")
    parts = [f"goal {md_text(goal)}" if goal else "goal not recorded"]
    if goal == "superiority":
        parts.append(f"minimum improvement {fmt.pts(t.get('minimum_improvement'), sign=False)}")
    if t.get("margin") is not None:
        parts.append(f"margin {fmt.pts(t.get('margin'), sign=False)}")
    crit = _d(t.get("critical_failures"))
    if crit.get("max_rate") is not None:
        parts.append(f"critical failures below {fmt.pct(crit.get('max_rate'))}")
    return "; ".join(parts)


def _number_line(primary: dict[str, Any], decision: dict[str, Any]) -> str:
    """Where the interval lies against zero and the threshold, drawn in text (the report draws it)."""
    low, high = primary.get("low"), primary.get("high")
    if not primary.get("informative", True) or not all(isinstance(x, (int, float)) for x in (low, high)):
        return ""
    t = _d(decision.get("thresholds"))
    marks = [("0", 0.0)]
    if decision.get("goal") == "superiority" and isinstance(t.get("minimum_improvement"), (int, float)):
        x = float(t["minimum_improvement"])
        if x > 0:
            marks.append((f"the minimum improvement {fmt.pts(x)}", x))
    if isinstance(t.get("margin"), (int, float)):
        m = float(t["margin"])
        marks.append((f"the margin {fmt.pts(-m)}", -m))
        if decision.get("goal") == "equivalence":
            marks.append((f"the margin {fmt.pts(m)}", m))
    where = []
    for label, x in sorted(marks, key=lambda m: m[1]):
        where.append(("lies above " if low > x else "lies below " if high < x else "contains ") + label)
    return "the interval " + ", ".join(where)


def _process(claim: dict[str, Any]) -> list[tuple[str, str]]:
    plan = _d(claim.get("plan"))
    lock = _d(plan.get("lock"))
    if not lock.get("exists"):
        lock_text = "not locked"
    elif lock.get("matches"):
        lock_text = f"locked {md_text(lock.get('locked_at'))}, claim made from the locked plan"
    else:
        lock_text = "changed after it was locked"
    ledger = _d(_d(claim.get("integrity")).get("ledger"))
    look = f"ledger entry {md_text(ledger.get('seq'))}" if ledger.get("seq") is not None else "no ledger entry"
    deviations = _l(claim.get("deviations"))
    rows = [("Plan", f"{md_text(plan.get('id', '?'))}" + (f", period {md_text(plan['registered']['period'])}"
                                                          if _d(plan.get("registered")).get("period") else "")),
            ("Lock", lock_text), ("Look", look),
            ("Deviations", f"{len(deviations)} recorded" if deviations else "none")]
    record = _d(claim.get("process"))
    if isinstance(record.get("line"), str):  # the run's own process checks (the audit's, at run time)
        rows.insert(0, ("Process", md_text(record["line"])))
    return rows


def _audit_block(audit: dict[str, Any] | None) -> list[str]:
    if audit is None:
        return ["**Audit:** not run here (evalspec audit checks this claim against its plan, lock and ledger)."]
    if audit.get("problem"):
        return [f"**Audit:** could not run: {md_text(audit['problem'])}"]
    counts = _d(audit.get("counts"))
    status = "failed" if counts.get("fail") else "passed"
    lines = [f"**Audit:** {status}: {counts.get('pass', 0)} pass, {counts.get('warning', 0)} warning, "
             f"{counts.get('fail', 0)} fail" + (" (numbers not re-run)" if audit.get("reproduced") is False else ""),
             ""]
    shown = [c for c in _l(audit.get("checks")) if isinstance(c, dict) and c.get("status") in ("fail", "warning")]
    if shown:
        lines += ["| Check | Status | Finding |", "| --- | --- | --- |"]
        for c in shown[:20]:
            word = "**FAIL**" if c.get("status") == "fail" else "warning"
            lines.append(f"| {md_text(c.get('title'))} | {word} | {md_text(c.get('sentence'), 300)} |")
    return lines


def markdown_summary(claim: dict[str, Any], *, audit: dict[str, Any] | None = None) -> str:
    """The Markdown summary of ``claim`` (a validated claim record); ``audit``: an audit report's ``to_dict()``."""
    plan = _d(claim.get("plan"))
    decision = _d(claim.get("decision"))
    primary = _d(decision.get("primary"))
    label = md_text(decision.get("label") or decision.get("verdict") or "no verdict")
    out = [f"### evalspec: {md_text(plan.get('title') or plan.get('id') or 'claim')}", "",
           f"**Verdict: {label}** (code {md_text(decision.get('verdict'))})", "",
           f"> {md_text(decision.get('headline', ''), 1000)}", "",
           "| | |", "| --- | --- |",
           f"| Question | {md_text(plan.get('question', ''))} |",
           f"| Decision owner | {md_text(plan.get('decision_owner', ''))} |"]
    if primary:
        out.append(f"| Primary difference | {_interval_line(primary)} |")
        line = _number_line(primary, decision)
        if line:
            out.append(f"| Against the thresholds | {line} |")
    out.append(f"| Decision rule | {_threshold_line(decision)} |")
    units, unit_name, of = decision.get("units"), decision.get("unit_name", ""), ""
    own = (primary or {}).get("units")  # the primary interval's own units when it rests on fewer (labelled ones)
    if isinstance(own, int) and isinstance(units, int) and own < units:
        units, unit_name, of = own, primary.get("unit_name") or unit_name, f", of {fmt.count(units)} in all"
    if units is not None:
        out.append(f"| Independent units | {fmt.count(units)} {md_text(unit_name)}{of} |")
    for c in _l(decision.get("critical")):
        if isinstance(c, dict):
            out.append(f"| Critical failures ({md_text(c.get('candidate'))}) | {fmt.count(c.get('failures'))} of "
                       f"{fmt.count(c.get('critical_cases'))}, upper bound {fmt.pct(c.get('upper_bound'))} |")
    out += ["", "**Why**", ""] + [f"- {md_text(r)}" for r in _l(decision.get("reasons"))]
    caveats = [c for c in _l(decision.get("caveats")) if isinstance(c, dict)]
    if caveats:
        out += ["", "**Caveats beside the verdict**", ""] + [f"- {md_text(c.get('message'))}" for c in caveats]
    limits = _d(claim.get("systematic_limits"))
    stated = [md_text(s) for s in _l(limits.get("stated"))]
    detected = [md_text(_d(d).get("message")) for d in _l(limits.get("detected"))]
    if stated or detected:
        out += ["", "**Systematic limits** (no interval covers these)", ""] + [f"- {s}" for s in stated + detected]
    deviations = [md_text(_d(d).get("message")) for d in _l(claim.get("deviations"))]
    if deviations:
        out += ["", "**Deviations from the plan**", ""] + [f"- {d}" for d in deviations[:20]]
    out += ["", "**Process**", "", "| | |", "| --- | --- |"] + [f"| {k} | {v} |" for k, v in _process(claim)]
    out += [""] + _audit_block(audit)
    sha = md_text(_d(claim.get("integrity")).get("sha256", "not sealed"))
    out += ["", f"<sub>claim {sha} · plan {md_text(plan.get('hash', '?'))} · evalspec "
            f"{md_text(claim.get('evalspec_version', '?'))} · {md_text(claim.get('created', ''))}</sub>", ""]
    return "\n".join(out)
