"""Results in: read JSONL / CSV / Parquet into one typed tidy table and check it against the plan.

:func:`load_results` is the entry point used by ``evalspec run``: it resolves the plan's
``data.results`` paths and globs, reads each file, types the columns by the plan's roles
(:mod:`evalspec.results.table`) and runs the checks (:mod:`evalspec.results.checks`).
"""

from __future__ import annotations

import glob as _glob
import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from evalspec.errors import Diagnostic, InputError
from evalspec.results.checks import Checked, check_results
from evalspec.results.readers import RawFile, detect_format, read_file
from evalspec.results.table import FileInfo, Tidy, build_table

__all__ = ["OUTSIDE_ALLOWED", "OUTSIDE_READ", "Checked", "FileInfo", "RawFile", "Tidy", "load_results", "resolve_paths", "read_all"]


def resolve_paths(plan: Any, plan_path: Path, plan_diagnostic: Any = None) -> list[Path]:
    """The results files the plan names, relative to the plan's folder, globs expanded and sorted.

    ``plan_diagnostic``, when given, locates a missing file at the plan line that names it.
    """
    base = plan_path.parent

    def problem(message: str, pattern: str, hint: str) -> Diagnostic:
        if plan_diagnostic is not None:
            key = "data.results" if isinstance(plan.data.results, str) else (
                f"data.results[{list(plan.data.results).index(pattern)}]")
            return plan_diagnostic(key, message, got=pattern, hint=hint)
        return Diagnostic(file=str(plan_path), key="data.results", message=message, got=pattern, has_got=True,
                          hint=hint)

    patterns = [plan.data.results] if isinstance(plan.data.results, str) else list(plan.data.results)
    out: list[Path] = []
    for pattern in patterns:
        full = base / pattern
        if any(ch in pattern for ch in "*?["):
            hits = sorted(Path(p) for p in _glob.glob(str(full), recursive=True))
            if not hits:
                raise InputError(
                    f"{plan_path}: data.results: no file matches {pattern!r}",
                    [problem(f"no file matches {pattern!r}", pattern, f"paths are relative to {base or '.'}")],
                )
            out.extend(hits)
        elif full.is_dir() and plan.data.format != "auto" and plan.data.format not in ("jsonl", "csv", "parquet"):
            from evalspec.results.adapters import expand  # a folder of tool logs

            found = expand(full, plan.data.format)
            if not found:
                raise InputError(
                    f"{plan_path}: data.results: no {plan.data.format} log in the folder {pattern!r}",
                    [problem(f"no {plan.data.format} log in the folder {full}", pattern,
                             "name the log files, or check data.format")],
                )
            out.extend(found)
        else:
            if not os.path.lexists(full):  # present but not a regular file: the reader says what it is
                raise InputError(
                    f"{plan_path}: data.results: no such file {str(full)!r}",
                    [problem(f"no such results file: {full}", pattern,
                             f"paths are relative to the plan's folder ({base or '.'})")],
                )
            out.append(full)
    seen: dict[Path, None] = {}
    for p in out:
        seen.setdefault(p, None)
    for p in seen:
        try:
            str(p).encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(p).decode("utf-8", "backslashreplace")
            message = "the file name is not valid UTF-8"
            raise InputError(f"{shown}: {message}", [Diagnostic(
                file=shown, message=message, hint="rename the file (evalspec shows and records names as UTF-8 "
                "text)")]) from None
    home = os.path.realpath(base or ".")
    for p in seen:
        real = os.path.realpath(p)
        if os.path.commonpath([home, real]) != home:
            if OUTSIDE_ALLOWED.get():
                OUTSIDE_READ.get([]).append(os.path.relpath(os.path.abspath(p), os.path.abspath(base or ".")))
            else:
                pattern = next((q for q in patterns if not any(ch in q for ch in "*?[") and base / q == p), None)
                raise InputError(
                    f"{plan_path}: data.results: {p} is outside the plan's folder",
                    [problem(f"the results file {p} is outside the plan's folder"
                             + (" (through a symbolic link)" if os.path.islink(p) else ""),
                             pattern or patterns[0],
                             "keep the results beside the plan, or allow it knowingly with "
                             "`evalspec run --allow-outside-data` (the claim records it)")],
                )
    return list(seen)


