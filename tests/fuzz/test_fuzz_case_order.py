"""Hostile case lists through `evalspec order`, and hostile order files through `run`: exit 0 or 2 with a
message naming the file, never 70, a traceback or a hang (issue 18, the preregistered order)."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fuzz_strategies import FUZZ, run_cli

PLAN = """\
evalspec: 1
id: fuzz-order
title: t
question: q?
decision_owner: o
population: p
data: {results: results.jsonl, columns: {candidate: candidate, repeat: repeat, outcome: passed}}
candidates: {A: {model: a}, B: {model: b}}
baseline: B
units: {case: case_id%s}
analyses:
  - {kind: sequential_difference}
decision: {minimum_units: 2}
stopping: {rule: sequential, looks: 2, max_units: 10%s}
"""

_line = st.one_of(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
                  st.sampled_from(["case_id", "c1", "c1,g1", "c1,,", ",", "#", "c2,g1,x", "c1"]))


def _check(result: Any, names: tuple[str, ...]) -> None:
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code in (0, 1, 2), (result.exit_code, text[-2000:])
    assert "Traceback" not in text and "internal error" not in text, text[-2000:]
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 2:
        assert result.stderr.splitlines()[0].startswith(names), result.stderr[:300]


@FUZZ
@given(lines=st.lists(_line, max_size=12), clustered=st.booleans(), raw=st.binary(max_size=40))
def test_hostile_case_lists(tmp_path_factory: Any, lines: list[str], clustered: bool, raw: bytes) -> None:
    folder = tmp_path_factory.mktemp("order")
    (folder / "plan.yaml").write_text(PLAN % (", cluster: g" if clustered else "", ""), encoding="utf-8")
    (folder / "cases.txt").write_bytes("\n".join(lines).encode("utf-8") + raw)
    result = run_cli(folder, ["order", "plan.yaml", "--cases", "cases.txt", "--seed", "1"])
    _check(result, ("cases.txt", "order.txt", "Error"))
    if result.exit_code == 0:
        assert re.search(r"sha256: [0-9a-f]{64}", result.output)


@FUZZ
@given(lines=st.lists(_line, max_size=12), raw=st.binary(max_size=40))
def test_hostile_order_files(tmp_path_factory: Any, lines: list[str], raw: bytes) -> None:
    import hashlib

    folder = tmp_path_factory.mktemp("run")
    data = "\n".join(lines).encode("utf-8") + raw
    (folder / "order.txt").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    entry = f", order: {{file: order.txt, sha256: {digest}, seed: 1}}"
    (folder / "plan.yaml").write_text(PLAN % ("", entry), encoding="utf-8")
    rows = [{"case_id": f"c{i}", "candidate": c, "repeat": 1, "passed": (i + j) % 3 > 0}
            for i in range(6) for j, c in enumerate("AB")]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = run_cli(folder, ["run", "plan.yaml", "--no-report"])
    _check(result, ("plan.yaml", "results.jsonl", "order.txt"))
