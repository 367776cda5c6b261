"""promptfoo output files read into evalspec's rows.

``fixtures/promptfoo/coinflip_repeat3.json`` was written by promptfoo 0.120.0 offline
(``src/``: two custom providers, 10 tests, ``--repeat 3``, the weak one failing 10% of
its calls). :func:`logs_helpers.promptfoo_doc` builds files of the same layout with chosen
errors, for the cases the real file does not hold.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import PROMPTFOO_REAL, promptfoo_doc, stage, write_plan, write_promptfoo  # noqa: E402

from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, read_logs  # noqa: E402


def read(path: Path, **kw: object) -> object:
    return read_logs([path], "promptfoo", Options(**kw))[0]  # type: ignore[arg-type]


def test_rows_cases_and_repeats_from_test_index(tmp_path: Path) -> None:
    path = write_promptfoo(tmp_path, errors=frozenset({("weak", 3), ("weak", 17)}))
    lf = read(path)
    c = lf.columns
    assert lf.rows == 60 and lf.format == "promptfoo"
    assert Counter(c["candidate"]) == {"strong": 30, "weak": 30}
    assert Counter(c["repeat"]) == {1: 20, 2: 20, 3: 20}
    assert sorted(set(c["case_id"])) == list(range(10))
    # testIdx 17 = repeat 3 (17 mod 3 + 1) of test 5 (17 div 3): the test's results in testIdx order
    for case, rep, idx, qid in zip(c["case_id"], c["repeat"], c["test_idx"], c["vars.qid"]):
        assert (case, rep) == (idx // 3, idx % 3 + 1) and qid == f"q{case:02d}"
    assert sorted(set(c["metadata.doc"])) == ["doc0", "doc1", "doc2", "doc3"]
    missing = [i for i, v in enumerate(c["outcome"]) if v is None]
    assert {(c["candidate"][i], c["case_id"][i], c["repeat"][i]) for i in missing} == {("weak", 1, 1), ("weak", 5, 3)}
    assert all("503" in c["error"][i] for i in missing)
    assert all(isinstance(v, bool) for i, v in enumerate(c["outcome"]) if i not in missing)
    assert c["latency_s"][0] == pytest.approx(0.25) and c["total_tokens"][0] == 12 and c["cost"][0] == 0.0001
    p = lf.provenance
    assert p["tool"] == "promptfoo" and p["tool_version"] == "0.120.0" and p["repeats"] == 3 and p["tests"] == 10
    assert p["errors"] == 2 and p["missing_outcomes"] == 2
    # promptfoo's pass rate counts the 2 provider errors as failures; recomputed from the rows it agrees
    doc = json.loads(path.read_text())
    st = doc["results"]["stats"]
    assert p["reported"]["value"] == pytest.approx(st["successes"] / 60)
    assert p["reported"]["recomputed_value"] == pytest.approx(st["successes"] / 60)


def test_case_from_a_named_field_numbers_repeats_in_order(tmp_path: Path) -> None:
    path = write_promptfoo(tmp_path)
    c = read(path, case_field="vars.qid").columns
    assert sorted(set(c["case_id"])) == [f"q{i:02d}" for i in range(10)]
    assert Counter(c["repeat"]) == {1: 20, 2: 20, 3: 20}
    c2 = read(path, case_field="metadata.doc").columns  # several tests per doc: repeats count up per doc
    assert max(c2["repeat"]) == 9
    with pytest.raises(InputError, match="case_field 'qid' is not one promptfoo results have"):
        read(path, case_field="qid")


def test_named_score_as_the_outcome(tmp_path: Path) -> None:
    path = write_promptfoo(tmp_path)
    c = read(path, metric="exact").columns
    assert set(c["outcome"]) <= {0.0, 1.0}
    with pytest.raises(InputError, match="named score 'bleu' is not in the results; they have exact"):
        read(path, metric="bleu")


def test_provider_errors_end_to_end_are_missing_not_failures(tmp_path: Path) -> None:
    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    write_promptfoo(tmp_path, errors=frozenset({("weak", 3)}))
    plan_path = write_plan(tmp_path, """  results: results.json
  format: promptfoo
  select: {case_field: vars.qid}""", cluster="metadata.doc")
    checked = load_results(load_plan(plan_path).plan, plan_path)
    assert checked.missing["weak"]["missing"] == 1 and checked.missing["strong"]["missing"] == 0
    assert checked.tidy.n == 60 and len(checked.tidy.cluster_ids) == 4


def test_version_2_and_a_repeat_count_the_results_do_not_show(tmp_path: Path) -> None:
    doc = promptfoo_doc(version=2, repeat=1)
    doc["config"]["evaluateOptions"]["repeat"] = 3  # says 3, but each test ran once
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    lf = read(path)
    assert set(lf.columns["repeat"]) == {1} and lf.provenance["repeats"] == 1
    assert any("config says 3 repeats" in n for n in lf.provenance["notes"])


def test_not_a_promptfoo_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"results": {"version": 3, "results": []}, "evalId": "e"}), encoding="utf-8")
    with pytest.raises(InputError, match="has no results"):
        read(path)
    path.write_text(json.dumps({"rows": []}), encoding="utf-8")
    with pytest.raises(InputError, match="not a promptfoo output file"):
        read(path)
    path.write_text('{"results": {"results": [', encoding="utf-8")
    with pytest.raises(InputError, match="is not valid JSON"):
        read(path)


def test_jsonl_output_one_result_a_line(tmp_path: Path) -> None:
    doc = promptfoo_doc(errors=frozenset({("strong", 12)}))
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in doc["results"]["results"]), encoding="utf-8")
    lf = read(path, case_field="vars.qid")
    c = lf.columns
    assert lf.rows == 60 and Counter(c["repeat"]) == {1: 20, 2: 20, 3: 20}
    assert sum(v is None for v in c["outcome"]) == 1 and lf.provenance["missing_outcomes"] == 1
    by_test = read(path)  # no config in a .jsonl: the repeats are found from the tests themselves
    assert Counter(by_test.columns["repeat"]) == {1: 20, 2: 20, 3: 20}
    from evalspec.results.adapters import detect

    assert detect(path) == "promptfoo"
    path.write_text('{"testIdx": 0, "provider": "x"}\n{"testIdx": 1, ', encoding="utf-8")
    with pytest.raises(InputError, match="line 2 is not valid JSON"):
        read(path)


def test_plan_rules_for_log_options(tmp_path: Path) -> None:
    from evalspec.errors import PlanInvalid
    from evalspec.plan.load import load_plan

    plan = write_plan(tmp_path, """  results: r.jsonl
  select: {metric: exact}
  allow_partial: true""")
    with pytest.raises(PlanInvalid) as exc:
        load_plan(plan)
    text = exc.value.render()
    assert "select applies to tool logs" in text and "allow_partial applies to tool logs" in text


def test_real_promptfoo_file() -> None:
    """promptfoo 0.120.0's own output: 2 providers x 10 tests x 3 repeats; 4 provider errors."""
    lf = read(PROMPTFOO_REAL)
    c = lf.columns
    assert lf.rows == 60 and Counter(c["candidate"]) == {"coinflip-strong": 30, "coinflip-weak": 30}
    assert sorted(set(c["case_id"])) == list(range(10)) and Counter(c["repeat"]) == {1: 20, 2: 20, 3: 20}
    for case, qid, doc in zip(c["case_id"], c["vars.qid"], c["metadata.doc"]):
        assert qid == f"q{case:02d}" and doc == f"doc{case // 3}"
    assert Counter((cand, v) for cand, v in zip(c["candidate"], c["outcome"])) == {
        ("coinflip-strong", True): 28, ("coinflip-strong", False): 2,
        ("coinflip-weak", True): 11, ("coinflip-weak", False): 15, ("coinflip-weak", None): 4}
    missing = {(c["vars.qid"][i], c["test_idx"][i]) for i, v in enumerate(c["outcome"]) if v is None}
    assert missing == {("q03", 9), ("q04", 14), ("q08", 25), ("q09", 28)}
    assert all("simulated provider failure" in c["error"][i] for i, v in enumerate(c["outcome"]) if v is None)
    p = lf.provenance
    assert p["tool_version"] == "0.120.0" and p["results_version"] == 3 and p["repeats"] == 3 and p["tests"] == 10
    assert p["repeats_in_config"] == 1  # `--repeat 3` on the command line is not written into the file
    assert p["errors"] == 4 and p["reported"]["value"] == pytest.approx(39 / 60)
    per = p["reported"]["per_candidate"]
    assert per["coinflip-strong"]["pass_rate"] == pytest.approx(28 / 30)
    assert per["coinflip-weak"] == {"passes": 11, "failures": 15, "errors": 4, "pass_rate": pytest.approx(11 / 30)}
    # by a named field the same cases and repeats come out
    named = read(PROMPTFOO_REAL, case_field="vars.qid").columns
    assert sorted(zip(named["candidate"], named["case_id"], named["repeat"])) == sorted(
        zip(c["candidate"], c["vars.qid"], c["repeat"]))


