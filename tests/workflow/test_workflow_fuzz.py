"""Fuzzed inputs of the workflow commands: exit 0/1/2, never 70 or a traceback, nothing written.

``validate --data`` reads a hostile pilot; ``gate``, ``diff`` and ``audit --all`` read hostile
claims. Fixed seed (the fuzz suite's profile, ``EVALSPEC_FUZZ_EXAMPLES`` examples each).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_strategies import FUZZ, check_outcome, hostile_values, plan_kinds, plan_variant, results_files, \
    run_cli  # noqa: E402
from workflow_helpers import table_study  # noqa: E402


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


# -- hand-edited claims through gate, diff and audit --all ----------------------------------



@pytest.fixture(scope="module")
def study(tmp_path_factory: Any) -> Path:
    """A locked study with a claim: the folder the edited claims are dropped into."""
    folder = tmp_path_factory.mktemp("study")
    table_study(folder)
    return folder


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


def _edited(study: Path, seed: int, new: list[Any], tmp_path_factory: Any) -> Path:
    """A copy of the study whose claim has ``new`` values at random places (or is not JSON at all)."""
    folder = tmp_path_factory.mktemp("edited")
    shutil.copytree(study, folder, dirs_exist_ok=True)
    claim_path = folder / "out" / "claim.json"
    claim = json.loads(claim_path.read_text(encoding="utf-8"))
    rnd = random.Random(seed)
    if rnd.random() < 0.1:
        claim_path.write_bytes(claim_path.read_bytes()[: rnd.randrange(0, 200)])
        return folder
    paths = [p for p in _paths(claim) if p]
    for value in new:
        target = claim
        path = rnd.choice(paths)
        try:
            for k in path[:-1]:
                target = target[k]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    claim_path.write_text(json.dumps(claim), encoding="utf-8")
    return folder


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=st.lists(hostile_values, min_size=1, max_size=3))
def test_hand_edited_claims_never_crash_the_gate(tmp_path_factory: Any, study: Path, seed: int, new: list[Any]) -> None:
    folder = _edited(study, seed, new, tmp_path_factory)
    result = run_cli(folder, ["gate", "out/claim.json", "--accept", "worth_acting_on"])
    check_outcome(result)
    shutil.rmtree(folder, ignore_errors=True)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=st.lists(hostile_values, min_size=1, max_size=3))
def test_hand_edited_claims_never_crash_the_markdown_summary(tmp_path_factory: Any, study: Path, seed: int,
                                                             new: list[Any]) -> None:
    folder = _edited(study, seed, new, tmp_path_factory)
    result = run_cli(folder, ["report", "out/claim.json", "--format", "markdown"])
    check_outcome(result)
    shutil.rmtree(folder, ignore_errors=True)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=st.lists(hostile_values, min_size=1, max_size=3))
def test_hand_edited_claims_never_crash_diff(tmp_path_factory: Any, study: Path, seed: int, new: list[Any]) -> None:
    folder = _edited(study, seed, new, tmp_path_factory)
    shutil.copyfile(study / "out" / "claim.json", folder / "claim.json")
    for args in (["diff", "claim.json", "out/claim.json"], ["diff", "out/claim.json", "claim.json", "--json"],
                 ["diff", "out/claim.json", "claim.json", "--format", "markdown"]):
        check_outcome(run_cli(folder, args))
    shutil.rmtree(folder, ignore_errors=True)


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), new=st.lists(hostile_values, min_size=1, max_size=3))
def test_hand_edited_claims_never_crash_the_history(tmp_path_factory: Any, study: Path, seed: int,
                                                    new: list[Any]) -> None:
    folder = _edited(study, seed, new, tmp_path_factory)
    (folder / "good").mkdir()
    shutil.copyfile(study / "out" / "claim.json", folder / "good" / "claim.json")
    for args in (["audit", "--all", ".", "--no-reproduce"],
                 ["audit", "--all", ".", "--no-reproduce", "--json", "--report", "--out", "hist"]):
        result = run_cli(folder, args)
        assert result.exit_code in (0, 1, 2), result.output
        assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    shutil.rmtree(folder, ignore_errors=True)
