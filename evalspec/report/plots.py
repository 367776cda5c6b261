"""Plots for the report, drawn with matplotlib as inline SVG.

Every plot draws numbers already in the claim (estimates and interval ends); nothing here
computes a statistic. Plots are built on a bare :class:`matplotlib.figure.Figure` (no pyplot
state, no GUI backend) and saved as SVG with ``svg.fonttype: none`` so labels stay text that
a reader can select and WeasyPrint sets in the report's font. They are readable in greyscale:
zones differ by lightness and are bounded by drawn lines, markers by shape, and every zone and
line is labelled in words (no hatch patterns: matplotlib 3.11 drew them in the zone's own colour,
invisibly, and they were the dearest part of the PDF's plots). matplotlib is imported lazily:
``evalspec validate`` must not pay for it.

Each function returns an SVG fragment (no XML prolog) whose ``id`` attributes are prefixed
with a per-plot key, so several plots can sit in one HTML page without id collisions.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ForestRow", "cluster_bars_svg", "decision_line_svg", "forest_svg"]

INK = "#1f2933"
MUTED = "#52606d"
ACCENT = "#2f4b6e"
GAIN = "#cfdde9"
SMALL = "#eceff2"
LOSS = "#f4f5f7"
FONT = ["DejaVu Sans", "Bitstream Vera Sans", "sans-serif"]


@dataclass(frozen=True)
class ForestRow:
    """One row of a forest plot: a label and an estimate with its interval (proportions)."""

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    note: str = ""


def _rc() -> dict[str, Any]:
    return {
        # labels come from the data (case, cluster, slice names): "$x$" is text, not mathtext
        "text.parse_math": False,
        "text.usetex": False,
        "svg.fonttype": "none",
        "svg.hashsalt": "evalspec",
        "font.family": "sans-serif",
        "font.sans-serif": FONT,
        "font.size": 8.5,
        "axes.edgecolor": MUTED,
        "axes.labelcolor": INK,
        "xtick.color": MUTED,
        "ytick.color": INK,
    }


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=72)


def _to_svg(fig: Any, key: str, label: str) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(_rc()):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
                    transparent=True)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)
    # matplotlib's <style>*{stroke-linejoin: round; stroke-linecap: butt}</style> would be a
    # document-wide stylesheet once the SVG is inline in HTML (every element matched five times
    # over); the same defaults go on the <svg> element as inherited presentation attributes.
    text = re.sub(r"<defs>\s*<style[^>]*>.*?</style>\s*</defs>\s*", "", text, flags=re.DOTALL)
    text = re.sub(r"<style[^>]*>.*?</style>\s*", "", text, flags=re.DOTALL)
    # Every plot sets its limits around all it draws, so clipping to the axes changes nothing;
    # dropping the clip paths saves WeasyPrint a clip per artist.
    text = re.sub(r' clip-path="url\(#[^)]*\)"', "", text)
    text = re.sub(r"<clipPath\b.*?</clipPath>\s*", "", text, flags=re.DOTALL)
    text = re.sub(r'style="([^"]*)"', _style_to_attributes, text)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{key}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{key}-\1)", text)
    text = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{key}-\1"', text)
    # Let CSS size the plot (the viewBox keeps the proportions); keep it an accessible image.
    text = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
                  lambda m: f'<svg{m.group(1)} class="plot" role="img" aria-label="{_attr(label)}" '
                  'stroke-linejoin="round" stroke-linecap="butt"', text, count=1)
    return text.strip()


_PRESENTATION = frozenset({
    "fill", "fill-opacity", "stroke", "stroke-width", "stroke-linecap", "stroke-linejoin", "stroke-dasharray",
    "stroke-dashoffset", "stroke-opacity", "stroke-miterlimit", "opacity", "text-anchor", "font-size",
    "font-family", "font-style", "font-weight",
})


def _style_to_attributes(match: re.Match[str]) -> str:
    """``style="fill: #123; font-size: 8px"`` -> ``fill="#123" font-size="8px"``.

    SVG presentation attributes mean the same as these declarations, and WeasyPrint reads the
    attributes directly (it warns about ``fill`` in a style attribute); anything else stays a style.
    """
    attrs, rest = [], []
    for decl in match.group(1).split(";"):
        name, _, value = decl.partition(":")
        name, value = name.strip(), value.strip()
        if not name:
            continue
        if name in _PRESENTATION:
            attrs.append(f'{name}="{value.replace(chr(34), chr(39))}"')
        else:
            rest.append(f"{name}: {value}")
    if rest:
        attrs.append(f'style="{"; ".join(rest)}"')
    return " ".join(attrs)


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))


def _signed_pts(v: float) -> str:
    text = f"{abs(v):.0f}" if abs(v - round(v)) < 1e-9 else f"{abs(v):.1f}"
    if text in ("0", "0.0"):
        return "0"
    return ("\u2212" if v < 0 else "+") + text


def decision_line_svg(primary: dict[str, Any], thresholds: dict[str, Any], goal: str, key: str = "dl") -> str:
    """The primary paired difference on a number line against zero and the preregistered bars.

    Shaded zones show what each part of the line means for the declared goal: a gain worth
    acting on (at or above ``minimum_improvement``), a gain too small to act on, a loss; or,
    for non-inferiority and equivalence, the zone inside the margin. The reader sees at once
    whether the interval clears the bar.
    """
    with _rc_ctx():
        est = 100 * float(primary["estimate"])
        lo, hi = 100 * float(primary["low"]), 100 * float(primary["high"])
        m_imp = 100 * float(thresholds.get("minimum_improvement") or 0.0)
        margin = thresholds.get("margin")
        margin = 100 * float(margin) if margin is not None else None
        marks = [0.0, lo, hi, est, m_imp] + ([margin, -margin] if margin else [])
        span = max(marks) - min(marks)
        pad = max(2.0, 0.2 * span)
        x0, x1 = min(marks) - pad, max(marks) + pad
        zones: list[tuple[float, float, str, str]] = []
        if goal == "non_inferiority" and margin:
            zones = [(x0, -margin, LOSS, "beyond margin"), (-margin, x1, GAIN, "non-inferior")]
        elif goal == "equivalence" and margin:
            zones = [(x0, -margin, LOSS, "worse"), (-margin, margin, GAIN, "equivalent"), (margin, x1, LOSS, "better")]
        else:
            zones = [(x0, 0.0, LOSS, "loss")]
            if m_imp > 0:
                zones.append((0.0, m_imp, SMALL, "gain too small"))
            zones.append((m_imp, x1, GAIN, "worth acting on"))
        # a zone too narrow for its label gets it above the line, with a short leader (never unlabelled)
        outside = [z for z in zones if z[1] > z[0] and _fit_label(z[3], (z[1] - z[0]) / (x1 - x0)) is None]
        fig = _figure(7.0, 1.75 if outside else 1.5)
        ax = fig.add_axes((0.02, 0.26, 0.96, 0.58) if outside else (0.02, 0.3, 0.96, 0.66))
        ax.set_xlim(x0, x1)
        ax.set_ylim(0, 1)
        for a, b, colour, name in zones:
            if b <= a:
                continue
            ax.axvspan(a, b, color=colour, linewidth=0, zorder=0)
            label = _fit_label(name, (b - a) / (x1 - x0))
            if label:
                ax.text((a + b) / 2, 0.9, label, ha="center", va="top", fontsize=8, color=MUTED, style="italic",
                        zorder=6, bbox={"facecolor": colour, "edgecolor": "none", "pad": 1.5})
            else:
                mid = (a + b) / 2
                ax.plot([mid, mid], [0.97, 1.07], color=MUTED, linewidth=0.7, clip_on=False, zorder=6)
                ax.text(mid, 1.09, _SHORT.get(name, name), ha="center", va="bottom", fontsize=8, color=MUTED,
                        style="italic", clip_on=False, zorder=6)
        ax.axvline(0.0, color=INK, linewidth=1.1, zorder=2)
        if m_imp > 0 and goal == "superiority":
            ax.axvline(m_imp, color=INK, linewidth=0.9, linestyle=(0, (4, 2)), zorder=2)
        if margin and goal in ("non_inferiority", "equivalence"):
            for x in ([-margin] if goal == "non_inferiority" else [-margin, margin]):
                ax.axvline(x, color=INK, linewidth=0.9, linestyle=(0, (1, 1.5)), zorder=2)
        y = 0.38
        ax.plot([lo, hi], [y, y], color=ACCENT, linewidth=4.5, solid_capstyle="butt", zorder=3)
        ax.plot([lo, lo], [y - 0.12, y + 0.12], color=ACCENT, linewidth=1.6, zorder=3)
        ax.plot([hi, hi], [y - 0.12, y + 0.12], color=ACCENT, linewidth=1.6, zorder=3)
        ax.plot([est], [y], marker="o", markersize=9, markerfacecolor="white", markeredgecolor=INK,
                markeredgewidth=1.8, zorder=4)
        ax.text(est, y + 0.17, f"{_signed_pts(est)}", ha="center", va="bottom", fontsize=9.5, color=INK,
                fontweight="bold", zorder=5)
        ax.text(lo, y - 0.17, _signed_pts(lo), ha="center", va="top", fontsize=8, color=ACCENT, zorder=5)
        ax.text(hi, y - 0.17, _signed_pts(hi), ha="center", va="top", fontsize=8, color=ACCENT, zorder=5)
        ax.set_yticks([])
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
        ticks = _nice_ticks(x0, x1)
        ax.set_xticks(ticks)
        ax.set_xticklabels([_signed_pts(t) for t in ticks])
        who = f"{primary.get('candidate', 'candidate')} \u2212 {primary.get('baseline', 'baseline')}"
        ax.set_xlabel(f"Difference in pass rate, {who} (percentage points)", fontsize=8.5, labelpad=4)
        label = (f"Number line: the difference {who} is {_signed_pts(est)} points with interval "
                 f"{_signed_pts(lo)} to {_signed_pts(hi)}; minimum improvement {_signed_pts(m_imp)}")
        return _to_svg(fig, key, label)


_SHORT = {"gain too small": "too small", "worth acting on": "worth it", "beyond margin": "beyond",
          "non-inferior": "non-inf.", "equivalent": "equiv."}


def _fit_label(name: str, width_fraction: float) -> str | None:
    """The zone label, shortened or dropped when the zone is too narrow to hold it (8 pt on 7 in)."""
    for text in (name, _SHORT.get(name)):
        if text and width_fraction >= 0.0105 * len(text) + 0.012:
            return text
    return None


def _nice_ticks(x0: float, x1: float) -> list[float]:
    span = x1 - x0
    for step in (1, 2, 2.5, 5, 10, 20, 25, 50):
        if span / step <= 10:
            break
    first = step * (int(x0 // step) + 1)
    out, t = [], first
    while t < x1:
        out.append(round(t, 6))
        t += step
    return out


class _rc_ctx:
    """Context manager applying the report's rcParams while a figure is built."""

    def __enter__(self) -> None:
        import matplotlib

        self._ctx = matplotlib.rc_context(_rc())
        self._ctx.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


