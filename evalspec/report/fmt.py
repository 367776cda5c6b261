"""Number and text formatting for the report (jinja2 filters).

The report never computes a statistic: these helpers only *write* numbers that are already
in the claim record, in the words and units a decision owner reads. Proportions in the claim
are in [0, 1]; the report writes pass rates as percentages and differences of pass rates as
percentage points ("points", one decimal), with a true minus sign so a negative number cannot
be misread; :func:`prose` gives sentences the claim holds the same minus sign.
Missing values (``None``) are written as an em dash rather than raising, because a claim may
legitimately lack an optional part.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from typing import Any

__all__ = [
    "DASH",
    "FILTERS",
    "MINUS",
    "case_grid",
    "count",
    "date_time",
    "interval",
    "level",
    "number",
    "pct",
    "prose",
    "pts",
    "pvalue",
    "signed_count",
]

MINUS = "\u2212"
DASH = "\u2014"


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _signed(text: str, negative: bool, sign: bool, is_zero: bool) -> str:
    if negative:
        return MINUS + text
    if sign and not is_zero:
        return "+" + text
    return text


def pct(x: Any, digits: int = 1) -> str:
    """A proportion as a percentage: ``0.8234 -> '82.3%'``."""
    if not _is_num(x):
        return DASH
    value = 100.0 * float(x)
    text = f"{abs(value):.{digits}f}"
    return _signed(text, value < 0 and float(text) != 0, False, False) + "%"


#: The unit of a difference of pass rates, everywhere in the report.
POINTS = " points"


def pts(x: Any, digits: int = 1, sign: bool = True) -> str:
    """A difference of proportions in percentage points: ``0.04 -> '+4.0 points'``."""
    if not _is_num(x):
        return DASH
    value = 100.0 * float(x)
    text = f"{abs(value):.{digits}f}"
    zero = float(text) == 0
    return _signed(text, value < 0 and not zero, sign, zero) + POINTS


def interval(low: Any, high: Any, kind: str = "pct", digits: int = 1) -> str:
    """An interval in the unit of ``kind``: ``'pct'`` (73.3% to 88.3%), ``'pts'`` or ``'num'``."""
    if kind == "pct":
        return f"{pct(low, digits)} to {pct(high, digits)}"
    if kind == "pts":
        lo, hi = pts(low, digits), pts(high, digits)
        return f"{lo.removesuffix(POINTS)} to {hi}"
    return f"{number(low)} to {number(high)}"


_HYPHEN_MINUS = re.compile(r"(?:^|(?<=[\s(\[]))-(?=\d)")


def prose(text: Any) -> str:
    """A sentence from the claim in the report's number style: a negative number gets the true minus sign.

    Only a hyphen before a digit that starts the text or follows a space or an opening
    bracket changes (so ``doc-01``, ``2026-10-02``, ``1e-5`` and a name like ``x-1`` stay).
    """
    if text is None:
        return ""
    return _HYPHEN_MINUS.sub(MINUS, str(text))


def signed_count(n: Any) -> str:
    """A signed count: ``2 -> '+2'``, ``-1 -> '−1'``, ``0 -> '0'``."""
    if not _is_num(n):
        return DASH
    text = count(abs(n))
    return _signed(text, n < 0, True, n == 0)


def level(cl: Any) -> str:
    """A confidence level: ``0.95 -> '95%'``, ``0.975 -> '97.5%'``."""
    if not _is_num(cl):
        return DASH
    return f"{100 * float(cl):.10g}%"


def count(n: Any) -> str:
    """An integer with thousands separators (``100000 -> '100,000'``); fractional counts keep 1 decimal."""
    if not _is_num(n):
        return DASH
    text = f"{int(n):,}" if float(n).is_integer() else f"{float(n):,.1f}"
    return text.replace("-", MINUS)


def number(x: Any, sig: int = 4) -> str:
    """A general number to ``sig`` significant digits, integers kept whole."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if not _is_num(x):
        return DASH if x is None else str(x)
    if isinstance(x, int) or float(x).is_integer() and abs(x) < 1e15:
        return count(x)
    text = f"{float(x):.{sig}g}"
    if "e" in text:
        mant, exp = text.split("e")
        text = f"{mant} × 10^{int(exp)}"
    return text.replace("-", MINUS)


def pvalue(p: Any) -> str:
    """A p-value: two significant digits, ``'< 0.001'`` below that."""
    if not _is_num(p):
        return DASH
    if p < 0.001:
        return "< 0.001"
    return f"{float(p):.2g}" if p < 0.1 else f"{float(p):.2f}"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def date_time(stamp: Any, with_time: bool = True) -> str:
    """An ISO 8601 timestamp as ``'29 Nov 2026, 12:00 UTC'`` (or the text unchanged if unparsable)."""
    if not isinstance(stamp, str) or not stamp:
        return DASH
    try:
        when = _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if when.tzinfo is not None:
        when = when.astimezone(_dt.UTC)
    day = f"{when.day} {_MONTHS[when.month - 1]} {when.year}"  # not %b: that follows the locale
    if not with_time:
        return day
    return f"{day}, {when:%H:%M} UTC" if when.tzinfo is not None else f"{day}, {when:%H:%M}"


def _value(x: Any) -> str:
    """Any JSON value for a key/value table (generic slots)."""
    if isinstance(x, (list, tuple)):
        return ", ".join(_value(v) for v in x) if x else DASH
    if isinstance(x, dict):
        return "; ".join(f"{k}: {_value(v)}" for k, v in x.items()) if x else DASH
    return number(x)


def _case_row(x: Any) -> dict[str, Any]:
    """A case given as an id or as ``{"case": ..., "cluster": ...}``, as a case-list row."""
    if isinstance(x, dict):
        return {"case": x.get("case", x.get("id")), "cluster": x.get("cluster")}
    return {"case": x, "cluster": None}


def case_grid(rows: Any, width: int = 118) -> str:
    """Cases as fixed-width text columns (``case · cluster``), for the printed case lists.

    A preformatted block is what WeasyPrint lays out fastest: 1,000 cases as table cells take
    about 4 s, as lines of text about 0.5 s (see benchmarks/bench_report.py). Columns are as
    wide as the longest entry; an entry longer than a line wraps on its own line.
    """
    cells = []
    for row in rows or []:
        row = _case_row(row)
        text = str(row["case"])
        if row["cluster"] is not None:
            text += f" \u00b7 {row['cluster']}"
        cells.append(text)
    if not cells:
        return ""
    col = max(len(c) for c in cells) + 3
    per_line = max(1, width // col)
    lines = []
    for i in range(0, len(cells), per_line):
        chunk = cells[i : i + per_line]
        lines.append("".join(c.ljust(col) for c in chunk[:-1]) + chunk[-1])
    return "\n".join(lines)


#: name -> filter, registered on the jinja2 environment.
from evalspec.method_words import method_words  # noqa: E402 - re-exported for the templates' `method` filter

FILTERS = {
    "pct": pct,
    "pts": pts,
    "interval": interval,
    "level": level,
    "count": count,
    "num": number,
    "method": method_words,
    "pvalue": pvalue,
    "prose": prose,
    "signed_count": signed_count,
    "date_time": date_time,
    "value": _value,
    "case_row": _case_row,
    "case_grid": case_grid,
}
