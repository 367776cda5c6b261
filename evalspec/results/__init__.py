"""Results in: read JSONL / CSV / Parquet into one typed tidy table and check it against the plan.

:func:`load_results` is the entry point used by ``evalspec run``: it resolves the plan's
``data.results`` paths and globs, reads each file, types the columns by the plan's roles
(:mod:`evalspec.results.table`) and runs the checks (:mod:`evalspec.results.checks`).
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from evalspec._files import bounded_glob
from evalspec.errors import Diagnostic, InputError
from evalspec.results.checks import Checked, check_results
from evalspec.results.readers import RawFile, detect_format, read_file
from evalspec.results.table import FileInfo, Tidy, build_table, case_table_watch

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
    from evalspec.results.lake import folder_tables, is_uri

    for pattern in patterns:
        if is_uri(pattern):  # an object store: listed and read by evalspec.results.lake
            continue
        full = base / pattern
        if any(ch in pattern for ch in "*?["):
            hits = bounded_glob(base, pattern, display=str(plan_path))
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
        elif full.is_dir() and not _tool_folder(full) and (tables := folder_tables(full)):  # (Hive-partitioned) tables
            out.extend(path for path, _ in tables)
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


def _tool_folder(folder: Path) -> bool:
    """Whether ``folder`` holds an evaluation tool's logs (read by its adapter, not as a folder of tables)."""
    from evalspec.results.adapters import detect

    return detect(folder) is not None


#: Whether results files outside the plan's folder may be read (``evalspec run --allow-outside-data``).
#: Off by default: a plan that reads ``../../secrets.csv`` or ``/etc/...`` is refused, not read silently.
OUTSIDE_ALLOWED: ContextVar[bool] = ContextVar("evalspec_outside_allowed", default=False)


#: The files read from outside the plan's folder (relative to it), collected while allowed:
#: ``token = OUTSIDE_READ.set([])`` before the run, then ``OUTSIDE_READ.get()``.
OUTSIDE_READ: ContextVar[list[str]] = ContextVar("evalspec_outside_read")


def read_all(plan: Any, plan_path: Path, plan_diagnostic: Any = None) -> list[RawFile]:
    """Read every results file of the plan (no typing, no checks)."""
    from evalspec.results import adapters  # tool logs (inspect_ai, lm-eval, promptfoo); the plan's mapping

    from evalspec.results import lake

    patterns = [plan.data.results] if isinstance(plan.data.results, str) else list(plan.data.results)
    uris = [p for p in patterns if lake.is_uri(p)]
    if uris and plan.data.format in adapters.LOG_FORMATS:
        key = "data.results" if isinstance(plan.data.results, str) else f"data.results[{patterns.index(uris[0])}]"
        message = f"{plan.data.format} logs are read from local files only, not from {uris[0]!r}"
        hint = "copy the logs next to the plan, or export the rows as JSONL/CSV/Parquet to the object store"
        diag = (plan_diagnostic(key, message, got=uris[0], hint=hint) if plan_diagnostic is not None else
                Diagnostic(file=str(plan_path), key=key, message=message, got=uris[0], has_got=True, hint=hint))
        raise InputError(f"{plan_path}: {key}: {message}", [diag])
    paths = resolve_paths(plan, plan_path, plan_diagnostic) if len(uris) < len(patterns) else []
    if plan.data.format in adapters.LOG_FORMATS:
        raws: list[RawFile] = list(adapters.read_logs(paths, plan.data.format, adapters.Options.from_plan(plan),
                                                      _display))
    else:
        if plan.data.format == "auto":
            _refuse_tool_logs_read_as_tables(paths, plan_path, plan_diagnostic)
        partitions = _partitions(patterns, plan_path.parent, paths)
        watches = [case_table_watch(plan)]  # the case-table limit, refused while the files are read
        raws = [lake.with_partitions(read_file(path, detect_format(path, plan.data.format), display=_display(path),
                                               watches=watches), partitions.get(path, ()))
                for path in paths]
        raws += [lake.read_object(obj, plan.data.format) for uri in uris for obj in lake.list_uri(uri)]
    return adapters.apply_plan(raws, plan)


def _partitions(patterns: list[str], base: Path, paths: list[Path]) -> dict[Path, tuple[tuple[str, str], ...]]:
    """Hive partition values (``model=A/...``) of the files found below each folder the plan names.

    Read from each path relative to its folder: the folder was listed once, by :func:`resolve_paths`.
    """
    from evalspec.results.lake import is_uri, partition_values

    folders = [base / p for p in patterns if not is_uri(p) and not any(ch in p for ch in "*?[") and (base / p).is_dir()]
    out: dict[Path, tuple[tuple[str, str], ...]] = {}
    for path in paths:
        for folder in folders:
            if folder in path.parents and (values := partition_values(os.path.relpath(path, folder))):
                out[path] = values
                break
    return out


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
    from evalspec.results.adapters.graders import grader_limits

    raws = read_all(plan, plan_path, plan_diagnostic)
    checked = check_results(build_table(raws, plan, plan_diagnostic), plan)
    checked.detected.extend(claim_limits(raws, plan_path.parent))  # tool logs: a partial run, repeats the tool already reduced
    checked.detected.extend(grader_limits(plan, raws))  # a model grader nobody checked against people
    attach_provenance(checked.tidy, raws, plan_path.parent)  # tool logs: what was read, as `file.provenance`
    return checked


def _display(path: Path) -> str:
    """The path as shown in messages and the claim: relative to the working folder when below it."""
    try:  # abspath, not resolve: a symbolic link keeps the name the plan gave it (and a loop raises nothing)
        return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(Path.cwd())))
    except (ValueError, OSError):
        return str(path)
