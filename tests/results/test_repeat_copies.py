"""Repeats that are copies, where the log shows it, and limits that only say what happened.

Real files: promptfoo 0.120.0 (``fixtures/promptfoo/two_prompts/``: a run of two file
prompts with ``--repeat 3``, and the same config run twice without ``--repeat``, the second
served from promptfoo's cache); inspect_ai 0.3.285 run with ``Epochs(5, [])`` (no epoch
reducer); lm-eval 0.4.13 (a task with ``repeats: 3`` under ``take_first`` / ``majority_vote``
and a multiple-choice task with one repeat).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import FIX, LMEVAL, promptfoo_doc, stage, write_plan  # noqa: E402

from evalspec.cli import cli  # noqa: E402
from evalspec.results.adapters import Options, claim_limits, read_logs  # noqa: E402

PF = FIX / "promptfoo" / "two_prompts"
ENV = {"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"}
PF_DATA = """  format: promptfoo
  candidate_from: [prompt_file]
  candidate_names: {prompt_terse.txt: terse, prompt_verbose.txt: verbose}
  select: {case_field: vars.qid}"""


def _run(plan: Path) -> object:
    return CliRunner().invoke(cli, ["run", str(plan), "--out", str(plan.parent / "out")], env=ENV)


def test_real_two_prompt_run_reads_with_candidate_from(tmp_path: Path) -> None:
    stage(tmp_path, PF / "two-prompts_repeat3.json")
    plan = write_plan(tmp_path, "  results: [two-prompts_repeat3.json]\n" + PF_DATA, candidates=("terse", "verbose"),
                      repeats=3, cluster=None)
    res = _run(plan)
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    prov = claim["data"]["files"][0]["provenance"]
    assert prov["tool_version"] == "0.120.0" and prov["cached_results"] == 0


def test_a_rerun_served_from_the_cache_is_not_a_second_attempt(tmp_path: Path) -> None:
    stage(tmp_path, PF / "rerun1_live.json", PF / "rerun2_cached.json")
    (cached,) = read_logs([tmp_path / "rerun2_cached.json"], "promptfoo", Options())
    assert cached.provenance["cached_results"] == 20
    plan = write_plan(tmp_path, "  results: [rerun1_live.json, rerun2_cached.json]\n" + PF_DATA,
                      candidates=("terse", "verbose"), repeats=2, cluster=None)
    res = _run(plan)
    assert res.exit_code == 2, res.output
    assert "served from promptfoo's cache" in res.output and "copies of an earlier run" in res.output


def test_cached_repeats_in_one_file_are_refused(tmp_path: Path) -> None:
    doc = promptfoo_doc(n_tests=4, repeat=3)
    for r in doc["results"]["results"]:
        if r["testIdx"] % 3:  # repeats 2 and 3 of every test: cache hits
            r["response"] = {**(r.get("response") or {}), "cached": True}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    plan = write_plan(tmp_path, "  results: [r.json]\n  format: promptfoo", repeats=3, cluster=None)
    res = _run(plan)
    assert res.exit_code == 2, res.output
    assert "16 of the repeats" in res.output and "not an independent attempt" in res.output
    assert "--no-cache" in res.output


def test_inspect_without_an_epoch_reducer_says_what_its_number_counts() -> None:
    path = FIX / "inspect_ai" / "passk" / "mockllm-terse_p0.75_epochs5_no-epochs-reducer.eval"
    (lf,) = read_logs([path], "inspect", Options())
    assert any("without an epoch reducer" in n and "50 sample-epochs" in n for n in lf.provenance["notes"])
    assert sorted(set(lf.columns["repeat"])) == [1, 2, 3, 4, 5]  # evalspec still groups epochs by sample
    assert lf.provenance["reported"]["value"] == pytest.approx(0.64)


def test_lm_eval_limits_say_what_the_filter_did_and_only_when_it_did() -> None:
    res = next((LMEVAL / "coinflip-strong").glob("results_*.json"))
    (mc,) = read_logs([res], "lm_eval", Options(task="evalspec_mc"))
    assert claim_limits([mc]) == []  # one repeat, filter none: nothing was reduced
    (first,) = read_logs([res], "lm_eval", Options(task="evalspec_gen", filter="first"))
    (msg,) = [d["message"] for d in claim_limits([first])]
    assert "generated 3 answers per case" in msg and "took the first generation only" in msg
    (maj,) = read_logs([res], "lm_eval", Options(task="evalspec_gen", filter="maj@3"))
    (msg,) = [d["message"] for d in claim_limits([maj])]
    assert "majority vote" in msg


def test_inspect_epochs_replayed_from_a_cache_shared_across_epochs(tmp_path: Path) -> None:
    """generate(cache=CachePolicy(per_epoch=False)): every epoch after the first replays the first response."""
    log = FIX / "inspect_ai" / "passk" / "mockllm-terse_epochs5_cache-per-epoch-false.eval"
    (lf,) = read_logs([log], "inspect", Options())
    assert lf.provenance["copied_repeats"]["count"] == 40
    stage(tmp_path, log)
    plan = write_plan(tmp_path, f'  results: ["{log.name}"]\n  format: inspect\n  candidate_names: {{mockllm/model: strong}}',
                      candidates=("strong", "weak"), repeats=5, cluster=None,
                      analyses="\n  - {kind: proportion}")
    res = _run(plan)
    assert res.exit_code == 2, res.output
    assert "40 of the repeats in this log are copies" in res.output and "per_epoch" in res.output
