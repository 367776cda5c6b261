"""The loader's API: positions, locate, diagnostics for later checks, YAML corner cases, init."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from evalspec.cli import cli
from evalspec.errors import InputError, PlanInvalid
from evalspec.exit_codes import ExitCode
from evalspec.plan import format_path, load_plan, parse_path
from evalspec.plan.source import parse_source

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "policy-migration" / "plan.yaml"


def _line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_loaded_plan_carries_path_raw_positions() -> None:
    loaded = load_plan(EXAMPLE)
    text = EXAMPLE.read_text(encoding="utf-8")
    assert loaded.path == EXAMPLE and loaded.base_dir == EXAMPLE.parent
    assert loaded.raw["units"]["cluster"] == "policy_doc"
    line, col = loaded.locate("units.cluster")
    assert line == _line_of(text, "cluster: policy_doc")
    assert text.splitlines()[line - 1][col - 1:].startswith("policy_doc")
    assert loaded.locate(("analyses", 1, "seed")) == loaded.locate("analyses[1].seed")
    # a key the plan does not write resolves to its nearest ancestor
    assert loaded.locate("decision.margin") == loaded.positions["decision",].key_pos


def test_diagnostic_for_later_checks_points_at_the_plan_line() -> None:
    loaded = load_plan(EXAMPLE)
    d = loaded.diagnostic("data.columns.critical", "column not found in the results", got="critical",
                          hint="columns found: case_id, passed")
    text = EXAMPLE.read_text(encoding="utf-8")
    assert d.line == _line_of(text, "critical: critical")
    assert d.headline().startswith(f"{EXAMPLE}:{d.line}:{d.col}: data.columns.critical: column not found")
    assert "(got 'critical'); columns found" in d.headline()
    assert d.excerpt and "^" in d.excerpt


def test_errors_carry_exit_codes() -> None:
    with pytest.raises(InputError) as bad:
        load_plan(ROOT / "no" / "such" / "plan.yaml")
    assert bad.value.exit_code == ExitCode.BAD_INPUT
    with pytest.raises(PlanInvalid) as invalid:
        load_plan(ROOT / "tests" / "cases" / "invalid_plans" / "many_problems_at_once.yaml")
    assert invalid.value.exit_code == ExitCode.CHECK_FAILED
    assert len(invalid.value.diagnostics) == 6  # field, cross-field and section rules together
    assert all(d.line and d.col for d in invalid.value.diagnostics)


def test_merge_keys_and_anchors() -> None:
    doc = parse_source("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n", "p.yaml")
    assert doc.data["c"] == {"x": 1, "y": 3}
    assert doc.positions[("c", "y")].line == 4  # own keys win, and are located where written


def test_keys_are_read_as_written() -> None:
    doc = parse_source("yes: 1\n1: a\nnull: b\n", "p.yaml")
    assert doc.data == {"yes": 1, "1": "a", "null": "b"}


@given(st.lists(st.one_of(st.integers(0, 50), st.text(min_size=1, max_size=8)), max_size=6))
def test_dotted_paths_round_trip(path: list) -> None:
    assert parse_path(format_path(tuple(path))) == tuple(path)


def test_multiple_plans_worst_exit_code_wins(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(EXAMPLE), str(bad)])
    assert result.exit_code == 2
    assert "valid (policy-qa-migration" in result.stdout
    assert "bad.yaml:1:" in result.stderr


def test_json_output(tmp_path: Path) -> None:
    import json

    invalid = ROOT / "tests" / "cases" / "invalid_plans" / "bad_interval_method.yaml"
    result = CliRunner().invoke(cli, ["validate", "--format", "json", str(EXAMPLE), str(invalid)])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [p["status"] for p in data["plans"]] == ["valid", "invalid"]
    (diag,) = data["plans"][1]["diagnostics"]
    assert (diag["line"], diag["col"], diag["key"], diag["got"]) == (19, 13, "analyses[0].method", "wilsn")


def test_init_writes_a_plan_that_validates(tmp_path: Path) -> None:
    target = tmp_path / "new-eval"
    result = CliRunner().invoke(cli, ["init", str(target)])
    assert result.exit_code == 0, result.output
    plan = target / "plan.yaml"
    text = plan.read_text(encoding="utf-8")
    assert text.count("#") > 20  # commented
    assert load_plan(plan).plan.id == "my-evaluation"
    assert CliRunner().invoke(cli, ["validate", str(plan)]).exit_code == 0
    again = CliRunner().invoke(cli, ["init", str(target)])
    assert again.exit_code == 2 and "refusing to overwrite" in again.output
    assert plan.read_text(encoding="utf-8") == text


def test_init_default_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["init"]).exit_code == 0
    assert (tmp_path / "plan.yaml").is_file()


def test_directory_hint_names_the_plan_inside(tmp_path: Path) -> None:
    shutil.copyfile(EXAMPLE, tmp_path / "plan.yaml")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 2
    assert f"did you mean {tmp_path / 'plan.yaml'}?" in result.output


def test_missing_file_suggests_a_close_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(EXAMPLE, tmp_path / "plan.yaml")
    result = CliRunner().invoke(cli, ["validate", "plna.yaml"])
    assert result.exit_code == 2
    assert "plna.yaml: no such file; did you mean plan.yaml?" in result.output


def test_missing_file_suggests_no_name_that_only_shares_the_extension(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(EXAMPLE, tmp_path / "p3.yaml")
    result = CliRunner().invoke(cli, ["validate", "nope.yaml"])
    assert result.exit_code == 2
    assert "nope.yaml: no such file\n" in result.output and "did you mean" not in result.output
    shutil.copyfile(EXAMPLE, tmp_path / "plan.yaml")
    other = CliRunner().invoke(cli, ["validate", "plan.yml"])
    assert "plan.yml: no such file; did you mean plan.yaml?" in other.output


def test_partial_rules_run_when_other_sections_are_broken(tmp_path: Path) -> None:
    """A field error in `decision` does not hide the baseline rule (all problems at once)."""
    text = EXAMPLE.read_text(encoding="utf-8").replace("baseline: B", "baseline: X")
    text = text.replace("minimum_improvement: 0.03", "minimum_improvement: lots")
    plan = tmp_path / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    with pytest.raises(PlanInvalid) as exc:
        load_plan(plan)
    keys = [d.key for d in exc.value.diagnostics]
    assert keys == ["baseline", "decision.minimum_improvement"]


def test_section_rules_run_beside_field_errors_of_the_same_section(tmp_path: Path) -> None:
    """A section rule runs beside a field error of its section when it reads only valid fields;
    a rule that reads the broken field is skipped rather than guessed at."""
    text = EXAMPLE.read_text(encoding="utf-8")
    plan = tmp_path / "plan.yaml"
    plan.write_text(text.replace("goal: superiority", "goal: non_inferiority")
                    .replace("confidence_level: 0.95\n  critical", "confidence_level: high\n  critical"),
                    encoding="utf-8")
    with pytest.raises(PlanInvalid) as exc:
        load_plan(plan)
    assert [d.key for d in exc.value.diagnostics] == ["decision.margin", "decision.confidence_level"]
    plan.write_text(text.replace("repeats: 1\n  rule: first", "repeats: many\n  rule: best_of_k"), encoding="utf-8")
    with pytest.raises(PlanInvalid) as exc:
        load_plan(plan)
    assert [d.key for d in exc.value.diagnostics] == ["attempts.repeats"]  # k rule reads repeats: skipped
