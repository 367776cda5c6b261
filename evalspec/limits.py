"""Documented size limits: what evalspec accepts, so that time and memory stay bounded.

Each limit gives a clear, located error (at ``validate`` for plans, when reading for
results) rather than a run that never finishes or a report nobody can open. Below them,
time and memory grow linearly with the input. They are generous for real evaluations: a
plan is a short description.

There is no limit on attempt rows: results are read in record batches and kept as compact
codes (:mod:`evalspec.results.batches`). What the analyses hold is the case table, one cell
per candidate and case, so that is what is limited (:data:`MAX_CASE_CELLS`), and a results
set that exceeds it is refused at the row that does, before the rest is read.
"""

from __future__ import annotations

__all__ = [
    "MAX_RESULTS_BYTES",
    "MAX_CASE_CELLS",
    "MAX_LABEL_CHARS",
    "MAX_ANALYSES",
    "MAX_SLICES",
    "MAX_SLICE_LEVELS",
    "MAX_TITLE_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_CANDIDATES",
    "LIMITS",
]

#: Largest results file read (bytes), per file.
MAX_RESULTS_BYTES = 4 * 1024**3
#: Most cells of the case table (candidates in the plan x distinct case ids in the results, all files
#: together): ten million, a study of 200,000 cases for 50 candidates or 5,000,000 cases for 2.
MAX_CASE_CELLS = 10_000_000
#: Longest identifier or label (candidate, case, cluster, model version, slice value), in characters.
MAX_LABEL_CHARS = 500
#: Most analyses in one plan.
MAX_ANALYSES = 50
#: Most slices declared in one plan.
MAX_SLICES = 20
#: Most distinct values (levels) of one slice column in the results.
MAX_SLICE_LEVELS = 200
#: Longest plan title, in characters.
MAX_TITLE_CHARS = 200
#: Longest free text of a plan (question, population, decision owner, a systematic limit, a label).
MAX_TEXT_CHARS = 5_000
#: Most candidates in one plan.
MAX_CANDIDATES = 50

#: name -> (value, what it limits), for documentation and messages.
LIMITS: dict[str, tuple[int, str]] = {
    "MAX_RESULTS_BYTES": (MAX_RESULTS_BYTES, "bytes per results file"),
    "MAX_CASE_CELLS": (MAX_CASE_CELLS, "candidates x cases per results set (no limit on attempt rows)"),
    "MAX_LABEL_CHARS": (MAX_LABEL_CHARS, "characters per identifier or label in the results"),
    "MAX_ANALYSES": (MAX_ANALYSES, "analyses per plan"),
    "MAX_SLICES": (MAX_SLICES, "slices per plan"),
    "MAX_SLICE_LEVELS": (MAX_SLICE_LEVELS, "distinct values of one slice column"),
    "MAX_TITLE_CHARS": (MAX_TITLE_CHARS, "characters in the plan title"),
    "MAX_TEXT_CHARS": (MAX_TEXT_CHARS, "characters in any other text of the plan"),
    "MAX_CANDIDATES": (MAX_CANDIDATES, "candidates per plan"),
}
