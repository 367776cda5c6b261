"""Plan rules of the decision (issue 8): one stated error rate (an error), unadjusted looks and
unreachable critical limits (warnings: the plan stays valid, exit 0, each located at its key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from evalspec.cli import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "policy-migration" / "plan.yaml"


def validate(tmp_path: Path, edit: Any) -> tuple[int, dict[str, Any], str]:
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    edit(raw)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    res = CliRunner().invoke(cli, ["validate", "--format", "json", str(plan)])
    text = CliRunner().invoke(cli, ["validate", str(plan)])
    return res.exit_code, json.loads(res.stdout), text.stderr


def primary_index(raw: dict[str, Any]) -> int:
    return next(i for i, a in enumerate(raw["analyses"]) if a["kind"] == "paired_difference")


def test_example_is_valid_without_warnings(tmp_path: Path) -> None:
    code, out, _ = validate(tmp_path, lambda raw: None)
    assert code == 0 and out["plans"][0]["warnings"] == []


def test_primary_at_another_level_is_refused_at_its_key(tmp_path: Path) -> None:
    # the primary comparison at 0.8 while the decision says 0.95 flipped the verdict and validated
    def edit(raw: dict[str, Any]) -> None:
        raw["analyses"][primary_index(raw)]["confidence_level"] = 0.8
        raw["decision"]["confidence_level"] = 0.95

    code, out, stderr = validate(tmp_path, edit)
    assert code == 1
    diags = out["plans"][0]["diagnostics"]
    i = primary_index(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")))
    assert [d["key"] for d in diags] == [f"analyses[{i}].confidence_level"]
    assert diags[0]["line"] is not None and diags[0]["got"] in (0.8, "0.8")
    assert "decision's level (0.95)" in diags[0]["message"]


def test_primary_at_the_decision_level_or_unset_is_fine(tmp_path: Path) -> None:
    def edit(raw: dict[str, Any]) -> None:
        raw["analyses"][primary_index(raw)]["confidence_level"] = raw["decision"].get("confidence_level", 0.95)

    assert validate(tmp_path, edit)[0] == 0


def test_secondary_comparison_may_use_another_level(tmp_path: Path) -> None:
    def edit(raw: dict[str, Any]) -> None:
        extra = dict(raw["analyses"][primary_index(raw)], primary=False, confidence_level=0.8)
        raw["analyses"].append(extra)

    assert validate(tmp_path, edit)[0] == 0


def test_looks_without_a_sequential_method_warn(tmp_path: Path) -> None:
    def edit(raw: dict[str, Any]) -> None:
        raw.setdefault("stopping", {}).update(rule="sequential", looks=10)

    code, out, stderr = validate(tmp_path, edit)
    assert code == 0
    (w,) = out["plans"][0]["warnings"]
    assert w["key"] == "stopping.looks" and w["line"] is not None and w["message"].startswith("warning: 10 looks")
    assert "warning: 10 looks" in stderr


@pytest.mark.parametrize(("max_units", "warns"), [(40, True), (58, True), (59, False), (200, False)])
def test_unreachable_critical_limit_warns(tmp_path: Path, max_units: int, warns: bool) -> None:
    # with no failure the exact 95 % bound falls below 5 % only from 59 cases: 1 - 0.05^(1/59) = 4.95 %
    def edit(raw: dict[str, Any]) -> None:
        raw["decision"]["critical_failures"] = {"max_rate": 0.05, "confidence_level": 0.95}
        raw["decision"]["minimum_units"] = 5
        raw.setdefault("stopping", {})["max_units"] = max_units

    code, out, _ = validate(tmp_path, edit)
    assert code == 0
    found = [w for w in out["plans"][0]["warnings"] if w["key"] == "decision.critical_failures.max_rate"]
    assert bool(found) is warns
    if warns:
        assert "59 failure-free" in found[0]["message"]


def test_a_sequential_analysis_without_a_preregistered_order_warns(tmp_path: Path) -> None:
    # issue 18 #2: the confidence sequence assumes random arrival; the order must be random by design
    def edit(raw: dict[str, Any]) -> None:
        raw.setdefault("stopping", {}).update(rule="sequential", looks=4, max_units=200)
        raw["analyses"].append({"kind": "sequential_difference"})

    code, out, stderr = validate(tmp_path, edit)
    assert code == 0
    (w,) = out["plans"][0]["warnings"]
    assert w["key"] == "stopping" and w["line"] is not None
    assert "no case order is preregistered" in w["message"] and "evalspec order" in (w.get("hint") or stderr)


def test_a_preregistered_order_silences_the_warning(tmp_path: Path) -> None:
    def edit(raw: dict[str, Any]) -> None:
        raw.setdefault("stopping", {}).update(rule="sequential", looks=4, max_units=200,
                                              order={"file": "order.txt", "sha256": "0" * 64, "seed": 1})
        raw["analyses"].append({"kind": "sequential_difference"})

    code, out, _ = validate(tmp_path, edit)
    assert code == 0 and out["plans"][0]["warnings"] == []


@pytest.mark.parametrize("file", ["../order.txt", "/etc/order.txt", "a/../../order.txt"])
def test_an_order_file_outside_the_plan_folder_is_refused_at_its_key(tmp_path: Path, file: str) -> None:
    def edit(raw: dict[str, Any]) -> None:
        raw.setdefault("stopping", {}).update(rule="sequential", looks=4, max_units=200,
                                              order={"file": file, "sha256": "0" * 64, "seed": 1})
        raw["analyses"].append({"kind": "sequential_difference"})

    code, out, _ = validate(tmp_path, edit)
    assert code == 1
    (d,) = out["plans"][0]["diagnostics"]
    assert d["key"] == "stopping.order.file" and "inside the plan's folder" in d["message"]
