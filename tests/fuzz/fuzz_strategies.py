"""Hypothesis strategies for the fuzz suite: results rows, results files, plans and claims,
plus the checks every outcome must pass (exit code, no traceback, located message, one
output set)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
BASE_ROWS = [json.loads(line) for line in
             (ROOT / "tests" / "run" / "fixtures" / "ok" / "base.jsonl").read_text(encoding="utf-8").splitlines()]

#: Examples per fuzz test: modest in CI, longer campaigns through the environment.
EXAMPLES = int(os.environ.get("EVALSPEC_FUZZ_EXAMPLES", "20"))
#: A fixed seed unless ``EVALSPEC_FUZZ_RANDOM=1`` (new examples on every campaign).
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("EVALSPEC_FUZZ_RANDOM") != "1",
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

#: Values a hostile or careless log can hold.
hostile_values = st.one_of(
    st.sampled_from([None, True, False, 0, 1, -1, 2, 2**62, 2**63, -(2**63) - 1, 2**70, 1e20, 1e308, -1e308, 0.5,
                     1.0, 2.0, "", " ", "NaN", "nan", "inf", "-Infinity", "n/a", "NA", "null", "8,5", "²", "--1",
                     "1e999", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2026-10-01T12:00:00Z",
                     "2026-02-30", "yes", "High", "true", "PASS", "$x^2$", "<script>", "\u2028", "\x00", "a\nb",
                     "x" * 600, [], [1], {}, {"a": 1}, [[1]], "A", "B", "c1", "d1", "v1", "v2"]),
    st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
)

COLUMNS = ["candidate", "case_id", "doc", "repeat", "passed", "model_version", "ts", "extra"]


@st.composite
def results_rows(draw: Any) -> list[dict[str, Any]]:
    """The base rows with some values replaced, some keys removed or added, rows dropped or repeated."""
    rows = [dict(r) for r in BASE_ROWS]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(rows) - 1))
        op = draw(st.sampled_from(["set", "set", "set", "drop_key", "drop_row", "dup_row"]))
        key = draw(st.sampled_from(COLUMNS))
        if op == "set":
            rows[i][key] = draw(hostile_values)
        elif op == "drop_key":
            rows[i].pop(key, None)
        elif op == "drop_row" and len(rows) > 1:
            del rows[i]
        elif op == "dup_row":
            rows.insert(i, dict(rows[i]))
    return rows


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


@st.composite
def results_files(draw: Any) -> bytes:
    """JSONL bytes of fuzzed rows, with file-level damage now and then."""
    rows = draw(results_rows())
    end = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    lines = ["{" + ", ".join(f"{_dump(k)}: {_dump(v)}" for k, v in r.items()) + "}" for r in rows]
    data = end.join(lines).encode("utf-8") + end.encode()
    damage = draw(st.sampled_from(["none", "none", "none", "bom", "blank", "truncate", "byte", "garbage_line"]))
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "blank":
        cut = data.find(b"\n", len(data) // 2) + 1
        data = data[:cut] + b"\n" + data[cut:]
    elif damage == "truncate":
        data = data[: draw(st.integers(1, len(data)))]
    elif damage == "byte":
        pos = draw(st.integers(0, len(data) - 1))
        data = data[:pos] + bytes([draw(st.sampled_from([0xFF, 0xC3, 0x00, 0x22, 0x7B, 0x0D]))]) + data[pos + 1:]
    elif damage == "garbage_line":
        data += draw(st.sampled_from([b"[1, 2]\n", b"1\n", b'{"a": 1, "a": 2}\n', b"{\n", b"NaN\n"]))
    return data


def plan_variant(kind: str) -> str:
    from run_helpers import plan_text

    text = plan_text()
    if kind == "score":
        text = text.replace("  columns:", "  outcome: {type: score, pass_threshold: 0.5}\n  columns:")
    elif kind == "clustered":
        text = text.replace("  - {kind: paired_difference, method: newcombe}",
                            "  - {kind: paired_difference, method: newcombe}\n"
                            "  - {kind: clustered_mean, score: extra, correction: CR0}")
    elif kind == "slices":
        text += "slices: [{name: extra, column: extra}]\n"
    return text


plan_kinds = st.sampled_from(["binary", "score", "clustered", "slices"])

_LOCATED = re.compile(r"^(plan\.yaml|results\.(jsonl|csv|parquet)|out/claim\.json|claim\.json)(:\d+)*(: |$)")


def run_cli(folder: Path, args: list[str]) -> Any:
    from evalspec.cli import cli

    old = os.getcwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(cli, args, catch_exceptions=True)
    finally:
        os.chdir(old)


def check_outcome(result: Any) -> None:
    """Exit 0, 1 or 2; never 70, never a traceback; every problem names its file (and line or key)."""
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code in (0, 1, 2), (result.exit_code, text[-2000:])
    assert "Traceback" not in text and "internal error" not in text, text[-2000:]
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code:
        heads = [ln for ln in result.stderr.splitlines() if ln and not ln.startswith((" ", "\t"))
                 and not re.match(r"^\s*\d+ \|", ln)]
        assert heads, text
        for ln in heads:
            if ln.startswith(("plan.yaml: ", "the report could not be written")) or ln.endswith("not read as a plan"):
                continue
            assert _LOCATED.match(ln), ln
            assert re.match(r"^[^:]+:\d+", ln) or re.match(r"^[^:]+: [\w.\[\]: ]+: ", ln) or ln.startswith(
                ("results.jsonl: ", "results.csv: ", "results.parquet: ", "plan.yaml: ")), ln


OLD = {"claim.json": b'{"old": true}\n', "report.html": b"OLD REPORT", "report.pdf": b"%PDF OLD"}


def plant_old_set(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, data in OLD.items():
        (out / name).write_bytes(data)


def check_one_set(out: Path, exit_code: int) -> None:
    """The output folder holds one run's set: the old one untouched, or the new claim alone."""
    files = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".evalspec-staging-")]
    assert not leftovers, leftovers
    if exit_code == 0:
        assert set(files) == {"claim.json"}, set(files)
        assert files["claim.json"] != OLD["claim.json"]
    else:
        assert files == OLD, set(files)


@st.composite
def results_csv_files(draw: Any) -> bytes:
    """CSV bytes of fuzzed rows (lists and objects written as their JSON text), some damaged."""
    import csv
    import io

    rows = draw(results_rows())
    names = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(names)
    for r in rows:
        writer.writerow(["" if r.get(n) is None else _dump(r[n]) if isinstance(r.get(n), (list, dict))
                         else str(r[n]).lower() if isinstance(r.get(n), bool) else r[n] for n in names])
    data = buf.getvalue().encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none", "none", "bom", "short_row", "byte", "quote"]))
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "short_row":
        data += b"A,c1\n"
    elif damage == "byte":
        pos = draw(st.integers(0, len(data) - 1))
        data = data[:pos] + b"\xff" + data[pos + 1:]
    elif damage == "quote":
        data += b'"unterminated,1\n'
    return data
