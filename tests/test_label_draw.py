"""The labelled-subset draw (evalspec.label_draw), `evalspec draw-labels`, and the run's check of the labels against it."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from evalspec.cli import cli
from evalspec.label_draw import draw_labelled, parse_draw

ROOT = Path(__file__).resolve().parents[1]


def test_the_draw_is_numpys_choice_over_the_sorted_units() -> None:
    cases = [f"c{i:03d}" for i in range(200)]
    d = draw_labelled(cases, [None] * 200, None, fraction=0.15, seed=9)
    expected = sorted(cases[i] for i in np.random.default_rng(9).choice(200, 30, replace=False))
    assert d.cases == expected and d.population == 200
    shuffled = list(np.random.default_rng(1).permutation(cases))
    assert draw_labelled(shuffled, [None] * 200, None, fraction=0.15, seed=9).text() == d.text()  # order-free
    assert draw_labelled(cases, [None] * 200, None, fraction=0.15, seed=10).cases != d.cases


def test_whole_clusters_and_strata() -> None:
    cases = [f"c{i:03d}" for i in range(120)]
    clusters = [f"g{i // 4:02d}" for i in range(120)]
    strata = ["easy" if i < 40 else "hard" for i in range(120)]
    d = draw_labelled(cases, clusters, strata, fraction=0.25, seed=3, unit="cluster", selection="stratified")
    drawn = set(d.clusters)
    assert all(c in d.cases for c, g in zip(cases, clusters, strict=True) if g in drawn)  # every case of a cluster
    easy = {g for g in drawn if int(g[1:]) < 10}
    assert len(easy) == 3 and len(drawn - easy) == 5  # 10 easy, 20 hard clusters: 2.5 rounds half up, 5
    with pytest.raises(ValueError, match="two strata"):
        draw_labelled(cases, clusters, ["a" if i % 2 else "b" for i in range(120)], fraction=0.2, seed=1,
                      unit="cluster", selection="stratified")


def test_the_file_reads_back() -> None:
    d = draw_labelled(["a", "b", "c", "d"], ["x", "x", "y", "y"], None, fraction=0.5, seed=2, unit="cluster")
    back, problem = parse_draw(d.text())
    assert problem is None and back == d


@settings(max_examples=150)
@given(st.text(max_size=300))
def test_any_draw_file_reads_or_names_its_bad_line(text: str) -> None:
    draw, problem = parse_draw(text)
    assert (draw is None) != (problem is None)
    if problem is not None:
        assert problem.startswith("line ") or problem == "the draw lists no case"


PLAN = """\
evalspec: 1
id: jd
title: Judge plan
question: Should we move from B to A?
decision_owner: test owner
population: invented cases
data: {results: results.jsonl, columns: {candidate: candidate, repeat: null, outcome: judge}}
candidates: {A: {model: a}, B: {model: b}}
baseline: B
units: {case: case_id, cluster: doc}
analyses:
  - kind: judge_corrected
    human_label: human
    labelled_subset: {selection: simple_random, fraction: 0.25, seed: 4%s}
    primary: true
