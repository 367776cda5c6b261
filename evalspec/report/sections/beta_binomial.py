"""Plots of the Bayesian profile (the ``beta_binomial`` analysis), as inline SVG.

Drawn like :mod:`evalspec.report.plots` (bare matplotlib figures, text kept as text, ids
prefixed per plot, matplotlib imported lazily) from numbers already in the claim: the
posterior density curves, HDIs, theta_i summaries and posterior predictive counts that the
analysis stored. Nothing here computes a statistic. Conditions differ by line style and
marker shape as well as colour, so the plots read in greyscale.

:func:`section_plots` returns every plot of one analysis record keyed
``bb-<index>-<name>`` (``densities``, ``differences-<j>``, ``theta``, ``ppc``) for the
report's ``plots`` mapping.
"""

from __future__ import annotations

from typing import Any

from evalspec.report.plots import ACCENT, INK, MUTED, _figure, _rc_ctx, _to_svg

__all__ = ["densities_svg", "differences_svg", "ppc_svg", "section_plots", "theta_svg"]

PARAM_TITLES = {
    "mu": "\u03bc (mean accuracy)",
    "kappa": "\u03ba (concentration)",
    "gamma_bar": "\u03b3\u0304 (response stochasticity)",
    "variance": "Beta variance \u03bc(1\u2212\u03bc)/(\u03ba+1)",
}
PARAMS = tuple(PARAM_TITLES)
#: Colour, line style and marker of the first, second, ... condition.
STYLES = [(ACCENT, "-", "o"), ("#b4572e", (0, (4, 2)), "s"), ("#3e7c4a", (0, (1, 1.5)), "^"),
          ("#6b4f8a", (0, (6, 2, 1, 2)), "D")]


def _style(i: int) -> tuple[str, Any, str]:
    return STYLES[i % len(STYLES)]


def _clean(ax: Any) -> None:
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=7.5)


def densities_svg(conditions: dict[str, Any], hdi_prob: float, key: str = "bbd") -> str:
    """Per-parameter posterior densities of every condition overlaid, each HDI as a bar below."""
    with _rc_ctx():
        fig = _figure(7.0, 3.9)
        names = list(conditions)
        for p_i, p in enumerate(PARAMS):
            ax = fig.add_subplot(2, 2, p_i + 1)
            top = 0.0
            for c_i, name in enumerate(names):
                cond = conditions[name] or {}
                dens = (cond.get("densities") or {}).get(p) or {}
                xs, ys = dens.get("x") or [], dens.get("density") or []
                if xs and ys:
                    color, ls, _ = _style(c_i)
                    ax.plot(xs, ys, color=color, linestyle=ls, linewidth=1.4, label=name)
                    top = max(top, max(ys))
            for c_i, name in enumerate(names):
                est = (conditions[name] or {}).get(p) or {}
                if all(isinstance(est.get(k), (int, float)) for k in ("low", "high", "mean")):
                    color, ls, marker = _style(c_i)
                    y = -(0.08 + 0.08 * c_i) * (top or 1.0)
                    ax.plot([est["low"], est["high"]], [y, y], color=color, linewidth=2.2, solid_capstyle="butt")
                    ax.plot([est["mean"]], [y], marker=marker, markersize=4, color=INK)
            if p == "kappa":
                from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

                ax.set_xscale("log")
                ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
                ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_title(PARAM_TITLES[p], fontsize=8, color=INK, loc="left")
            ax.set_yticks([])
            _clean(ax)
            ax.spines["left"].set_visible(False)
            if p_i == 0:
                ax.legend(fontsize=7, frameon=False, loc="upper left")
        fig.text(0.5, 0.005, f"Posterior densities; bars below: {round(100 * hdi_prob):g}% HDI with the posterior "
                             "mean (marker)", ha="center", fontsize=7.5, color=MUTED)
        fig.subplots_adjust(left=0.03, right=0.98, top=0.93, bottom=0.12, hspace=0.55, wspace=0.12)
        return _to_svg(fig, key, "Posterior densities of mu, kappa, gamma-bar and the Beta variance per condition")


def differences_svg(contrast: dict[str, Any], hdi_prob: float, key: str = "bbx") -> str:
    """Posterior density of each difference (first minus second), its HDI shaded, zero marked."""
    with _rc_ctx():
        fig = _figure(7.0, 3.7)
        first, second = contrast.get("first"), contrast.get("second")
        for p_i, p in enumerate(PARAMS):
            ax = fig.add_subplot(2, 2, p_i + 1)
            d = (contrast.get("differences") or {}).get(p) or {}
            dens = d.get("density") or {}
            xs, ys = dens.get("x") or [], dens.get("density") or []
            if xs and ys:
                ax.plot(xs, ys, color=ACCENT, linewidth=1.4)
                lo, hi = d.get("low"), d.get("high")
                if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                    inside = [(x, y) for x, y in zip(xs, ys, strict=True) if lo <= x <= hi]
                    if inside:
                        ax.fill_between([x for x, _ in inside], [y for _, y in inside], color="#cfdde9", linewidth=0)
                ax.axvline(0.0, color=INK, linewidth=0.9)
                lo_x, hi_x = min(min(xs), 0.0), max(max(xs), 0.0)
                pad = 0.05 * (hi_x - lo_x or 1.0)
                ax.set_xlim(lo_x - pad, hi_x + pad)
            p_gt = d.get("p_greater")
            extra = f"   P(>0) = {p_gt:.3f}" if isinstance(p_gt, (int, float)) else ""
            ax.set_title(f"\u0394 {PARAM_TITLES[p]}{extra}", fontsize=7.5, color=INK, loc="left")
            ax.set_yticks([])
            _clean(ax)
            ax.spines["left"].set_visible(False)
        fig.text(0.5, 0.005, f"{first} minus {second}: posterior density; shaded: {round(100 * hdi_prob):g}% HDI; "
                             "vertical line: no difference", ha="center", fontsize=7.5, color=MUTED)
        fig.subplots_adjust(left=0.03, right=0.98, top=0.93, bottom=0.12, hspace=0.55, wspace=0.12)
        return _to_svg(fig, key, f"Posterior of the differences, {first} minus {second}")


