"""lm-evaluation-harness output read into evalspec's rows, and the majority_answer attempt rule.

Reference values: lm-eval's own results files (``acc,none`` 0.8 / 0.6; ``exact_match,maj@3``
0.8 / 0.5; ``exact_match,first`` 0.7 / 0.3), written by lm-eval 0.4.13 from the same samples.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import LMEVAL, stage, write_plan  # noqa: E402

from evalspec.attempts import reduce_attempts  # noqa: E402
from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, read_logs  # noqa: E402

STRONG = LMEVAL / "coinflip-strong"
WEAK = LMEVAL / "coinflip-weak"


def results_file(folder: Path) -> Path:
    return next(folder.glob("results_*.json"))


def read(folder: Path, **kw: object) -> object:
    return read_logs([results_file(folder)], "lm_eval", Options(**kw))[0]  # type: ignore[arg-type]


@pytest.mark.parametrize("folder, name, acc", [(STRONG, "coinflip-strong", 0.8), (WEAK, "coinflip-weak", 0.6)])
def test_multiple_choice_rows(folder: Path, name: str, acc: float) -> None:
    lf = read(folder, task="evalspec_mc", case_field="id")
    c = lf.columns
    assert lf.rows == 10 and lf.unit == "line" and lf.display.endswith(".jsonl")
    assert set(c["candidate"]) == {name}  # from model_args pretrained=...
    assert sorted(c["case_id"]) == [f"q{i:02d}" for i in range(10)]
    assert set(c["repeat"]) == {1}
    assert sorted(set(c["doc_id"])) == ["doc0", "doc1", "doc2", "doc3"]  # the doc's own field, the cluster
    assert sorted(c["doc_index"]) == list(range(10))  # top-level doc_id is the row index
    assert np.mean([float(v) for v in c["outcome"]]) == pytest.approx(acc)
    # log-likelihoods were strings; parsed, and the argmax is the model's answer
    lls = json.loads(c["loglikelihoods"][0])
    assert len(lls) == 4 and all(isinstance(x, float) for x in lls)
    for ans, label, out in zip(c["answer"], c["label"], c["outcome"]):
        assert (ans == label) == (out == 1.0)
    assert all(t.startswith("2026-11-29T11:42") and t.endswith("Z") for t in c["timestamp"])  # epoch seconds
    p = lf.provenance
    assert p["tool"] == "lm-evaluation-harness" and p["tool_version"] == "0.4.13"
    assert p["reported"]["metric"] == "acc,none" and p["reported"]["value"] == pytest.approx(acc)
    assert p["reported"]["recomputed_value"] == pytest.approx(acc) and p["reported"]["stderr"] > 0
    assert p["per_repeat_outcomes"] is False and len(p["files"]) == 2
    assert any("one attempt per case" in n for n in p["notes"])  # one repeat: nothing was reduced


@pytest.mark.parametrize("folder, maj, first", [(STRONG, 0.8, 0.7), (WEAK, 0.5, 0.3)])
def test_generation_task_under_each_filter(folder: Path, maj: float, first: float) -> None:
    for filt, expect in (("maj@3", maj), ("first", first)):
        lf = read(folder, task="evalspec_gen", filter=filt, case_field="id")
        c = lf.columns
        assert lf.rows == 10 and set(c["filter"]) == {filt} and set(c["n_repeats"]) == {3}
        assert np.mean([float(v) for v in c["outcome"]]) == pytest.approx(expect)
        assert lf.provenance["reported"]["value"] == pytest.approx(expect)
        assert "doc.answer" in c  # the document's `answer` field, renamed beside evalspec's own column


def test_selection_errors_name_the_file_and_the_choices() -> None:
    with pytest.raises(InputError, match="several tasks"):
        read(STRONG)
    with pytest.raises(InputError, match="several filters \\(first, maj@3\\)"):
        read(STRONG, task="evalspec_gen")
    with pytest.raises(InputError) as exc:
        read(STRONG, task="evalspec_gen", filter="first", metric="f1")
    text = exc.value.render()
    assert "samples_evalspec_gen_" in text and "metric 'f1' is not in the samples" in text and "exact_match" in text
    with pytest.raises(InputError, match="task 'mmlu' is not in this results file"):
        read(STRONG, task="mmlu")
    with pytest.raises(InputError, match="no field 'qid' for the case id"):
        read(STRONG, task="evalspec_mc", case_field="qid")


def test_empty_samples_file_is_a_clear_error(tmp_path: Path) -> None:
    shutil.copytree(STRONG, tmp_path / "run")
    sample = next((tmp_path / "run").glob("samples_evalspec_mc_*.jsonl"))
    sample.write_text("", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read(tmp_path / "run", task="evalspec_mc")
    assert sample.name in exc.value.render() and "empty" in exc.value.render()


def test_truncated_samples_line_is_located(tmp_path: Path) -> None:
    shutil.copytree(STRONG, tmp_path / "run")
    sample = next((tmp_path / "run").glob("samples_evalspec_mc_*.jsonl"))
    sample.write_bytes(sample.read_bytes()[:-40])
    with pytest.raises(InputError) as exc:
        read(tmp_path / "run", task="evalspec_mc")
    assert "line 10 is not valid JSON" in exc.value.render()


def test_results_without_samples_and_another_tools_json(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    shutil.copy(results_file(STRONG), tmp_path / "run")
    with pytest.raises(InputError, match="no samples_<task>_<date>.jsonl file sits beside"):
        read(tmp_path / "run")
    from logs_helpers import WEAK_JSON

    with pytest.raises(InputError, match="is a inspect file, not an lm-evaluation-harness results file"):
        read_logs([WEAK_JSON], "lm_eval", Options())


def test_older_string_model_args_and_keys_without_filter(tmp_path: Path) -> None:
    """lm-eval 0.4.x before the EvaluationTracker: model_args as 'k=v,...'; no model_name."""
    doc = json.loads(results_file(STRONG).read_text(encoding="utf-8"))
    doc.pop("model_name", None)
    doc["config"]["model_args"] = "pretrained=org/old-model,dtype=float16"
    stamp = results_file(STRONG).name[len("results_"):-len(".json")]
    (tmp_path / f"results_{stamp}.json").write_text(json.dumps(doc), encoding="utf-8")
    shutil.copy(next(STRONG.glob("samples_evalspec_mc_*.jsonl")), tmp_path)
    lf = read_logs([tmp_path / f"results_{stamp}.json"], "lm_eval", Options())[0]
    assert set(lf.columns["candidate"]) == {"org/old-model"}
    assert Counter(lf.columns["outcome"]) == {1.0: 8, 0.0: 2}


def test_paired_analysis_across_two_runs_checked_by_hand(tmp_path: Path) -> None:
    """evalspec_mc, strong vs weak, paired on the doc id field.

    By hand from the samples files: strong fails q03 q08; weak fails q00 q01 q02 q03. So both
    pass 5, strong only 3 (q00 q01 q02), weak only 1 (q08), neither 1 (q03): d = (3 - 1) / 10 =
    0.2. The table is also counted below from the raw lines and must equal evalspec's outcomes.
    """
    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    stage(tmp_path, STRONG, WEAK)
    plan_path = write_plan(tmp_path, """  results: [coinflip-strong, coinflip-weak]
  format: lm_eval
  select: {task: evalspec_mc, case_field: id}
  candidate_names: {coinflip-strong: strong, coinflip-weak: weak}
  columns: {timestamp: timestamp}""", repeats=1, rule="first")
    checked = load_results(load_plan(plan_path).plan, plan_path)
    t = checked.tidy
    out = reduce_attempts(t.cand, t.case, t.repeat, t.passed, n_candidates=2, n_cases=len(t.case_ids), rule="first")
    hand = {}
    for name, folder in (("s", STRONG), ("w", WEAK)):
        lines = [json.loads(x) for x in next(folder.glob("samples_evalspec_mc_*.jsonl")).read_text().splitlines()]
        hand[name] = {x["doc"]["id"]: x["acc"] for x in lines}
    ids = list(t.case_ids)
    assert out.values[0].tolist() == [hand["s"][k] for k in ids]
    assert out.values[1].tolist() == [hand["w"][k] for k in ids]
    b = sum(hand["s"][k] == 1 and hand["w"][k] == 0 for k in ids)
    c = sum(hand["s"][k] == 0 and hand["w"][k] == 1 for k in ids)
    assert (b, c) == (3, 1) and (b - c) / 10 == pytest.approx(0.8 - 0.6)
    assert float(np.nanmean(out.values[0] - out.values[1])) == pytest.approx(0.2)


def _gen_attempts(folder: Path) -> tuple[np.ndarray, ...]:
    """The 3 raw generations per document (resps) as attempts, with the document's target."""
    lines = [json.loads(x) for x in next(folder.glob("samples_evalspec_gen_*.jsonl")).read_text().splitlines()]
    rows = [(x["doc_id"], k + 1, a, x["target"]) for x in lines if x["filter"] == "maj@3"
            for k, a in enumerate(x["resps"][0])]
    case, rep, ans, tgt = zip(*rows)
    return (np.zeros(len(rows), dtype=np.int64), np.array(case), np.array(rep), np.array(ans, dtype=object),
            np.array(tgt, dtype=object))


