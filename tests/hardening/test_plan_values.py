"""Issue 13: plan values that silently changed a decision or its hash.

`pass_threshold: .nan` (or `.inf`) used to validate, then fail every case; the plan hash was
the same for `.nan` and `"nan"` and for an unquoted date and its quoted text. Now non-finite
numbers are refused at their line, and the canonical form keeps every value's type where the
plan leaves the type open. Plans without such values keep their hash (the examples are pinned).
"""

from __future__ import annotations

import math

import pytest

from hardening_helpers import ROOT, SCORE, Space, plan_text


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", ".NaN"])
def test_non_finite_threshold_fails_validate_at_its_line(space: Space, value: str) -> None:
    plan = plan_text().replace("  columns:", SCORE.replace("0.5", value))
    space.write(plan=plan)
    result = space.cli("validate", "plan.yaml")
    assert result.exit_code == 2
    col = 42
    assert result.stderr.splitlines()[0] == (
        f"plan.yaml:9:{col}: data.outcome.pass_threshold: {value} is not a finite number; a plan's numbers must be "
        f'finite; write a number; if you mean the text, quote it: "{value}"')
    result = space.cli("run", "plan.yaml")
    assert result.exit_code == 2 and not (space.path / "out").exists()


def _hash(data: dict) -> str:
    from evalspec.plan.canonical import canonical_hash

    return canonical_hash(data)


def _plan_data(settings: dict) -> dict:
    import yaml

    data = yaml.safe_load(plan_text())
    data["candidates"]["A"]["settings"] = settings
    return data


def test_unquoted_date_and_its_text_hash_differently(space: Space) -> None:
    from evalspec.plan.load import load_plan

    hashes = []
    for text in ("released: 2026-10-01", 'released: "2026-10-01"'):
        plan = plan_text().replace("A: {model: m-a, version: v1}", "A: {model: m-a, version: v1, settings: {"
                                   + text + "}}")
        space.write(plan=plan)
        hashes.append(_hash_loaded(load_plan(space.path / "plan.yaml")))
    assert hashes[0] != hashes[1]


def _hash_loaded(loaded: object) -> str:
    from evalspec.plan.canonical import canonical_hash

    return canonical_hash(loaded)


def test_nan_and_the_text_nan_hash_differently() -> None:
    assert _hash(_plan_data({"t": math.nan})) != _hash(_plan_data({"t": "nan"}))
    assert _hash(_plan_data({"t": math.inf})) != _hash(_plan_data({"t": "inf"}))


def test_a_typed_date_is_the_same_quoted_or_not(space: Space) -> None:
    from evalspec.plan.canonical import canonical_data
    from evalspec.plan.load import load_plan

    hashes = []
    for text in ("decision_date: 2026-12-15", 'decision_date: "2026-12-15"'):
        space.write(plan=plan_text() + f"stopping: {{{text}}}\n")
        loaded = load_plan(space.path / "plan.yaml")
        hashes.append(_hash_loaded(loaded))
        assert canonical_data(loaded)["stopping"]["decision_date"] == "2026-12-15"
    assert hashes[0] == hashes[1]


@pytest.mark.parametrize("example", ["policy-migration", "repeated-trials", "support-triage"])
def test_example_hashes_are_unchanged(example: str) -> None:
    """The canonical form changed only for plans with free-form dates or non-finite numbers."""
    from evalspec.plan.canonical import canonical_json
    from evalspec.plan.load import load_plan

    text = canonical_json(load_plan(ROOT / "examples" / example / "plan.yaml"))
    assert "$date" not in text and "$float" not in text
