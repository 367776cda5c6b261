"""The report's template filters (jinja2): numbers, sentences, dates and case lists.

The report never computes a statistic: these helpers only *write* numbers that are already
in the claim record, in the words and units a decision owner reads. The number formats
(``pct``, ``pts``, ``interval``, ``level``, ``count``, ``num``, ``pvalue``, ``signed_count``)
are :mod:`evalspec.numbers`'s report register, their one home; :func:`prose` gives sentences
the claim holds the same true minus sign. Missing values (``None``) are written as an em dash.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from evalspec.numbers import (
    DASH,
    MINUS,
    POINTS,
    count,
    interval,
    level,
    number,
    pct,
    pts,
    pvalue,
    signed_count,
)

__all__ = [
    "DASH",
    "FILTERS",
    "MINUS",
    "POINTS",
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

_HYPHEN_MINUS = re.compile(r"(?:^|(?<=[\s(\[]))-(?=\d)")


def prose(text: Any) -> str:
    """A sentence from the claim in the report's number style: a negative number gets the true minus sign.

    Only a hyphen before a digit that starts the text or follows a space or an opening
    bracket changes (so ``doc-01``, ``2026-10-02``, ``1e-5`` and a name like ``x-1`` stay).
    """
    if text is None:
        return ""
    return _HYPHEN_MINUS.sub(MINUS, str(text))


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
