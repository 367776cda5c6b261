"""``evalspec convert``: the tidy table from tool logs; clear errors (exit 2) on malformed input.

Also the fuzz tests: every adapter, fed a damaged copy of a real log (or arbitrary bytes /
JSON), either reads it or raises :class:`InputError` naming the file — never another
exception (which the CLI would report as an internal error, exit 70).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import FAILED, FLAKY, LMEVAL, STRONG, WEAK_JSON, promptfoo_doc, write_promptfoo  # noqa: E402

from evalspec.cli import cli  # noqa: E402
from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, read_logs  # noqa: E402

pytest.importorskip("zstandard")


def convert(*args: str) -> object:
    return CliRunner().invoke(cli, ["convert", *map(str, args)])


def test_inspect_log_to_jsonl_then_read_by_the_jsonl_reader(tmp_path: Path) -> None:
    out = tmp_path / "flaky.jsonl"
    res = convert(FLAKY, "--to", "jsonl", "-o", out, "--provenance", tmp_path / "prov.json")
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 30 and list(rows[0])[:4] == ["candidate", "case_id", "repeat", "outcome"]
    assert sum(r["outcome"] is None for r in rows) == 5 and sum(r["error"] is not None for r in rows) == 5
    prov = json.loads((tmp_path / "prov.json").read_text())
    assert prov[0]["tool"] == "inspect_ai" and prov[0]["missing_outcomes"] == 5 and prov[0]["rows"] == 30
    assert "5 missing outcome(s)" in res.stderr if hasattr(res, "stderr") else True
    # what convert wrote is what `evalspec run` reads: the JSONL reader gets the same rows
    from evalspec.results.readers import read_file

    raw = read_file(out, "jsonl")
    assert raw.rows == 30 and sorted(raw.columns) == sorted(rows[0])


def test_lm_eval_folder_to_csv_with_selection() -> None:
    res = convert(LMEVAL / "coinflip-strong", "--to", "csv", "--task", "evalspec_gen", "--filter", "maj@3",
                  "--case-field", "id")
    assert res.exit_code == 0, res.output
    table = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(table) == 10 and {r["case_id"] for r in table} == {f"q{i:02d}" for i in range(10)}
    assert sum(float(r["outcome"]) for r in table) == 8  # lm-eval's exact_match,maj@3 = 0.8


def test_promptfoo_auto_detected(tmp_path: Path) -> None:
    path = write_promptfoo(tmp_path)
    res = convert(path)
    assert res.exit_code == 0, res.output
    assert len(res.stdout.splitlines()) == 60


@pytest.mark.parametrize("make, expect", [
    (lambda d: _write(d / "cut.eval", STRONG.read_bytes()[:20000]), "cut.eval"),
    (lambda d: _write(d / "other.json", next((LMEVAL / "coinflip-strong").glob("results_*.json")).read_bytes()),
     "no samples_<task>_<date>.jsonl file"),
    (lambda d: _write(d / "x.txt", b"hello"), "cannot tell which tool wrote this"),
])
def test_malformed_inputs_exit_2_with_the_file_named(tmp_path: Path, make: object, expect: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    fmt = ["--format", "inspect"] if path.suffix == ".eval" else []
    res = convert(path, *fmt)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert expect in res.output and path.name in res.output


def test_failed_run_refused_and_allowed_as_partial() -> None:
    res = convert(FAILED)
    assert res.exit_code == 2 and FAILED.name in res.output and "status 'error'" in res.output
    res = convert(FAILED, "--allow-partial")
    assert res.exit_code == 0 and "PARTIAL RUN" in res.output


def test_wrong_tool_for_the_declared_format(tmp_path: Path) -> None:
    res = convert(WEAK_JSON, "--format", "promptfoo")
    assert res.exit_code == 2 and "is a inspect file, not a promptfoo output file" in res.output


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# -- fuzz: damaged logs give InputError, never another exception ---------------------------

_FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _mutate(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    buf = bytearray(data)
    for pos, val in edits:
        if buf:
            buf[pos % len(buf)] = val
    if cut is not None and buf:
        buf = buf[: cut % (len(buf) + 1)]
    return bytes(buf)


def _reads_or_input_error(path: Path, fmt: str, **kw: object) -> None:
    try:
        read_logs([path], fmt, Options(**kw))  # type: ignore[arg-type]
    except InputError as exc:  # names the file read (for lm-eval, the results or the samples file beside it)
        assert str(path.parent) in exc.render()


@_FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 255)), max_size=8),
       cut=st.none() | st.integers(0, 10**7))
def test_fuzz_inspect_eval(tmp_path: Path, edits: list[tuple[int, int]], cut: int | None) -> None:
    path = tmp_path / "fuzz.eval"
    path.write_bytes(_mutate(STRONG.read_bytes(), edits, cut))
    _reads_or_input_error(path, "inspect")


def _json_values() -> st.SearchStrategy[object]:
    return st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                     max_size=3), max_leaves=10)


@_FUZZ
@given(key=st.sampled_from(["eval", "samples", "status", "results", "version"]), value=_json_values(),
       sample_key=st.sampled_from(["id", "epoch", "scores", "metadata", "output", "error", "target", "model_usage"]),
       sample_value=_json_values())
def test_fuzz_inspect_json(tmp_path: Path, key: str, value: object, sample_key: str, sample_value: object) -> None:
    doc = json.loads(WEAK_JSON.read_text())
    doc["samples"] = doc["samples"][:2]
    doc["samples"][0][sample_key] = sample_value
    doc[key] = value
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _reads_or_input_error(path, "inspect")


@_FUZZ
@given(field=st.sampled_from(["doc_id", "doc", "filter", "metrics", "acc", "resps", "filtered_resps", "target"]),
       value=_json_values(), results_key=st.sampled_from(["results", "config", "versions", "date", "model_name"]),
       results_value=_json_values(), cut=st.none() | st.integers(0, 5000))
def test_fuzz_lm_eval(tmp_path: Path, field: str, value: object, results_key: str, results_value: object,
                      cut: int | None) -> None:
    src = LMEVAL / "coinflip-strong"
    res = json.loads(next(src.glob("results_*.json")).read_text())
    res[results_key] = results_value
    name = next(src.glob("results_*.json")).name
    (tmp_path / name).write_text(json.dumps(res), encoding="utf-8")
    sample = next(src.glob("samples_evalspec_mc_*.jsonl"))
    lines = sample.read_text().splitlines()
    first = json.loads(lines[0])
    first[field] = value
    text = "\n".join([json.dumps(first)] + lines[1:]) + "\n"
    if cut is not None:
        text = text[:cut]
    (tmp_path / sample.name).write_text(text, encoding="utf-8")
    _reads_or_input_error(tmp_path / name, "lm_eval", task="evalspec_mc")


@_FUZZ
@given(field=st.sampled_from(["testIdx", "provider", "success", "failureReason", "namedScores", "testCase", "vars",
                              "latencyMs", "tokenUsage", "prompt", "response"]), value=_json_values(),
       top=st.sampled_from(["config", "results", "metadata"]), top_value=_json_values())
def test_fuzz_promptfoo(tmp_path: Path, field: str, value: object, top: str, top_value: object) -> None:
    doc = promptfoo_doc(n_tests=3, repeat=2)
    doc["results"]["results"][1][field] = value
    if top != "results":
        doc[top] = top_value
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _reads_or_input_error(path, "promptfoo")
    _reads_or_input_error(path, "promptfoo", case_field="vars.qid")
    lines = tmp_path / "fuzz.jsonl"  # the one-result-a-line output
    lines.write_text("".join(json.dumps(r) + "\n" for r in doc["results"]["results"]), encoding="utf-8")
    _reads_or_input_error(lines, "promptfoo", case_field="vars.qid")


def test_run_refuses_malformed_logs_with_exit_2(tmp_path: Path) -> None:
    """`evalspec run` on a plan whose logs are broken: exit 2, the file named, no traceback."""
    from logs_helpers import write_plan

    (tmp_path / "strong.eval").write_bytes(STRONG.read_bytes()[:30000])
    (tmp_path / "weak.eval").write_bytes(STRONG.read_bytes())
    plan = write_plan(tmp_path, """  results: [strong.eval, weak.eval]
  format: inspect
  candidate_names: {coinflip/strong: strong}""")
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")],
                             env={"EVALSPEC_NO_REPORT": "1"})
    assert res.exit_code == 2, res.output
    assert "strong.eval" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out" / "claim.json").exists()
    (tmp_path / "strong.eval").write_bytes(FAILED.read_bytes())
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")],
                             env={"EVALSPEC_NO_REPORT": "1"})
    assert res.exit_code == 2 and "status 'error'" in res.output and "strong.eval" in res.output


def test_run_end_to_end_on_inspect_logs(tmp_path: Path) -> None:
    """`evalspec run` on a plan over two inspect_ai logs and one with errored samples: a claim."""
    from logs_helpers import stage, write_plan

    stage(tmp_path, STRONG, FLAKY)
    plan = write_plan(tmp_path, f"""  results: ["{STRONG.name}", "{FLAKY.name}"]
  format: inspect
  candidate_names: {{coinflip/strong: strong, coinflip/flaky: flaky}}
  columns: {{model_version: model_version, timestamp: timestamp}}""", candidates=("strong", "flaky"),
                      max_fraction=0.2)
    res = CliRunner().invoke(cli, ["run", str(plan), "--out", str(tmp_path / "out")],
                             env={"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"})
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    assert [f["format"] for f in claim["data"]["files"]] == ["inspect", "inspect"]
    cov = claim["coverage"]
    assert cov["cases"]["paired"] == 10 and cov["clusters"] == 4
    assert cov["missing"]["flaky"]["missing"] == 5 and cov["missing"]["flaky"]["attempts"] == 30
    assert cov["candidates"]["strong"]["versions_seen"] == {"strong": 30}
    assert cov["candidates"]["flaky"]["versions_seen"] == {"flaky": 25}  # the 5 errored epochs served nothing
    codes = [d["code"] for d in claim["systematic_limits"]["detected"]]
    assert "missing_outcomes" in codes
    prov = claim["data"]["files"][1]["provenance"]  # what was read, in the claim
    assert prov["tool"] == "inspect_ai" and prov["tool_version"] == "0.3.285" and prov["missing_outcomes"] == 5
    assert prov["reported"]["value"] == pytest.approx(0.55) and len(prov["files"][0]["sha256"]) == 64
