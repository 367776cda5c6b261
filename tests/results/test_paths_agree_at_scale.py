"""One study, every way evalspec can read it, one claim: at a size where the fast paths engage.

The property tests beside this file (``test_stream_reduce.py``, ``test_case_table.py``) draw small
studies, with the streaming thresholds forced down. Many of the shortcuts the readers take only
engage at size: a text column read as a Parquet dictionary when its first 4,096 rows hold few
values, a batch of one model version, case ids sorted and repeated per candidate, several row
groups and files read ahead in threads. So each study here has some 2,000-3,000 cases and 10,000-
25,000 attempt rows, and what makes it awkward arrives late, after the first batches, where a
shortcut chosen from the first rows meets it: a slice value first seen near the end, a value only
the second candidate holds, a second model version, timestamps written another way, missing and
declared-missing outcomes, cases only one candidate ran, a repeat too many.

Each study is read six ways, and every claim part but the plan's data block (the same facts, other
file names) must be the same bytes:

* JSONL in memory and reduced while read (``EVALSPEC_STREAM_ROWS``);
* one Parquet file (row groups of 5,000) in memory and reduced while read;
* a Hive-partitioned lake (``candidate=A/part-0.parquet``, two files a candidate) reduced while read;
* the case table that ``evalspec reduce-sql`` computes on DuckDB (``data.format: case_table``).

Slow (about a minute): run by CI's second line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from tests.results.case_table_study import DIFFERING, claim_bytes  # noqa: E402
from tests.results.test_reduce_sql import _need  # noqa: E402

pytestmark = pytest.mark.slow

PLAN = """evalspec: 1
id: paths-at-scale
title: One study read every way
question: Is A better than B?
decision_owner: the study's owner
population: invented cases
data:
  results: {results}{extra}
  columns: {{candidate: candidate, repeat: repeat, outcome: passed, model_version: ver, timestamp: ts, critical: crit}}
candidates:
  A: {{model: m/a, version: {version_a}}}
  B: {{model: m/b, version: v1}}
baseline: B
units: {{case: case_id, cluster: doc}}
attempts: {{repeats: {repeats}, rule: {rule}}}
missing: {{policy: {policy}, max_fraction: 0.5}}
analyses:
  - {{kind: proportion}}
  - {{kind: paired_difference, compare: [A, B], resamples: 200, seed: 3}}
  - {{kind: critical_failures}}
  - {{kind: slices}}{variation}
