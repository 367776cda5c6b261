"""The view model: the claim record arranged for the templates.

Everything here *selects and arranges* what the claim already holds (the sections in report
order, each with its kind's template, the caveats that bear on the verdict, how many
disagreeing cases to print before the appendix) and chooses words (verdict labels, from the
one table in :mod:`evalspec.decision`). No statistic is computed: where the report shows a
number, the number is in the claim. ``evalspec report`` validates a claim before it gets here;
the view still tolerates missing parts (the templates leave a section out or say "not
recorded"), so that rendering a partial mapping never crashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalspec.decision import VERDICTS

__all__ = ["VERDICTS", "ReportView", "build_view", "generic_layout", "section_template", "shown_clusters", "title_of"]

GOALS = {"superiority": "superiority (a gain worth acting on)",
         "non_inferiority": "non-inferiority (no loss beyond the margin)",
         "equivalence": "equivalence (within the margin either way)"}

#: The section template of analysis kinds without their own (``templates/sections/<kind>.html.j2``).
GENERIC_SECTION = "sections/generic.html.j2"


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
    sections: list[dict[str, Any]] = field(default_factory=list)
    titles: dict[int, str] = field(default_factory=dict)
    templates: dict[int, str] = field(default_factory=dict)
    paired: list[dict[str, Any]] = field(default_factory=list)
    by_kind: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    critical: list[dict[str, Any]] = field(default_factory=list)
    verdict_caveats: list[dict[str, Any]] = field(default_factory=list)
    #: codes of the caveats page 1 states (a section after page 1 refers to them instead of restating them)
    page1_codes: set[str] = field(default_factory=set)
    #: the headline states why there is no usable interval (page 1 does not say it again)
    why_in_headline: bool = False
    seeds_used: list[dict[str, Any]] = field(default_factory=list)
    seeds_unused: list[dict[str, Any]] = field(default_factory=list)
    page1_level: float | None = None
    case_lists: dict[int, list[CaseList]] = field(default_factory=dict)
    deviations: list[dict[str, Any]] = field(default_factory=list)
    #: the claim's process record (None in claims written before it existed) and its findings to list
    process: dict[str, Any] | None = None
    process_findings: list[dict[str, Any]] = field(default_factory=list)
    #: page 1's one line: which cases, which attempt rule, how missing outcomes count, which difference
    estimand: str = ""
    stated_limits: list[str] = field(default_factory=list)
    detected_limits: list[dict[str, Any]] = field(default_factory=list)
    sampling: list[tuple[str, str]] = field(default_factory=list)
    tool_reports: list[Any] = field(default_factory=list)  # what each tool log's own tool reported
    tool_notes: list[str] = field(default_factory=list)
    toc: list[tuple[str, str]] = field(default_factory=list)
    body_cap: int = 0
    appendix_cap: int | None = None
    #: whether the case appendix lists cases the body leaves out
    appendix_needed: bool = True


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
        The claim record (``claim.json``), parsed and validated (:func:`evalspec.report.load_claim`).
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
    if code in VERDICTS and isinstance(decision.get("label"), str) and decision["label"]:
        label = decision["label"]  # the decision's own label may say more ("Gain shown to be below the minimum ...")
    analyses = [a for a in _items(claim.get("analyses")) if isinstance(a, dict)]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for a in analyses:
        by_kind.setdefault(str(a.get("kind")), []).append(a)
    appendix_cap = print_appendix_cap if medium == "print" else None
    view = ReportView(
        claim=claim, medium=medium, verdict_code=code, verdict_label=label, verdict_tone=tone,
        goal_text=GOALS.get(str(decision.get("goal")), str(decision.get("goal") or "")),
        primary=_mapping(decision.get("primary")) or None, by_kind=by_kind,
        body_cap=body_cap, appendix_cap=appendix_cap,
    )
    view.sections = sorted(analyses, key=lambda a: (_kind_order(str(a.get("kind"))), int(a.get("index") or 0)))
    for a in view.sections:
        i = int(a.get("index") or 0)
        view.titles[i] = title_of(a)
        view.templates[i] = section_template(str(a.get("kind")))
        if _mapping(a.get("result")).get("disagreements"):
            view.paired.append(a)
            view.case_lists[i] = _case_lists(_mapping(a.get("result")), body_cap, appendix_cap)
    view.critical = [_critical_row(c) for c in _items(decision.get("critical")) if isinstance(c, dict)]
    view.verdict_caveats = [c for c in _items(decision.get("caveats")) if isinstance(c, dict)]
    view.page1_codes = {str(c.get("code")) for c in view.verdict_caveats}
    why = str(_mapping(decision.get("primary")).get("why_uninformative") or "")
    if why and why in str(decision.get("headline") or ""):  # said once: the headline already gives the reason
        view.why_in_headline = True
        view.verdict_caveats = [c for c in view.verdict_caveats if c.get("code") != "uninformative_interval"]
    seeds = _mapping(claim.get("seeds"))
    view.seeds_used = [s for s in _items(seeds.get("used")) if isinstance(s, dict)]
    view.seeds_unused = [s for s in _items(seeds.get("declared_unused")) if isinstance(s, dict)]
    view.deviations = [d for d in _items(claim.get("deviations")) if isinstance(d, dict)]
    _process(view, claim)
    limits = _mapping(claim.get("systematic_limits"))
    view.stated_limits = [str(s) for s in _items(limits.get("stated"))]
    view.detected_limits = [d for d in _items(limits.get("detected")) if isinstance(d, dict)]
    view.sampling = _sampling_rows(claim, view.primary)
    view.estimand = estimand_line(claim, view.primary)
    from evalspec.report.sources import tool_notes, tool_reports

    view.tool_reports = tool_reports(claim)
    view.tool_notes = tool_notes(claim) if view.tool_reports else []
    if not any(cl.total > len(cl.body) for lists in view.case_lists.values() for cl in lists):
        view.appendix_needed = False  # the body lists every disagreeing case: an appendix would repeat it
    view.toc = _toc(view)
    return view


def _process(view: ReportView, claim: dict[str, Any]) -> None:
    """The process record, its findings (the deviations list is the run's own), the deviations they do not state."""
    proc = _mapping(claim.get("process"))
    if not proc:
        return
    view.process = proc
    findings = [f for f in _items(proc.get("findings")) if isinstance(f, dict)]
    shorts: set[str] = set()
    for f in findings:  # one fact once: "never locked" fails two checks, and is listed under the first
        short = f.get("short")
        if f.get("check") == "deviations_disclosed" or (short and short in shorts):
            continue
        shorts.add(str(short))
        view.process_findings.append(f)
    covered = {str(code) for f in view.process_findings for code in _items(f.get("covers"))}
    view.deviations = [d for d in view.deviations if str(d.get("code")) not in covered]


def shown_clusters(contributions: Any, top: int = 3, cap: int = 10) -> list[dict[str, Any]]:
    """The clusters the chart and the table beside it both show (one rule, so they show the same ones).

    Clusters with a net contribution (a cluster whose disagreements cancel adds only noise), in
    the claim's order (pushing toward the difference first, pulling against it last); when more
    than ``max(top, cap)`` remain, the first ones and the strongest pulling the other way.
    """
    rows = [r for r in _items(contributions) if isinstance(r, dict)]
    nonzero = [r for r in rows if r.get("net")] or rows
    limit = max(top, cap)
    if len(nonzero) <= limit:
        return nonzero
    against = [r for r in nonzero if (r.get("net") or 0) * (nonzero[0].get("net") or 0) < 0]
    k = min(len(against), limit // 3)
    return nonzero[: limit - k] + (nonzero[-k:] if k else [])


def _kind_order(kind: str) -> int:
    from evalspec.claim_model import kind_info

    return kind_info(kind)[1]


def section_template(kind: str) -> str:
    """``sections/<kind>.html.j2`` when it exists, else the generic section."""
    from evalspec._resources import templates_dir

    name = f"sections/{kind}.html.j2"
    return name if (templates_dir() / name).is_file() else GENERIC_SECTION


def title_of(analysis: dict[str, Any]) -> str:
    """The heading of an analysis section (a comparison names its two candidates)."""
    from evalspec.claim_model import kind_info

    kind = str(analysis.get("kind"))
    title = kind_info(kind)[0] or str(analysis.get("label") or kind)
    res = _mapping(analysis.get("result"))
    if isinstance(res.get("candidate"), str) and isinstance(res.get("baseline"), str):
        return f"{title}: {res['candidate']} against {res['baseline']}"
    label = analysis.get("label")
    if isinstance(label, str) and label and label != kind and label != title:
        return f"{title}: {label}"
    return title


def _toc(view: ReportView) -> list[tuple[str, str]]:
    """(anchor, title) of every section after page 1, in the order the template writes them."""
    out = [("coverage", "What the number covers")]
    if _items(_mapping(view.claim.get("decision")).get("reasons")):
        out.insert(0, ("analyst", "For the analyst: how the verdict was reached"))
    out += [(f"analysis-{a.get('index')}", view.titles[int(a.get("index") or 0)]) for a in view.sections]
    out += [("deviations", "Process and deviations from the plan"), ("reproducibility", "Reproducibility")]
    if view.case_lists and view.appendix_needed:
        out.append(("appendix-cases", "Appendix: disagreeing cases"))
    out.append(("appendix-plan", "Appendix: the plan as registered"))
    return out


def _critical_row(c: dict[str, Any]) -> dict[str, Any]:
    within = c.get("within_limit")
    status = ("within limit" if within is True else "limit not met" if within is False else "no limit set")
    return {**c, "status": status}


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
    if not (cases.get("paired") and len(cands) > 1) and cands:  # paired cases: in the estimand line
        rows.append(("Cases", ", ".join(f"{k}: {fmt.count(_mapping(v).get('cases'))}" for k, v in cands.items())))
    own = (primary or {}).get("units")  # the primary interval's own units when it rests on fewer (labelled ones)
    total = cov.get("clusters") or cases.get("paired") or cases.get("total")
    if isinstance(own, int) and isinstance(total, int) and own < total:
        col = cov.get("cluster_column") if cov.get("clusters") else None
        rows.append(("Independent units", f"{fmt.count(own)} {(primary or {}).get('unit_name') or 'units'}"
                     + (f" ({col})" if col else "") + f", of {fmt.count(total)} in all"))
    elif cov.get("clusters"):
        col = cov.get("cluster_column")
        rows.append(("Independent units", f"{fmt.count(cov.get('clusters'))} clusters" + (f" ({col})" if col else "")))
    elif cases.get("total") or cases.get("paired"):
        rows.append(("Independent units", "each case"))
    rep = _mapping(cov.get("repeats"))
    if rep:
        seen = (f"{rep.get('observed_min')}" if rep.get("observed_min") == rep.get("observed_max")
                else f"{rep.get('observed_min')}\u2013{rep.get('observed_max')}")
        rows.append(("Repeats per case", f"{rep.get('planned')} planned, {seen} observed"))
    method = (primary or {}).get("method") or _mapping(cov.get("interval")).get("method")
    level = (primary or {}).get("confidence_level") or _mapping(cov.get("interval")).get("confidence_level")
    if method and str(method).startswith("none"):  # no interval was computed: a level would describe nothing
        rows.append(("Interval", "none usable (the reason is given above)" if (primary or {}).get("why_uninformative")
                     else str(method)))
    elif method:  # the method by name is in "What the number covers" and the analyst box
        rows.append(("Interval", f"{fmt.level(level)}, each cluster one independent unit"
                     if cov.get("clusters") else fmt.level(level)))
        if cov.get("clusters"):  # what no sample can show (docs/coverage.md, heavy-tailed cluster sizes)
            rows.append(("Assumes", "the clusters are a random sample of the population's, and none in it is far "
                         "larger than the largest sampled"))
    return rows


_RULE_WORDS = {
    "first": "each case scored by its first attempt",
    "best_of_k": "a case passes when any of its first {k} attempts passes",
    "majority": "a case passes when most of its {r} attempts pass",
    "majority_answer": "each case scored by its most common answer of {r} attempts",
    "mean": "each case scored by the share of its {r} attempts that pass",
    "pass_at_k": "each case's chance that one of {k} attempts passes, from all {r} attempts",
    "pass_hat_k": "each case's chance that all of {k} attempts pass, from all {r} attempts",
}
_MISSING_WORDS = {"count_as_fail": "a missing outcome counts as a fail",
                  "exclude": "a case with a missing outcome is left out",
                  "error": "no outcome may be missing (the plan refuses the run otherwise)"}


def estimand_line(claim: dict[str, Any], primary: dict[str, Any] | None) -> str:
    """The estimand in one line: which difference, over which cases, scored by which rule, missing outcomes how."""
    from evalspec.report import fmt

    cov = _mapping(claim.get("coverage"))
    cases = _mapping(cov.get("cases"))
    rule = _mapping(cov.get("attempt_rule"))
    reps = _mapping(cov.get("repeats"))
    plan = _mapping(_mapping(claim.get("plan")).get("registered"))
    policy = _mapping(plan.get("missing")).get("policy")
    if primary and primary.get("candidate") and primary.get("baseline"):
        what = (f"the difference in pass rate {primary['candidate']} − {primary['baseline']} over the "
                f"{fmt.count(cases.get('paired'))} cases both ran")
        if primary.get("estimand") == "human_label_difference":  # a judge-corrected interval: people's labels
            from evalspec.decision.wording import estimand_words

            what = (f"{estimand_words('human_label_difference')}: {primary['candidate']} − {primary['baseline']} "
                    f"over the {fmt.count(cases.get('paired'))} cases both ran")
    elif cov.get("candidates"):
        what = "each candidate's pass rate over the cases it ran"
    else:
        return ""
    parts = [what]
    words = _RULE_WORDS.get(str(rule.get("rule")))
    if words:
        parts.append(words.format(k=rule.get("k"), r=reps.get("planned")))
    if policy in _MISSING_WORDS:
        parts.append(_MISSING_WORDS[str(policy)])
    return "; ".join(parts)


def generic_layout(result: Any) -> dict[str, Any]:
    """Arrange an analysis result the report has no dedicated section for.

    A ``candidates`` mapping whose entries are flat mappings becomes one table (a row per
    candidate, a column per key, in first-seen order); everything else is shown as nested
    key/value tables. Used by the generic section (``sections/generic.html.j2``): a kind
    without its own section template, or a kind this evalspec does not know.
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
