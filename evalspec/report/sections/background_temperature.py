"""Plots of the ``background_temperature`` analysis, as inline SVG.

Drawn like :mod:`evalspec.report.plots` (bare matplotlib figures, text kept as text, ids
prefixed per plot, matplotlib imported lazily) from numbers already in the claim, after the
figures of "Introducing Background Temperature to Characterise Hidden Randomness in Large
Language Models" (Messina and Scotta):

* ``ks``: the KS distance between the system under test and each reference against the
  temperature (their Figure 4), T_hat and its interval marked;
* ``hist-<j>``: the system's per-prompt metric values against reference ``j`` at its T_hat,
  side by side (their Figure 5);
* ``heat-<j>``: the KS distance between two reference models at every pair of temperatures
  (their Figure 6), cells at or below 0.15 outlined as in the paper.

References differ by line style and marker as well as colour, so the plots read in greyscale.
"""

from __future__ import annotations

from typing import Any

from evalspec.report.plots import ACCENT, INK, _figure, _rc_ctx, _to_svg

__all__ = ["heatmap_svg", "histogram_svg", "ks_curves_svg", "section_plots"]

STYLES = [(ACCENT, "-", "o"), ("#b4572e", (0, (4, 2)), "s"), ("#3e7c4a", (0, (1, 1.5)), "^"),
          ("#6b4f8a", (0, (6, 2, 1, 2)), "D")]
METRIC_LABEL = {
    "exact_match": "share of answers equal to the most common",
    "first_divergence": "mean first-divergence position",
    "edit_distance": "mean normalised edit distance",
    "entropy": "entropy of the answers (bits)",
    "token_entropy": "per-position token entropy (bits)",
}


def _clean(ax: Any) -> None:
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=7.5)


def ks_curves_svg(refs: list[dict[str, Any]], key: str = "tbk") -> str:
    """KS distance against temperature, one line per reference; T_hat marked, its interval shaded."""
    with _rc_ctx():
        fig = _figure(7.0, 2.6)
        ax = fig.add_subplot(1, 1, 1)
        for i, r in enumerate(refs):
            color, ls, marker = STYLES[i % len(STYLES)]
            curve = r.get("curve") or {}
            ts, ks = curve.get("temperatures") or [], curve.get("ks") or []
            if not ts:
                continue
            ax.plot(ts, ks, color=color, linestyle=ls, marker=marker, markersize=3, linewidth=1.2,
                    label=f"{r.get('name')}: T\u0302 = {r.get('t_hat'):g}")
            ax.axvspan(r.get("low"), r.get("high"), color=color, alpha=0.10, linewidth=0)
            ax.plot([r.get("t_hat")], [r.get("ks_min")], marker=marker, markersize=7, color=color,
                    markerfacecolor="white", markeredgewidth=1.4, linestyle="none")
        ax.set_xlabel("Reference temperature T", fontsize=7.5)
        ax.set_ylabel("KS distance to the system", fontsize=7.5)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=6.5, frameon=False, loc="upper right")
        _clean(ax)
        fig.subplots_adjust(left=0.09, right=0.98, top=0.95, bottom=0.18)
        return _to_svg(fig, key, "KS distance between the system under test and each reference model, by temperature")


def histogram_svg(r: dict[str, Any], metric: str, key: str = "tbh") -> str:
    """The system's per-prompt values against the reference's at T_hat (fractions per bin)."""
    with _rc_ctx():
        hist = r.get("histogram") or {}
        edges = hist.get("edges") or []
        fig = _figure(7.0, 2.2)
        ax = fig.add_subplot(1, 1, 1)
        if len(edges) >= 2:
            w = (edges[1] - edges[0]) * 0.42
            mids = [(a + b) / 2 for a, b in zip(edges[:-1], edges[1:], strict=True)]
            ax.bar([m - w / 2 for m in mids], hist.get("target") or [], width=w, color="#e4e7eb", edgecolor=INK,
                   linewidth=0.6, label="system under test (g)")
            ax.bar([m + w / 2 for m in mids], hist.get("reference") or [], width=w, color=ACCENT, edgecolor=ACCENT,
                   linewidth=0.6, label=f"{r.get('name')} at T = {r.get('t_hat'):g} (f)")
        ax.set_xlabel(METRIC_LABEL.get(metric, metric), fontsize=7.5)
        ax.set_ylabel("Share of prompts", fontsize=7.5)
        ax.legend(fontsize=6.5, frameon=False, loc="upper left")
        _clean(ax)
        fig.subplots_adjust(left=0.09, right=0.98, top=0.95, bottom=0.2)
        return _to_svg(fig, key, f"Distribution over prompts of the system's metric against {r.get('name')} at T_hat")


def heatmap_svg(h: dict[str, Any], key: str = "tbm") -> str:
    """KS distance between two references at every pair of temperatures; cells <= 0.15 outlined."""
    with _rc_ctx():
        ks = [[float(x) for x in row] for row in (h.get("ks") or [[0.0]])]
        rows, cols = h.get("row_temperatures") or [], h.get("col_temperatures") or []
        fig = _figure(7.0, 4.6)
        ax = fig.add_subplot(1, 1, 1)
        im = ax.imshow(ks, cmap="Greys", vmin=0, vmax=1, aspect="auto", origin="upper")
        for i, row in enumerate(ks):
            for j, value in enumerate(row):
                if value <= 0.15:
                    ax.add_patch(_rect(j - 0.5, i - 0.5, ACCENT))
        step_r = max(1, len(rows) // 12)
        step_c = max(1, len(cols) // 12)
        ax.set_yticks(range(0, len(rows), step_r), [f"{t:g}" for t in rows[::step_r]])
        ax.set_xticks(range(0, len(cols), step_c), [f"{t:g}" for t in cols[::step_c]])
        ax.set_ylabel(f"{h.get('rows')}: T", fontsize=7.5)
        ax.set_xlabel(f"{h.get('cols')}: T\u2032", fontsize=7.5)
        cbar = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
        cbar.ax.tick_params(labelsize=7)
        cbar.set_label("KS distance", fontsize=7.5)
        ax.tick_params(labelsize=7)
        fig.subplots_adjust(left=0.1, right=0.97, top=0.97, bottom=0.12)
        return _to_svg(fig, key, f"KS distance between {h.get('rows')} and {h.get('cols')} at every pair of temperatures")


def _rect(x: float, y: float, color: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, fill=False, edgecolor=color, linewidth=1.0)


def section_plots(a: dict[str, Any]) -> dict[str, str]:
    """Every plot of one ``background_temperature`` record, keyed ``tbg-<index>-<name>``."""
    res = a.get("result") or {}
    refs = res.get("references") or []
    if not refs:
        return {}
    idx = a.get("index")
    out = {f"tbg-{idx}-ks": ks_curves_svg(refs, key=f"tbk{idx}")}
    for j, r in enumerate(refs):
        out[f"tbg-{idx}-hist-{j}"] = histogram_svg(r, str(res.get("metric")), key=f"tbh{idx}x{j}")
    for j, h in enumerate(res.get("heatmaps") or []):
        out[f"tbg-{idx}-heat-{j}"] = heatmap_svg(h, key=f"tbm{idx}x{j}")
    return out
