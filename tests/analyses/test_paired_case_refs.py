"""paired_difference keeps its disagreeing cases as indices (``CaseRefs``) until the result is written.

What it writes must be what the validated lists of :class:`CaseRef` gave: the same dicts, in the
same order, with and without clusters; and a result read back from its JSON (as the audit reads a
claim) writes the same again.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalspec.analyses.paired import CaseRefs, Disagreements, PairedDifferenceParams, PairedResult, compute
from evalspec.testing import context_from_arrays


def _context(clustered: bool) -> tuple[object, list[int], list[int]]:
    rng = np.random.default_rng(11)
    n = 60
    x, y = rng.random(n) < 0.6, rng.random(n) < 0.5
    cand = [0] * n + [1] * n
    case = list(range(n)) * 2
    passed = [float(v) for v in np.r_[x, y]]
    ctx = context_from_arrays(["A", "B"], [f"case-{i:02d}" for i in range(n)], cand, case, passed, baseline="B",
                              clusters=[f"doc-{i % 7}" for i in range(n)] if clustered else None)
    return ctx, [i for i in range(n) if x[i] and not y[i]], [i for i in range(n) if y[i] and not x[i]]


@pytest.mark.parametrize("clustered", [True, False])
def test_the_written_cases_are_the_validated_lists(clustered: bool) -> None:
    ctx, only_a, only_b = _context(clustered)
    params = PairedDifferenceParams.model_validate({"kind": "paired_difference", "compare": ["A", "B"],
                                                    "resamples": 200})
    result = compute(ctx, params).result
    assert isinstance(result.disagreements.candidate_only, CaseRefs)

    def refs(cases: list[int]) -> list[dict[str, str | None]]:
        return [{"case": f"case-{i:02d}", "cluster": f"doc-{i % 7}" if clustered else None} for i in cases]

    expected = Disagreements.model_validate({"candidate_only": refs(only_a), "baseline_only": refs(only_b)})
    dumped = result.model_dump(mode="json")
    assert dumped["disagreements"] == expected.model_dump(mode="json")
    assert json.loads(result.model_dump_json())["disagreements"] == expected.model_dump(mode="json")
    assert result.disagreements == expected  # (equal to the lists they stand for)
    again = PairedResult.model_validate_json(result.model_dump_json())
    assert isinstance(again.disagreements.candidate_only, list)
    assert again.model_dump(mode="json") == dumped
    assert len(result.disagreements.candidate_only) == len(only_a) > 0