def test_real_promptfoo_file_end_to_end_paired_by_hand(tmp_path: Path) -> None:
    """Provider errors are missing outcomes under the plan's policy, not failures; the paired
    first-attempt table is recounted by hand from the raw results."""
    from evalspec.attempts import reduce_attempts
    from evalspec.plan.load import load_plan
    from evalspec.results import load_results

    stage(tmp_path, PROMPTFOO_REAL)
    plan_path = write_plan(tmp_path, f"""  results: {PROMPTFOO_REAL.name}
  format: promptfoo
  select: {{case_field: vars.qid}}
  candidate_names: {{coinflip-strong: strong, coinflip-weak: weak}}""", cluster="metadata.doc", policy="exclude",
                           max_fraction=0.2, rule="first")
    checked = load_results(load_plan(plan_path).plan, plan_path)
    assert checked.missing["weak"] == {"missing": 4, "attempts": 30, "fraction": pytest.approx(4 / 30),
                                       "policy": "exclude"}
    t = checked.tidy
    out = reduce_attempts(t.cand, t.case, t.repeat, t.passed, n_candidates=2, n_cases=10, rule="first",
                          missing_policy="exclude")
    raw = json.loads(PROMPTFOO_REAL.read_text(encoding="utf-8"))["results"]["results"]
    hand: dict[tuple[str, str], list[tuple[int, object]]] = {}
    for r in raw:
        value = None if r["failureReason"] == 2 else float(r["success"])
        hand.setdefault((r["provider"]["label"], r["vars"]["qid"]), []).append((r["testIdx"], value))
    first = {k: next(v for _, v in sorted(x) if v is not None) for k, x in hand.items()}  # exclude: first scored
    for j, label in enumerate(("coinflip-strong", "coinflip-weak")):
        assert out.values[j].tolist() == [first[(label, q)] for q in t.case_ids]


def test_real_jsonl_output_reads_like_the_json_output() -> None:
    """The same (deterministic) run written with -o results.jsonl: the same rows."""
    jsonl = PROMPTFOO_REAL.with_suffix(".jsonl")
    a = read(PROMPTFOO_REAL, case_field="vars.qid").columns
    b = read(jsonl, case_field="vars.qid").columns

    def key(c: dict) -> list:
        return sorted(zip(c["candidate"], c["case_id"], c["repeat"], map(str, c["outcome"])))

    assert key(a) == key(b) and len(key(b)) == 60
