"""HELM run folders, written by crfm-helm 0.5.16 offline (``fixtures/helm/``): the debugging
scenario Simple1 on HELM's built-in offline model ``simple/model1``, scored with exact_match,
3 train trials, under two instruction texts (``src/evalspec_helm_plugin.py``)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import FIX, stage, write_plan  # noqa: E402

from evalspec.cli import cli  # noqa: E402
from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, detect, read_logs  # noqa: E402

HELM = FIX / "helm"
TERSE, VERBOSE = HELM / "terse", HELM / "verbose"


def test_reads_a_run_folder_and_agrees_with_helms_number() -> None:
    assert detect(TERSE) == "helm" and detect(TERSE / "per_instance_stats.json") == "helm"
    (lf,) = read_logs([TERSE / "per_instance_stats.json"], "helm", Options())
    c = lf.columns
    assert lf.rows == 30 and set(c["candidate"]) == {"simple/model1"} and sorted(set(c["repeat"])) == [1, 2, 3]
    assert len(set(c["case_id"])) == 10 and sum(c["outcome"]) == 3
    p = lf.provenance
    assert p["reported"]["value"] == pytest.approx(0.1) and p["reported"]["recomputed_value"] == pytest.approx(0.1)
    assert any("different prompts" in n for n in p["notes"]) and len(p["files"]) == 4
    assert all(isinstance(a, str) for a in c["answer"])  # the completion, from scenario_state.json


def test_two_instruction_texts_need_candidate_from_then_run(tmp_path: Path) -> None:
    stage(tmp_path, TERSE, VERBOSE)
    data = """  results: [terse, verbose]
  format: helm"""
    plan = write_plan(tmp_path, data, candidates=("terse", "verbose"), repeats=3, cluster=None)
    env = {"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"}
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")], env=env)
    assert res.exit_code == 2 and "2 logs of simple/model1 differ only in" in res.output, res.output
    assert "instructions" in res.output
    plan = write_plan(tmp_path, data + """
  candidate_from: [instructions]
  candidate_names: {"Answer with the number only.": terse, "Please solve the following problem.": verbose}""",
                      candidates=("terse", "verbose"), repeats=3, cluster=None)
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")], env=env)
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert {f["provenance"]["tool"] for f in claim["data"]["files"]} == {"HELM"}


def test_another_metric_and_a_missing_one() -> None:
    (lf,) = read_logs([TERSE / "per_instance_stats.json"], "helm", Options(metric="quasi_exact_match"))
    assert lf.rows == 30
    with pytest.raises(InputError, match="no 'bleu_4'") as info:
        read_logs([TERSE / "per_instance_stats.json"], "helm", Options(metric="bleu_4"))
    assert "exact_match" in info.value.render()


def _json_values() -> st.SearchStrategy[object]:
    return st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                     max_size=3), max_leaves=8)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["per_instance_stats.json", "run_spec.json", "scenario_state.json", "stats.json"]),
       key=st.sampled_from(["instance_id", "train_trial_index", "stats", "perturbation", "adapter_spec",
                            "request_states", "name"]), value=_json_values(), cut=st.none() | st.integers(0, 3000))
def test_fuzz_helm(tmp_path: Path, which: str, key: str, value: object, cut: int | None) -> None:
    folder = tmp_path / "run"
    if not folder.exists():
        shutil.copytree(TERSE, folder)
    src = json.loads((TERSE / which).read_text())
    if isinstance(src, list) and src:
        src[0] = {**src[0], key: value} if isinstance(src[0], dict) else value
    elif isinstance(src, dict):
        src[key] = value
    text = json.dumps(src)
    (folder / which).write_text(text[:cut] if cut is not None else text, encoding="utf-8")
    try:
        read_logs([folder / "per_instance_stats.json"], "helm", Options())
    except InputError as exc:
        assert "run" in exc.render()
    finally:
        shutil.copy(TERSE / which, folder / which)