@pytest.mark.parametrize("folder, maj3, majority_of_outcomes", [(STRONG, 0.8, 0.7), (WEAK, 0.5, 0.4)])
def test_majority_answer_reproduces_lm_eval_maj_at_3(folder: Path, maj3: float, majority_of_outcomes: float) -> None:
    """majority_answer over the raw generations equals lm-eval's own exact_match,maj@3.

    It differs from a majority of pass/fail outcomes (0.8 vs 0.7 on the strong run), the gap a
    user found converting real logs by hand. On the weak run q01 answered 7, 9, 10: a three-way
    tie, which goes to the first answer (7, correct), as lm-eval's majority_vote does.
    """
    cand, case, rep, ans, tgt = _gen_attempts(folder)
    ones = np.ones(len(case))
    got = reduce_attempts(cand, case, rep, ones, n_candidates=1, n_cases=10, rule="majority_answer", answer=ans,
                          target=tgt)
    assert got.values.mean() == pytest.approx(maj3)
    assert got.attempts.tolist() == [[3] * 10]
    passed = np.array([float(a.strip() == t) for a, t in zip(ans, tgt)])
    maj = reduce_attempts(cand, case, rep, passed, n_candidates=1, n_cases=10, rule="majority")
    assert maj.values.mean() == pytest.approx(majority_of_outcomes)


