"""A study's history: one row per claim (``evalspec audit --all DIR``) and the estimate over time.

Each row holds what a reviewer asks of a past claim — when it was made, for which period, the
primary estimate with its interval, the verdict and the audit's status — read from the claim
and its audit; nothing is recomputed. Claims are grouped by study id and ordered by time.
Between consecutive claims of one study, changes are flagged: candidates that ran as different
model versions (the guide "Repeat AI evaluations and report uncertainty honestly": "a run before
and after a change may answer a useful drift question, but it is not a single stable
configuration"), a changed plan, and intervals that do not overlap. ``--report`` draws each
study's estimates with their intervals over time as inline SVG (:func:`history_html`).
"""

from __future__ import annotations

import html as _html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["HistoryRow", "history_html", "history_rows", "history_table"]


@dataclass
class HistoryRow:
    """One claim in the history (``error`` set when it could not be read or audited)."""

    claim: Path
    plan_id: str | None = None
    created: str | None = None
    period: str | None = None
    verdict: str | None = None
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    level: float | None = None
    threshold: float | None = None
    versions: dict[str, list[str]] = field(default_factory=dict)
    plan_hash: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"claim": str(self.claim), "plan_id": self.plan_id, "created": self.created, "period": self.period,
                "verdict": self.verdict, "estimate": self.estimate, "low": self.low, "high": self.high,
                "confidence_level": self.level, "versions": self.versions, "audit": self.counts,
                "failed_checks": self.failed, "flags": self.flags, "error": self.error}


