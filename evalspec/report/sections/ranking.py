"""The ``ranking`` section's plot: each candidate's rank interval, read in seconds.

One row per candidate, best estimate first; the horizontal axis is the rank (1 = best, left).
A bar spans the ranks the data allow (the simultaneous interval), a dot marks the rank of the
estimate, and alternate shading marks the groups that cannot be told apart. Drawn as plain
SVG from the numbers in the claim (no statistic is computed here, no plotting library).
"""

from __future__ import annotations

from typing import Any

from markupsafe import escape

__all__ = ["rank_svg", "section_plots"]

_ROW = 26
_LEFT = 150
_RIGHT = 150
_WIDTH = 640


def rank_svg(ranks: list[dict[str, Any]], groups: list[list[str]], level: Any, key: str) -> str:
    """SVG of rank intervals; ``ranks`` rows (best first) with candidate, estimate, rank, rank_low, rank_high."""
    k = len(ranks)
    if k == 0:
        return ""
    plot_w = _WIDTH - _LEFT - _RIGHT
    top = 34
    height = top + k * _ROW + 30

    def x(rank: float) -> float:
        return _LEFT + (plot_w * (rank - 1) / (k - 1) if k > 1 else plot_w / 2)

    level_text = f"{float(level):.0%}" if isinstance(level, (int, float)) else ""
    title = f"Rank of each candidate, with {level_text} simultaneous intervals (1 = best)"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" '
             f'height="{height}" role="img" aria-label="{escape(title)}" id="{escape(key)}" class="plot">',
             f"<title>{escape(title)}</title>",
             f'<text x="{_LEFT}" y="16" font-size="12" fill="#333">{escape(title)}</text>']
    row_of = {str(r.get("candidate")): i for i, r in enumerate(ranks)}
    for g, members in enumerate(groups):
        rows = sorted(row_of[m] for m in members if m in row_of)
        if len(rows) > 1 and g % 2 == 0:
            y0 = top + rows[0] * _ROW
            parts.append(f'<rect x="4" y="{y0}" width="{_WIDTH - 8}" height="{(rows[-1] - rows[0] + 1) * _ROW}" '
                         'fill="#eef2f7"/>')
    for t in range(1, k + 1):
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{top + k * _ROW}" stroke="#ddd"/>')
        if k <= 20 or t in (1, k) or t % 5 == 0:
            parts.append(f'<text x="{x(t):.1f}" y="{top + k * _ROW + 16}" font-size="11" text-anchor="middle" '
                         f'fill="#555">{t}</text>')
    for i, r in enumerate(ranks):
        y = top + i * _ROW + _ROW / 2
        lo, hi, rank = int(r.get("rank_low") or 1), int(r.get("rank_high") or k), int(r.get("rank") or 1)
        est = r.get("estimate")
        name = str(r.get("candidate"))
        short = name if len(name) <= 24 else name[:23] + "…"
        parts.append(f'<text x="{_LEFT - 10}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{escape(short)}</text>')
        parts.append(f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}" stroke="#2b5d8a" '
                     'stroke-width="6" stroke-linecap="round"/>')
        parts.append(f'<circle cx="{x(rank):.1f}" cy="{y:.1f}" r="5" fill="#fff" stroke="#1b3550" stroke-width="2"/>')
        label = f"ranks {lo} to {hi}" if lo != hi else f"rank {lo}"
        pct = f"{100 * float(est):.1f}%" if isinstance(est, (int, float)) else ""
        parts.append(f'<text x="{_WIDTH - _RIGHT + 10}" y="{y + 4:.1f}" font-size="11" fill="#333">'
                     f'{escape(pct)} · {escape(label)}</text>')
    parts.append(f'<text x="{_LEFT + plot_w / 2:.1f}" y="{height - 2}" font-size="11" text-anchor="middle" '
                 'fill="#555">rank</text>')
    parts.append("</svg>")
    return "".join(parts)


def section_plots(a: dict[str, Any]) -> dict[str, str]:
    """The rank plot of one ``ranking`` record, keyed ``ranks-<index>``."""
    res = a.get("result") or {}
    ranks = [r for r in res.get("ranks") or [] if isinstance(r, dict)]
    if not ranks:
        return {}
    groups = [[str(m) for m in g] for g in res.get("groups") or [] if isinstance(g, list)]
    return {f"ranks-{a.get('index')}": rank_svg(ranks, groups, res.get("confidence_level"),
                                                 key=f"rk{a.get('index')}")}
