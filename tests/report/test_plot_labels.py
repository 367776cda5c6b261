"""Labels from the data are text in the plots: ``$...$`` is not parsed as mathtext (issue 13)."""

from __future__ import annotations

import pytest

from evalspec.report import plots

LABELS = ["$x^$", "$\\frac{$", "a$b", "$$", "\\$5 $\\alpha$"]


@pytest.mark.parametrize("label", LABELS)
def test_dollar_labels_draw_as_text(label: str) -> None:
    svg = plots.forest_svg([plots.ForestRow(label, 0.5, 0.4, 0.6)], "Pass rate", key="t")
    assert label.replace("&", "&amp;").replace("<", "&lt;") in svg
    bars = plots.cluster_bars_svg([{"cluster": label, "cases": 3, "b": 2, "c": 0, "net": 2, "share": 1.0}], 10,
                                  "A", "B", key="cb")
    assert label in bars