def _d(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _row(path: Path, claim: dict[str, Any] | None, report: Any) -> HistoryRow:
    row = HistoryRow(claim=path)
    if isinstance(report, str) or claim is None:
        row.error = report if isinstance(report, str) else "not a readable claim"
        return row
    plan, decision = _d(claim.get("plan")), _d(claim.get("decision"))
    primary = _d(decision.get("primary"))
    row.plan_id = plan.get("id") if isinstance(plan.get("id"), str) else None
    row.created = claim.get("created") if isinstance(claim.get("created"), str) else None
    period = _d(plan.get("registered")).get("period")
    row.period = period if isinstance(period, str) else None
    row.verdict = decision.get("verdict") if isinstance(decision.get("verdict"), str) else None
    if primary.get("informative", True):
        row.estimate, row.low, row.high = (_num(primary.get(k)) for k in ("estimate", "low", "high"))
    row.level = _num(primary.get("confidence_level"))
    thresholds = _d(decision.get("thresholds"))
    row.threshold = _num(thresholds.get("minimum_improvement")) if decision.get("goal") == "superiority" else None
    for name, cand in _d(_d(claim.get("coverage")).get("candidates")).items():
        row.versions[str(name)] = sorted(str(v) for v in _d(_d(cand).get("versions_seen")))
    row.plan_hash = _study_hash(claim)
    row.counts = {s: sum(c.status == s for c in report.checks) for s in ("pass", "warning", "fail")}
    row.failed = [c.id for c in report.failed]
    return row


def _study_hash(claim: dict[str, Any]) -> str | None:
    """The plan's hash without what changes every period by design (``period``, ``data.results``)."""
    import hashlib
    import json

    from evalspec.process import claimed_plan

    plan = claimed_plan(claim)
    if plan is None:
        return None
    body = {k: v for k, v in plan.items() if k != "period"}
    body["data"] = {k: v for k, v in _d(plan.get("data")).items() if k != "results"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _flag(prev: HistoryRow, row: HistoryRow) -> None:
    changed = [f"{n}: {', '.join(prev.versions.get(n) or ['?'])} -> {', '.join(v or ['?'])}"
               for n, v in row.versions.items() if n in prev.versions and v and prev.versions[n] and
               v != prev.versions[n]]
    if changed:
        row.flags.append("model version changed since the previous claim (" + "; ".join(changed) + "): not one "
                         "configuration, so the change between the two is a model update, not drift of one system")
    if prev.plan_hash and row.plan_hash and prev.plan_hash != row.plan_hash:
        row.flags.append("the plan differs from the previous claim's beyond its period and results "
                         "(evalspec diff shows the keys)")
    if None not in (prev.low, prev.high, row.low, row.high) and (
            row.low > prev.high or row.high < prev.low):  # type: ignore[operator]
        row.flags.append("its interval does not overlap the previous claim's")


def history_rows(items: list[tuple[Path, Any]]) -> list[HistoryRow]:
    """Rows for ``(claim path, AuditReport or error text)``, grouped by study id, in time order, with flags."""
    from evalspec.errors import EvalspecError
    from evalspec.report.load import load_claim

    rows = []
    for path, report in items:
        claim = None
        if not isinstance(report, str):
            try:
                claim = load_claim(path)
            except EvalspecError as exc:
                report = str(exc).splitlines()[0] if str(exc) else "not a readable claim"
        rows.append(_row(path, claim, report))
    rows.sort(key=lambda r: (r.plan_id or "\uffff", r.created or "", str(r.claim)))
    for prev, row in zip(rows, rows[1:], strict=False):
        if prev.plan_id is not None and prev.plan_id == row.plan_id and row.error is None and prev.error is None:
            _flag(prev, row)
    return rows


def _pts(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}"


def history_table(rows: list[HistoryRow]) -> str:
    """One line per claim: claim, plan, verdict, date, period, estimate and interval (points), audit, failures, flags."""
    from evalspec.errors import one_line

    header = ("claim", "plan", "verdict", "date", "period", "estimate (pts)", "interval (pts)", "audit p/w/f",
              "failed checks [changes since the previous claim]")
    body = []
    for r in rows:
        if r.error is not None:
            body.append((one_line(str(r.claim)), "-", "-", "-", "-", "-", "-", "-", f"cannot audit: {one_line(r.error)}"))
            continue
        interval = "-" if r.low is None or r.high is None else f"{_pts(r.low)} to {_pts(r.high)}"
        audit = f"{r.counts.get('pass', 0)}/{r.counts.get('warning', 0)}/{r.counts.get('fail', 0)}"
        notes = ", ".join(r.failed) or "-"
        if r.flags:
            notes += "  [" + "; ".join(r.flags) + "]"
        body.append((one_line(str(r.claim)), one_line(r.plan_id or "-"), one_line(r.verdict or "-"),
                     (r.created or "-")[:10], one_line(r.period or "-"), _pts(r.estimate), interval, audit,
                     one_line(notes)))
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header) - 1)]
    lines = ["  ".join(v.ljust(w) for v, w in zip(x[:-1], widths, strict=True)) + "  " + x[-1]
             for x in [header, *body]]
    return "\n".join(lines)


