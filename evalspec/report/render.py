"""Render a claim record to HTML and PDF.

One set of jinja2 templates (``templates/report.html.j2`` and its stylesheet) serves the
screen and the page: the HTML is self-contained (stylesheet and SVG plots inline, no script,
a Content-Security-Policy that forbids any), and the PDF is WeasyPrint's rendering of the same
HTML with the print stylesheet's ``@page`` rules. The only difference between the two is the
case appendix, which the PDF caps (the full list stays in the HTML and the claim).

Autoescaping is on for every template, and no string from the claim is ever compiled as a
template: a case id of ``{{ 7*7 }}`` is printed as those characters. Outputs are written
atomically (temporary file in the target folder, then :func:`os.replace`). WeasyPrint and
matplotlib are imported only when a report is rendered.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalspec._atomic import write_bytes_atomic
from evalspec.errors import EvalspecError
from evalspec.report import fmt
from evalspec.report.view import ReportView, build_view, generic_layout, title_of

__all__ = ["FORMATS", "PdfUnavailable", "atomic_write", "draw_plots", "render", "render_html", "render_pdf_bytes"]

FORMATS = ("html", "pdf")
_TEMPLATE = "report.html.j2"


class PdfUnavailable(EvalspecError):
    """WeasyPrint or its system libraries (Pango, HarfBuzz) cannot be loaded (exit code 2)."""


#: Outputs are written atomically with ordinary permissions (one writer for lock, claim and report).
atomic_write = write_bytes_atomic


def _environment() -> Any:
    import jinja2

    from evalspec._resources import templates_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=soft_breaks,
    )
    env.filters.update(fmt.FILTERS)
    env.filters["line_chunks"] = line_chunks
    from evalspec.report.view import shown_clusters

    env.globals["shown_clusters"] = shown_clusters
    return env


_LONG_RUN = None


def soft_breaks(value: Any) -> Any:
    """Text with a break opportunity (U+200B) every 60 characters inside runs of 120 or more without
    a space, so that a 5,000-character "word" (a pasted log line in a stated limit) wraps inside the
    page instead of overflowing it and the typesetter finds its breaks at once. Hashes and paths
    (under 120 characters) are left whole; markup is left alone."""
    global _LONG_RUN
    if value.__class__ is not str or len(value) < 120:
        return value
    import re

    if _LONG_RUN is None:
        _LONG_RUN = re.compile(r"[^\s\u200b]{120,}")
    return _LONG_RUN.sub(lambda m: "\u200b".join(m.group()[i:i + 60] for i in range(0, len(m.group()), 60)),
                         value)


def line_chunks(text: Any, lines: int = 40) -> list[str]:
    """``text`` cut into pieces of ``lines`` lines (each keeps its line ends), for a long ``<pre>``:
    the typesetter lays out each piece as its own box, so a 12,000-line plan costs linear time
    (one box made every line break re-measure all the text after it)."""
    if not isinstance(text, str):
        return [] if text is None else [str(text)]
    parts = text.splitlines(keepends=True)
    return ["".join(parts[i:i + lines]) for i in range(0, len(parts), lines)]


def _env() -> Any:
    """A fresh template environment (no module-level state; building one takes about a millisecond)."""
    return _environment()


def _plots(view: ReportView) -> dict[str, Any]:
    """Inline SVG plots keyed by name; each drawn only when its numbers are in the claim."""
    from markupsafe import Markup

    from evalspec.report import plots
    from evalspec.report.sections import plotter

    out: dict[str, Any] = {}
    decision = view.claim.get("decision") or {}
    primary = view.primary
    if primary and all(isinstance(primary.get(k), (int, float)) for k in ("estimate", "low", "high")) \
            and primary.get("informative", True) is not False:  # an uninformative interval is not drawn
        out["decision_line"] = Markup(plots.decision_line_svg(primary, decision.get("thresholds") or {},
                                                              str(decision.get("goal") or "superiority")))
    for a in view.sections:
        draw = plotter(a.get("kind"))
        if draw is not None:
            drawn = draw(a, claim=view.claim) if "claim" in inspect.signature(draw).parameters else draw(a)
            out.update({k: Markup(svg) for k, svg in drawn.items()})
    if not out.get("decision_line"):  # no comparison: page 1 shows the first pass-rate forest (its own ids)
        first = next((a for a in view.sections if out.get(f"forest-{a.get('index')}")), None)
        if first is not None:
            cands = (first.get("result") or {}).get("candidates") or {}
            view.page1_level = next((v.get("confidence_level") for v in cands.values() if isinstance(v, dict)), None)
            out["page1-forest"] = Markup(plotter(first.get("kind"))(first, key="fpfirst")[
                f"forest-{first.get('index')}"])
    return out


def _as_image(svg: Any) -> Any:
    """An inline SVG plot as ``<img class="plot">`` with the same SVG as a data URI (print medium).

    WeasyPrint reads an inline ``<svg>`` through its pure-Python HTML5 tokenizer and styles every
    SVG element with the document's CSS cascade; an image's SVG goes straight to its SVG parser.
    Same drawing, same PDF, 0.1-0.35 s less WeasyPrint time on the example reports (measured
    in-process against the inline SVG).
    The alternative text is the plot's ``aria-label``; the screen HTML keeps the inline SVG.
    """
    import base64
    import re

    from markupsafe import Markup

    text = str(svg)
    if not text.startswith("<svg"):
        return svg
    label = re.search(r'\baria-label="([^"]*)"', text[:text.index(">")])
    alt = label.group(1) if label else ""  # already escaped for an attribute by plots._attr
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return Markup(f'<img class="plot" alt="{alt}" src="data:image/svg+xml;base64,{data}">')


def draw_plots(claim: dict[str, Any], drawn: dict[str, Any], view: ReportView | None = None) -> dict[str, Any]:
    """Draw the plots of ``claim`` into ``drawn`` (``plots``, ``page1_level``), unless it holds them.

    The plots do not depend on the medium, so one drawing serves the screen HTML and the PDF.
    The PDF worker (:mod:`evalspec.report.pdf_worker`) gets the plots this way and writes the
    print HTML itself, its templates compiled while the plots were drawn here.
    """
    if "plots" not in drawn:
        view = view if view is not None else build_view(claim, "print")
        drawn.update(plots=_plots(view), page1_level=view.page1_level)
    return drawn


def render_html(claim: dict[str, Any], medium: str = "screen", *, with_plots: bool = True,
                drawn: dict[str, Any] | None = None) -> str:
    """The report as one self-contained HTML document (``medium`` 'screen' or 'print').

    ``drawn``: a dict shared by the renderings of one claim. The plots do not depend on the
    medium, so the first rendering draws them into it and the next one reuses them (the
    screen HTML and the PDF of one run are drawn once).
    """
    view = build_view(claim, medium)
    plots: dict[str, Any] = {}
    if with_plots:
        got = draw_plots(claim, drawn if drawn is not None else {}, view)
        plots, view.page1_level = got["plots"], got["page1_level"]
    if medium == "print":
        plots = {k: _as_image(svg) for k, svg in plots.items()}
    template = _env().get_template(_TEMPLATE)
    return template.render(c=claim, v=view, plots=plots,
                           generic_layout=generic_layout, title_of=title_of, medium=medium)


def render_pdf_bytes(html: str) -> bytes:
    """Typeset ``html`` (the print medium of :func:`render_html`) with WeasyPrint."""
    import gc
    import logging

    from evalspec._resources import templates_dir

    from evalspec.report.pdf_import import import_weasyprint

    try:
        weasyprint = import_weasyprint()
    except (ImportError, OSError) as exc:
        raise PdfUnavailable(
            f"cannot write the PDF: WeasyPrint is not usable here ({type(exc).__name__}: {exc}). "
            "Install evalspec's dependencies and the Pango libraries (Debian: libpango-1.0-0 libpangoft2-1.0-0), "
            "or ask for HTML only with --format html."
        ) from None

    logging.getLogger("fontTools").setLevel(logging.WARNING)
    # WeasyPrint allocates some million short-lived objects per report; the cyclic garbage
    # collector would traverse them again and again (5-10 % of the typesetting time). It is
    # paused while WeasyPrint runs and collects as usual after (peak memory unchanged on a
    # 100,000-case claim).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return weasyprint.HTML(string=html, base_url=str(templates_dir())).write_pdf()
    finally:
        if enabled:
            gc.enable()


def render(claim: dict[str, Any], out_dir: str | os.PathLike[str], formats: Iterable[str] = FORMATS,
           *, stem: str = "report") -> list[Path]:
    """Render ``claim`` into ``out_dir`` as ``<stem>.html`` and/or ``<stem>.pdf``.

    Parameters
    ----------
    claim : dict
        A parsed claim record (see :func:`evalspec.report.load_claim`).
    out_dir : path
        Folder for the outputs; created if missing.
    formats : iterable of {"html", "pdf"}
        Which outputs to write.
    stem : str
        File name without extension.

    Returns
    -------
    list of Path
        The files written, in the order of ``formats``.
    """
    wanted = list(dict.fromkeys(formats))
    unknown = [f for f in wanted if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report format(s) {unknown}; choose from {', '.join(FORMATS)}")
    from evalspec.report.pdf_worker import PdfWorker

    out = Path(out_dir)
    written = []
    drawn: dict[str, Any] = {}  # plots drawn once for both media
    # WeasyPrint is imported in a forked child while the plots are drawn here (where safe; else None)
    worker = PdfWorker.start(claim, sys.modules[__name__]) if "pdf" in wanted else None
    try:
        for f in wanted:
            if f == "html":
                html = render_html(claim, "screen", drawn=drawn)
                written.append(atomic_write(out / f"{stem}.html", html.encode("utf-8")))
            else:
                pdf = worker.typeset(draw_plots(claim, drawn)) if worker is not None else None
                if pdf is None:  # no worker, or it failed: typeset here (and raise what goes wrong here)
                    pdf = render_pdf_bytes(render_html(claim, "print", drawn=drawn))
                written.append(atomic_write(out / f"{stem}.pdf", pdf))
    finally:
        if worker is not None:
            worker.close()
    return written
