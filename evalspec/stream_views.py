"""The decision's other readings of results reduced while read: a case table that still knows which attempt passed.

A case table read from a file holds counts, so it cannot cut the candidate and the baseline to
the same number of attempts (:class:`evalspec.case_views.CaseTableReadings` refuses that reading
where it is needed). Results reduced while read (:mod:`evalspec.results.stream_reduce`) keep each
cell's 64-bit masks of kept, passed and missing attempts, and so make the cut exactly as
:func:`evalspec.sensitivity_views.equal_attempts` makes it on attempt rows: each side keeps its
lowest-numbered usable attempts, as many as the other side has (none where the other has none);
the attempt rule is applied again to the counts of what is kept. The other readings are the case
table's, from the same counts.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np

from evalspec.analyses.contract import CaseCounts
from evalspec.case_views import CaseTableReadings
from evalspec.results.case_model import outcomes_from_counts
from evalspec.results.stream_state import lowest_bits_each, rule_counts
from evalspec.sensitivity_views import ATTEMPT_COUNT_RULES, View

__all__ = ["StreamedReadings"]


class StreamedReadings(CaseTableReadings):
    """:class:`~evalspec.case_views.CaseTableReadings`, with the equal-attempts cut made from the masks."""

    def equal_attempts(self, ctx: Any, candidate: str, baseline: str, **_: Any) -> View | None:
        rule, k, policy = ctx.outcomes.rule, ctx.outcomes.k, ctx.missing_policy
        if rule not in ATTEMPT_COUNT_RULES:
            return None
        t = self.table
        kept, passed, missing = t.masks
        usable = kept & ~missing if policy == "exclude" else kept
        j, b = ctx.index(candidate), ctx.index(baseline)
        counts = np.bitwise_count(usable[[j, b]]).astype(np.int64)
        if rule == "best_of_k" and k:
            counts = np.minimum(counts, int(k))
        unequal = (counts[0] > 0) & (counts[1] > 0) & (counts[0] != counts[1])
        if not unequal.any():
            return None
        limit = np.minimum(counts[0], counts[1])
        cut = kept.copy()
        for row in (j, b):  # (the other candidates' attempts as they are)
            cut[row] = lowest_bits_each(usable[row], limit)
        names = list(t.rule_counts)
        c = rule_counts(SimpleNamespace(present=cut, passed=passed, missing=missing), cut, names, int(k or 1))
        none = c["attempts"] == 0
        rules = {n: np.where(none, np.nan, c[n].astype(np.float64)) for n in names}
        out = outcomes_from_counts(c["attempts"], c["missing"], c["passes"], rules, rule, k, policy)
        trials = c["attempts"] - c["missing"] if policy == "exclude" else c["attempts"]
        more = (int(np.count_nonzero(unequal & (counts[0] > counts[1]))),
                int(np.count_nonzero(unequal & (counts[0] < counts[1]))))
        view_ctx = replace(ctx, outcomes=out, counts=CaseCounts(trials=trials, passes=c["passes"], missing=c["missing"]))
        return View(code="equal_attempts", ctx=view_ctx, cases=int(unequal.sum()), more=more)
