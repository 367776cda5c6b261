"""The decision handoff: render a claim record to HTML and PDF.

``render(claim, out_dir, formats=("html", "pdf"))`` writes ``report.html`` and/or
``report.pdf``; ``load_claim(path)`` reads and checks a ``claim.json``. The report formats
and arranges what the claim holds and computes no statistic (see :mod:`evalspec.report.view`).
Heavy libraries (matplotlib, WeasyPrint) load only when a report is rendered.
"""

from __future__ import annotations

from evalspec.report.load import load_claim
from evalspec.report.render import FORMATS, render, render_html

__all__ = ["FORMATS", "load_claim", "render", "render_html"]
