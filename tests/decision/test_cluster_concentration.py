"""When may the report say "a few clusters drive the difference"? (issue 19, finding 7).

The rule (``evalspec.analyses.paired``): the top ``top_clusters`` clusters give more than half
of the net difference, which clusters are "the top" is no tie-break (the last of them
contributes more than the next one), and at least 20 paired disagreements carry the
difference. Anything less is where a handful of disagreements happened to fall.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from studies import paired_ctx  # noqa: E402


def _clusters(blocks: list[list[tuple[int, int]]]) -> tuple[list[tuple[int, int]], list[str]]:
    rows, cl = [], []
    for g, block in enumerate(blocks):
        rows += block
        cl += [f"g{g:03d}"] * len(block)
    return rows, cl


def _result(blocks: list[list[tuple[int, int]]]):
    from evalspec.analyses.registry import get_kind

    rows, cl = _clusters(blocks)
    k = get_kind("paired_difference")
    return k.compute(paired_ctx(rows, clusters=cl), k.params(kind="paired_difference", top_clusters=3))


def _block(only_a: int, only_b: int, size: int = 10) -> list[tuple[int, int]]:
    return [(1, 0)] * only_a + [(0, 1)] * only_b + [(1, 1)] * (size - only_a - only_b)


def test_a_tie_break_is_not_a_finding() -> None:
    # the study: net +4 from 12 disagreements, one cluster +2, four at +1, two at -1
    blocks = [_block(2, 0)] + [_block(1, 0)] * 4 + [_block(0, 1)] * 2 + [_block(1, 1)] + [_block(0, 0)] * 12
    out = _result(blocks)
    c = out.result.clusters
    assert c.top_share is not None and c.top_share > 0.5
    assert c.tie_at_top and not c.concentrated
    assert not any(cv.code == "top_clusters" for cv in out.caveats)


def test_a_handful_of_disagreements_is_not_a_finding() -> None:
    # three clusters give all of +6, no tie, but only 6 disagreements in all
    blocks = [_block(3, 0), _block(2, 0), _block(1, 0)] + [_block(0, 0)] * 17
    c = _result(blocks).result.clusters
    assert not c.tie_at_top and c.top_share == 1.0 and not c.concentrated


def test_real_concentration_is_named() -> None:
    # three clusters carry +24 of +24 net; 30 disagreements, the rest cancel out
    blocks = [_block(9, 0), _block(8, 0), _block(7, 0)] + [_block(1, 1)] * 3 + [_block(0, 0)] * 14
    out = _result(blocks)
    c = out.result.clusters
    assert c.concentrated and not c.tie_at_top and c.top_share == 1.0
    assert any(cv.code == "top_clusters" and "check them before acting" in cv.message for cv in out.caveats)


def test_spread_out_gains_are_not_concentrated() -> None:
    blocks = [_block(2, 0)] * 15 + [_block(1, 0)] * 5
    c = _result(blocks).result.clusters
    assert c.top_share is not None and c.top_share < 0.5 and not c.concentrated