slices: [{{name: language, column: lang}}, {{name: topic, column: topic}}]
decision: {{minimum_improvement: 0.02}}
record: [model_version, timestamp]
"""

#: (name, cases, repeats, rule, policy, quirks). Each quirk arrives late in the rows (see ``_rows``).
STUDIES = [
    ("late slice value, integer ids", 3000, 3, "mean", "exclude", {"late_lang", "int_ids", "few_topics"}),
    ("value only B holds, missing outcomes, unpaired cases", 2500, 3, "best_of_k, k: 2", "exclude",
     {"b_only_lang", "nulls", "unpaired"}),
    ("second version late, timestamps with offsets, scores", 2000, 4, "first", "count_as_fail",
     {"late_version", "late_ts_format", "score"}),
    ("declared missing values, constant critical flag, shuffled rows", 2500, 2, "pass_at_k, k: 2", "count_as_fail",
     {"error_value", "const_crit", "shuffle"}),
    ("one attempt too many, many topics", 2000, 5, "majority", "exclude", {"extra_repeat"}),
]


def _rows(n: int, repeats: int, quirks: set[str], seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    langs, topics = ("en", "de", "es"), [f"t{k}" for k in range(3 if "few_topics" in quirks else 40)]
    rows = []
    for cand, p in (("A", 0.7), ("B", 0.65)):
        for i in range(n):
            if "unpaired" in quirks and cand == "B" and i % 97 == 5:
                continue
            lang = langs[i % 3]
            if "late_lang" in quirks and i > n * 0.9 and i % 5 == 0:
                lang = "fr"  # first seen after the rows a dictionary read is chosen from
            if "b_only_lang" in quirks and cand == "B" and i % 50 == 1:
                lang = "pt"  # a value no case holds once the first value of each case is used
            for r in range(1, repeats + 1 + ("extra_repeat" in quirks and i == n - 3)):
                passed: Any = bool(rng.random() < p)
                if "score" in quirks:
                    passed = round(float(rng.random()), 3)
                if "nulls" in quirks and rng.random() < 0.01:
                    passed = None
                if "error_value" in quirks and rng.random() < 0.005:
                    passed = "ERROR"
                late = i > n * 0.8
                rows.append({
                    "candidate": cand, "case_id": i if "int_ids" in quirks else f"c{i:06d}", "doc": f"d{i // 4}",
                    "repeat": r, "passed": passed, "ver": "v2" if "late_version" in quirks and cand == "A" and late
                    else "v1", "ts": f"2026-10-{1 + i % 20:02d} 12:{r:02d}:00+02:00" if "late_ts_format" in quirks
                    and late else f"2026-10-{1 + i % 20:02d}T10:{r:02d}:00Z", "crit": False if "const_crit" in quirks
                    else i % 10 == 0, "lang": lang, "topic": topics[(i * 13) % len(topics)]})
    if "shuffle" in quirks:
        rows = [rows[k] for k in rng.permutation(len(rows))]
    return rows


def _write(folder: Path, rows: list[dict[str, Any]], repeats: int, rule: str, policy: str,
           quirks: set[str]) -> dict[str, Path]:
    table = pa.Table.from_pylist(rows) if "error_value" not in quirks else pa.Table.from_pylist(
        [dict(r, passed=str(r["passed"]).lower() if isinstance(r["passed"], bool) else r["passed"]) for r in rows])
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pq.write_table(table, folder / "results.parquet", row_group_size=5000)
    for cand in ("A", "B"):
        part = table.filter(pc.equal(table["candidate"], cand)).drop_columns(["candidate"])
        (folder / "lake" / f"candidate={cand}").mkdir(parents=True)
        half = part.num_rows // 2
        pq.write_table(part.slice(0, half), folder / "lake" / f"candidate={cand}" / "part-0.parquet", row_group_size=3000)
        pq.write_table(part.slice(half), folder / "lake" / f"candidate={cand}" / "part-1.parquet", row_group_size=3000)
    extra = ("\n  missing_values: [ERROR]" if "error_value" in quirks else "") + (
        "\n  outcome: {type: score, pass_threshold: 0.5}" if "score" in quirks else "")
    plans = {}
    for name, results, fmt in [("jsonl", "results.jsonl", ""), ("parquet", "results.parquet", ""),
                               ("lake", "lake/", ""), ("cases", "cases.parquet", "\n  format: case_table")]:
        plans[name] = folder / f"plan_{name}.yaml"
        plans[name].write_text(PLAN.format(
            results=results, extra=fmt + extra, repeats=repeats, rule=rule, policy=policy,
            version_a="[v1, v2]" if "late_version" in quirks else "v1",
            variation="\n  - {kind: run_variation}" if repeats > 1 else ""), encoding="utf-8")
    return plans


def _case_table(folder: Path, plan: Path) -> None:
    """``cases.parquet``: the statement ``evalspec reduce-sql`` prints for the plan, run on DuckDB."""
    from evalspec.results.reduce_sql import reduce_sql
    from evalspec.run import load_plan_for_run

    duckdb = _need("duckdb")
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    sql = reduce_sql(load_plan_for_run(plan).plan, source=f"read_parquet('{folder / 'results.parquet'}')",
                     dialect="duckdb")
    pq.write_table(con.sql(sql).to_arrow_table(), folder / "cases.parquet")


@pytest.mark.parametrize(("name", "n", "repeats", "rule", "policy", "quirks"), STUDIES, ids=[s[0] for s in STUDIES])
def test_every_path_gives_the_same_claim_at_scale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, n: int,
                                                  repeats: int, rule: str, policy: str, quirks: set[str]) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    plans = _write(tmp_path, _rows(n, repeats, quirks, seed=len(name)), repeats, rule, policy, quirks)
    _case_table(tmp_path, plans["parquet"])
    from evalspec.results import stream_reduce

    streams, real = [], stream_reduce.stream_results
    monkeypatch.setattr(stream_reduce, "stream_results", lambda *a, **k: streams.append(real(*a, **k)) or streams[-1])
    claims = {}
    for label, plan, streamed in [("jsonl", "jsonl", False), ("jsonl streamed", "jsonl", True),
                                  ("parquet", "parquet", False), ("parquet streamed", "parquet", True),
                                  ("lake streamed", "lake", True), ("case table", "cases", False)]:
        monkeypatch.setenv("EVALSPEC_STREAM_ROWS", "0" if streamed else str(10**15))
        before = len(streams)
        claims[label] = claim_bytes(plans[plan])
        assert streamed == any(s is not None for s in streams[before:]), f"{label}: not read the way it is named"
    want = claims.pop("jsonl")
    assert len(json.loads(want["analyses"])) >= 4 and json.loads(want["decision"])["label"], want["decision"][:300]
    for label, got in claims.items():
        assert set(got) == set(want), label
        differ = sorted(k for k in want if got[k] != want[k] and k not in DIFFERING)
        assert not differ, (label, {k: (want[k][:400], got[k][:400]) for k in differ})