def forest_svg(rows: Sequence[ForestRow], xlabel: str, *, unit: str = "pct", key: str = "fp",
               refs: Sequence[tuple[float, str]] = (), title: str = "") -> str:
    """A forest plot: one row per label, a point estimate with its interval (proportions).

    ``unit='pct'`` draws pass rates on a 0-100% axis; ``'pts'`` draws differences in
    percentage points with vertical reference lines ``refs`` (value, label), e.g. zero.
    """
    with _rc_ctx():
        rows = [r for r in rows if r.estimate is not None and r.low is not None and r.high is not None]
        n = max(1, len(rows))
        extra = 0.16 if refs else 0.0
        height = 0.55 + extra + 0.3 * n
        fig = _figure(7.0, height)
        bottom = (0.42 + extra) / height
        ax = fig.add_axes((0.2, bottom, 0.56, 1 - bottom - 0.12 / height))
        ys = list(range(n))[::-1]
        vals = []
        fmt_v = (lambda v: f"{v:.1f}%") if unit == "pct" else _signed_pts
        for y, r in zip(ys, rows):
            e, lo, hi = (100 * float(v) for v in (r.estimate, r.low, r.high))
            vals += [lo, hi]
            ax.plot([lo, hi], [y, y], color=ACCENT, linewidth=2.2, solid_capstyle="butt", zorder=3)
            ax.plot([e], [y], marker="s", markersize=6, color=INK, zorder=4)
            ax.annotate(f"{fmt_v(e)}  ({fmt_v(lo)} to {fmt_v(hi)})", xy=(1.02, y), xycoords=("axes fraction", "data"),
                        va="center", ha="left", fontsize=8, color=INK, annotation_clip=False)
        for x, name in refs:
            ax.axvline(100 * x, color=INK if x == 0 else MUTED, linewidth=0.9,
                       linestyle="-" if x == 0 else (0, (4, 2)), zorder=2)
            vals.append(100 * x)
        ax.set_yticks(ys)
        ax.set_yticklabels([_clip(r.label) for r in rows])
        ax.set_ylim(-0.6, n - 0.4)
        if refs:
            styles = ["solid line" if x == 0 else "dashed line" for x, _ in refs]
            xlabel += "\n" + " · ".join(f"{st}: {name} ({_signed_pts(100 * x)})" for st, (x, name) in zip(styles, refs))
        if unit == "pct":
            lo_v, hi_v = (min(vals), max(vals)) if vals else (0, 100)
            pad = max(2.0, 0.1 * (hi_v - lo_v))
            ax.set_xlim(max(0.0, lo_v - pad), min(100.0, hi_v + pad))
            ax.xaxis.set_major_formatter(_fmt(lambda v: f"{v:g}%"))
        else:
            lo_v, hi_v = (min(vals), max(vals)) if vals else (-1, 1)
            pad = max(1.0, 0.1 * (hi_v - lo_v))
            ax.set_xlim(lo_v - pad, hi_v + pad)
            ax.xaxis.set_major_formatter(_fmt(_signed_pts))
        ax.grid(axis="x", color="#e4e7eb", linewidth=0.6, zorder=0)
        for side in ("right", "top", "left"):
            ax.spines[side].set_visible(False)
        ax.tick_params(axis="y", length=0)
        ax.set_xlabel(xlabel, fontsize=8.5)
        return _to_svg(fig, key, title or xlabel)


