"""Issue 13: `$...$` in a slice, cluster or case label once crashed matplotlib's mathtext parser
while drawing, after claim.json was written. Labels are data, never markup."""

from __future__ import annotations

import json

import pytest

from hardening_helpers import Space, base_rows, plan_text


def test_dollar_labels_draw_as_text(space: Space, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib")
    monkeypatch.delenv("EVALSPEC_NO_REPORT")
    rows = base_rows()
    for r in rows:
        r["case_id"] = "$\\frac{" + r["case_id"]
        r["doc"] = "$x^{" + r["doc"]
        r["topic"] = "$\\frac{a" if r["case_id"].endswith(("c1", "c2")) else "b$"
    space.write(rows, plan_text() + "slices: [{name: topic, column: topic}]\n")
    result = space.cli("run", "plan.yaml", "--format", "html")
    assert result.exit_code == 0, result.output
    html = (space.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "$x^{d1</text>" in html  # the cluster label drawn in a plot, as written
    claim = json.loads((space.path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert claim["decision"]["verdict"]
