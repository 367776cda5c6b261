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
from evalspec.terminal import escaped_output

#: subcommand name -> "module:attribute" of its click command (imported lazily).
COMMANDS: dict[str, str] = {
    "validate": "evalspec.commands.validate:validate",
    "lock": "evalspec.commands.lock:lock",
    "order": "evalspec.commands.order:order",
    "draw-labels": "evalspec.commands.draw_labels:draw_labels",
    "init": "evalspec.commands.init:init",
    "schema": "evalspec.commands.schema:schema",
    "run": "evalspec.commands.run:run",
    "report": "evalspec.commands.report:report",
    "audit": "evalspec.commands.audit:audit",
    "attest": "evalspec.commands.attest:attest",
    "gate": "evalspec.commands.gate:gate",
    "diff": "evalspec.commands.diff:diff",
    "power": "evalspec.commands.power:power",
    "convert": "evalspec.commands.convert:convert",
    "tbg": "evalspec.commands.tbg:tbg",
    "reduce-sql": "evalspec.commands.reduce_sql:reduce_sql",
}

#: The order ``evalspec --help`` lists the commands in: the order a study uses them.
WORKFLOW = ("init", "validate", "lock", "run", "report", "audit", "gate", "diff", "attest", "power", "order",
            "draw-labels",
            "convert", "reduce-sql", "schema", "tbg")

_HELP = {
    "validate": "Check plan files; print every problem at its line.",
    "lock": "Record the plan's canonical hash in PLAN.lock.json.",
    "order": "Draw the seeded random order the harness runs the cases in (sequential designs).",
    "draw-labels": "Draw the seeded random subset of cases people label (judge_corrected).",
    "init": "Write a commented starter plan that validates as written.",
    "schema": "Print the JSON Schema of the plan (or, with --claim, of the claim).",
    "run": "Run the plan on its results and write the claim record.",
    "report": "Render a claim record to HTML and/or PDF.",
    "audit": "Check a claim against its plan, lock and ledger; reproduce it.",
    "attest": "Write an in-toto statement about a claim, for you to sign with your own key.",
    "diff": "Compare two claims: plan keys, data, every number and the verdict side by side.",
    "gate": "Exit 0 when a claim's verdict is acceptable and its process checks pass (CI).",
    "power": "Units needed to detect the planned improvement, before any data.",
    "convert": "Write the tidy table evalspec reads from tool logs (inspect_ai, lm-eval, promptfoo, openai/evals, "
               "HELM, Every Eval Ever).",
    "reduce-sql": "Print the SQL that reduces the plan's attempt rows to its case table (DuckDB, Spark, BigQuery).",
    "tbg": "Background temperature: reference sampling (tbg sample) and the T_bg estimate (tbg estimate).",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in WORKFLOW if name in COMMANDS and _available(name)] + sorted(
            name for name in COMMANDS if name not in WORKFLOW and _available(name))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                             list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            import difflib

            listed = self.list_commands(ctx)
            close = difflib.get_close_matches(name, [c for c in listed if c != name], n=1, cutoff=0.6)
            order = ", ".join(listed)
            ctx.fail(f"No such command {name!r}." + (f" Did you mean {close[0]!r}?" if close else "")
                     + f" The commands, in the order of a study: {order}.")
        return super().resolve_command(ctx, args)

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
        with escaped_output():
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except click.Abort:
            raise
        except BrokenPipeError:
            _quiet_stdout()
            ctx.exit(BROKEN_PIPE_EXIT)
        except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
            from evalspec.errors import EvalspecError, os_error_message

            if isinstance(exc, EvalspecError):
                _echo_err(exc.render())
                ctx.exit(int(exc.exit_code))
            if isinstance(exc, OSError) and not (ctx.obj and ctx.obj.get("debug")):
                # the operating system refused (permissions, read-only or full disk, a file where a
                # folder belongs): the user's environment, not a bug
                sub = self.get_command(ctx, ctx.invoked_subcommand or "")
                has_out = sub is None or any("--out" in getattr(p, "opts", ()) for p in sub.params)
                _echo_err(os_error_message(exc, out_option=has_out))
                ctx.exit(int(ExitCode.BAD_INPUT))
            if isinstance(exc, UnicodeError) and _is_path_encoding_error(exc):
                _echo_err("evalspec: a file or folder name is not valid UTF-8; rename it (names are shown and "
                          "recorded as UTF-8 text)")
                ctx.exit(int(ExitCode.BAD_INPUT))
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(
                f"evalspec: internal error: {type(exc).__name__}: {exc}\n"
                "This is a bug in evalspec. Run again with --debug for the traceback and report it.",
                err=True,
            )
            ctx.exit(int(ExitCode.INTERNAL_ERROR))


#: Exit status after the reader of stdout went away (``evalspec run ... | head -1``): 128 + SIGPIPE,
#: what a shell reports for any tool stopped by a closed pipe. Outputs are written before anything
#: is printed, so a closed pipe never loses a claim or report.
BROKEN_PIPE_EXIT = 141


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the final flush of a closed pipe raises nothing."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # pragma: no cover - stdout without a file descriptor
        pass


def _echo_err(text: str) -> None:
    try:
        click.echo(text, err=True)
    except UnicodeEncodeError:
        click.echo(text.encode("utf-8", "backslashreplace").decode("utf-8"), err=True)


def _is_path_encoding_error(exc: UnicodeError) -> bool:
    """A UnicodeEncodeError on a lone surrogate: a file name that was not UTF-8 (surrogateescape)."""
    obj = getattr(exc, "object", None)
    return isinstance(exc, UnicodeEncodeError) and isinstance(obj, str) and any(
        0xDC80 <= ord(ch) <= 0xDCFF for ch in obj[exc.start:exc.end])


def non_utf8_argument(args: list[str]) -> str | None:
    """The first command-line argument that is not valid UTF-8 (shown escaped), or None."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return ascii(arg.encode("utf-8", "surrogateescape"))[1:]
    return None


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
    import signal

    args = sys.argv[1:] if argv is None else list(argv)
    bad = non_utf8_argument(args)
    if bad is not None:
        click.echo(f"evalspec: the argument {bad} is not valid UTF-8; rename the file or folder "
                   "(evalspec shows and records paths as UTF-8 text)", err=True)
        sys.exit(int(ExitCode.BAD_INPUT))
    if hasattr(signal, "SIGPIPE"):
        # a closed pipe ends the process quietly, like any command-line tool (no traceback)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    with escaped_output():
        try:
            cli.main(args=args, prog_name="evalspec")
        except OSError as exc:  # raised while click parses, before a command runs: `--version > /dev/full`
            from evalspec.errors import os_error_message

            _echo_err(os_error_message(exc, out_option=False))
            sys.exit(int(ExitCode.BAD_INPUT))


def entry() -> None:
    """The ``evalspec`` console script and ``python -m evalspec``: :func:`main` in a process of its own.

    The process is set up for one command and ended quickly once it is done
    (:mod:`evalspec.cli_runtime`: one BLAS thread unless the user chose, fewer garbage collections, a
    fast exit after the outputs are written). :func:`main` itself changes nothing of the process, so
    it can be called from Python (it ends by raising :class:`SystemExit`, as click's commands do).
    """
    from evalspec import cli_runtime

    cli_runtime.prepare()
    try:
        main()
    except SystemExit as exc:
        cli_runtime.exit_now(exc.code)
    cli_runtime.exit_now(0)


if __name__ == "__main__":  # pragma: no cover
    entry()