#: Whether results files outside the plan's folder may be read (``evalspec run --allow-outside-data``).
#: Off by default: a plan that reads ``../../secrets.csv`` or ``/etc/...`` is refused, not read silently.
OUTSIDE_ALLOWED: ContextVar[bool] = ContextVar("evalspec_outside_allowed", default=False)


#: The files read from outside the plan's folder (relative to it), collected while allowed:
#: ``token = OUTSIDE_READ.set([])`` before the run, then ``OUTSIDE_READ.get()``.
OUTSIDE_READ: ContextVar[list[str]] = ContextVar("evalspec_outside_read")


def read_all(plan: Any, plan_path: Path, plan_diagnostic: Any = None) -> list[RawFile]:
    """Read every results file of the plan (no typing, no checks)."""
    from evalspec.results import adapters  # tool logs (inspect_ai, lm-eval, promptfoo); the plan's mapping

    paths = resolve_paths(plan, plan_path, plan_diagnostic)
    if plan.data.format in adapters.LOG_FORMATS:
        raws: list[RawFile] = list(adapters.read_logs(paths, plan.data.format, adapters.Options.from_plan(plan),
                                                      _display))
    else:
        if plan.data.format == "auto":
            _refuse_tool_logs_read_as_tables(paths, plan_path, plan_diagnostic)
        raws = [read_file(path, detect_format(path, plan.data.format), display=_display(path)) for path in paths]
    return adapters.apply_plan(raws, plan)


_TOOL_NAMES = {"inspect": "an inspect_ai log", "lm_eval": "an lm-evaluation-harness log",
               "promptfoo": "a promptfoo results file"}


def _refuse_tool_logs_read_as_tables(paths: list[Path], plan_path: Path, plan_diagnostic: Any) -> None:
    """Under ``data.format: auto``, a tool's log or a folder of them says which ``data.format`` reads it.

    Only files the extension cannot place (``.eval``, ``.json``, a folder) are looked at, so a
    table named ``.jsonl``/``.csv``/``.parquet`` is never second-guessed.
    """
    from evalspec.results.adapters import detect
    from evalspec.results.readers import FORMATS

    for path in paths:
        if path.suffix.lower() in FORMATS and not path.is_dir():
            continue
        tool = detect(path)
        if tool is None:
            continue
        what = ("a folder of " + _TOOL_NAMES[tool].split(" ", 1)[1] + "s") if path.is_dir() else _TOOL_NAMES[tool]
        message = f"{_display(path)} is {what}, and data.format is 'auto', which reads only tables by extension"
        hint = (f"set `data.format: {tool}` in the plan: evalspec reads the tool's logs unchanged "
                "(`evalspec convert` shows what it reads)")
        diag = (plan_diagnostic("data.format", message, got="auto", hint=hint) if plan_diagnostic is not None else
                Diagnostic(file=str(plan_path), key="data.format", message=message, got="auto", has_got=True,
                           hint=hint))
        raise InputError(f"{plan_path}: data.format: {message}", [diag])


def load_results(plan: Any, plan_path: Path, plan_diagnostic: Any = None) -> Checked:
    """Read, type and check the results of ``plan``; raise :class:`InputError` on bad input.

    ``plan_diagnostic(key, message, hint=...)`` locates problems that belong to the plan.
    """
    from evalspec.results.adapters import attach_provenance, claim_limits

    raws = read_all(plan, plan_path, plan_diagnostic)
    try:
        table = build_table(raws, plan, plan_diagnostic)
    except InputError as exc:
        exc = _with_candidate_names_hint(exc, plan)
        raise _with_delimiter_hint(_with_column_guess(_with_outcome_hint(exc), raws), raws) from None
    try:
        checked = check_results(table, plan)
    except InputError as exc:
        raise _with_no_rows_hint(_with_repeat_hint(exc, plan, raws), raws) from None
    checked.detected.extend(claim_limits(raws, plan_path.parent))  # tool logs: a partial run, repeats the tool already reduced
    attach_provenance(checked.tidy, raws, plan_path.parent)  # tool logs: what was read, as `file.provenance`
    return checked


