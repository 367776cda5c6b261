"""The view model: the claim record arranged for the templates.

Everything here *selects and arranges* what the claim already holds (which analysis is the
primary comparison, which sections exist, how many disagreeing cases to print before the
appendix) and chooses words (verdict labels). No statistic is computed: where the report
shows a number, the number is in the claim. A claim may lack optional parts (older claims,
analyses whose issues are not yet done); the view tolerates their absence and the templates
leave the section out or say "not recorded".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KNOWN_KINDS", "SECTION_TITLES", "VERDICTS", "ReportView", "build_view", "generic_layout", "title_of"]

#: verdict code -> (short label, tone). Tone drives the verdict band's style; the label
#: carries the meaning in words so the page reads the same in greyscale.
VERDICTS: dict[str, tuple[str, str]] = {
    "worth_acting_on": ("Worth acting on", "good"),
    "too_small": ("Gain may be too small to act on", "caution"),
    "no_material_gain": ("No material gain", "neutral"),
    "inconclusive": ("Inconclusive", "caution"),
    "regression": ("Regression", "bad"),
    "non_inferior": ("Non-inferior within the margin", "good"),
    "not_non_inferior": ("Non-inferiority not shown", "bad"),
    "equivalent": ("Equivalent within the margin", "good"),
    "not_equivalent": ("Equivalence not shown", "caution"),
    "blocked": ("Blocked by the critical-failure limit", "bad"),
    "too_few_units": ("Too few independent units for a verdict", "caution"),
    "no_comparison": ("No comparison planned", "neutral"),
}

GOALS = {"superiority": "superiority (a gain worth acting on)",
         "non_inferiority": "non-inferiority (no loss beyond the margin)",
         "equivalence": "equivalence (within the margin either way)"}

#: analysis kinds with a dedicated section; others get a generic key/value section.
KNOWN_KINDS = ("proportion", "paired_difference", "critical_failures", "run_variation", "slices",
               "clustered_mean", "bayesian_profile", "background_temperature")

SLOT_TITLES = {"bayesian_profile": "Bayesian profile", "background_temperature": "Background temperature"}

#: section title of each analysis kind with a dedicated section, in the report's order.
SECTION_TITLES = {
    "proportion": "Each candidate's pass rate",
    "paired_difference": "Paired comparison",
    "critical_failures": "Critical failures",
    "slices": "Slices",
    "run_variation": "Run-to-run variation",
    "clustered_mean": "Mean score with clustered standard errors",
    **SLOT_TITLES,
}


@dataclass
class CaseList:
    """Disagreeing cases of one side: the rows shown in the body and in the appendix."""

    title: str
    total: int
    body: list[dict[str, Any]]
    appendix: list[dict[str, Any]]
    appendix_truncated: bool


@dataclass
class ReportView:
    """What the templates read, besides the claim itself (``claim``)."""

    claim: dict[str, Any]
    medium: str
    verdict_code: str
    verdict_label: str
    verdict_tone: str
    goal_text: str
    primary: dict[str, Any] | None
    paired: list[dict[str, Any]] = field(default_factory=list)
    by_kind: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    generic: list[dict[str, Any]] = field(default_factory=list)
    critical: list[dict[str, Any]] = field(default_factory=list)
    case_lists: dict[int, list[CaseList]] = field(default_factory=dict)
    deviations: list[dict[str, Any]] = field(default_factory=list)
    stated_limits: list[str] = field(default_factory=list)
    detected_limits: list[dict[str, Any]] = field(default_factory=list)
    sampling: list[tuple[str, str]] = field(default_factory=list)
    toc: list[tuple[str, str]] = field(default_factory=list)
    body_cap: int = 0
    appendix_cap: int | None = None


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def build_view(claim: dict[str, Any], medium: str = "screen", *, body_cap: int = 25,
               print_appendix_cap: int = 500) -> ReportView:
    """Arrange ``claim`` for the templates.

    Parameters
    ----------
    claim : dict
        The claim record (``claim.json``), already parsed.
    medium : {"screen", "print"}
        ``"print"`` caps the case appendix at ``print_appendix_cap`` rows per list (the PDF
        says where the full list is); ``"screen"`` lists every case.
    body_cap : int
        Disagreeing cases listed in the body before pointing to the appendix.
    print_appendix_cap : int
        Rows per list in the PDF appendix.
    """
    decision = _mapping(claim.get("decision"))
    code = str(decision.get("verdict") or "")
    label, tone = VERDICTS.get(code, (code.replace("_", " ").capitalize() or "No verdict recorded", "neutral"))
    analyses = [a for a in _items(claim.get("analyses")) if isinstance(a, dict)]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    generic = []
    for a in analyses:
        kind = str(a.get("kind"))
        by_kind.setdefault(kind, []).append(a)
        if kind not in KNOWN_KINDS:
            generic.append(a)
    appendix_cap = print_appendix_cap if medium == "print" else None
    view = ReportView(
        claim=claim, medium=medium, verdict_code=code, verdict_label=label, verdict_tone=tone,
        goal_text=GOALS.get(str(decision.get("goal")), str(decision.get("goal") or "")),
        primary=_mapping(decision.get("primary")) or None,
        paired=by_kind.get("paired_difference", []), by_kind=by_kind, generic=generic,
        body_cap=body_cap, appendix_cap=appendix_cap,
    )
    view.critical = _critical_rows(by_kind.get("critical_failures", []))
    for a in view.paired:
        view.case_lists[int(a.get("index", 0))] = _case_lists(_mapping(a.get("result")), body_cap, appendix_cap)
    view.deviations = [d for d in _items(claim.get("deviations")) if isinstance(d, dict)]
    limits = _mapping(claim.get("systematic_limits"))
    view.stated_limits = [str(s) for s in _items(limits.get("stated"))]
    view.detected_limits = [d for d in _items(limits.get("detected")) if isinstance(d, dict)]
    view.sampling = _sampling_rows(claim, view.primary)
    view.toc = _toc(view)
    return view


def title_of(analysis: dict[str, Any]) -> str:
    """The heading of an analysis section (paired comparisons name their two candidates)."""
    kind = str(analysis.get("kind"))
    if kind == "paired_difference":
        res = _mapping(analysis.get("result"))
        return f"Paired comparison: {res.get('candidate')} against {res.get('baseline')}"
    return SECTION_TITLES.get(kind) or str(analysis.get("label") or kind)


def _toc(view: ReportView) -> list[tuple[str, str]]:
    """(anchor, title) of every section after page 1, in the order the template writes them."""
    out = [("coverage", "What the number covers")]
    for kind in SECTION_TITLES:
        out += [(f"analysis-{a.get('index')}", title_of(a)) for a in view.by_kind.get(kind, [])]
    out += [(f"analysis-{a.get('index')}", title_of(a)) for a in view.generic]
    out += [("deviations", "Deviations from the plan"), ("reproducibility", "Reproducibility")]
    if view.paired:
        out.append(("appendix-cases", "Appendix: disagreeing cases"))
    out.append(("appendix-plan", "Appendix: the plan as registered"))
    return out


def _critical_rows(analyses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for a in analyses:
        result = _mapping(a.get("result"))
        for name, c in _mapping(result.get("candidates")).items():
            c = _mapping(c)
            within = c.get("within_limit")
            status = ("within limit" if within is True else "limit not met" if within is False else "no limit set")
            rows.append({"candidate": name, "flag": result.get("flag"), **c, "status": status})
    return rows


def _case_lists(result: dict[str, Any], body_cap: int, appendix_cap: int | None) -> list[CaseList]:
    dis = _mapping(result.get("disagreements"))
    cand, base = result.get("candidate", "candidate"), result.get("baseline", "baseline")
    out = []
    for key, title in (("candidate_only", f"{cand} passes, {base} fails"),
                       ("baseline_only", f"{base} passes, {cand} fails")):
        rows = [r for r in _items(dis.get(key)) if isinstance(r, dict)]
        appendix = rows if appendix_cap is None else rows[:appendix_cap]
        out.append(CaseList(title=title, total=len(rows), body=rows[:body_cap], appendix=appendix,
                            appendix_truncated=len(appendix) < len(rows)))
    return out


def _sampling_rows(claim: dict[str, Any], primary: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The 'Sampling uncertainty' box: what the interval accounts for, as label/value text."""
    from evalspec.report import fmt

    cov = _mapping(claim.get("coverage"))
    rows: list[tuple[str, str]] = []
    cases = _mapping(cov.get("cases"))
    cands = _mapping(cov.get("candidates"))
    if cases.get("paired"):
        rows.append(("Cases", f"{fmt.count(cases.get('paired'))} paired"))
    elif cands:
        rows.append(("Cases", ", ".join(f"{k}: {fmt.count(_mapping(v).get('cases'))}" for k, v in cands.items())))
    if cov.get("clusters"):
        col = cov.get("cluster_column")
        rows.append(("Independent units", f"{fmt.count(cov.get('clusters'))} clusters" + (f" ({col})" if col else "")))
    elif cases.get("paired"):
        rows.append(("Independent units", "each case"))
    rep = _mapping(cov.get("repeats"))
    if rep:
        seen = (f"{rep.get('observed_min')}" if rep.get("observed_min") == rep.get("observed_max")
                else f"{rep.get('observed_min')}\u2013{rep.get('observed_max')}")
        rows.append(("Repeats per case", f"{rep.get('planned')} planned, {seen} observed"))
    rule = _mapping(cov.get("attempt_rule"))
    if rule:
        text = str(rule.get("rule"))
        if rule.get("k"):
            text += f" (k = {rule.get('k')})"
        rows.append(("Attempt rule", text))
    method = (primary or {}).get("method") or _mapping(cov.get("interval")).get("method")
    level = (primary or {}).get("confidence_level") or _mapping(cov.get("interval")).get("confidence_level")
    if method:
        rows.append(("Interval", f"{method}, {fmt.level(level)}"))
    return rows


def generic_layout(result: Any) -> dict[str, Any]:
    """Arrange an analysis result the report has no dedicated section for.

    A ``candidates`` mapping whose entries are flat mappings becomes one table (a row per
    candidate, a column per key, in first-seen order); everything else is shown as nested
    key/value tables. Used for the Bayesian profile and background temperature slots until
    their issues give them dedicated sections, and for any analysis kind added later.
    """
    result = _mapping(result)
    cands = result.get("candidates")
    wide = None
    if isinstance(cands, dict) and cands and all(isinstance(v, dict) for v in cands.values()):
        columns: list[str] = []
        for entry in cands.values():
            for key, value in entry.items():
                if key not in columns and not isinstance(value, (dict, list)):
                    columns.append(key)
        wide = {"columns": columns, "rows": [(name, [entry.get(c) for c in columns]) for name, entry in cands.items()]}
        nested = {f"{name}: {k}": v for name, entry in cands.items() for k, v in entry.items() if isinstance(v, (dict, list))}
        rest = {k: v for k, v in result.items() if k != "candidates"} | nested
    else:
        rest = result
    return {"wide": wide, "rest": rest}
