"""A paired difference read at several levels on one group computes what does not depend on the level once.

``slices`` reads each group's difference at its level, at the levels its loss test's bisection
tries and at its Holm step (``paired_core(..., memo=...)``); the pair's difference, 2x2 table,
cluster counts and the cluster t interval's parts (:func:`evalspec.stats.clustered_mean_parts`)
are kept between those levels. Each level's result is the one a fresh call gives, for every
interval method and design (clusters or none, fractional or pass/fail outcomes, heavy-tailed
cluster sizes); and the slices analysis gives the result it gives without the memo.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "decision"))

from studies import repeated_ctx  # noqa: E402

from evalspec.analyses import paired, slices  # noqa: E402
from evalspec.analyses.context import AnalysisContext  # noqa: E402
from evalspec.analyses.registry import get_kind  # noqa: E402
from evalspec.plan.model import Slice  # noqa: E402
from evalspec.stats import clustered_mean_interval  # noqa: E402

LEVELS = [0.95, 0.002, 0.9, 0.999, 0.5, 0.95, 0.6]


def _ctx(seed: int, rule: str, clusters: str) -> AnalysisContext:
    rng = np.random.default_rng(seed)
    n = 180
    a = [[int(rng.random() < 0.7) for _ in range(3)] for _ in range(n)]
    b = [[int(rng.random() < (0.75 if i % 3 == 0 else 0.6)) for _ in range(3)] for i in range(n)]
    if clusters == "heavy":  # (lognormal-like sizes: method auto takes the skewness-corrected CR3)
        sizes = [1] * 40 + [2] * 20 + [40, 60]
        labels = [f"d{g}" for g, size in enumerate(sizes) for _ in range(size)][:n]
        labels += [f"e{i}" for i in range(n - len(labels))]
    else:
        labels = [f"d{i // 4}" for i in range(n)]
    topic = ["de" if i % 3 == 0 else "en" if i % 3 == 1 else "fr" for i in range(n)]
    return repeated_ctx({"A": a, "B": b}, clusters=None if clusters == "none" else labels, rule=rule,
                        columns={"topic": topic}, slices=[Slice(name="topic", column="topic")], minimum_improvement=0.02)


DESIGNS = [("mean", "clusters", "auto"), ("mean", "heavy", "auto"), ("mean", "none", "auto"),
           ("first", "clusters", "auto"), ("first", "clusters", "cluster_bootstrap"), ("first", "none", "auto"),
           ("first", "none", "newcombe"), ("mean", "clusters", "cluster_t"), ("first", "heavy", "auto")]


@pytest.mark.parametrize(("rule", "clusters", "method"), DESIGNS)
def test_each_level_from_the_memo_is_the_fresh_result(rule: str, clusters: str, method: str) -> None:
    ctx = _ctx(4, rule, clusters)
    mask = np.asarray(ctx.case_columns["topic"], dtype=object) != "fr"
    memo: dict = {}
    for level in LEVELS:
        kept = paired.paired_core(ctx, "A", "B", method=method, level=level, mask=mask, resamples=200, seed=1,
                                  memo=memo)
        fresh = paired.paired_core(ctx, "A", "B", method=method, level=level, mask=mask, resamples=200, seed=1)
        assert kept is not None and fresh is not None
        assert kept[0].model_dump_json() == fresh[0].model_dump_json()
        if kept[0].cluster_t is not None:  # (and the kernel's interval at this level, read afresh)
            pair = kept[1]
            ct = clustered_mean_interval(pair.x - pair.y, pair.clusters if pair.clusters is not None else
                                         np.arange(pair.x.size), confidence_level=level,
                                         correction=kept[0].cluster_t.correction,
                                         skew_corrected=kept[0].cluster_t.correction == "CR3")
            assert (kept[0].estimate, kept[0].low, kept[0].high) == (ct.estimate, max(-1.0, ct.low), min(1.0, ct.high))
    assert "pair" in memo


def _slices(ctx: AnalysisContext) -> str:
    k = get_kind("slices")
    return k.compute(ctx, k.params(kind="slices", exploratory=["topic"])).result.model_dump_json()


@pytest.mark.parametrize(("rule", "clusters"), [("mean", "clusters"), ("mean", "heavy"), ("first", "clusters")])
def test_slices_with_the_memo_give_the_result_without(rule: str, clusters: str, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    real = paired._pair_parts

    def counted(ctx, pair, memo):  # type: ignore[no-untyped-def]
        made.append(int("pair" not in memo))
        return real(ctx, pair, memo)

    monkeypatch.setattr(paired, "_pair_parts", counted)
    kept = _slices(_ctx(7, rule, clusters))
    assert sum(made) < len(made)  # (a group read at several levels: its parts made once)
    real_core = paired.paired_core
    monkeypatch.setattr(paired, "paired_core", lambda *a, memo=None, **kw: real_core(*a, **kw))  # no memo
    made.clear()
    assert _slices(_ctx(7, rule, clusters)) == kept
    assert sum(made) == len(made)
    assert slices  # (the module whose runner keeps the memos)
