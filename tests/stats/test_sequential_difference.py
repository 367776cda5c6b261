"""The `sequential_difference` analysis kind: the confidence sequence across looks and its offers."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from evalspec.analyses.sequential_difference import (
    KIND,
    SequentialDifferenceParams,
    compute,
    decide_action,
)
from evalspec.stats.sequential import betting_confidence_sequence


@dataclass
class Ctx:
    """The part of the analysis context the kind reads (independent of how the pipeline builds it)."""

    x: np.ndarray
    y: np.ndarray
    clusters: np.ndarray | None = None
    stamps: list[Any] | None = None
    goal: str = "superiority"
    margin: float | None = None
    minimum_improvement: float = 0.03
    confidence_level: float = 0.95
    looks: int = 4
    max_units: int | None = 400
    rule: str = "sequential"
    case_columns: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.stopping = SimpleNamespace(rule=self.rule, looks=self.looks, max_units=self.max_units)
        self.plan = SimpleNamespace(data=SimpleNamespace(columns=SimpleNamespace(timestamp="ts")),
                                    units=SimpleNamespace(cluster="doc" if self.clusters is not None else None))
        if self.stamps is not None:
            self.case_columns = {"ts": np.asarray(self.stamps, dtype=object)}

    def compared(self, params: Any) -> tuple[str, str]:
        return ("A", "B")

    def level(self, params: Any) -> float:
        return self.confidence_level if params.confidence_level is None else params.confidence_level

    def pair(self, a: str, b: str) -> Any:
        return SimpleNamespace(x=self.x, y=self.y, cases=np.arange(self.x.size), clusters=self.clusters)


def _pairs(n: int, p_plus: float, p_minus: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = rng.choice([1, -1, 0], p=[p_plus, p_minus, 1 - p_plus - p_minus], size=n)
    x = np.where(d == 1, 1.0, np.where(d == -1, 0.0, rng.integers(0, 2, n).astype(float)))
    y = np.where(d == 1, 0.0, np.where(d == -1, 1.0, x))
    return x, y


P = SequentialDifferenceParams(kind="sequential_difference")


def test_strong_gain_stops_decided_with_the_primary_offer() -> None:
    x, y = _pairs(400, 0.30, 0.05, seed=1)
    out = compute(Ctx(x, y), P)
    r = out.result
    cs = betting_confidence_sequence(x - y, lower=-1, upper=1, times=[100, 200, 300, 400])
    assert [k.units for k in r.looks] == [100, 200, 300, 400] and all(k.planned for k in r.looks)
    assert [k.low for k in r.looks] == pytest.approx(list(cs.low)) and r.high == pytest.approx(cs.high[-1])
    assert r.action == "stop_decided" and r.low >= 0.03
    assert out.offers.sequential.action == "stop_decided" and out.offers.sequential.look == 4
    prim = out.offers.primary
    assert prim.method.startswith("anytime-valid confidence sequence") and prim.low == r.low and prim.high == r.high
    assert prim.one_sided_alpha == pytest.approx(0.025) and prim.units == 400 and prim.unit_name == "cases"


def test_interim_look_continues() -> None:
    x, y = _pairs(100, 0.12, 0.09, seed=2)
    out = compute(Ctx(x, y), P)
    assert out.result.look == 1 and out.result.action == "continue"
    assert out.offers.sequential.action == "continue" and out.offers.sequential.planned_looks == 4


def test_between_looks_is_marked_as_the_current_look() -> None:
    x, y = _pairs(150, 0.12, 0.09, seed=3)
    r = compute(Ctx(x, y), P).result
    assert [(k.look, k.units, k.planned) for k in r.looks] == [(1, 100, True), (2, 150, False)]


def test_no_gain_stops_for_futility() -> None:
    x, y = _pairs(3000, 0.10, 0.10, seed=4)
    r = compute(Ctx(x, y, minimum_improvement=0.05, max_units=4000), P).result
    assert r.high < 0.05 and r.action == "stop_futility"


def test_last_look_without_a_decision_is_futility() -> None:
    x, y = _pairs(400, 0.12, 0.10, seed=5)
    r = compute(Ctx(x, y, minimum_improvement=0.01), P).result
    assert r.low < 0 < 0.01 < r.high  # nothing settled at the last planned look (400 of 400 units)
    assert r.action == "stop_futility" and "last planned look" in r.message


def test_clusters_ordered_by_time() -> None:
    rng = np.random.default_rng(6)
    n_clusters, size = 60, 4
    clusters = np.repeat(np.arange(n_clusters), size)
    x = rng.integers(0, 2, clusters.size).astype(float)
    y = rng.integers(0, 2, clusters.size).astype(float)
    start = rng.permutation(n_clusters)  # cluster g was run at time start[g]
    stamps = [f"2026-10-{1 + start[g] // 24:02d}T{start[g] % 24:02d}:00:00Z" for g in clusters]
    out = compute(Ctx(x, y, clusters=clusters, stamps=stamps, max_units=60), P)
    r = out.result
    order = np.argsort(start)
    means = np.array([(x[clusters == g] - y[clusters == g]).mean() for g in order])
    cs = betting_confidence_sequence(means, lower=-1, upper=1, times=[60])
    assert r.unit == "clusters (doc)" and r.units == 60 and r.order == "timestamp"
    assert r.low == pytest.approx(cs.low[0]) and r.high == pytest.approx(cs.high[0])
    assert "per-cluster mean differences" in r.method


def test_without_a_preregistered_order_a_verdict_caveat_says_so() -> None:
    x, y = _pairs(50, 0.2, 0.1, seed=7)
    out = compute(Ctx(x, y, max_units=None), P)
    assert {"order_not_preregistered", "no_look_schedule"} <= {c.code for c in out.caveats}
    cav = next(c for c in out.caveats if c.code == "order_not_preregistered")
    assert cav.severity == "verdict" and "results order" in cav.message
    assert out.result.looks[-1].units == 50 and out.result.max_units is None


def test_primary_false_offers_only_the_status() -> None:
    x, y = _pairs(80, 0.2, 0.1, seed=8)
    out = compute(Ctx(x, y), SequentialDifferenceParams(kind="sequential_difference", primary=False))
    assert out.offers.primary is None and out.offers.sequential is not None


@pytest.mark.parametrize("goal, target, low, high, final, action", [
    ("superiority", 0.03, 0.031, 0.2, False, "stop_decided"),
    ("superiority", 0.03, -0.1, 0.02, False, "stop_futility"),
    ("superiority", 0.03, -0.1, 0.2, False, "continue"),
    ("superiority", 0.03, -0.1, 0.2, True, "stop_futility"),
    ("superiority", 0.0, 0.001, 0.2, False, "stop_decided"),
    ("superiority", 0.03, 0.03, 0.2, False, "continue"),  # touching the minimum is not above it (the table is strict)
    ("superiority", 0.0, -0.2, -0.001, False, "stop_futility"),
    ("non_inferiority", 0.02, -0.019, 0.1, False, "stop_decided"),
    ("non_inferiority", 0.02, -0.2, -0.02, False, "stop_futility"),
    ("non_inferiority", 0.02, -0.05, 0.1, False, "continue"),
    ("equivalence", 0.02, -0.019, 0.019, False, "stop_decided"),
    ("equivalence", 0.02, 0.02, 0.1, False, "stop_futility"),
    ("equivalence", 0.02, -0.03, 0.01, False, "continue"),
])
def test_actions(goal: str, target: float, low: float, high: float, final: bool, action: str) -> None:
    assert decide_action(goal, target, low, high, final)[0] == action


def test_kind_declares_the_contract() -> None:
    assert KIND.name == "sequential_difference" and KIND.template == "sections/sequential_difference.html.j2"
    assert KIND.params.model_fields["kind"].annotation.__args__ == ("sequential_difference",)
    assert KIND.columns(P, SimpleNamespace(data=SimpleNamespace(columns=SimpleNamespace(timestamp="ts"))))[0].column == "ts"


def test_section_template_draws_the_sequence() -> None:
    import jinja2

    from evalspec._resources import templates_dir

    x, y = _pairs(150, 0.2, 0.05, seed=9)
    out = compute(Ctx(x, y), P)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=True)
    html = env.get_template(KIND.template).render(
        a={"index": 2, "kind": "sequential_difference", "result": out.result.model_dump(mode="json")}, medium="screen")
    assert "<svg" in html and "<polygon" in html and "look 1" in html and "look 2" in html
    assert "continue" in html or "stop" in html
