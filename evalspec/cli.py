"""The ``evalspec`` command line.

Subcommands live in :mod:`evalspec.commands` and are imported only when invoked, so
``evalspec validate`` never pays for scipy or weasyprint. Every subcommand reports user
mistakes as :class:`~evalspec.errors.EvalspecError` (no traceback) and exits with a code
from :class:`~evalspec.exit_codes.ExitCode`.

Exit codes: 0 ok; 1 a check found problems; 2 bad input or usage; 70 internal error
(run again with ``--debug`` for the traceback).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from evalspec._version import __version__
from evalspec.exit_codes import ExitCode

#: subcommand name -> "module:attribute" of its click command (imported lazily).
COMMANDS: dict[str, str] = {
    "validate": "evalspec.commands.validate:validate",
    "lock": "evalspec.commands.lock:lock",
    "init": "evalspec.commands.init:init",
    "schema": "evalspec.commands.schema:schema",
    "run": "evalspec.commands.run:run",
    "report": "evalspec.commands.report:report",
}

_HELP = {
    "validate": "Check plan files; print every problem at its line.",
    "lock": "Record the plan's canonical hash in PLAN.lock.json.",
    "init": "Write a commented starter plan that validates as written.",
    "schema": "Print the plan's JSON Schema.",
    "run": "Run the plan on its results and write the claim record.",
    "report": "Render a claim record to HTML and/or PDF.",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _available(name))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _HELP.get(name, "")) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except click.Abort:
            raise
        except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
            from evalspec.errors import EvalspecError

            if isinstance(exc, EvalspecError):
                click.echo(exc.render(), err=True)
                ctx.exit(int(exc.exit_code))
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(
                f"evalspec: internal error: {type(exc).__name__}: {exc}\n"
                "This is a bug in evalspec. Run again with --debug for the traceback and report it.",
                err=True,
            )
            ctx.exit(int(ExitCode.INTERNAL_ERROR))


def _available(name: str) -> bool:
    module_name = COMMANDS[name].split(":")[0]
    return importlib.util.find_spec(module_name) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="evalspec")
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """evalspec: preregistered evaluation plans, honest uncertainty, auditable decisions.

    Exit codes: 0 ok; 1 a check found problems; 2 bad input or usage;
    70 internal error.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Usage errors exit with 2 (click's convention)."""
    cli.main(args=argv, prog_name="evalspec")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