def test_majority_answer_ties_missing_and_targets() -> None:
    def run(answers: list[object], target: object, passed: list[float] | None = None, policy: str = "count_as_fail"
            ) -> float:
        n = len(answers)
        p = np.array(passed if passed is not None else [1.0] * n)
        out = reduce_attempts(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.arange(1, n + 1), p,
                              n_candidates=1, n_cases=1, rule="majority_answer", missing_policy=policy,
                              answer=np.array(answers, dtype=object), target=np.array([target] * n, dtype=object))
        return float(out.values[0, 0])

    assert run(["4", "5", "4"], "4") == 1.0
    assert run(["5", "4", "4", "5"], "4") == 0.0  # tie 2-2: the first-given answer (5) wins
    assert run(["4", "5", "5", "4"], "4") == 1.0
    assert run([" 4.0", "4", "x"], "4") == 1.0  # numbers compare as numbers
    assert run(["Paris", "paris ", "Rome"], "PARIS") == 1.0  # text: case and outer space ignored
    assert run([None, None, "4"], "4") == 0.0  # two "no answer" votes win under count_as_fail
    assert run([None, None, "4"], "4", policy="exclude") == 1.0
    assert run(["4", "4", "5"], "4", passed=[np.nan, np.nan, 1.0], policy="exclude") == 0.0
    assert run(["b", "b"], '["a", "b"]') == 1.0  # a JSON list target accepts any item
    assert np.isnan(run([None, None], "4", policy="exclude"))
    with pytest.raises(ValueError, match="needs the answer and target"):
        reduce_attempts(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1), np.ones(1),
                        n_candidates=1, n_cases=1, rule="majority_answer")


