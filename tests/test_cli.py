"""The command group: commands listed in the order a study uses them; a mistyped command gets a suggestion."""

from __future__ import annotations

from click.testing import CliRunner

from evalspec.cli import cli


def test_help_lists_the_commands_in_the_order_of_a_study() -> None:
    res = CliRunner().invoke(cli, ["--help"])
    assert res.exit_code == 0
    listed = [line.split()[0] for line in res.output.split("Commands:", 1)[1].splitlines()
              if line.startswith("  ") and not line.startswith("    ")]
    assert listed[:6] == ["init", "validate", "lock", "run", "report", "audit"]


def test_a_mistyped_command_is_answered_with_the_closest_one() -> None:
    res = CliRunner().invoke(cli, ["runn", "plan.yaml"])
    assert res.exit_code == 2
    assert "Error: No such command 'runn'. Did you mean 'run'? The commands, in the order of a study: init, " \
           "validate, lock, run, report, audit" in res.output


def test_an_unknown_command_lists_the_commands() -> None:
    res = CliRunner().invoke(cli, ["frobnicate"])
    assert res.exit_code == 2
    assert "No such command 'frobnicate'. The commands, in the order of a study: init, validate" in res.output
    assert "Did you mean" not in res.output


def test_commands_still_run() -> None:
    res = CliRunner().invoke(cli, ["schema"])
    assert res.exit_code == 0 and '"title"' in res.output