def _with_candidate_names_hint(exc: InputError, plan: Any) -> InputError:
    """Unknown candidates that are the plan's candidates' *models*: the fix is ``data.candidate_names``.

    The table's message says to add the name under ``candidates`` or remove the rows; when the
    results name candidates by their model (``gpt-a`` for ``candidates.a.model: gpt-a``), the
    mapping is the fix, so the hint says so with the exact line to write. Only a failed read pays.
    """
    from dataclasses import replace

    unknown = [d for d in exc.diagnostics if d.message.startswith("unknown candidate ")]
    if not unknown:
        return exc
    import ast

    by_model = {str(c.model): str(key) for key, c in plan.candidates.items()}
    names = {str(d.got) for d in unknown if d.has_got}
    for d in unknown:  # the message lists every unknown name as Python reprs: 'gpt-a', 'gpt-b'; ...
        listed = d.message[len("unknown candidate "):].split("; the plan's candidates", 1)[0]
        try:
            names.update(str(v) for v in ast.literal_eval(f"[{listed}]"))
        except (ValueError, SyntaxError):
            pass
    mapped = {n: by_model[n] for n in sorted(names) if n in by_model}
    if mapped:
        line = ", ".join(f"{n}: {k}" for n, k in mapped.items())
        hint = (f"the results name candidates by their model; map them to the plan's keys with "
                f"data.candidate_names: {{{line}}}")
    else:
        hint = ("map the name to a plan key with data.candidate_names: {NAME: KEY}, add it under `candidates` in the "
                "plan, or remove these rows")
    diags = [replace(d, hint=hint) if d in unknown else d for d in exc.diagnostics]
    return InputError(str(exc), diags)


#: The table's hint for an outcome that is not pass/fail, and the fuller one shown instead: every
#: spelling the reader accepts (README, "Results format"), and where values such as ERROR belong.
_OUTCOME_HINT = ("use true/false, 1/0, pass/fail or C/I; for numeric scores set data.outcome.type: score "
                 "with a pass_threshold; leave missing outcomes null")
_OUTCOME_HINT_FULL = ("use true/false, 1/0, pass/fail, C/I, correct/incorrect or yes/no; list values that mean "
                      "'no outcome' (ERROR, timeout) in data.missing_values; for numeric scores set "
                      "data.outcome.type: score with a pass_threshold; leave missing outcomes null")


def _with_outcome_hint(exc: InputError) -> InputError:
    """The outcome hint with every accepted spelling and data.missing_values (the table's names four)."""
    from dataclasses import replace

    if not any(d.hint == _OUTCOME_HINT for d in exc.diagnostics):
        return exc
    return InputError(str(exc), [replace(d, hint=_OUTCOME_HINT_FULL) if d.hint == _OUTCOME_HINT else d
                                 for d in exc.diagnostics])


#: The column each role has in the tables evalspec's tool-log adapters write (and ``evalspec convert``).
_ROLE_COLUMNS = {"data.columns.candidate": "candidate", "data.columns.outcome": "outcome", "units.case": "case_id",
                 "data.columns.repeat": "repeat", "data.columns.model_version": "model_version",
                 "data.columns.timestamp": "timestamp"}


