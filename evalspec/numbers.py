"""How a number is written: the one home of every number format, in its two registers.

**Report** (:func:`pct`, :func:`pts`, :func:`interval`, :func:`level`, :func:`count`,
:func:`number`, :func:`pvalue`, :func:`signed_count`; the report's template filters, see
:mod:`evalspec.report.fmt`): proportions in the claim are in [0, 1]; pass rates are written as
percentages and differences of pass rates as percentage points ("points", one decimal), with
a true minus sign so a negative number cannot be misread. Missing values (``None``) are
written as an em dash rather than raising, because a claim may legitimately lack an optional
part.

**Claim text** (:func:`claim_points`, :func:`claim_signed`, :func:`claim_pct`,
:func:`claim_level`; the verdict's headline and reasons, :mod:`evalspec.decision.wording`):
plain ASCII (a hyphen-minus; the report's ``prose`` filter turns it into a true minus), one
decimal, a difference that rounds to zero written unsigned. The two registers differ on
purpose, and only in those ways; each is written once, here.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "DASH",
    "MINUS",
    "POINTS",
    "claim_level",
    "claim_pct",
    "claim_points",
    "claim_signed",
    "count",
    "interval",
    "level",
    "number",
    "pct",
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


# -- claim text ----------------------------------------------------------------------------

def claim_points(x: float) -> str:
    """A difference in pass rate as percentage points: 0.04 -> '4.0 points'."""
    return f"{abs(x) * 100:.1f} points" if abs(x) * 100 >= 0.05 else "0.0 points"


def claim_signed(x: float) -> str:
    """A signed difference in points: 0.04 -> '+4.0' (no sign for a value that rounds to 0)."""
    v = x * 100
    if abs(v) < 0.05:
        return "0.0"
    return f"{v:+.1f}"


def claim_pct(x: float | None) -> str:
    """A rate as a percentage in claim text: 0.823 -> '82.3%' (``undefined`` for None)."""
    return "undefined" if x is None else f"{x * 100:.1f}%"


def claim_level(x: float) -> str:
    """A level as a percentage without spurious decimals: 0.95 -> '95%', 0.975 -> '97.5%'."""
    s = f"{x * 100:.2f}".rstrip("0").rstrip(".")
    return f"{s}%"
