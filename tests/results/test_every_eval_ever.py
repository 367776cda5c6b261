"""Every Eval Ever: instance-level records read (files written by every-eval-ever 0.3.0 from a real
lm-eval 0.4.13 run), and a claim's headline numbers exported into its aggregate schema."""

from __future__ import annotations

import json
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

EEE = FIX / "every_eval_ever"
STRONG = next((EEE / "evalspec_gen" / "evalspec" / "coinflip-strong").glob("*_samples.jsonl"))
WEAK = next((EEE / "evalspec_gen" / "evalspec" / "coinflip-weak").glob("*_samples.jsonl"))
ENV = {"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"}


@pytest.mark.parametrize("result, value", [("exact_match:first", 0.7), ("exact_match:maj@3", 0.8)])
def test_reads_the_records_and_the_aggregate_beside_them(result: str, value: float) -> None:
    assert detect(STRONG) == "every_eval_ever"
    (lf,) = read_logs([STRONG], "every_eval_ever", Options(task=result))
    c = lf.columns
    assert lf.rows == 10 and set(c["candidate"]) == {"evalspec/coinflip-strong"}
    assert sorted(c["case_id"], key=int) == [str(i) for i in range(10)] and set(c["repeat"]) == {1}
    rep = lf.provenance["reported"]
    assert rep["value"] == pytest.approx(value) and rep["recomputed_value"] == pytest.approx(value)
    assert len(lf.provenance["files"]) == 2  # the aggregate file and the records, each with its SHA-256


def test_several_results_need_a_selection() -> None:
    with pytest.raises(InputError, match="several evaluation results"):
        read_logs([STRONG], "every_eval_ever", Options())


def test_run_then_export_the_claim_into_the_aggregate_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    stage(tmp_path, STRONG, WEAK)
    plan = write_plan(tmp_path, f"""  results: ["{STRONG.name}", "{WEAK.name}"]
  format: every_eval_ever
  select: {{task: "exact_match:first"}}
  candidate_names: {{evalspec/coinflip-strong: strong, evalspec/coinflip-weak: weak}}""", repeats=1, rule="first",
                      cluster=None)
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")], env=ENV)
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["convert", str(tmp_path / "out" / "claim.json"), "--to", "every_eval_ever", "-o",
                                   str(tmp_path / "eee")])
    assert res.exit_code == 0, res.output
    schema = json.loads((EEE / "eval.schema.json").read_text(encoding="utf-8"))
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "eee").rglob("*.json"))]
    assert len(docs) == 2
    for doc in docs:
        jsonschema.validate(doc, schema)
        (r,) = doc["evaluation_results"]
        d = r["score_details"]["details"]
        assert {"clusters", "effective_n", "verdict", "attempt_rule"} <= set(d)
        assert all(isinstance(v, str) for v in d.values())  # the schema's details are text
    scores = sorted(doc["evaluation_results"][0]["score_details"]["score"] for doc in docs)
    assert scores == pytest.approx([0.3, 0.7])  # lm-eval's own exact_match,first for weak and strong


def test_export_refuses_what_is_not_a_claim(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["convert", str(STRONG), "--to", "every_eval_ever"])
    assert res.exit_code == 2 and "internal error" not in res.output


def _json_values() -> st.SearchStrategy[object]:
    return st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                     max_size=3), max_leaves=8)


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["model_id", "sample_id", "evaluation", "metadata", "error", "evaluation_result_id",
                              "input", "answer_attribution", "token_usage", "performance"]), value=_json_values(),
       cut=st.none() | st.integers(0, 5000), metric=st.none() | st.just("score"),
       case_field=st.none() | st.sampled_from(["sample_hash", "metadata.filter"]))
def test_fuzz_every_eval_ever(tmp_path: Path, field: str, value: object, cut: int | None, metric: str | None,
                              case_field: str | None) -> None:
    lines = STRONG.read_text().splitlines()
    first = json.loads(lines[0])
    first[field] = value
    text = "\n".join([json.dumps(first), *lines[1:]]) + "\n"
    path = tmp_path / "fuzz_samples.jsonl"
    path.write_text(text[:cut] if cut is not None else text, encoding="utf-8")
    try:
        read_logs([path], "every_eval_ever", Options(task="exact_match:first", metric=metric, case_field=case_field))
    except InputError as exc:
        assert "fuzz_samples.jsonl" in exc.render()


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(claim=st.dictionaries(st.sampled_from(["coverage", "plan", "decision", "analyses", "created"]), _json_values(),
                             max_size=5))
def test_fuzz_export_never_crashes(claim: dict) -> None:
    from evalspec.results.adapters.every_eval_ever import aggregate_documents, datastore_path

    for doc in aggregate_documents(claim).values():
        datastore_path(doc)