def theta_svg(conditions: dict[str, Any], hdi_prob: float, key: str = "bbt") -> str:
    """theta_i of every condition, questions sorted by the first condition's theta (hardest left)."""
    with _rc_ctx():
        names = list(conditions)
        first = {t["case"]: t for t in (conditions[names[0]] or {}).get("theta") or []}
        order = sorted(first, key=lambda c: (first[c]["mean"], c))
        others = [c for n in names[1:] for c in (t["case"] for t in (conditions[n] or {}).get("theta") or [])]
        order += sorted(set(others) - set(order))
        pos = {c: i for i, c in enumerate(order)}
        fig = _figure(7.0, 2.8)
        ax = fig.add_axes((0.08, 0.22, 0.9, 0.7))
        width = len(names)
        for c_i, name in enumerate(names):
            color, _, marker = _style(c_i)
            rows = [t for t in (conditions[name] or {}).get("theta") or [] if t["case"] in pos]
            off = (c_i - (width - 1) / 2) * 0.28
            xs = [pos[t["case"]] + off for t in rows]
            ax.vlines(xs, [t["low"] for t in rows], [t["high"] for t in rows], color=color, linewidth=0.8)
            ax.plot(xs, [t["mean"] for t in rows], linestyle="none", marker=marker, markersize=2.6, color=color,
                    label=name)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlim(-1, max(1, len(order)))
        ax.set_ylabel("\u03b8 (probability correct)", fontsize=7.5)
        ax.set_xticks([])
        ax.set_xlabel(f"Questions, sorted by {names[0]}'s \u03b8 (hardest left); bars: {round(100 * hdi_prob):g}% HDI",
                      fontsize=7.5)
        ax.legend(fontsize=7, frameon=False, loc="upper left", ncol=len(names))
        _clean(ax)
        return _to_svg(fig, key, "Per-question theta with its HDI, both conditions")


def ppc_svg(conditions: dict[str, Any], key: str = "bbp") -> str:
    """Observed count of questions per band of y/J against the replicated data sets' band."""
    with _rc_ctx():
        names = list(conditions)
        fig = _figure(7.0, 2.3)
        for c_i, name in enumerate(names):
            ppc = (conditions[name] or {}).get("ppc") or {}
            edges = ppc.get("bin_edges") or []
            obs = ppc.get("observed") or []
            if len(edges) < 2 or not obs:
                continue
            ax = fig.add_subplot(1, len(names), c_i + 1)
            mids = [100 * (a + b) / 2 for a, b in zip(edges[:-1], edges[1:], strict=True)]
            w = 100 * (edges[1] - edges[0])
            ax.bar(mids, obs, width=0.8 * w, color="#e4e7eb", edgecolor=INK, linewidth=0.6, label="observed")
            lo, hi, med = ppc.get("replicated_low") or [], ppc.get("replicated_high") or [], \
                ppc.get("replicated_median") or []
            if lo and hi:
                ax.vlines(mids, lo, hi, color=ACCENT, linewidth=2.2, label=f"replicated, {round(100 * ppc.get('band', 0.9)):g}%")
            if med:
                ax.plot(mids, med, linestyle="none", marker="_", markersize=8, color=ACCENT)
            ax.set_title(f"{name}: p_min = {ppc.get('p_min', float('nan')):.2f}", fontsize=7.5, color=INK, loc="left")
            ax.set_xlabel("Share of trials correct (%)", fontsize=7.5)
            if c_i == 0:
                ax.set_ylabel("Questions", fontsize=7.5)
                ax.legend(fontsize=6.5, frameon=False, loc="upper left")
            _clean(ax)
        fig.subplots_adjust(left=0.08, right=0.98, top=0.86, bottom=0.24, wspace=0.25)
        return _to_svg(fig, key, "Posterior predictive check: observed against replicated questions per band")


def section_plots(a: dict[str, Any]) -> dict[str, str]:
    """Every plot of one ``beta_binomial`` analysis record, keyed ``bb-<index>-<name>``."""
    res = a.get("result") or {}
    conds = res.get("conditions") or {}
    if not conds:
        return {}
    idx = a.get("index")
    prob = float(res.get("hdi_prob") or 0.95)
    out = {f"bb-{idx}-densities": densities_svg(conds, prob, key=f"bbd{idx}"),
           f"bb-{idx}-theta": theta_svg(conds, prob, key=f"bbt{idx}"),
           f"bb-{idx}-ppc": ppc_svg(conds, key=f"bbp{idx}")}
    for j, con in enumerate(res.get("contrasts") or []):
        out[f"bb-{idx}-differences-{j}"] = differences_svg(con, prob, key=f"bbx{idx}x{j}")
    return out
