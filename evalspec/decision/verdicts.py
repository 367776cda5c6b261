"""The one table of verdict codes: their label, their tone, and the groups the rules use."""

from __future__ import annotations

from typing import Literal

__all__ = ["CLOSE", "DECISIVE", "FAVOURABLE", "VERDICTS", "Tone", "VerdictCode", "verdict_label"]

Tone = Literal["good", "caution", "bad", "neutral"]

#: verdict code -> (short label, tone): the one table of verdicts. Tone drives the verdict
#: band's style; the label carries the meaning in words so the page reads the same in greyscale.
VERDICTS: dict[str, tuple[str, Tone]] = {
    "worth_acting_on": ("Worth acting on", "good"),
    "too_small": ("Gain may be too small to act on", "caution"),
    "no_material_gain": ("No material gain", "neutral"),
    "inconclusive": ("Inconclusive", "caution"),
    "regression": ("Regression", "bad"),
    "non_inferior": ("Non-inferior within the margin", "good"),
    "not_non_inferior": ("Non-inferiority not shown", "bad"),
    "equivalent": ("Equivalent within the margin", "good"),
    "not_equivalent": ("Equivalence not shown", "caution"),
    "blocked": ("Blocked by the critical-failure limit", "bad"),
    "too_few_units": ("Too few independent units for a verdict", "caution"),
    "no_comparison": ("No comparison planned", "neutral"),
}

VerdictCode = Literal[
    "worth_acting_on", "too_small", "no_material_gain", "inconclusive", "regression", "non_inferior",
    "not_non_inferior", "equivalent", "not_equivalent", "blocked", "too_few_units", "no_comparison",
]

#: verdicts that act on the evidence (a change is adopted, or rejected as a regression).
DECISIVE = frozenset({"worth_acting_on", "regression", "non_inferior", "equivalent"})

#: verdicts that would let the candidate be adopted: the ones an assumption the data cannot
#: show (missing outcomes unrelated to the outcome, the interval's estimand) must not carry alone.
FAVOURABLE = frozenset({"worth_acting_on", "non_inferior", "equivalent"})

#: Verdicts where the evidence is close to a threshold: the only ones that get an escalation path.
#: (too_few_units, blocked and no_comparison say what would change instead; decisive verdicts are not close.)
CLOSE = frozenset({"inconclusive", "too_small", "no_material_gain", "not_non_inferior", "not_equivalent"})


def verdict_label(code: str) -> tuple[str, str]:
    """(label, tone) of a verdict code."""
    return VERDICTS[code]
