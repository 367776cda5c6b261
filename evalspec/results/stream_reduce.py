"""Attempt rows reduced to the case table while they are read: memory bounded by cells, not rows.

:func:`stream_results` reads the plan's JSONL / CSV / Parquet tables (files, globs, Hive-partitioned
folders, object-store URIs) one Arrow record batch at a time, types each batch exactly as
:func:`~evalspec.results.table.build_table` types rows (its ``typed_*`` functions, so a value
that cannot be read is located at its file and line), and folds it into a fixed-size state per
candidate × case (:mod:`evalspec.results.stream_state`). Out comes a
:class:`~evalspec.results.case_model.CaseTable`: the run's count-servable analyses, the attempt
rule and the decision's other readings work on it unchanged, and the claim is byte-identical to
the in-memory path's (``tests/results/test_stream_reduce.py``, a property test).

It engages only where that holds (:func:`plan_streams`): a table format, every analysis and
the attempt rule served from counts, and an input of at least :data:`STREAM_ROWS` rows (an
estimate; ``EVALSPEC_STREAM_ROWS`` sets it). Whatever the state cannot hold exactly (a repeat
number outside 0 to 63, extra attempts whose case attributes differ from the kept ones) gives
up (:class:`Fallback`) and the in-memory path reads the results as before: never an approximation; beyond :data:`IN_MEMORY_ROWS` rows, where memory would
not hold them, the run is refused with the reason instead. A refusal of a results set of at most
:data:`EXACT_REFUSAL_ROWS` rows is also left to the in-memory path, so its words are the same;
a larger one is refused here, at the row, before the rest is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evalspec.results.stream_state import Fallback



__all__ = ["EXACT_REFUSAL_ROWS", "IN_MEMORY_ROWS", "STREAM_ROWS", "Fallback", "estimated_rows", "may_reduce",
           "plan_streams", "stream_results"]

#: Results of at least this many rows (estimated: Parquet metadata, text bytes / 128) are reduced
#: while read. ``EVALSPEC_STREAM_ROWS`` overrides it (0: whenever the plan allows).
STREAM_ROWS = 2_000_000
#: A refusal of results up to this many rows is made by the in-memory path (its exact words).
EXACT_REFUSAL_ROWS = 5_000_000
#: Results the streaming state cannot hold exactly go to the in-memory path up to this many rows; more
#: are refused, with the reason, rather than read into memory that is not there.
IN_MEMORY_ROWS = 20_000_000
_TEXT_BYTES_PER_ROW = 128


def plan_streams(plan: Any) -> bool:
    """Whether everything ``plan`` computes is served from per candidate × case counts."""
    from evalspec.analyses.registry import get_kind
    from evalspec.plan.case_table import column_needs

    if plan.data.format not in ("auto", "jsonl", "csv", "parquet") or plan.attempts.rule == "majority_answer":
        return False
    if int(plan.attempts.repeats) > 64:
        return False
    if any(get_kind(a.kind).attempt_rows is not None or isinstance(getattr(a, "score", None), str)
           for a in plan.analyses):
        return False
    return all(level == "case" for _, level in column_needs(plan).values())


def may_reduce(path: Path) -> bool:
    """Whether the text file ``path`` alone holds enough rows to be reduced while read (where the plan allows it)."""
    return estimated_rows([path], ["jsonl"]) >= _threshold()


def _threshold() -> int:
    try:
        return int(os.environ.get("EVALSPEC_STREAM_ROWS", STREAM_ROWS))
    except ValueError:
        return STREAM_ROWS


def estimated_rows(paths: list[Path], formats: list[str]) -> int:
    """Rows of the results, estimated without reading them (Parquet footers; text by size)."""
    total = 0
    for path, fmt in zip(paths, formats):
        try:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                total += int(pq.ParquetFile(str(path)).metadata.num_rows)
            else:
                total += os.stat(path).st_size // _TEXT_BYTES_PER_ROW
        except Exception:  # noqa: BLE001 - unreadable: the in-memory path says why, at the file
            return -1
    return total


def _objects(uris: list[str], declared: str) -> list[tuple[Any, str]] | None:
    """The objects the URIs name with their formats; None where the in-memory path must say what is wrong."""
    from evalspec.errors import InputError
    from evalspec.limits import MAX_RESULTS_BYTES
    from evalspec.results import lake

    try:
        objects = [obj for uri in uris for obj in lake.list_uri(uri)]
        out = [(obj, lake.format_of(obj.path, declared)) for obj in objects]
    except InputError:  # (refused as the in-memory path refuses it, after the local files it reads first)
        return None
    return None if any(obj.size > MAX_RESULTS_BYTES for obj in objects) else out


def _too_large(plan: Any, plan_path: Path, plan_diagnostic: Any, rows: int, why: Fallback) -> None:
    from evalspec.errors import Diagnostic, InputError

    message = (f"the results (about {rows:,} rows) are more than the {IN_MEMORY_ROWS:,} rows evalspec reads into "
               f"memory, and reducing them while reading cannot be exact here: {why}")
    hint = (why.hint + "; or " if why.hint else "") + "analyse a preregistered sample of the cases"
    diag = (plan_diagnostic("data.results", message, hint=hint) if plan_diagnostic is not None else
            Diagnostic(file=str(plan_path), key="data.results", message=message, hint=hint))
    raise InputError(f"{plan_path}: data.results: {message}", [diag]) from None


def stream_results(plan: Any, plan_path: Path, plan_diagnostic: Any = None) -> Any:
    """The checked case table of the plan's attempt rows, reduced while read; None where it does not engage."""
    from evalspec.results import OUTSIDE_READ, _display, _partitions, _refuse_tool_logs_read_as_tables, resolve_paths
    from evalspec.results.lake import estimated_object_rows, is_uri
    from evalspec.results.readers import detect_format

    if not plan_streams(plan):
        return None
    outside = OUTSIDE_READ.get(None)
    before = len(outside) if outside is not None else 0
    engaged, rows = False, 0
    patterns = [plan.data.results] if isinstance(plan.data.results, str) else list(plan.data.results)
    uris = [p for p in patterns if is_uri(p)]
    try:
        paths = resolve_paths(plan, plan_path, plan_diagnostic) if len(uris) < len(patterns) else []
        if plan.data.format == "auto":
            _refuse_tool_logs_read_as_tables(paths, plan_path, plan_diagnostic)
        if not (paths or uris) or any(p.is_dir() for p in paths):
            return None
        formats = [detect_format(p, plan.data.format) for p in paths]
        objects = _objects(uris, plan.data.format)
        if objects is None:
            return None
        rows = estimated_rows(paths, formats)
        more = estimated_object_rows([o for o, _ in objects], [f for _, f in objects]) if objects else 0
        if rows < 0 or more < 0 or rows + more < _threshold():
            return None
        rows += more
        parts = _partitions(patterns, plan_path.parent, paths)
        files = [(p, f, _display(p), parts.get(p, ())) for p, f in zip(paths, formats)]
        files += [(o, f, o.uri, o.partitions) for o, f in objects]
        from evalspec.results.stream_read import reduce_files

        table = reduce_files(plan, files, plan_diagnostic, exact_refusal=rows <= EXACT_REFUSAL_ROWS)
        engaged = True
        return table
    except Fallback as why:
        if rows > IN_MEMORY_ROWS:
            _too_large(plan, plan_path, plan_diagnostic, rows, why)
        return None
    finally:
        if not engaged and outside is not None:
            del outside[before:]  # the in-memory path lists them again
