"""The README's plan reference and the pre-commit hooks stay true to the code."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from click.testing import CliRunner

from evalspec.analyses.params import PARAMS
from evalspec.cli import cli
from evalspec.plan.model import Plan
from evalspec.plan.reference import field_rows, markdown_reference

ROOT = Path(__file__).resolve().parents[2]


def _readme_reference() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- plan-reference:begin -->\n(.*)<!-- plan-reference:end -->", text, re.S)
    assert m, "README.md lacks the plan reference markers"
    return m.group(1)


def test_readme_reference_names_every_key_and_kind() -> None:
    section = _readme_reference()
    for key, *_ in field_rows(Plan):
        assert f"`{key}`" in section, f"README plan reference lacks {key}; regenerate: python -m evalspec.plan.reference"
    for kind in PARAMS:
        assert f"**`{kind}`**" in section, f"README plan reference lacks analysis {kind}"


def test_reference_generator_runs() -> None:
    assert markdown_reference().startswith("| key | type | default | meaning |")


def test_pre_commit_hooks(tmp_path: Path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {h["id"] for h in hooks} == {"evalspec-validate", "evalspec-validate-locked"}
    for hook in hooks:
        assert hook["language"] == "python" and hook["name"] and hook["description"]
        files = re.compile(hook["files"])
        assert files.search("plan.yaml") and files.search("evals/policy/plan.yml")
        assert not files.search("plan.yaml.lock.json") and not files.search("myplan.yaml")
        argv = shlex.split(hook["entry"])
        assert argv[0] == "evalspec"
        example = tmp_path / "plan.yaml"  # a copy: the bundled example may be locked
        example.write_bytes((ROOT / "examples" / "policy-migration" / "plan.yaml").read_bytes())
        result = CliRunner().invoke(cli, [*argv[1:], str(example)])
        assert result.exit_code in (0, 1), result.output  # --locked may find no lock: 1, never a crash
        assert "not locked" in result.output if "--locked" in argv else result.exit_code == 0
