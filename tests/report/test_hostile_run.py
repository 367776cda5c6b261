"""A real run whose data and plan carry markup and template syntax: the claim validates and the
report prints every such string as characters (the hand-made hostile fixture also covers strings
a plan cannot produce, such as candidate names).
"""

from __future__ import annotations

import json
import re
import pytest

from evalspec.claim import dumps
from evalspec.report.load import validate_claim
from evalspec.report.render import render_html

SCRIPT = "<script>alert(1)</script>"
TEMPLATE = "{{ 7*7 }}"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"

PLAN = f"""\
evalspec: 1
id: hostile-run
title: "Title {SCRIPT}"
question: "Ship {TEMPLATE}? {SCRIPT}"
decision_owner: "owner {TEMPLATE}"
population: "cases {SCRIPT}"
data:
  results: results.jsonl
  columns: {{candidate: candidate, repeat: repeat, outcome: passed}}
candidates:
  A: {{model: "m-a {SCRIPT}"}}
  B: {{model: m-b}}
baseline: B
units: {{case: case_id, cluster: doc}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference}}
  - {{kind: slices}}
decision: {{minimum_units: 5}}
slices:
  - {{name: topic, column: topic}}
systematic_limits: ["limit {SCRIPT} {TEMPLATE}"]
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    import os

    from evalspec.run import run_plan

    folder = tmp_path_factory.mktemp("hostile")
    rows = []
    for i in range(60):
        for cand, passed in (("A", i % 3 != 0), ("B", i % 4 != 0)):
            rows.append({"candidate": cand, "case_id": f"{SCRIPT}-{i}", "doc": f"{TEMPLATE}-{i % 12}",
                         "repeat": 1, "passed": passed, "topic": SCRIPT if i % 2 else f"${TEMPLATE}$"})
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = "1796299200"
    try:
        claim = validate_claim(json.loads(dumps(run_plan(folder / "plan.yaml"))))
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH")
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
    return claim, render_html(claim)


def test_the_claim_carries_the_strings_verbatim(run: tuple[dict, str]) -> None:
    claim, _ = run
    assert claim["plan"]["question"] == f"Ship {TEMPLATE}? {SCRIPT}"
    paired = next(a for a in claim["analyses"] if a["kind"] == "paired_difference")
    cases = [c["case"] for c in paired["result"]["disagreements"]["candidate_only"]]
    assert cases and all(c.startswith(SCRIPT) for c in cases)


def test_every_string_is_printed_as_characters(run: tuple[dict, str]) -> None:
    _, html = run
    assert "<script" not in html.lower()
    assert f"Ship {TEMPLATE}? {ESCAPED}" in html
    assert f"{ESCAPED}-1" in html                      # a case id
    assert re.search(re.escape(TEMPLATE) + r"-\d+<", html)  # a cluster label (those the cluster table shows)
    assert f"limit {ESCAPED} {TEMPLATE}" in html       # a stated limit
    assert f"${TEMPLATE}$" in html                     # a slice value, in the table and the plot


def test_the_print_medium_too(run: tuple[dict, str]) -> None:
    claim, _ = run
    paper = render_html(claim, "print", with_plots=False)
    assert "<script" not in paper.lower() and ESCAPED in paper
