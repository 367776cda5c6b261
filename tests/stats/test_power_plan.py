"""`evalspec power`: the plan-level calculation (Miller 2024 eq. 9-10, design effect, zero-failure rule)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evalspec.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "policy-migration"


def _plan(tmp_path: Path, *edits: tuple[str, str], power: str | None = None) -> Path:
    text = (EXAMPLE / "plan.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    if power is not None:
        text += "\npower:\n" + power
    p = tmp_path / "plan.yaml"
    p.write_text(text, encoding="utf-8")
    (tmp_path / "results.jsonl").write_bytes((EXAMPLE / "results.jsonl").read_bytes())
    return p


NO_CLUSTER = ("  cluster: policy_doc               # questions on one document are not independent\n", "")
NO_CLUSTER_METHOD = ("    method: cluster_bootstrap\n", "    method: newcombe\n")


def _load(path: Path):
    from evalspec.plan import load_plan

    return load_plan(path).plan


def test_miller_969_through_the_plan(tmp_path: Path) -> None:
    from evalspec.power import assess

    plan = _load(_plan(tmp_path, NO_CLUSTER, NO_CLUSTER_METHOD, ("max_units: 400", "max_units: 2000"),
                       power="  omega2: 0.1111111111111111\n"))
    rep = assess(plan)
    assert rep.needed["80%"] == {"cases": 969}
    # 90 %: (1.959964 + 1.281552)^2 / 9 / 0.0009 = 1297.2 -> 1298
    assert rep.needed["90%"] == {"cases": math.ceil((1.959963985 + 1.281551566) ** 2 / 9 / 0.0009)}
    assert rep.reachable is True
    # eq. 10 at the planned 2000 cases: (z + z_b) * sqrt(omega^2 / n)
    assert rep.mde["80%"] == pytest.approx((1.959963985 + 0.841621234) * math.sqrt(1 / 9 / 2000), rel=1e-8)
    assert rep.critical == {"max_rate": 0.05, "confidence_level": 0.95, "cases_with_zero_failures": 59}


def test_design_effect_of_clusters(tmp_path: Path) -> None:
    from evalspec.power import assess

    plan = _load(_plan(tmp_path, power="  omega2: 0.1111111111111111\n  icc: 0.2\n  cluster_size: 5\n"))
    rep = assess(plan)
    assert rep.design_effect == pytest.approx(1.8)
    # the rule evalspec applies: CR2 t on G - 1 df; G cluster means with variance V (ICC + (1 - ICC)/m)
    from scipy import stats as sps

    tau = math.sqrt(1 / 9 * (0.2 + 0.8 / 5))

    def power(g: int) -> float:
        return sps.nct.sf(sps.t.ppf(0.975, g - 1), g - 1, 0.03 * math.sqrt(g) / tau)

    g = next(g for g in range(5, 2000) if power(g) >= 0.8)
    assert rep.needed["80%"] == {"cases": g * 5, "clusters": g}
    # eq. 9 x Kish (the normal quantile) asks for fewer: it overstates the power of the t interval
    n = (1.959963984540054 + 0.8416212335729143) ** 2 / 9 / 0.0009 * 1.8
    assert math.ceil(math.ceil(n) / 5) < g
    assert rep.unit == "clusters (policy_doc)"


def test_zero_failure_rule_from_the_plan(tmp_path: Path) -> None:
    from evalspec.power import assess

    plan = _load(_plan(tmp_path, ("max_rate: 0.05", "max_rate: 0.01"), power="  omega2: 0.1\n"))
    assert assess(plan).critical["cases_with_zero_failures"] == 299


def test_unreachable_goal_warns_and_exits_1(tmp_path: Path) -> None:
    from evalspec.power import unreachable_goal

    path = _plan(tmp_path, NO_CLUSTER, NO_CLUSTER_METHOD, power="  omega2: 0.1111111111111111\n")
    msg = unreachable_goal(_load(path))
    assert msg is not None and "stopping.max_units = 400 cases cannot detect" in msg and "about 969" in msg
    res = CliRunner().invoke(cli, ["power", str(path)])
    assert res.exit_code == 1 and "does NOT reach 80% power" in res.output


def test_reachable_plan_has_no_warning(tmp_path: Path) -> None:
    from evalspec.power import unreachable_goal

    path = _plan(tmp_path, NO_CLUSTER, NO_CLUSTER_METHOD, ("max_units: 400", "max_units: 1000"),
                 power="  omega2: 0.1111111111111111\n")
    assert unreachable_goal(_load(path)) is None
    res = CliRunner().invoke(cli, ["power", str(path), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["needed"]["80%"]["cases"] == 969


def test_pilot_estimates_match_the_pilot(tmp_path: Path) -> None:
    path = _plan(tmp_path)
    res = CliRunner().invoke(cli, ["power", str(path), "--pilot", str(tmp_path / "results.jsonl"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    a = {r["case_id"]: float(r["passed"]) for r in rows if r["candidate"] == "A"}
    b = {r["case_id"]: float(r["passed"]) for r in rows if r["candidate"] == "B"}
    d = np.array([a[k] - b[k] for k in sorted(a)])
    # one attempt per case: omega^2 is the sample variance of the per-case differences
    assert out["assumptions"]["omega2"] == pytest.approx(d.var(ddof=1), rel=1e-12)
    assert out["assumptions"]["cluster_size"] == pytest.approx(5.0)
    assert out["assumptions"]["source"] == "pilot results.jsonl"


def test_anova_icc_recovers_a_known_correlation() -> None:
    from evalspec.pilot import anova_icc

    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(400), 10)
    y = rng.normal(0, math.sqrt(0.3), 400)[g] + rng.normal(0, math.sqrt(0.7), g.size)
    icc, m = anova_icc(y, g)
    assert icc == pytest.approx(0.3, abs=0.04) and m == 10


def test_no_assumptions_is_a_located_input_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["power", str(_plan(tmp_path))])
    assert res.exit_code == 2
    assert "power.omega2" in res.output and "--pilot" in res.output


def test_validate_warns_when_planned_units_cannot_reach_the_goal(tmp_path: Path) -> None:
    path = _plan(tmp_path, NO_CLUSTER, NO_CLUSTER_METHOD, power="  omega2: 0.1111111111111111\n")
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 0, res.output  # a warning leaves the plan valid
    assert "stopping.max_units: warning: 400 cases are planned, but about 969 are needed" in res.output
    res = CliRunner().invoke(cli, ["validate", str(path), "--format", "json"])
    warned = json.loads(res.stdout)["plans"][0]["warnings"]
    assert [w["key"] for w in warned if "969" in w["message"]] == ["stopping.max_units"]


def test_validate_is_quiet_when_the_units_suffice(tmp_path: Path) -> None:
    path = _plan(tmp_path, NO_CLUSTER, NO_CLUSTER_METHOD, ("max_units: 400", "max_units: 969"),
                 power="  omega2: 0.1111111111111111\n")
    res = CliRunner().invoke(cli, ["validate", str(path)])
    assert res.exit_code == 0 and "are needed" not in res.output


def _split_pilot(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The example's results as two files, one per candidate (as tool logs come: one run per candidate)."""
    path = _plan(tmp_path)
    rows = (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    a, b = tmp_path / "pilot" / "a.jsonl", tmp_path / "pilot" / "b.jsonl"
    a.parent.mkdir()
    a.write_text("".join(r for r in rows if json.loads(r)["candidate"] == "A"), encoding="utf-8")
    b.write_text("".join(r for r in rows if json.loads(r)["candidate"] == "B"), encoding="utf-8")
    return path, a, b


def test_a_pilot_in_several_files_gives_the_same_estimates_as_one_file(tmp_path: Path) -> None:
    path, a, b = _split_pilot(tmp_path)
    whole = CliRunner().invoke(cli, ["power", str(path), "--pilot", str(tmp_path / "results.jsonl"), "--json"])
    split = CliRunner().invoke(cli, ["power", str(path), "--pilot", str(a), "--pilot", str(b), "--json"])
    assert whole.exit_code == 0 and split.exit_code == 0, split.output
    one, two = json.loads(whole.stdout)["assumptions"], json.loads(split.stdout)["assumptions"]
    assert two["source"] == "pilot a.jsonl, b.jsonl"
    for key in ("omega2", "sigma2_candidate", "sigma2_baseline", "icc", "cluster_size", "pilot_cases"):
        assert two[key] == pytest.approx(one[key], rel=1e-12), key


def test_a_pilot_of_one_candidate_says_to_give_the_other_not_to_edit_the_plan(tmp_path: Path) -> None:
    path, a, _ = _split_pilot(tmp_path)
    res = CliRunner().invoke(cli, ["power", str(path), "--pilot", str(a)])
    assert res.exit_code == 2
    assert (f"{a}: the pilot lacks a candidate of the plan (candidate 'B' has no rows in the results); give pilot "
            "results of every candidate: repeat --pilot for each file, or give the folder of the tool's logs"
            in res.stderr)
    assert "remove it from the plan" not in res.stderr


def test_a_missing_pilot_is_named(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["power", str(_plan(tmp_path)), "--pilot", str(tmp_path / "nope.jsonl")])
    assert res.exit_code == 2 and f"--pilot {tmp_path / 'nope.jsonl'}: no such file or folder" in res.stderr


def test_a_folder_of_tool_logs_is_a_pilot(tmp_path: Path) -> None:
    import shutil

    from tests.results.logs_helpers import STRONG, WEAK, write_plan

    (tmp_path / "logs").mkdir()
    for f in (STRONG, WEAK):
        shutil.copyfile(f, tmp_path / "logs" / f.name)
    path = write_plan(tmp_path, """  results: logs/
  format: inspect
  candidate_names: {coinflip/strong: strong, coinflip/weak: weak}""")
    folder = CliRunner().invoke(cli, ["power", str(path), "--pilot", str(tmp_path / "logs"), "--json"])
    files = CliRunner().invoke(cli, ["power", str(path), "--pilot", str(tmp_path / "logs" / STRONG.name),
                                     "--pilot", str(tmp_path / "logs" / WEAK.name), "--json"])
    assert folder.exit_code in (0, 1) and files.exit_code == folder.exit_code, folder.output
    a, b = json.loads(folder.stdout)["assumptions"], json.loads(files.stdout)["assumptions"]
    assert a["pilot_cases"] == 10 and a["source"] == "pilot logs"
    assert a["omega2"] == pytest.approx(b["omega2"], rel=1e-12) and a["omega2"] > 0
