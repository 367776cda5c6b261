"""The example values of the starter plan (``evalspec init``), apart from the plan model.

:mod:`evalspec.plan.starter` writes them into the starter; the plan's rules read them to warn
when a plan still carries the starter's example text (:func:`example_value`). This module
imports nothing, so the rules can read it without importing the starter generator (which
reads the plan model the rules are part of).
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXAMPLE", "example_value"]

#: Example values; keys of the verdict sections not listed here are written with their defaults.
EXAMPLE: dict[str, Any] = {
    "evalspec": 1,
    "id": "my-evaluation",
    "title": "Candidate vs current configuration",
    "question": "Should we replace the current configuration with the candidate?",
    "decision_owner": "the team lead who signs off the change",
    "population": "the cases the decision is about (e.g. English support questions, Q3 traffic sample)",
    "data": {
        "results": "results.jsonl",
        "format": "auto",
        "columns": {"candidate": "candidate", "repeat": "repeat", "outcome": "outcome", "timestamp": "timestamp"},
        "outcome": {},
    },
    "candidates": {
        "candidate": {"model": "vendor/new-model", "version": "2026-10-01", "settings": {"temperature": 0}},
        "current": {"model": "vendor/old-model", "version": "2026-06-15", "settings": {"temperature": 0}},
    },
    "baseline": "current",
    "units": {"case": "case_id", "cluster": "source_doc"},
    "attempts": {"repeats": 1, "rule": "first"},
    "missing": {"policy": "count_as_fail", "max_fraction": 0.02},
    "analyses": [
        {"kind": "proportion", "method": "wilson"},
        {"kind": "paired_difference", "compare": ["candidate", "current"], "method": "auto", "seed": 1},
    ],
    "decision": {"goal": "superiority", "minimum_improvement": 0.03, "confidence_level": 0.95,
                 "minimum_units": 10},
    "stopping": {"rule": "fixed", "max_units": 200, "decision_date": "2026-12-31", "looks": 1},
    "slices": [],
    "systematic_limits": [
        "Replace with the known limits of this evaluation (language range, label quality, provider alias)."],
    "record": ["timestamp"],
}


def example_value(key: str) -> Any:
    """The starter's example value of a top-level key (validate warns when it is left in a plan)."""
    return EXAMPLE.get(key)
