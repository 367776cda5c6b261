"""The slices analysis pairs each group's cases once (a group is paired up to four times: its interval, the
bisection of its loss test, its Holm step): the same result as pairing them afresh each time."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from studies import repeated_ctx  # noqa: E402

from evalspec.analyses import slices  # noqa: E402
from evalspec.analyses.context import AnalysisContext  # noqa: E402
from evalspec.analyses.registry import get_kind  # noqa: E402
from evalspec.plan.model import Slice  # noqa: E402


def _ctx(seed: int) -> AnalysisContext:
    rng = np.random.default_rng(seed)
    n = 240  # fractional outcomes (rule mean): the cluster t interval, whose loss test is found by bisection
    a = [[int(rng.random() < 0.7) for _ in range(3)] for _ in range(n)]
    b = [[int(rng.random() < (0.75 if i % 3 == 0 else 0.6)) for _ in range(3)] for i in range(n)]
    topic = ["de" if i % 3 == 0 else "en" if i % 3 == 1 else "fr" for i in range(n)]
    return repeated_ctx({"A": a, "B": b}, clusters=[f"d{i // 4}" for i in range(n)], rule="mean",
                        columns={"topic": topic}, slices=[Slice(name="topic", column="topic")], minimum_improvement=0.02)


def _result(ctx: AnalysisContext) -> str:
    k = get_kind("slices")
    return k.compute(ctx, k.params(kind="slices")).result.model_dump_json()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pairs_made_once_give_the_result_of_pairs_made_each_time(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = AnalysisContext.pair

    def counted(self, first, second, mask=None):  # type: ignore[no-untyped-def]
        calls.append(id(mask))
        return real(self, first, second, mask)

    monkeypatch.setattr(AnalysisContext, "pair", counted)
    once = _result(_ctx(seed))
    assert len(calls) == len(set(calls)) == 3  # one pair per group (de, en, fr), however often it is asked
    monkeypatch.setattr(slices._PairsOnce, "pair", lambda self, first, second, mask=None: counted(
        self._ctx, first, second, mask))
    calls.clear()
    afresh = _result(_ctx(seed))
    assert len(calls) > 3  # (each time afresh: the same groups paired again)
    assert afresh == once
