"""openai/evals record logs, written by ``evals`` 3.0.1.post1 (``oaieval``) offline.

``fixtures/openai_evals/``: a Match eval of the ten arithmetic cases, run against two seeded
completion functions (``src/coinflip_fn.py``): ``coinflip-strong`` (p = 0.9) and
``coinflip-weak`` (p = 0.6); oaieval reported accuracy 0.9 and 0.8.
"""

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

OE = FIX / "openai_evals"
STRONG, WEAK = OE / "coinflip-strong.jsonl", OE / "coinflip-weak.jsonl"


def test_reads_the_real_record_log_and_agrees_with_its_report() -> None:
    assert detect(STRONG) == "openai_evals" and detect(OE) == "openai_evals"
    (lf,) = read_logs([STRONG], "openai_evals", Options())
    c = lf.columns
    assert lf.rows == 10 and set(c["candidate"]) == {"coinflip-strong"} and set(c["repeat"]) == {1}
    assert sorted(c["case_id"]) == sorted(f"evalspec-arith.dev.{i}" for i in range(10))
    p = lf.provenance
    assert p["tool"] == "openai/evals" and p["eval_name"] == "evalspec-arith.dev.v0"
    assert p["reported"]["value"] == pytest.approx(0.9) and p["reported"]["recomputed_value"] == pytest.approx(0.9)
    assert p["reported"]["stderr"] == pytest.approx(0.0999928, rel=1e-5)
    assert not any("disagree" in n for n in p["notes"])


def test_run_on_two_completion_functions(tmp_path: Path) -> None:
    stage(tmp_path, STRONG, WEAK)
    plan = write_plan(tmp_path, f"""  results: ["{STRONG.name}", "{WEAK.name}"]
  format: openai_evals
  candidate_names: {{coinflip-strong: strong, coinflip-weak: weak}}""", repeats=1, rule="first", cluster=None)
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")],
                             env={"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"})
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert [f["provenance"]["tool"] for f in claim["data"]["files"]] == ["openai/evals"] * 2


def test_metrics_events_with_select_metric_and_a_missing_report(tmp_path: Path) -> None:
    lines = STRONG.read_text().splitlines()
    spec, events = lines[0], [json.loads(x) for x in lines[2:]]
    metrics = [{**e, "type": "metrics", "data": {"score": 1.0 if e["data"]["correct"] else 0.0}} for e in events]
    path = tmp_path / "graded.jsonl"
    path.write_text("\n".join([spec, json.dumps({"final_report": {"score": 0.9}}), *map(json.dumps, metrics)]) + "\n")
    with pytest.raises(InputError, match="no match events") as info:
        read_logs([path], "openai_evals", Options())
    assert "score" in info.value.render()
    (lf,) = read_logs([path], "openai_evals", Options(metric="score"))
    assert sum(lf.columns["outcome"]) == 9 and lf.provenance["reported"]["value"] == pytest.approx(0.9)
    path.write_text("\n".join([spec, *map(json.dumps, metrics)]) + "\n")  # no final_report: the run did not finish
    with pytest.raises(InputError, match="did not finish"):
        read_logs([path], "openai_evals", Options(metric="score"))
    (lf,) = read_logs([path], "openai_evals", Options(metric="score", allow_partial=True))
    assert lf.provenance["partial"] is True


def _json_values() -> st.SearchStrategy[object]:
    return st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                     max_size=3), max_leaves=8)


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["sample_id", "type", "data", "event_id", "created_at", "run_id"]), value=_json_values(),
       spec_key=st.sampled_from(["completion_fns", "eval_name", "created_at", "run_config"]), spec_value=_json_values(),
       cut=st.none() | st.integers(0, 4000), metric=st.none() | st.just("score"))
def test_fuzz_openai_evals(tmp_path: Path, field: str, value: object, spec_key: str, spec_value: object,
                           cut: int | None, metric: str | None) -> None:
    lines = STRONG.read_text().splitlines()
    spec = json.loads(lines[0])
    spec["spec"][spec_key] = spec_value
    event = json.loads(lines[3])
    event[field] = value
    text = "\n".join([json.dumps(spec), lines[1], lines[2], json.dumps(event), *lines[4:]]) + "\n"
    path = tmp_path / "fuzz.jsonl"
    path.write_text(text[:cut] if cut is not None else text, encoding="utf-8")
    try:
        read_logs([path], "openai_evals", Options(metric=metric, allow_partial=True))
    except InputError as exc:
        assert "fuzz.jsonl" in exc.render()
