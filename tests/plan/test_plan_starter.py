"""The starter plan of ``evalspec init``: valid as written, every verdict-bearing key shown, comments from the models."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from evalspec.cli import cli as main
from evalspec.plan.model import Plan
from evalspec.plan.starter import VERDICT_SECTIONS, starter_text


def _section_model(path: str) -> type:
    model: type = Plan
    for part in path.split("."):
        model = model.model_fields[part].annotation  # type: ignore[attr-defined]
        if not isinstance(model, type):  # Optional[...] -> the model inside
            model = next(a for a in model.__args__ if isinstance(a, type) and a is not type(None))  # type: ignore[union-attr]
    return model


def test_init_writes_a_plan_that_validates(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "plan.yaml").read_text(encoding="utf-8")
    assert text == starter_text()
    result = runner.invoke(main, ["validate", str(tmp_path / "plan.yaml")])
    assert result.exit_code == 0, result.output
    again = runner.invoke(main, ["init", str(tmp_path)])
    assert again.exit_code == 2 and "refusing to overwrite" in again.output


def test_every_key_that_can_change_a_verdict_is_written_out() -> None:
    data = yaml.safe_load(starter_text())
    for path in VERDICT_SECTIONS:
        node = data
        for part in path.split("."):
            node = node[part]
        model = _section_model(path)
        missing = set(model.model_fields) - set(node)
        assert not missing, f"{path}: the starter hides {sorted(missing)}"


def test_comments_are_the_field_descriptions() -> None:
    """A comment that drifts from the code is impossible: each one is the model's description."""
    text = starter_text()
    comments = " ".join(line.strip()[2:] for line in text.splitlines() if line.strip().startswith("# "))
    flat = " ".join(comments.split())
    for path in VERDICT_SECTIONS:
        for name, info in _section_model(path).model_fields.items():
            assert " ".join((info.description or "").split()) in flat, f"{path}.{name}: description not in starter"
    assert "cluster bootstrap when units.cluster is set" not in text  # the old hand-written comment was wrong


def test_validate_warns_while_the_starter_text_the_report_shows_is_left_in(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["init", str(tmp_path)]).exit_code == 0
    plan = tmp_path / "plan.yaml"
    result = runner.invoke(main, ["validate", str(plan)])
    assert result.exit_code == 0, result.output  # a warning leaves the starter valid
    for key in ("title", "question", "decision_owner", "population"):
        assert f"{key}: warning: {key} is still the example text of `evalspec init`; the report shows it as this " \
               f"study's {key.replace('_', ' ')}" in result.output
    assert ("systematic_limits[0]: warning: this limit is still the example text of `evalspec init`; the report "
            "lists it as a limit of this study") in result.output
    text = plan.read_text(encoding="utf-8")
    for old, new in (("title: Candidate vs current configuration", "title: Router v2 against v1"),
                     ('question: "Should we replace the current configuration with the candidate?"',
                      "question: Should support move to router v2?"),
                     ("decision_owner: the team lead who signs off the change", "decision_owner: support lead"),
                     ('population: "the cases the decision is about (e.g. English support questions, Q3 traffic '
                      'sample)"', "population: English support tickets, Q3 sample"),
                     ('"Replace with the known limits of this evaluation (language range, label quality, provider '
                      'alias)."', "English only")):
        assert old in text, old
        text = text.replace(old, new)
    plan.write_text(text, encoding="utf-8")
    result = runner.invoke(main, ["validate", str(plan)])
    assert result.exit_code == 0 and "example text" not in result.output, result.output


def test_init_given_a_yaml_file_name_writes_that_file(tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "study" / "my-plan.yaml"
    result = runner.invoke(main, ["init", str(target)])
    assert result.exit_code == 0, result.output
    assert target.is_file() and target.read_text(encoding="utf-8") == starter_text()  # not a folder named my-plan.yaml
    assert result.output.startswith(f"wrote {target}; edit it, check it on a pilot") and "--data PILOT" in result.output
    again = runner.invoke(main, ["init", str(target)])
    assert again.exit_code == 2 and f"{target}: already exists; refusing to overwrite it" in again.output


def test_init_given_another_file_says_what_to_give(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("x\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["init", str(notes)])
    assert result.exit_code == 2
    assert (f"{notes}: is a file, not a folder; give a folder (plan.yaml is written inside it) or a new file name "
            "ending in .yaml") in result.output
    assert notes.read_text(encoding="utf-8") == "x\n"


def test_the_starter_shows_where_tool_logs_are_named() -> None:
    text = starter_text()
    assert ("  # File format; 'auto' decides by extension; inspect, lm_eval, promptfoo, openai_evals, helm and\n"
            "  # every_eval_ever read those tools' files unchanged (inspect_ai, lm-evaluation-harness, promptfoo,\n"
            "  # openai/evals record logs, HELM run folders, Every Eval Ever instance-level records);\n"
            "  # 'case_table' reads a pre-aggregated table, one row per candidate and case (`evalspec reduce-sql`\n"
            "  # computes it where the rows are).\n"
            "  format: auto\n") in text
