"""Fuzzed inputs of the workflow commands: exit 0/1/2, never 70 or a traceback, nothing written.

``validate --data`` reads a hostile pilot; ``gate``, ``diff`` and ``audit --all`` read hostile
claims. Fixed seed (the fuzz suite's profile, ``EVALSPEC_FUZZ_EXAMPLES`` examples each).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hypothesis import given

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))

from fuzz_strategies import FUZZ, check_outcome, plan_kinds, plan_variant, results_files, run_cli  # noqa: E402


@FUZZ
@given(data=results_files(), kind=plan_kinds)
def test_fuzzed_pilot_never_crashes_and_writes_nothing(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    folder = tmp_path_factory.mktemp("pilot")
    (folder / "results.jsonl").write_bytes(data)
    (folder / "plan.yaml").write_text(plan_variant(kind), encoding="utf-8")
    before = sorted(p.name for p in folder.iterdir())
    result = run_cli(folder, ["validate", "plan.yaml", "--data", "results.jsonl"])
    check_outcome(result)
    assert sorted(p.name for p in folder.iterdir()) == before  # no claim, no ledger, no lock