def _with_column_guess(exc: InputError, raws: list[Any]) -> InputError:
    """A column the plan names but the results lack: 'did you mean' the closest column found, when one is close."""
    import difflib
    import re
    from dataclasses import replace

    found = sorted({str(name) for raw in raws for name in (getattr(raw, "columns", {}) or {})})
    out, changed = [], False
    for d in exc.diagnostics:
        m = re.match(r"the plan names column '(.+)' for (\S+), but no results file has it$", d.message)
        close = difflib.get_close_matches(m.group(1), found, n=1, cutoff=0.7) if m and found else []
        if not close:  # a name differing only in case or separators ('Case-ID' for 'case_id')
            squash = {re.sub(r"[^a-z0-9]", "", f.lower()): f for f in found}
            close = [squash[k] for k in [re.sub(r"[^a-z0-9]", "", m.group(1).lower())] if k in squash] if m else []
        if not close and m and _ROLE_COLUMNS.get(m.group(2)) in found:  # the name tool logs give the role
            close = [_ROLE_COLUMNS[m.group(2)]]
        if close:
            d = replace(d, hint=f"did you mean {close[0]!r}? " + (d.hint or ""))
            changed = True
        out.append(d)
    return InputError(str(exc), out) if changed else exc


def _with_no_rows_hint(exc: InputError, raws: list[Any]) -> InputError:
    """A candidate with no rows: most often its file was not read or its name not mapped, not a candidate to drop."""
    from dataclasses import replace

    empty = [d for d in exc.diagnostics if d.message.startswith("candidate ") and "has no rows in the results" in
             d.message]
    if not empty:
        return exc
    files = ", ".join(getattr(r, "display", "?") for r in raws[:5]) + (", ..." if len(raws) > 5 else "")
    hint = (f"the files read were {files}: check that data.results names this candidate's results and that "
            "data.candidate_names maps the name they give it; if it was never run, run it (dropping it from the "
            "plan after seeing the results is a change the lock records)")
    return InputError(str(exc), [replace(d, hint=hint) if d in empty else d for d in exc.diagnostics])


def _with_repeat_hint(exc: InputError, plan: Any, raws: list[Any]) -> InputError:
    """Duplicate attempts in results without a repeat column: they are repeats that carry no number."""
    from dataclasses import replace

    col = plan.data.columns.repeat
    if col is not None and any(col in (getattr(raw, "columns", {}) or {}) for raw in raws):
        return exc
    dup = [d for d in exc.diagnostics if d.message.startswith("duplicate (candidate, case, repeat)")]
    if not dup:
        return exc
    hint = (f"the results have no repeat column ({col!r}, data.columns.repeat), so every attempt of a case counts "
            "as repeat 1: if these are repeats, add a column numbering them 1, 2, ... (and set attempts.repeats); "
            "else remove the duplicates")
    return InputError(str(exc), [replace(d, hint=hint) if d in dup else d for d in exc.diagnostics])


def _with_delimiter_hint(exc: InputError, raws: list[Any]) -> InputError:
    """A CSV whose one column name holds semicolons or tabs was written with another separator: say so first."""
    first = []
    for raw in raws:
        names = list(getattr(raw, "columns", {}) or {})
        if getattr(raw, "format", None) != "csv" or len(names) != 1:
            continue
        sep = next((name for ch, name in ((";", "semicolons"), ("\t", "tabs")) if ch in names[0]), None)
        if sep is not None:
            first.append(Diagnostic(
                file=raw.display, line=1, message=f"the header is one column, {names[0][:60]!r}: the file is "
                f"separated by {sep}, and evalspec reads CSV separated by commas",
                hint="save it with commas (a spreadsheet's 'CSV UTF-8, comma-delimited'), or as JSONL"))
    return InputError(str(exc), first + exc.diagnostics) if first else exc


def _display(path: Path) -> str:
    """The path as shown in messages and the claim: relative to the working folder when below it."""
    try:  # abspath, not resolve: a symbolic link keeps the name the plan gave it (and a loop raises nothing)
        return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(Path.cwd())))
    except (ValueError, OSError):
        return str(path)
