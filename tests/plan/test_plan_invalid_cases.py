"""Every invalid plan in tests/cases/invalid_plans/ gives exactly its expected output.

Each case is ``NAME.yaml`` (the plan) and ``NAME.expected``: first line ``exit N``, then
the exact text ``evalspec validate NAME.yaml`` prints (stderr and stdout, as a terminal
shows them) when run in the case's folder. Three inputs cannot live in the repository
and are made by the test: ``directory_instead_of_file`` (a folder), ``missing_path``
(nothing) and ``huge_file`` (over the size limit).

To regenerate after a deliberate change of wording, run with ``EVALSPEC_UPDATE_GOLDEN=1``
and review the diff of the ``.expected`` files before committing. The list of analysis kinds
a message prints is written ``<known kinds>`` in the ``.expected`` files and filled in from the
registry, so adding a kind changes no golden file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.analyses.params import known_kinds
from evalspec.cli import cli
from evalspec.plan.source import MAX_PLAN_BYTES

CASES = Path(__file__).resolve().parent.parent / "cases" / "invalid_plans"
UPDATE = os.environ.get("EVALSPEC_UPDATE_GOLDEN") == "1"
#: How the .expected files write the registry's kind list (see the module docstring).
KINDS_MARK = "<known kinds>"


def _make_directory(dest: Path) -> None:
    dest.mkdir()
    (dest / "notes.txt").write_text("not a plan\n")


def _make_huge(dest: Path) -> None:
    line = "# " + "x" * 97 + "\n"
    dest.write_text("evalspec: 1\n" + line * (MAX_PLAN_BYTES // len(line) + 10))


GENERATED = {
    "directory_instead_of_file": _make_directory,
    "missing_path": lambda dest: None,
    "huge_file": _make_huge,
}


def _case_names() -> list[str]:
    return sorted(p.stem for p in CASES.glob("*.expected"))


def test_enough_distinct_cases() -> None:
    names = _case_names()
    assert len(names) >= 25
    for name in names:
        assert (CASES / f"{name}.yaml").is_file() or name in GENERATED, f"{name}.expected has no {name}.yaml"
    for plan in CASES.glob("*.yaml"):
        assert (CASES / f"{plan.stem}.expected").is_file(), f"{plan.name} has no expected output"


@pytest.mark.parametrize("name", _case_names())
def test_invalid_plan_output(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / f"{name}.yaml"
    if name in GENERATED:
        GENERATED[name](target)
    else:
        shutil.copyfile(CASES / f"{name}.yaml", target)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["validate", f"{name}.yaml"])
    actual = f"exit {result.exit_code}\n{result.output}"
    kinds = ", ".join(known_kinds())
    expected_file = CASES / f"{name}.expected"
    if UPDATE:
        expected_file.write_text(actual.replace(kinds, KINDS_MARK), encoding="utf-8")
    expected = expected_file.read_text(encoding="utf-8").replace(KINDS_MARK, kinds)
    assert "Traceback" not in result.output
    assert result.exit_code in (1, 2)
    assert actual == expected
