"""The ``beta_binomial`` analysis kind: trials from the repeats, conditions, result, caveats, --save-posterior."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from evalspec.analyses.beta_binomial import (
    KIND,
    BetaBinomialParams,
    BetaBinomialResult,
    collect_posteriors,
    compute,
    posterior_writer_missing,
    save_posteriors,
)
from evalspec.analyses.contract import AnalysisRefused
from evalspec.testing import context_from_arrays
from evalspec.stats.beta_binomial import beta_binomial_profile


def _trials(conds, n_q=25, trials=12, seed=0, *, column=False):
    """Attempt rows for conditions {name: (mu, kappa)}: candidates or, with ``column``, one candidate."""
    rng = np.random.default_rng(seed)
    cand, case, rep, passed, variant, ids = [], [], [], [], [], []
    counts = {}
    for c, (name, (mu, kappa)) in enumerate(conds.items()):
        theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=n_q)
        ys = []
        for i in range(n_q):
            outs = rng.random(trials) < theta[i]
            ys.append(int(outs.sum()))
            code = i if not column else c * n_q + i
            for r in range(trials):
                cand.append(0 if column else c)
                case.append(code)
                rep.append(r + 1)
                passed.append(float(outs[r]))
        counts[name] = np.array(ys)
    if column:
        ids = [f"{name}-q{i}" for name in conds for i in range(n_q)]
        variant = [name for name in conds for _ in range(n_q)]
        return ids, cand, case, rep, passed, variant, counts
    return [f"q{i}" for i in range(n_q)], cand, case, rep, passed, None, counts


def _ctx(conds, **kw):
    column = kw.pop("column", False)
    ids, cand, case, rep, passed, variant, counts = _trials(conds, column=column, **kw)
    names = ["M"] if column else list(conds)
    cols = {"variant": variant} if column else None
    ctx = context_from_arrays(names, ids, cand, case, passed, repeat=rep, rule="mean",
                                      baseline=None if column else names[0], case_columns=cols,
                                      missing_policy="exclude")
    return ctx, counts


def test_compute_matches_the_engine_on_the_same_counts():
    ctx, counts = _ctx({"exact": (0.8, 2.0), "rephrased": (0.6, 4.0)})
    out = compute(ctx, BetaBinomialParams(kind="beta_binomial", seed=3))
    res = out.result
    assert isinstance(res, BetaBinomialResult)
    ref = beta_binomial_profile({k: (v, np.full(v.size, 12)) for k, v in counts.items()},
                                contrasts=[("rephrased", "exact")], seed=3)
    for name in ("exact", "rephrased"):
        c = res.conditions[name]
        assert (c.questions, c.trials, c.successes) == (25, 300, int(counts[name].sum()))
        for p in ("mu", "kappa", "gamma_bar", "variance"):
            assert getattr(c, p).mean == getattr(ref.conditions[name], p).mean
            assert getattr(c, p).low == getattr(ref.conditions[name], p).low
        # every density integrates to about one (trapezoid over its points)
        for p, d in c.densities.items():
            area = np.trapezoid(d.density, d.x)
            assert 0.9 < area < 1.05, (p, area)
        assert len(c.theta) == 25 and [t.mean for t in c.theta] == sorted(t.mean for t in c.theta)
    con = res.contrasts[0]
    assert (con.first, con.second) == ("rephrased", "exact")  # default: every other condition minus the first
    assert con.differences["mu"].mean == pytest.approx(
        res.conditions["rephrased"].mu.mean - res.conditions["exact"].mu.mean)
    assert out.seeds and out.seeds[0].seed == 3
    # the claim record is JSON with finite numbers only, and modest in size
    text = json.dumps(res.model_dump())
    assert "NaN" not in text and "Infinity" not in text and len(text) < 60_000
    assert out.offers.primary is None  # a description: it offers nothing to the decision


def test_condition_column_for_one_candidate():
    ctx, counts = _ctx({"exact": (0.85, 1.0), "rephrased": (0.7, 3.0)}, column=True)
    params = BetaBinomialParams(kind="beta_binomial", condition="variant", contrasts=[("exact", "rephrased")])
    assert KIND.columns(params, None)[0].column == "variant"
    res = compute(ctx, params).result
    assert set(res.conditions) == {"exact", "rephrased"}
    assert res.conditions["exact"].successes == int(counts["exact"].sum())
    assert res.contrasts[0].first == "exact"


def test_missing_attempts_and_theta_cap():
    ctx, _ = _ctx({"a": (0.7, 3.0), "b": (0.5, 3.0)}, n_q=30)
    passed = ctx.repeats.passed.copy()
    passed[[0, 5]] = np.nan
    ids, cand, case, rep, _, _, _ = _trials({"a": (0.7, 3.0), "b": (0.5, 3.0)}, n_q=30)
    ctx = context_from_arrays(["a", "b"], ids, cand, case, passed, repeat=rep, rule="mean", baseline="a",
                                      missing_policy="exclude")
    out = compute(ctx, BetaBinomialParams(kind="beta_binomial", theta_cap=10))
    a = out.result.conditions["a"]
    assert a.trials == 30 * 12 - 2
    assert len(a.theta) == 10 and a.theta_omitted == 20
    codes = {c.code for c in out.caveats}
    assert {"bayes_missing", "bayes_theta_cap"} <= codes
    # the kept questions are the hardest and the easiest
    means = sorted(t.mean for t in out.result.conditions["b"].theta)
    assert means[0] <= min(t.mean for t in out.result.conditions["b"].theta)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"conditions": ["a", "zzz"]}, "condition 'zzz' has no data"),
        ({"contrasts": [("a", "nope")]}, "'nope' is not profiled"),
        ({"condition": "variant"}, "condition column 'variant' is not in the results"),
    ],
)
def test_refusals_name_the_problem(params, message):
    ctx, _ = _ctx({"a": (0.7, 3.0), "b": (0.5, 3.0)}, n_q=8)
    with pytest.raises(AnalysisRefused, match=message):
        compute(ctx, BetaBinomialParams(kind="beta_binomial", **params))


def test_scores_are_refused():
    ids, cand, case, rep, passed, _, _ = _trials({"a": (0.7, 3.0)}, n_q=5)
    passed = [0.5 * p for p in passed]
    ctx = context_from_arrays(["a"], ids, cand, case, passed, repeat=rep, rule="mean")
    with pytest.raises(AnalysisRefused, match="pass/fail"):
        compute(ctx, BetaBinomialParams(kind="beta_binomial"))


def test_params_forbid_unknown_keys_and_bound_the_paper_settings():
    with pytest.raises(ValueError):
        BetaBinomialParams(kind="beta_binomial", engines="grid")
    p = BetaBinomialParams(kind="beta_binomial", engine="nuts", tune=50_000, nuts_draws=200_000)
    assert p.tune == 50_000
    with pytest.raises(ValueError):
        BetaBinomialParams(kind="beta_binomial", nuts_draws=10**7)


def test_diagnostics_and_misfit_become_caveats():
    # every question exactly half right: far less spread than the Beta-Binomial predicts
    ids = [f"q{i}" for i in range(40)]
    cand, case, rep, passed = [], [], [], []
    for i in range(40):
        for r in range(20):
            cand.append(0)
            case.append(i)
            rep.append(r + 1)
            passed.append(float(r % 2))
    ctx = context_from_arrays(["M"], ids, cand, case, passed, repeat=rep, rule="mean")
    out = compute(ctx, BetaBinomialParams(kind="beta_binomial"))
    assert "bayes_ppc_misfit" in {c.code for c in out.caveats}
    assert all(c.severity == "note" for c in out.caveats)


def test_save_posterior_collects_and_writes(tmp_path):
    pytest.importorskip("arviz")
    if posterior_writer_missing():
        pytest.skip(posterior_writer_missing())
    ctx, _ = _ctx({"exact": (0.8, 2.0), "rephrased": (0.6, 4.0)}, n_q=10)
    with collect_posteriors() as sink:
        compute(ctx, BetaBinomialParams(kind="beta_binomial", label="profile one", draws=2000))
    assert len(sink) == 1
    paths = save_posteriors(sink, tmp_path)
    assert [p.name for p in paths] == ["posterior-profile-one.nc"]
    import arviz as az

    idata = az.from_netcdf(str(paths[0]))
    assert idata.posterior["mu"].shape == (1, 2000, 2)
    assert list(idata.posterior.coords["condition"].values) == ["exact", "rephrased"]
    # outside the block nothing is collected
    out = compute(ctx, BetaBinomialParams(kind="beta_binomial", draws=2000))
    assert out.result.engine == "grid" and len(sink) == 1


def test_posterior_writer_missing_says_what_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "arviz" else real(name, *a))
    assert "pip install 'evalspec[mcmc]'" in posterior_writer_missing()


def test_report_section_renders_the_numbers():
    jinja2 = pytest.importorskip("jinja2")
    from evalspec._resources import templates_dir
    from evalspec.report import fmt
    from evalspec.report.sections import beta_binomial as plots_bayes

    ctx, _ = _ctx({"exact": (0.8, 2.0), "rephrased": (0.6, 4.0)}, n_q=12)
    res = compute(ctx, BetaBinomialParams(kind="beta_binomial", draws=2000)).result
    a = {"index": 3, "kind": "beta_binomial", "label": "beta_binomial", "params": {}, "caveats": [],
         "result": json.loads(json.dumps(res.model_dump()))}
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=True,
                             undefined=jinja2.ChainableUndefined)
    env.filters.update(fmt.FILTERS)
    plots = plots_bayes.section_plots(a)
    assert set(plots) == {"bb-3-densities", "bb-3-theta", "bb-3-ppc", "bb-3-differences-0"}
    assert all(s.startswith("<svg") for s in plots.values())
    from markupsafe import Markup

    marked = {k: Markup(v) for k, v in plots.items()}
    html = env.get_template("sections/beta_binomial.html.j2").render(a=a, v={}, plots=marked, medium="screen")
    mu = res.conditions["exact"].mu
    assert fmt.number(mu.mean, 3) in html and fmt.number(mu.low, 3) in html
    assert "rephrased minus exact" in html and html.count("<svg") == 4
    assert not math.isnan(res.contrasts[0].bhattacharyya_distance["mu"])


def test_cli_save_posterior_writes_netcdf_beside_the_claim(tmp_path, monkeypatch):
    """`evalspec run --save-posterior` on the repeated-trials example (exact vs rephrased)."""
    import shutil
    from pathlib import Path

    from click.testing import CliRunner

    from evalspec.cli import cli

    pytest.importorskip("arviz")
    if posterior_writer_missing():
        pytest.skip(posterior_writer_missing())
    example = Path(__file__).resolve().parents[2] / "examples" / "repeated-trials"
    for name in ("plan.yaml", "results.jsonl"):
        shutil.copyfile(example / name, tmp_path / name)
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml"), "--no-report", "--save-posterior"],
                             env={"EVALSPEC_NO_REPORT": ""}, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    nc = tmp_path / "out" / "posterior-beta_binomial.nc"
    assert f"posterior written to {nc}" in res.output
    import arviz as az

    idata = az.from_netcdf(str(nc))
    assert list(idata.posterior.coords["condition"].values) == ["exact", "rephrased"]
    # without a netCDF writer the flag is a usage error (exit 2) that names the fix
    import evalspec.analyses.beta_binomial as bb

    monkeypatch.setattr(bb, "posterior_writer_missing", lambda: "--save-posterior needs ArviZ: pip install x")
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "plan.yaml"), "--no-report", "--save-posterior"])
    assert res.exit_code == 2 and "needs ArviZ" in res.output
