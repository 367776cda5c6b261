"""A model grader nobody checked against people is a stated limit (issue 25): detection and the one sentence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalspec.results.adapters.graders import grader_limits, inspect_model_scorer, promptfoo_model_assertions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "judge-leaderboard"
JUDGE_LOGS = Path(__file__).resolve().parent / "fixtures" / "judge"


def test_inspect_scorer_names() -> None:
    assert inspect_model_scorer("model_graded_qa") == ["model_graded_qa"]
    assert inspect_model_scorer("model_graded_fact") == ["model_graded_fact"]
    assert inspect_model_scorer("match") == [] and inspect_model_scorer(None) == []


def test_promptfoo_assertions_nested_and_negated() -> None:
    results = [{"testCase": {"assert": [{"type": "equals"}, {"type": "assert-set", "assert": [{"type": "llm-rubric"}]}]}},
               {"gradingResult": {"componentResults": [{"assertion": {"type": "not-factuality"}}, "junk"]}},
               {"testCase": "not a dict"}, 7]
    assert promptfoo_model_assertions(results) == ["llm-rubric", "not-factuality"]
    assert promptfoo_model_assertions([{"testCase": {"assert": [{"type": "contains"}]}}]) == []


def _plan(grader: str | None = None, analyses: tuple = ()) -> SimpleNamespace:
    return SimpleNamespace(data=SimpleNamespace(grader=grader), analyses=list(analyses))


def test_limit_rule() -> None:
    model_log = SimpleNamespace(provenance={"graded_by_model": ["model_graded_qa"]})
    plain_log = SimpleNamespace(provenance={"graded_by_model": []})
    (limit,) = grader_limits(_plan(), [model_log, plain_log])
    assert limit["code"] == "unvalidated_judge" and "(model_graded_qa)" in limit["message"]
    assert limit["message"].count(". ") == 0  # one sentence
    assert grader_limits(_plan("model"), [])[0]["code"] == "unvalidated_judge"
    assert grader_limits(_plan("people"), [plain_log]) == []
    checked = SimpleNamespace(kind="judge_corrected", human_label="human")
    assert grader_limits(_plan("model", (checked,)), [model_log]) == []


def _run(folder: Path) -> dict:
    from click.testing import CliRunner

    from evalspec.cli import cli

    res = CliRunner().invoke(cli, ["run", str(folder / "plan.yaml"), "--out", str(folder / "out")],
                             env={"SOURCE_DATE_EPOCH": "1796126400", "EVALSPEC_NO_REPORT": "1"})
    assert res.exit_code == 0, res.output
    return json.loads((folder / "out" / "claim.json").read_text())


def test_declared_model_grader_without_labels_is_a_detected_limit(tmp_path: Path) -> None:
    for name in ("results.jsonl", "labelled.txt"):
        shutil.copy(EXAMPLE / name, tmp_path)
    text = (EXAMPLE / "plan.yaml").read_text()
    start, end = text.index("  - kind: judge_corrected"), text.index("  - kind: ranking")
    plain = text[:start] + text[end:]
    plain = plain.replace("    primary: false\n", "").replace("  format: jsonl\n", "  format: jsonl\n  grader: model\n")
    (tmp_path / "plan.yaml").write_text(plain)
    claim = _run(tmp_path)
    codes = [d["code"] for d in claim["systematic_limits"]["detected"]]
    assert codes.count("unvalidated_judge") == 1
    # with the labelled subset measured (the example itself, also declaring the grader): not a limit
    (tmp_path / "plan.yaml").write_text(text.replace("  format: jsonl\n", "  format: jsonl\n  grader: model\n"))
    claim = _run(tmp_path)
    assert "unvalidated_judge" not in [d["code"] for d in claim["systematic_limits"]["detected"]]


@pytest.mark.parametrize("name, fmt, expect", [
    ("inspect_model_graded_qa.eval", "inspect", ["model_graded_qa"]),
    ("promptfoo_llm_rubric.json", "promptfoo", ["llm-rubric"]),
])
def test_real_model_graded_logs(name: str, fmt: str, expect: list[str]) -> None:
    """Logs written by the real tools (fixtures/judge/README.md) say the outcome was graded by a model."""
    from evalspec.results.adapters import read_logs
    from evalspec.results.adapters.base import Options

    (log,) = read_logs([JUDGE_LOGS / name], fmt, Options())
    assert log.provenance["graded_by_model"] == expect
    assert grader_limits(_plan(), [log])[0]["code"] == "unvalidated_judge"


def test_real_logs_of_exact_scorers_are_not_model_graded() -> None:
    from evalspec.results.adapters import read_logs
    from evalspec.results.adapters.base import Options

    fix = Path(__file__).resolve().parent / "fixtures"
    for path, fmt in [(fix / "inspect_ai" / "coinflip-strong_p0.9.eval", "inspect"),
                      (fix / "promptfoo" / "coinflip_repeat3.json", "promptfoo")]:
        for log in read_logs([path], fmt, Options()):
            assert log.provenance["graded_by_model"] == []
