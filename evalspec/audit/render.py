"""How an audit is shown: a text listing, one table for ``--all``, JSON, and HTML/PDF.

The HTML uses the report's machinery (the same jinja environment, stylesheet and PDF
typesetter) with its own template ``templates/audit.html.j2``; nothing here computes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalspec.audit.model import AuditReport
from evalspec.errors import one_line

__all__ = ["text", "table", "to_json", "render_audit"]

_MARK = {"pass": "PASS", "warning": "WARN", "fail": "FAIL"}


def text(report: AuditReport, *, verbose: bool = False) -> str:
    """Every check on one line; evidence under failures and warnings (and passes when verbose)."""
    head = f"audit of {one_line(str(report.claim_path))}"
    if report.plan_id:
        head += f" (plan {one_line(str(report.plan_id))}, verdict {one_line(str(report.verdict))})"
    lines = [head]
    width = max(len(b) for b in _BASIS.values())
    for c in report.checks:
        tag = _BASIS.get(c.basis, c.basis).ljust(width)
        lines.append(f"  {_MARK[c.status]}  {tag}  {one_line(c.title)}: {one_line(c.sentence)}")
        if c.status != "pass" or verbose:
            lines += [f"        {one_line(str(e))}" for e in c.evidence]
    counts = {s: sum(c.status == s for c in report.checks) for s in ("pass", "warning", "fail")}
    lines.append(f"{len(report.checks)} checks: {counts['pass']} pass, {counts['warning']} warning, "
                 f"{counts['fail']} fail")
    anchored = [c for c in report.checks if c.basis == "evidence" and c.status == "pass"]
    lines.append(f"{len(anchored)} pass on evidence outside the files (git, a signature); "
                 + ("nothing else shows the files were not rewritten together." if not anchored else
                    "the checks marked consistency show only that the files agree."))
    return "\n".join(lines)


#: How each check's basis is printed beside it (docs/audit.md, "What each check can show").
_BASIS = {"consistency": "[consistency]", "recomputed": "[recomputed]", "evidence": "[evidence]"}


def table(rows: list[tuple[Path, AuditReport | str]]) -> str:
    """One line per claim: plan, verdict, counts and the failed checks (or the input error)."""
    header = ("claim", "plan", "verdict", "pass", "warn", "fail", "failed checks")
    body: list[tuple[str, ...]] = []
    for path, rep in rows:
        if isinstance(rep, str):
            body.append((one_line(str(path)), "-", "-", "-", "-", "-", f"cannot audit: {one_line(rep)}"))
            continue
        counts = [sum(c.status == s for c in rep.checks) for s in ("pass", "warning", "fail")]
        body.append((one_line(str(path)), one_line(str(rep.plan_id or "-")), one_line(str(rep.verdict or "-")),
                     *map(str, counts),
                     ", ".join(c.id for c in rep.failed) or "-"))
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header) - 1)]
    out = []
    for r in [header, *body]:
        out.append("  ".join(v.ljust(w) for v, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
    return "\n".join(out)


def to_json(reports: Iterable[AuditReport | tuple[Path, str]], *, as_list: bool = False) -> str:
    items: list[dict[str, Any]] = []
    for r in reports:
        if isinstance(r, AuditReport):
            items.append(r.to_dict())
        else:
            items.append({"claim": str(r[0]), "error": r[1]})
    return json.dumps(items if as_list or len(items) != 1 else items[0], indent=2, ensure_ascii=False) + "\n"


def render_html(report: AuditReport, medium: str = "screen") -> str:
    from evalspec.report.render import _env

    return _env().get_template("audit.html.j2").render(a=report.to_dict(), checks=report.checks, medium=medium,
                                                       claim_path=report.claim_path.name)


def render_audit(report: AuditReport, out_dir: str | os.PathLike[str], formats: Iterable[str] = ("html", "pdf"),
                 *, stem: str = "audit") -> list[Path]:
    """Write ``audit.html`` and/or ``audit.pdf`` into ``out_dir`` (atomically)."""
    import hashlib

    from evalspec._atomic import OutputSet
    from evalspec.report.render import atomic_write, render_pdf_bytes

    folder = Path(out_dir)
    claim = report.claim_path
    beside = claim if folder.resolve() == claim.parent.resolve() and claim.is_file() else None
    sha = hashlib.sha256(report.claim_bytes).hexdigest() if beside is not None and report.claim_bytes else None
    with OutputSet(folder, names=(f"{stem}.html", f"{stem}.pdf")) as outputs:  # run's set discipline
        assert outputs.staging is not None
        for fmt in formats:
            if fmt == "html":
                atomic_write(outputs.path(f"{stem}.html"), render_html(report, "screen").encode("utf-8"))
            elif fmt == "pdf":
                atomic_write(outputs.path(f"{stem}.pdf"), render_pdf_bytes(render_html(report, "print")))
        return outputs.commit_beside(beside, sha)