def _svg(rows: list[HistoryRow]) -> str:
    """Estimates with their intervals over time for one study (inline SVG, no script)."""
    e = _html.escape
    pts = [r for r in rows if r.low is not None and r.high is not None and r.estimate is not None]
    if not pts:
        return "<p>No claim of this study has a usable interval to draw.</p>"
    values = [v for r in pts for v in (r.low, r.high)] + [0.0] + ([pts[0].threshold] if pts[0].threshold else [])
    lo, hi = min(values), max(values)  # type: ignore[type-var]
    pad = (hi - lo) * 0.1 or 0.05
    lo, hi = lo - pad, hi + pad
    width, height, left, top, bottom = max(320, 90 * len(pts) + 80), 260, 60, 20, 50
    plot_h = height - top - bottom

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * plot_h

    def x(i: int) -> float:
        return left + 45 + 90 * i

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="estimate with its interval over time">',
             f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - 10}" y2="{y(0):.1f}" stroke="#555" />',
             f'<text x="{left - 6}" y="{y(0) + 4:.1f}" text-anchor="end" font-size="11">0</text>']
    thr = pts[0].threshold
    if thr:
        parts += [f'<line x1="{left}" y1="{y(thr):.1f}" x2="{width - 10}" y2="{y(thr):.1f}" stroke="#555" '
                  'stroke-dasharray="4 3" />',
                  f'<text x="{left - 6}" y="{y(thr) + 4:.1f}" text-anchor="end" font-size="11">{_pts(thr)}</text>']
    for i, r in enumerate(pts):
        label = e(r.period or (r.created or "")[:10])
        parts.append(f'<g data-claim="{e(str(r.claim))}" data-flagged="{"yes" if r.flags else "no"}">')
        if r.flags:
            parts.append(f'<line x1="{x(i) - 45:.1f}" y1="{top}" x2="{x(i) - 45:.1f}" y2="{top + plot_h}" '
                         'stroke="#b00" stroke-dasharray="2 2" />'
                         f'<text x="{x(i) - 45:.1f}" y="{top + plot_h + 40}" text-anchor="middle" font-size="10" '
                         f'fill="#b00">changed</text>')
        parts.append(f'<line x1="{x(i):.1f}" y1="{y(r.low):.1f}" x2="{x(i):.1f}" y2="{y(r.high):.1f}" '
                     'stroke="#000" stroke-width="2" />'
                     f'<circle cx="{x(i):.1f}" cy="{y(r.estimate):.1f}" r="4" fill="#000" />'
                     f'<text x="{x(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle" font-size="11">{label}</text>'
                     f'<title>{e(label)}: {_pts(r.estimate)} points ({_pts(r.low)} to {_pts(r.high)}), '
                     f'{e(r.verdict or "")}</title></g>')
    parts.append("</svg>")
    return "".join(parts)


def history_html(rows: list[HistoryRow]) -> str:
    """A self-contained HTML page: per study, the estimate with its interval over time and the rows with flags."""
    e = _html.escape
    studies: dict[str, list[HistoryRow]] = {}
    for r in rows:
        studies.setdefault(r.plan_id or "(unreadable claims)", []).append(r)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
           "<title>evalspec history</title><style>body{font-family:sans-serif;margin:2em;max-width:70em}"
           "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .5em;text-align:left}"
           ".flag{color:#b00}</style></head><body><h1>History of the claims</h1>",
           "<p>Each point is one claim: the primary difference (candidate minus baseline, percentage points) with "
           "its interval; the dashed line is the minimum improvement worth acting on. A red line marks a change "
           "between two claims: another model version (runs across a model update are not one configuration), "
           "another plan, or intervals that do not overlap.</p>"]
    for study, group in studies.items():
        out += [f'<section data-study="{e(study)}"><h2>{e(study)}</h2>', _svg(group),
                "<table><thead><tr><th>Date</th><th>Period</th><th>Verdict</th><th>Estimate</th><th>Interval</th>"
                "<th>Audit (pass/warning/fail)</th><th>Changes</th></tr></thead><tbody>"]
        for r in group:
            if r.error is not None:
                out.append(f'<tr><td colspan="7">{e(str(r.claim))}: cannot audit: {e(r.error)}</td></tr>')
                continue
            out.append(f"<tr><td>{e((r.created or '-')[:10])}</td><td>{e(r.period or '-')}</td>"
                       f"<td>{e(r.verdict or '-')}</td><td>{_pts(r.estimate)}</td>"
                       f"<td>{_pts(r.low)} to {_pts(r.high)}</td>"
                       f"<td>{r.counts.get('pass', 0)}/{r.counts.get('warning', 0)}/{r.counts.get('fail', 0)}"
                       f"{' (' + e(', '.join(r.failed)) + ')' if r.failed else ''}</td>"
                       f"<td class=\"flag\">{'<br>'.join(e(f) for f in r.flags)}</td></tr>")
        out.append("</tbody></table></section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