def _fmt(fn: Any) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: fn(v))


def _clip(text: str, limit: int = 34) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def cluster_bars_svg(contributions: Sequence[dict[str, Any]], top: int, candidate: str, baseline: str,
                     key: str = "cb") -> str:
    """Net disagreements per cluster (candidate-only minus baseline-only cases), largest first."""
    with _rc_ctx():
        from evalspec.report.view import shown_clusters

        rows = shown_clusters(contributions, top)  # the same clusters as the table beside the chart
        n = max(1, len(rows))
        height = 0.6 + 0.24 * n
        fig = _figure(7.0, height)
        bottom = 0.45 / height
        ax = fig.add_axes((0.26, bottom, 0.70, 1 - bottom - 0.1 / height))
        ys = list(range(n))[::-1]
        for y, r in zip(ys, rows):
            net = float(r.get("net", 0))
            # gains solid, losses outlined: tells them apart in greyscale without a (slow) hatch pattern
            ax.barh([y], [net], height=0.62, color=ACCENT if net >= 0 else "white",
                    edgecolor=ACCENT, linewidth=1.0, zorder=3)
        ax.axvline(0, color=INK, linewidth=0.9, zorder=4)
        ax.set_yticks(ys)
        ax.set_yticklabels([_clip(str(r.get("cluster"))) for r in rows])
        ax.set_ylim(-0.6, n - 0.4)
        ax.grid(axis="x", color="#e4e7eb", linewidth=0.6, zorder=0)
        for side in ("right", "top", "left"):
            ax.spines[side].set_visible(False)
        ax.tick_params(axis="y", length=0)
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"Net cases: {_clip(candidate, 16)} passes alone \u2212 {_clip(baseline, 16)} passes alone",
                      fontsize=8.5)
        return _to_svg(fig, key, "Clusters ranked by their net contribution to the paired difference")
