"""inspect_ai logs read into evalspec's rows: the real fixture files, the paired analysis, refusals.

Expected counts come from the fixture README (10 cases q00..q09 in 4 documents, 3 epochs;
the flaky run has 5 errored sample-epochs) and from inspect_ai's own header of each file.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import FAILED, FLAKY, INSPECT, STRONG, WEAK, WEAK_JSON, stage, write_plan  # noqa: E402

from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, read_logs  # noqa: E402

pytest.importorskip("zstandard")


def read(path: Path, **kw: object) -> object:
    return read_logs([path], "inspect", Options(**kw))[0]  # type: ignore[arg-type]


@pytest.mark.parametrize("path, candidate, passes", [(STRONG, "coinflip/strong", 27), (WEAK, "coinflip/weak", 14),
                                                     (WEAK_JSON, "coinflip/weak", 14)])
def test_fixture_rows(path: Path, candidate: str, passes: int) -> None:
    lf = read(path)
    c = lf.columns
    assert lf.rows == 30 and lf.format == "inspect"
    assert set(c["candidate"]) == {candidate}
    assert sorted(set(c["case_id"])) == [f"q{i:02d}" for i in range(10)]
    assert Counter(c["repeat"]) == {1: 10, 2: 10, 3: 10}
    assert sorted(set(c["doc_id"])) == ["doc0", "doc1", "doc2", "doc3"]
    assert Counter(c["difficulty"]) == {"easy": 15, "hard": 15}
    assert Counter(c["outcome"]) == {1.0: passes, 0.0: 30 - passes}
    # the case's cluster follows the README's rule doc{i // 3}
    for case, doc in zip(c["case_id"], c["doc_id"]):
        assert doc == f"doc{int(case[1:]) // 3}"
    assert all(isinstance(t, str) and t.endswith("Z") for t in c["timestamp"])
    p = lf.provenance
    assert p["tool"] == "inspect_ai" and p["tool_version"] == "0.3.285" and p["status"] == "success"
    assert p["rows"] == 30 and p["errors"] == 0 and len(p["files"][0]["sha256"]) == 64
    assert p["generate_config"] == {"temperature": 0.0, "seed": 42} and p["task_version"] == 0  # README command
    assert p["epochs"] == 3
    # inspect's own accuracy (mean of per-sample epoch means) is reproduced from the rows read
    assert p["reported"]["value"] == pytest.approx(passes / 30)
    assert p["reported"]["recomputed_value"] == pytest.approx(passes / 30)
    assert p["reported"]["stderr"] > 0


def test_eval_and_json_of_the_same_run_agree() -> None:
    a, b = read(WEAK).columns, read(WEAK_JSON).columns
    key = lambda c: sorted(zip(c["case_id"], c["repeat"], c["outcome"]))  # noqa: E731
    assert key(a) == key(b)


def test_errored_samples_are_missing_outcomes_counted_not_dropped() -> None:
    lf = read(FLAKY)
    c = lf.columns
    assert lf.rows == 30  # all 30 sample-epochs kept
    missing = [i for i, v in enumerate(c["outcome"]) if v is None]
    assert len(missing) == 5
    assert all("coinflip simulated provider failure" in c["error"][i] for i in missing)
    assert all(c["model_version"][i] is None for i in missing)  # no generation, so no served version
    assert {(c["case_id"][i], c["repeat"][i]) for i in missing} == {
        ("q02", 2), ("q06", 2), ("q09", 2), ("q01", 3), ("q04", 3)}
    p = lf.provenance
    assert p["errors"] == 5 and p["missing_outcomes"] == 5
    assert any("5 sample-epoch(s) have no score" in n for n in p["notes"])
    # inspect reports 0.55: the mean over cases of the mean of their *scored* epochs
    assert p["reported"]["value"] == pytest.approx(0.55)


def test_errored_samples_follow_the_plan_policy_end_to_end(tmp_path: Path) -> None:
    from evalspec.results import load_results

    stage(tmp_path, FLAKY, STRONG)
    plan_path = write_plan(tmp_path, f"""  results: ["{FLAKY.name}", "{STRONG.name}"]
  format: inspect
  candidate_names: {{coinflip/flaky: flaky, coinflip/strong: strong}}""", candidates=("flaky", "strong"),
                           max_fraction=0.2)
    from evalspec.plan.load import load_plan

    plan = load_plan(plan_path).plan
    checked = load_results(plan, plan_path)
    assert checked.missing["flaky"]["missing"] == 5 and checked.missing["flaky"]["attempts"] == 30
    assert any(d["code"] == "missing_outcomes" for d in checked.detected)
    # above the plan's tolerance the run refuses, naming the rows
    strict = write_plan(tmp_path, f"""  results: ["{FLAKY.name}", "{STRONG.name}"]
  format: inspect
  candidate_names: {{coinflip/flaky: flaky, coinflip/strong: strong}}""", candidates=("flaky", "strong"),
                        max_fraction=0.1)
    with pytest.raises(InputError) as exc:
        load_results(load_plan(strict).plan, strict)
    assert "5 of 30 outcomes missing" in exc.value.render()


def test_failed_run_is_refused_naming_the_file() -> None:
    with pytest.raises(InputError) as exc:
        read(FAILED)
    text = exc.value.render()
    assert FAILED.name in text and "status 'error'" in text and "allow_partial" in text


def test_failed_run_read_as_partial_with_the_flag() -> None:
    lf = read(FAILED, allow_partial=True)
    p = lf.provenance
    assert p["partial"] is True and p["status"] == "error" and "tiktoken" in p["run_error"]
    assert lf.rows == 6 and p["missing_outcomes"] == 6
    assert any("partial run" in n for n in p["notes"])


def _load(plan_path: Path) -> object:
    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    return load_results(load_plan(plan_path).plan, plan_path)


def test_paired_analysis_across_two_logs_checked_by_hand(tmp_path: Path) -> None:
    """strong vs weak on the first epoch, paired by case id across the two logs.

    By hand from the two files (epoch 1): strong passes q00 q02 q03 q05 q06 q08 q09, weak passes
    q01 q02 q03 q05; so both pass 3 (q02 q03 q05), strong only 4 (q00 q06 q08 q09), weak only 1
    (q01), neither 2 (q04 q07): d = (4 - 1) / 10 = 0.3. The table is also recomputed below
    from the raw rows, independently of evalspec's table, and the Wald interval is written out:
    d = (b - c) / n, se = sqrt(b + c - (b - c)^2 / n) / n (Fagerland, Lydersen & Laake 2014).
    """
    from evalspec.attempts import reduce_attempts
    from evalspec.stats.paired import paired_difference_interval

    stage(tmp_path, STRONG, WEAK)
    plan_path = write_plan(tmp_path, f"""  results: ["{STRONG.name}", "{WEAK.name}"]
  format: inspect
  candidate_names: {{coinflip/strong: strong, coinflip/weak: weak}}
  columns: {{model_version: model_version, timestamp: timestamp}}""", rule="first")
    checked = _load(plan_path)
    t = checked.tidy
    assert t.candidates == ["strong", "weak"] and t.n == 60 and len(t.cluster_ids) == 4
    out = reduce_attempts(t.cand, t.case, t.repeat, t.passed, n_candidates=2, n_cases=len(t.case_ids), rule="first")
    s_first, w_first = out.values
    # by hand, from the raw rows of each log
    hand = {}
    for name, path in (("s", STRONG), ("w", WEAK)):
        c = read(path).columns
        hand[name] = {k: v for k, r, v in zip(c["case_id"], c["repeat"], c["outcome"]) if r == 1}
    ids = [f"q{i:02d}" for i in range(10)]
    assert list(t.case_ids) == ids
    assert s_first.tolist() == [hand["s"][k] for k in ids]
    assert w_first.tolist() == [hand["w"][k] for k in ids]
    a = sum(hand["s"][k] == 1 and hand["w"][k] == 1 for k in ids)
    b = sum(hand["s"][k] == 1 and hand["w"][k] == 0 for k in ids)
    c_ = sum(hand["s"][k] == 0 and hand["w"][k] == 1 for k in ids)
    d = 10 - a - b - c_
    assert (a, b, c_, d) == (3, 4, 1, 2)
    res = paired_difference_interval(a, b, c_, d, method="wald", confidence_level=0.95)
    est = (b - c_) / 10
    half = 1.959963984540054 * np.sqrt(b + c_ - (b - c_) ** 2 / 10) / 10
    assert res.estimate == pytest.approx(est) == pytest.approx(0.3)
    assert (res.low, res.high) == pytest.approx((est - half, est + half), abs=1e-12)
    # the mean rule over all three epochs: 27/30 - 14/30, by hand from the outcome counts
    mean = reduce_attempts(t.cand, t.case, t.repeat, t.passed, n_candidates=2, n_cases=10, rule="mean").values
    assert mean[0].mean() - mean[1].mean() == pytest.approx(13 / 30)


def test_a_folder_of_logs_and_a_scorer_selector(tmp_path: Path) -> None:
    import shutil

    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(STRONG, logs)
    shutil.copy(WEAK, logs)
    plan_path = write_plan(tmp_path, """  results: logs
  format: inspect
  select: {scorer: match}
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}""")
    checked = load_results(load_plan(plan_path).plan, plan_path)
    assert checked.tidy.n == 60
    bad = write_plan(tmp_path, """  results: logs
  format: inspect
  select: {scorer: includes}
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}""")
    with pytest.raises(InputError, match="scorer 'includes' is not in the log; it has match"):
        load_results(load_plan(bad).plan, bad)


def test_case_ids_that_do_not_match_show_ids_from_each_side(tmp_path: Path) -> None:
    """Two logs numbering the same cases differently (q00 vs 0) get a message with both sides."""
    header = {"status": "success", "eval": {"task": "evalspec_tiny", "model": "coinflip/weak",
                                            "created": "2026-01-01T00:00:00Z"}}
    samples = [{"id": i, "epoch": r, "target": "1", "scores": {"match": {"value": "C"}},
                "metadata": {"doc_id": f"doc{i // 3}"}} for i in range(10) for r in (1, 2, 3)]
    (tmp_path / "weak.json").write_text(json.dumps({**header, "samples": samples}), encoding="utf-8")
    stage(tmp_path, STRONG)
    plan_path = write_plan(tmp_path, f"""  results: ["{STRONG.name}", weak.json]
  format: inspect
  candidate_names: {{coinflip/strong: strong, coinflip/weak: weak}}""")
    with pytest.raises(InputError) as exc:
        _load(plan_path)
    text = exc.value.render()
    assert "no case was run for both strong and weak" in text
    assert "'q00'" in text and "'0'" in text


def _zip_with(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_older_deflate_eval_and_old_score_field(tmp_path: Path) -> None:
    """Older inspect versions write DEFLATE members and one `score` per sample (results.scorer)."""
    header = {"version": 1, "status": "success", "eval": {"task": "t", "model": "openai/old", "created":
                                                           "2024-06-01T10:00:00", "packages": {"inspect_ai": "0.3.10"}},
              "results": {"scorer": {"name": "includes"}, "metrics": {"accuracy": {"name": "accuracy",
                                                                                    "value": 0.5}}}}
    samples = {f"samples/{i}_epoch_1.json": json.dumps({"id": i, "epoch": 1, "target": "x", "score": {
        "value": "C" if i == 1 else "I"}, "metadata": {"grp": "a"}}).encode() for i in (1, 2)}
    path = tmp_path / "old.eval"
    path.write_bytes(_zip_with({"header.json": json.dumps(header).encode(), **samples}))
    lf = read(path)
    assert sorted(zip(lf.columns["case_id"], lf.columns["outcome"])) == [(1, 1.0), (2, 0.0)]
    assert lf.provenance["tool_version"] == "0.3.10" and lf.provenance["reported"]["value"] == 0.5
    assert lf.columns["timestamp"][0] == "2024-06-01T10:00:00Z"  # no started_at: eval.created


def test_chunked_sample_shape_reads_metadata_beside_the_shell(tmp_path: Path) -> None:
    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m/x", "created": "2026-01-01T00:00:00Z"}}
    shell = {"id": "a", "epoch": 2, "target": "1", "scores": {"match": {"value": 1}}}
    path = tmp_path / "chunked.eval"
    path.write_bytes(_zip_with({"header.json": json.dumps(header).encode(),
                                "samples/a_epoch_2/sample.json": json.dumps(shell).encode(),
                                "samples/a_epoch_2/metadata.json": json.dumps({"doc_id": "d9"}).encode(),
                                "samples/a_epoch_2/events/0.json": b"[]"}))
    lf = read(path)
    assert lf.rows == 1 and lf.columns["doc_id"][0] == "d9" and lf.columns["repeat"][0] == 2


@pytest.mark.parametrize("cut", [100, 5000, 30000, -200])
def test_truncated_eval_is_a_clear_error(tmp_path: Path, cut: int) -> None:
    data = STRONG.read_bytes()
    path = tmp_path / "cut.eval"
    path.write_bytes(data[:cut])
    with pytest.raises(InputError) as exc:
        read(path)
    assert "cut.eval" in exc.value.render()


def test_json_log_of_another_tool_is_named(tmp_path: Path) -> None:
    from logs_helpers import LMEVAL

    other = next((LMEVAL / "coinflip-strong").glob("results_*.json"))
    path = tmp_path / "x.json"
    path.write_bytes(other.read_bytes())
    with pytest.raises(InputError, match="is a lm_eval file, not an inspect_ai log"):
        read(path)


def test_dict_valued_scores_need_a_metric(tmp_path: Path) -> None:
    header = {"status": "success", "eval": {"task": "t", "model": "m/x", "created": "2026-01-01T00:00:00Z"}}
    sample = {"id": 1, "epoch": 1, "target": "", "scores": {"rubric": {"value": {"helpful": 1, "safe": 0}}}}
    path = tmp_path / "d.json"
    path.write_text(json.dumps({**header, "samples": [sample]}), encoding="utf-8")
    with pytest.raises(InputError, match="several values per sample"):
        read(path)
    assert read(path, metric="safe").columns["outcome"][0] == 0
    with pytest.raises(InputError, match="metric 'kind' is not among"):
        read(path, metric="kind")


def test_unmapped_log_candidate_suggests_the_mapping(tmp_path: Path) -> None:
    stage(tmp_path, STRONG, WEAK)
    plan_path = write_plan(tmp_path, f"""  results: ["{STRONG.name}", "{WEAK.name}"]
  format: inspect""")
    with pytest.raises(InputError) as exc:
        _load(plan_path)
    text = exc.value.render()
    assert "candidate_names: {coinflip/strong: strong}" in text and "{coinflip/weak: weak}" in text


def test_declared_missing_values_apply_to_jsonl_too(tmp_path: Path) -> None:
    rows = [{"candidate": c, "case_id": f"q{i}", "repeat": r, "outcome": "ERROR" if (c, i, r) == ("weak", 1, 2)
             else "pass", "doc_id": f"d{i // 2}"} for c in ("strong", "weak") for i in range(6) for r in (1, 2, 3)]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(x) for x in rows) + "\n", encoding="utf-8")
    plan_path = write_plan(tmp_path, """  results: r.jsonl
  missing_values: [ERROR]""", max_fraction=0.1)
    checked = _load(plan_path)
    assert checked.missing["weak"]["missing"] == 1 and checked.missing["strong"]["missing"] == 0
    without = write_plan(tmp_path, """  results: r.jsonl""")
    with pytest.raises(InputError, match="problem"):  # 'ERROR' is not a pass/fail value
        _load(without)
    # candidate_names applies to tables too
    renamed = [{**x, "candidate": {"strong": "vendor/strong-v2", "weak": "vendor/weak-v1"}[x["candidate"]]}
               for x in rows]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(x) for x in renamed) + "\n", encoding="utf-8")
    mapped = write_plan(tmp_path, """  results: r.jsonl
  missing_values: [ERROR]
  candidate_names: {vendor/strong-v2: strong, vendor/weak-v1: weak}""", max_fraction=0.1)
    checked = _load(mapped)
    assert checked.missing["weak"]["missing"] == 1 and checked.tidy.n == 36


def test_task_selector_skips_logs_of_other_tasks_and_says_so(tmp_path: Path) -> None:
    header = {"status": "success", "eval": {"task": "other_task", "model": "m/x", "created": "2026-01-01T00:00:00Z"}}
    sample = {"id": "q00", "epoch": 1, "target": "3", "scores": {"match": {"value": "C"}}}
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**header, "samples": [sample]}), encoding="utf-8")
    got = read_logs([STRONG, other], "inspect", Options(task="evalspec_tiny"))
    assert len(got) == 1 and got[0].rows == 30
    assert got[0].provenance["skipped_logs"] == [str(other)]
    with pytest.raises(InputError, match="no inspect_ai log of task 'nope' was found"):
        read_logs([STRONG, other], "inspect", Options(task="nope"))


def test_partial_run_is_a_detected_limit_in_the_claim(tmp_path: Path) -> None:
    stage(tmp_path, FAILED)
    plan_path = write_plan(tmp_path, f"""  results: ["{FAILED.name}"]
  format: inspect
  allow_partial: true
  candidate_names: {{mockllm/model: strong}}""", candidates=("strong", "weak"), cluster=None, max_fraction=1.0,
                           analyses="""
  - {kind: proportion}""")
    from evalspec.plan.load import load_plan
    from evalspec.results import read_all
    from evalspec.results.adapters import claim_limits

    raws = read_all(load_plan(plan_path).plan, plan_path)
    limits = claim_limits(raws)
    assert [d["code"] for d in limits] == ["partial_run"] and "status 'error'" in limits[0]["message"]


def test_token_usage_and_time_are_carried_as_columns() -> None:
    """The mockllm run (Python API) set per-call usage: input = words of the prompt, output = 4."""
    lf = read(INSPECT / "mockllm-alpha_api_p0.8.eval")
    c = lf.columns
    assert lf.rows == 30 and set(c["candidate"]) == {"mockllm/alpha"}
    assert set(c["output_tokens"]) == {4}
    assert all(t == i + 4 for t, i in zip(c["total_tokens"], c["input_tokens"]))
    assert all(isinstance(x, float) and x >= 0 for x in c["latency_s"])
    assert Counter(c["outcome"]) == {1.0: 24, 0.0: 6} and lf.provenance["reported"]["value"] == pytest.approx(0.8)


OLD = INSPECT / "0.3.130"


def test_older_inspect_version_deflate_logs() -> None:
    """Logs written by inspect_ai 0.3.130 (DEFLATE zip members); expected values from inspect's own reader."""
    alpha = read(OLD / "mockllm-alpha_p0.8.eval")
    with zipfile.ZipFile(OLD / "mockllm-alpha_p0.8.eval") as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
    c = alpha.columns
    assert alpha.rows == 30 and set(c["candidate"]) == {"mockllm/alpha"} and Counter(c["repeat"]) == {1: 10, 2: 10,
                                                                                                       3: 10}
    assert Counter(c["outcome"]) == {1.0: 23, 0.0: 7} and alpha.provenance["tool_version"] == "0.3.130"
    assert alpha.provenance["reported"]["value"] == pytest.approx(23 / 30)
    assert alpha.provenance["reported"]["recomputed_value"] == pytest.approx(23 / 30)
    beta = read(OLD / "mockllm-beta_p0.5_err0.15.eval")
    c = beta.columns
    errored = sorted((k, r) for k, r, v in zip(c["case_id"], c["repeat"], c["outcome"]) if v is None)
    assert errored == [("q02", 3), ("q04", 3), ("q07", 3), ("q08", 3)] and beta.provenance["errors"] == 4
    assert Counter(v for v in c["outcome"] if v is not None) == {1.0: 15, 0.0: 11}
    # inspect reports 0.5833: per-case means of the scored epochs, averaged; recomputed from the rows
    assert beta.provenance["reported"]["value"] == pytest.approx(beta.provenance["reported"]["recomputed_value"])