decision: {minimum_units: 1}
systematic_limits: [Invented.]
"""


def test_draw_labels_writes_the_draw_and_the_entry(tmp_path: Path) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN % "", encoding="utf-8")
    (tmp_path / "cases.csv").write_text("case_id,doc\n" + "".join(f"c{i},d{i // 2}\n" for i in range(40)))
    run = CliRunner().invoke(cli, ["draw-labels", str(tmp_path / "plan.yaml"), "--cases", str(tmp_path / "cases.csv")])
    assert run.exit_code == 0, run.output
    text = (tmp_path / "labelled.txt").read_text()
    digest = hashlib.sha256(text.encode()).hexdigest()
    entry = run.output.strip().splitlines()[-1]
    assert entry.startswith("labelled_subset: {") and digest in entry and "file: labelled.txt" in entry
    assert parse_draw(text)[0].cases == draw_labelled([f"c{i}" for i in range(40)], [f"d{i // 2}" for i in range(40)],
                                                      None, fraction=0.25, seed=4).cases
    # the entry it prints validates
    (tmp_path / "plan.yaml").write_text(PLAN % f", unit: case, file: labelled.txt, sha256: {digest}")
    assert CliRunner().invoke(cli, ["validate", str(tmp_path / "plan.yaml")]).exit_code == 0
    # a draw is made once
    (tmp_path / "labelled.txt").write_text(text + "c99\n")
    again = CliRunner().invoke(cli, ["draw-labels", str(tmp_path / "plan.yaml"), "--cases", str(tmp_path / "cases.csv")])
    assert again.exit_code == 2 and "already exists" in again.output


def test_draw_labels_refuses_bad_input_in_words(tmp_path: Path) -> None:
    (tmp_path / "plan.yaml").write_text(PLAN % "", encoding="utf-8")
    (tmp_path / "cases.csv").write_text("case,doc\nc1,d1\n")
    bad = CliRunner().invoke(cli, ["draw-labels", str(tmp_path / "plan.yaml"), "--cases", str(tmp_path / "cases.csv")])
    assert bad.exit_code == 2 and "expected a header line naming case_id, doc" in bad.output
    (tmp_path / "cases.csv").write_text("case_id,doc\nc1,d1\nc1,d2\n")
    twice = CliRunner().invoke(cli, ["draw-labels", str(tmp_path / "plan.yaml"), "--cases", str(tmp_path / "cases.csv")])
    assert twice.exit_code == 2 and "line 3 lists case 'c1' twice" in twice.output
    (tmp_path / "plan.yaml").write_text((PLAN % "").replace("fraction: 0.25, ", ""))
    no_fraction = CliRunner().invoke(cli, ["draw-labels", str(tmp_path / "plan.yaml"), "--cases",
                                           str(tmp_path / "cases.csv")])
    assert no_fraction.exit_code == 2 and "the share of cases to draw is not set" in no_fraction.output
    half = (PLAN % ", file: labelled.txt")
    (tmp_path / "plan.yaml").write_text(half)
    assert "`file` and `sha256` go together" in CliRunner().invoke(cli, ["validate", str(tmp_path / "plan.yaml")]).output
    assert not (tmp_path / "labelled.txt").exists()


def test_the_run_checks_the_labels_against_the_draw(tmp_path: Path) -> None:
    from tests.analyses.test_judge_corrected_kind import params, study

    from evalspec.analyses.judge_corrected import compute

    ctx, (ya, yb, fa, fb, lab) = study(n=200, clusters=50)
    out = compute(ctx, params(primary=True))
    assert "labelled_draw_not_recorded" in {c.code for c in out.caveats if c.severity == "verdict"}
    ids = [str(c) for c in ctx.case_ids.tolist()]
    drawn = [c for c, lab_i in zip(ids, lab.tolist(), strict=True) if lab_i]
    swapped = sorted(drawn[1:] + [next(c for c, lab_i in zip(ids, lab.tolist(), strict=True) if not lab_i)])
    for cases, differs in ((sorted(drawn), False), (swapped, True)):
        text = "# evalspec labelled subset, seed 1\n" + "".join(f"{c}\n" for c in cases)
        (tmp_path / "labelled.txt").write_text(text)
        subset = {"selection": "simple_random", "file": "labelled.txt",
                  "sha256": hashlib.sha256(text.encode()).hexdigest()}
        got = compute(dataclasses.replace(ctx, plan_dir=tmp_path), params(primary=True, labelled_subset=subset))
        codes = {c.code for c in got.caveats}
        assert "labelled_draw_not_recorded" not in codes
        assert ("labels_differ_from_draw" in codes) is differs
        s = got.result.subset
        assert (s.labelled_not_drawn, s.drawn_not_labelled) == ((1, 1) if differs else (0, 0))
    from evalspec.analyses.contract import AnalysisRefused

    subset["sha256"] = "0" * 64
    with pytest.raises(AnalysisRefused, match="changed after it was preregistered"):
        compute(dataclasses.replace(ctx, plan_dir=tmp_path), params(primary=True, labelled_subset=subset))


def test_the_audit_reproduces_a_claim_whose_plan_records_a_draw(tmp_path: Path) -> None:
    example = ROOT / "examples" / "judge-leaderboard"
    for name in ("plan.yaml", "results.jsonl", "labelled.txt"):
        (tmp_path / name).write_bytes((example / name).read_bytes())
    env = {"SOURCE_DATE_EPOCH": "1796126400", "EVALSPEC_NO_REPORT": "1"}
    assert CliRunner().invoke(cli, ["lock", str(tmp_path / "plan.yaml")], env=env).exit_code == 0
    assert CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml")], env=env).exit_code == 0
    audit = CliRunner().invoke(cli, ["audit", str(tmp_path / "out" / "claim.json")], env=env)
    line = next(x for x in audit.output.splitlines() if "Numbers reproduce" in x)
    assert line.strip().startswith("PASS"), audit.output


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(list("ab,\n\"#\r\x00 é") + ["case_id,doc\n", "case_id", "doc", "c1", "d1"]),
                max_size=40).map("".join))
def test_any_case_list_draws_or_is_refused_in_words(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "plan.yaml").write_text(PLAN % "", encoding="utf-8")
    (folder / "cases.csv").write_text(text, encoding="utf-8")
    run = CliRunner().invoke(cli, ["draw-labels", str(folder / "plan.yaml"), "--cases", str(folder / "cases.csv")])
    assert run.exit_code in (0, 2), run.output
    assert "Traceback" not in run.output
    assert sorted(p.name for p in folder.iterdir()) in (["cases.csv", "plan.yaml"],
                                                         ["cases.csv", "labelled.txt", "plan.yaml"])


def test_the_draw_file_must_sit_beside_the_plan(tmp_path: Path) -> None:
    for bad in ("../x.txt", "/etc/passwd", "C:x.txt"):
        (tmp_path / "plan.yaml").write_text(PLAN % f", file: '{bad}', sha256: {'0' * 64}", encoding="utf-8")
        out = CliRunner().invoke(cli, ["validate", str(tmp_path / "plan.yaml")]).output
        assert "inside the plan's folder" in out, out