def test_plan_rule_majority_answer_needs_its_columns() -> None:
    from pydantic import ValidationError

    from evalspec.plan.model import Attempts

    ok = Attempts(repeats=3, rule="majority_answer", answer="answer", target="target")
    assert ok.model_dump()["answer"] == "answer"
    with pytest.raises(ValidationError, match="needs the answer column"):
        Attempts(repeats=3, rule="majority_answer", target="target")
    with pytest.raises(ValidationError, match="applies only to rule majority_answer"):
        Attempts(repeats=3, rule="majority", answer="answer")
    assert "answer" not in Attempts(repeats=3).model_dump()  # unused: the plan hash is unchanged


def test_lm_eval_0_4_0_layout(tmp_path: Path) -> None:
    """0.4.0-0.4.2: results.json and <model_args>_<task>.jsonl holding one JSON array."""
    doc = json.loads(results_file(STRONG).read_text(encoding="utf-8"))
    for k in ("model_name", "model_name_sanitized", "lm_eval_version", "date"):
        doc.pop(k, None)
    doc["config"]["model_args"] = "pretrained=old/model"
    doc["results"] = {"evalspec_mc": {"acc,none": 0.8}}
    (tmp_path / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    samples = [json.loads(x) for x in next(STRONG.glob("samples_evalspec_mc_*.jsonl")).read_text().splitlines()]
    for x in samples:
        x.pop("filter"), x.pop("metrics")
    (tmp_path / "pretrained__old__model_evalspec_mc.jsonl").write_text(json.dumps(samples, indent=2), encoding="utf-8")
    lf = read_logs([tmp_path / "results.json"], "lm_eval", Options(case_field="id"))[0]
    assert lf.rows == 10 and set(lf.columns["candidate"]) == {"old/model"}
    assert Counter(lf.columns["outcome"]) == {1.0: 8, 0.0: 2} and lf.provenance["reported"]["value"] == 0.8


def test_claim_says_per_repeat_outcomes_are_not_in_the_file(tmp_path: Path) -> None:
    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    stage(tmp_path, STRONG, WEAK)
    plan_path = write_plan(tmp_path, """  results: [coinflip-strong, coinflip-weak]
  format: lm_eval
  select: {task: evalspec_gen, filter: maj@3, case_field: id}
  candidate_names: {coinflip-strong: strong, coinflip-weak: weak}""", repeats=1, rule="first")
    checked = load_results(load_plan(plan_path).plan, plan_path)
    notes = [d for d in checked.detected if d["code"] == "tool_reduced_repeats"]
    assert len(notes) == 2 and "'maj@3'" in notes[0]["message"] and "per-repeat outcomes are not in the file" in \
        notes[0]["message"]


def test_files_carry_their_provenance_for_the_claim(tmp_path: Path) -> None:
    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    stage(tmp_path, STRONG, WEAK)
    plan_path = write_plan(tmp_path, """  results: [coinflip-strong, coinflip-weak]
  format: lm_eval
  select: {task: evalspec_mc, case_field: id}
  candidate_names: {coinflip-strong: strong, coinflip-weak: weak}""", repeats=1, rule="first")
    checked = load_results(load_plan(plan_path).plan, plan_path)
    files = checked.tidy.files
    assert len(files) == 2 and all(f.format == "lm_eval" for f in files)
    prov = files[0].provenance
    assert prov["tool"] == "lm-evaluation-harness" and prov["tool_version"] == "0.4.13"
    assert [Path(f["path"]).name.split("_")[0] for f in prov["files"]] == ["results", "samples"]
    assert all(len(f["sha256"]) == 64 for f in prov["files"]) and prov["candidate_names"] == {
        "coinflip-strong": "strong", "coinflip-weak": "weak"}
    assert files[0].sha256 == prov["files"][1]["sha256"]  # the table row's file is the samples file
