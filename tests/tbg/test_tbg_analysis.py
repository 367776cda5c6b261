"""The ``background_temperature`` plan analysis: compute, the pipeline, the report section, lazy imports.

No torch needed: the reference runs are written from the numpy stand-in model in the format
of ``evalspec tbg sample``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from tbg_synthetic import SyntheticModel, write_reference_folder

from evalspec.analyses.background_temperature import KIND, BackgroundTemperatureParams, compute
from evalspec.analyses.contract import AnalysisRefused
from evalspec.testing import context_from_arrays
from evalspec.cli import cli

GRID = [0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tbg")
    model = SyntheticModel(prompts=30, seed=0)
    ref = write_reference_folder(root / "ref", model.table(GRID, 16, seed=1), name="synthetic-ref")
    other = SyntheticModel(prompts=30, seed=4, scale=4.0)
    ref2 = write_reference_folder(root / "ref2", other.table(GRID, 16, seed=2), name="synthetic-ref-2")
    sut = model.answers(0.08, 24, seed=9)
    target = root / "sut.jsonl"
    target.write_text("".join(json.dumps({"prompt": p, "repeat": i, "tokens": list(a)}) + "\n"
                              for p, answers in sut.items() for i, a in enumerate(answers)))
    return root, ref, ref2, target


def _ctx(gap_noise: float = 0.0, seed: int = 0):
    """Two candidates, 40 cases, 5 repeats; B = A plus noise per repeat (a small true gap)."""
    rng = np.random.default_rng(seed)
    cand, case, rep, passed = [], [], [], []
    base = rng.random(40)
    for r in range(1, 6):
        shift = rng.normal(0, gap_noise)
        for c in range(40):
            for j, extra in enumerate((0.0, 0.02 + shift)):
                cand.append(j)
                case.append(c)
                rep.append(r)
                passed.append(float(rng.random() < np.clip(base[c] + extra, 0, 1)))
    return context_from_arrays(["A", "B"], [f"c{i}" for i in range(40)], cand, case, passed, repeat=rep,
                                       rule="mean", baseline="A", primary=("B", "A"))


def test_compute_estimates_and_sets_the_gap_against_the_run_spread(folders):
    root, ref, ref2, target = folders
    params = BackgroundTemperatureParams(kind="background_temperature", target=str(target),
                                         references=[str(ref), str(ref2)], resamples=300, seed=3)
    out = compute(_ctx(gap_noise=0.05), params)
    res = out.result
    assert [r.name for r in res.references] == ["synthetic-ref", "synthetic-ref-2"]
    assert 0.06 <= res.references[0].t_hat <= 0.1  # hidden 0.08 against the same model
    assert res.t_bg == pytest.approx(np.mean([r.t_hat for r in res.references]))
    assert res.low <= res.t_bg <= res.high
    assert res.k == 16 and res.prompts == 30 and res.units == "tokens"
    assert len(res.heatmaps) == 1 and len(res.heatmaps[0].ks) == len(GRID)
    assert [s.seed for s in out.seeds] == [3]
    assert {i.role for i in res.inputs} == {"target", "reference"} and all(len(i.sha256) == 64 for i in res.inputs)
    gap = res.gap
    assert gap is not None and gap.candidate == "B" and gap.baseline == "A" and gap.repeats == 5
    assert gap.spread_low <= gap.gap <= gap.spread_high  # the mean of the per-repeat gaps (balanced repeats)
    assert gap.within_spread == (abs(gap.gap) <= gap.spread_high - gap.spread_low)
    assert gap.within_spread  # true gap 0.02, per-repeat shifts of sd 0.05: a gap the repeats alone move
    assert any(c.code == "gap_within_run_spread" and c.severity == "verdict" for c in out.caveats)
    assert "not evidence of a better model" in gap.sentence
    assert "background temperature" in gap.sentence
    # the result validates against its own model (what the claim schema is generated from)
    assert KIND.result.model_validate(res.model_dump(mode="json")) == res


def test_gap_outside_the_spread_is_said_so(folders):
    root, ref, _, target = folders
    rng = np.random.default_rng(1)
    cand, case, rep, passed = [], [], [], []
    for r in range(1, 4):
        for c in range(40):
            cand += [0, 1]
            case += [c, c]
            rep += [r, r]
            passed += [float(rng.random() < 0.3), float(rng.random() < 0.9)]
    ctx = context_from_arrays(["A", "B"], [f"c{i}" for i in range(40)], cand, case, passed, repeat=rep,
                                      rule="mean", baseline="A", primary=("B", "A"))
    params = BackgroundTemperatureParams(kind="background_temperature", target=str(target), references=[str(ref)],
                                         resamples=200)
    out = compute(ctx, params)
    assert out.result.gap is not None and not out.result.gap.within_spread
    assert "larger than the run-to-run spread" in out.result.gap.sentence
    assert not any(c.code == "gap_within_run_spread" for c in out.caveats)


def test_no_gap_without_repeats_or_pair(folders):
    root, ref, _, target = folders
    ctx = context_from_arrays(["A"], ["c0", "c1"], [0, 0], [0, 1], [1.0, 0.0])
    params = BackgroundTemperatureParams(kind="background_temperature", target=str(target), references=[str(ref)],
                                         resamples=200)
    assert compute(ctx, params).result.gap is None


def test_refusals_name_the_problem(folders, tmp_path):
    root, ref, _, target = folders
    ctx = _ctx()
    with pytest.raises(AnalysisRefused, match="not a reference run"):
        compute(ctx, BackgroundTemperatureParams(kind="background_temperature", target=str(target),
                                                 references=[str(tmp_path)]))
    with pytest.raises(AnalysisRefused, match="0.5 not in the grid"):
        compute(ctx, BackgroundTemperatureParams(kind="background_temperature", target=str(target),
                                                 references=[str(ref)], grid=[0.0, 0.5]))
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"id": "other", "text": "x"}\n')
    with pytest.raises(AnalysisRefused, match="sampled from other prompts"):
        compute(ctx, BackgroundTemperatureParams(kind="background_temperature", target=str(target),
                                                 references=[str(ref)], prompts=str(prompts)))


def _plan(tmp: Path, ref: Path, target: Path) -> Path:
    rng = np.random.default_rng(5)
    rows = []
    for r in range(1, 6):
        for c in range(30):
            p = 0.3 + 0.4 * (c % 3) / 2
            for cand, extra in (("A", 0.0), ("B", 0.01)):
                rows.append({"candidate": cand, "case_id": f"q{c:02d}", "repeat": r,
                             "passed": int(rng.random() < p + extra)})
    (tmp / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    plan = tmp / "plan.yaml"
    plan.write_text(textwrap.dedent(f"""\
        evalspec: 1
        id: tbg-demo
        title: Config B vs A, with the serving stack's background temperature
        question: Is B better than A, and is the gap more than background randomness?
        decision_owner: evaluation lead
        population: thirty synthetic questions
        data:
          results: results.jsonl
          format: jsonl
          columns: {{candidate: candidate, repeat: repeat, outcome: passed}}
        candidates:
          A: {{model: m, version: "1", settings: {{temperature: 0}}}}
          B: {{model: m, version: "2", settings: {{temperature: 0}}}}
        baseline: A
        units: {{case: case_id}}
        attempts: {{repeats: 5, rule: mean}}
        missing: {{policy: count_as_fail, max_fraction: 0.05}}
        analyses:
          - kind: paired_difference
            compare: [B, A]
          - kind: background_temperature
            target: {target}
            references: [{ref}]
            resamples: 200
            seed: 11
        decision:
          goal: superiority
          minimum_improvement: 0.03
          confidence_level: 0.95
          minimum_units: 10
        stopping: {{rule: fixed, max_units: 30, decision_date: 2026-12-31, looks: 1}}
        """))
    return plan


def test_pipeline_claim_and_report_section(folders, tmp_path, monkeypatch):
    monkeypatch.delenv("EVALSPEC_NO_REPORT", raising=False)  # tests/run switches reports off for its session
    root, ref, _, target = folders
    plan = _plan(tmp_path, ref, target)
    r = CliRunner().invoke(cli, ["validate", str(plan)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["run", str(plan), "--format", "html"])
    assert r.exit_code == 0, r.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text())
    (rec,) = [a for a in claim["analyses"] if a["kind"] == "background_temperature"]
    assert rec["result"]["references"][0]["name"] == "synthetic-ref"
    assert rec["seeds"] == [{"purpose": "background temperature: K-matching subsamples and prompt bootstrap", "seed": 11}]
    html = next((tmp_path / "out").glob("*.html")).read_text()
    assert "Background temperature" in html
    assert rec["result"]["summary"].split(" (")[0] in html
    assert html.count('aria-label="KS distance between the system under test') == 1
    assert "Per-prompt values of the system against synthetic-ref" in html
    if rec["result"]["gap"] is not None:
        assert "run-to-run spread" in html


def test_bad_key_is_a_located_plan_error(folders, tmp_path):
    root, ref, _, target = folders
    plan = _plan(tmp_path, ref, target)
    plan.write_text(plan.read_text().replace("resamples: 200", "resampels: 200"))
    r = CliRunner().invoke(cli, ["validate", str(plan)])
    assert r.exit_code == 1 and "resampels" in r.output and "plan.yaml:" in r.output


def test_validate_and_estimate_paths_do_not_import_torch(folders, tmp_path):
    root, ref, _, target = folders
    plan = _plan(tmp_path, ref, target)
    code = textwrap.dedent(f"""
        import sys
        from click.testing import CliRunner
        from evalspec.cli import cli
        r = CliRunner().invoke(cli, ["validate", {str(plan)!r}])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(cli, ["tbg", "estimate", "--reference", {str(ref)!r}, "--target", {str(target)!r},
                                     "--resamples", "100", "--json"])
        assert r.exit_code == 0, r.output
        import evalspec.analyses.background_temperature, evalspec.tbg.estimate, evalspec.commands.tbg
        heavy = sorted(m for m in ("torch", "transformers", "matplotlib") if m in sys.modules)
        print(heavy)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_sample_without_torch_is_an_install_hint_not_a_crash(tmp_path):
    """With torch and transformers hidden from the interpreter, `tbg sample` exits 2 with the install line."""
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a", "text": "x"}\n')
    code = textwrap.dedent(f"""
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "transformers"):
                    raise ModuleNotFoundError(name, name=name)
        sys.meta_path.insert(0, _Block())
        from evalspec.cli import main
        main(["tbg", "sample", "--model", "tiny", "--prompts", {str(prompts)!r}, "--out", {str(tmp_path / "o")!r}])
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "pip install torch==2.13.0" in out.stderr


def test_relative_paths_resolve_against_the_plan_folder_not_the_working_directory(folders, tmp_path, monkeypatch):
    """`evalspec run study/plan.yaml` from elsewhere finds `references: [ref]` beside the plan."""
    import shutil

    root, ref, _, target = folders
    study = tmp_path / "study"
    study.mkdir()
    for src, name in ((ref, "ref"), (target, "target")):
        dest = study / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest)
    plan = _plan(study, "ref", "target")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = CliRunner().invoke(cli, ["run", str(plan), "--no-report"])
    assert r.exit_code == 0, r.output
    claim = json.loads((study / "out" / "claim.json").read_text())
    (rec,) = [a for a in claim["analyses"] if a["kind"] == "background_temperature"]
    assert rec["result"]["references"][0]["name"] == "synthetic-ref"
