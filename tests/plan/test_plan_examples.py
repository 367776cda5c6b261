"""Every plan in examples/ validates, starts with the schema line, and matches the JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from evalspec.cli import cli
from evalspec.plan import canonical_hash, load_plan

ROOT = Path(__file__).resolve().parents[2]
#: Every YAML file at the top of an example folder is a plan (outputs under out/ are not).
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/*") if p.suffix in (".yaml", ".yml") and p.is_file())
SCHEMA_LINE = "# yaml-language-server: $schema=../../schemas/plan.schema.json"


def test_there_are_examples() -> None:
    names = {p.parent.name for p in EXAMPLES}
    assert {"policy-migration", "repeated-trials"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_validates(path: Path) -> None:
    loaded = load_plan(path)
    assert loaded.plan.id
    assert canonical_hash(loaded).startswith("sha256:")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert f"valid ({loaded.plan.id}, {canonical_hash(loaded)}" in result.output


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_points_editors_at_the_schema(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == SCHEMA_LINE
    assert (path.parent / "../../schemas/plan.schema.json").resolve().is_file()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_passes_the_json_schema(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8"))
    data = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8")), default=str))
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)


def test_policy_migration_has_what_the_honest_uncertainty_guide_asks() -> None:
    """The policy-migration example (the guide's worked example): A vs baseline B, clustered by policy document, critical limit, slice, limits."""
    plan = load_plan(ROOT / "examples" / "policy-migration" / "plan.yaml").plan
    assert set(plan.candidates) == {"A", "B"} and plan.baseline == "B"
    assert plan.units.cluster == "policy_doc" and plan.units.case == "case_id"
    assert plan.decision.minimum_improvement > 0
    assert plan.decision.critical_failures is not None
    assert [s.column for s in plan.slices] == ["topic"]
    assert plan.systematic_limits
    assert {a.kind for a in plan.analyses} >= {"proportion", "paired_difference", "critical_failures", "slices"}
    assert plan.primary_comparison() == ("A", "B")


def test_repeated_trials_has_what_the_bayesian_lens_paper_asks() -> None:
    """The repeated-trials example ('Characterizing LLM performance via a Bayesian lens'): 100 trials, mean rule."""
    plan = load_plan(ROOT / "examples" / "repeated-trials" / "plan.yaml").plan
    assert plan.attempts.repeats == 100 and plan.attempts.rule == "mean"
    assert list(plan.candidates) == ["exact", "rephrased"] and plan.baseline == "exact"
    assert {a.kind for a in plan.analyses} >= {"proportion", "paired_difference", "beta_binomial", "run_variation"}
    assert plan.primary_comparison() == ("rephrased", "exact")
