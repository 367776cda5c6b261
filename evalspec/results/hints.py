"""What to do about a refused results table: the hints the table and the checks give.

Pure functions of what the refusing code already holds (the plan, the columns found, the
files read), so each hint is written where its problem is found, in one place:

* :data:`OUTCOME_HINT` - every pass/fail spelling the reader accepts, and where values such
  as ``ERROR`` belong;
* :func:`column_guess` - "did you mean" for a column the plan names but no file has;
* :func:`candidate_names_hint` - results that name candidates by their *model*;
* :func:`no_rows_hint` - a candidate without rows: its file was not read or its name not mapped;
* :func:`unnumbered_repeats_hint` - duplicate attempts in results without a repeat column;
* :func:`delimiter_problems` - a CSV whose one column name holds semicolons or tabs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from evalspec.errors import Diagnostic

__all__ = ["OUTCOME_HINT", "yaml_scalar", "yaml_flow", "yaml_flow_list", "shortened", "candidate_names_hint", "column_guess", "delimiter_problems", "no_rows_hint",
           "unnumbered_repeats_hint"]

#: Every spelling the reader accepts (README, "Results format"), and where values such as ERROR belong.
OUTCOME_HINT = ("use true/false, 1/0, pass/fail, C/I, correct/incorrect or yes/no; list values that mean "
                "'no outcome' (ERROR, timeout) in data.missing_values; for numeric scores set "
                "data.outcome.type: score with a pass_threshold; leave missing outcomes null")

#: The column each role has in the tables evalspec's tool-log adapters write (and ``evalspec convert``).
_ROLE_COLUMNS = {"data.columns.candidate": "candidate", "data.columns.outcome": "outcome", "units.case": "case_id",
                 "data.columns.repeat": "repeat", "data.columns.model_version": "model_version",
                 "data.columns.timestamp": "timestamp"}


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def column_guess(name: str, role: str, found: Iterable[str]) -> str | None:
    """The column found that the plan probably meant by ``name`` (for ``role``), or None.

    A close spelling, the same name in another case or with other separators (``Case-ID`` for
    ``case_id``), or the column tool-log tables give the role.
    """
    found = sorted({str(f) for f in found})
    if not found:
        return None
    close = difflib.get_close_matches(name, found, n=1, cutoff=0.7)
    if close:
        return close[0]
    squashed = {_squash(f): f for f in found}
    if _squash(name) in squashed:
        return squashed[_squash(name)]
    role_column = _ROLE_COLUMNS.get(role)
    return role_column if role_column in found else None


_PLAIN_YAML = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})


def yaml_scalar(text: str) -> str:
    """``text`` as one YAML scalar on one line: plain when safe, else double-quoted with escapes.

    Escapes every character outside printable ASCII (``\\n``, ``\\xNN``, ``\\uNNNN``,
    ``\\UNNNNNNNN``), so the line loads back (``yaml.safe_load``) to exactly ``text``.
    """
    if _PLAIN_YAML.match(text) and text.lower() not in _YAML_WORDS:
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o == 0x0A:
            out.append("\\n")
        elif o == 0x09:
            out.append("\\t")
        elif o <= 0xFF:
            out.append(f"\\x{o:02x}")
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


def yaml_flow(mapping: dict[str, str]) -> str:
    """A one-line YAML flow mapping (``{a: b, "x: y": c}``) that loads back to ``mapping``."""
    return "{" + ", ".join(f"{yaml_scalar(str(k))}: {yaml_scalar(str(v))}" for k, v in mapping.items()) + "}"


def yaml_flow_list(items: Sequence[str]) -> str:
    """A one-line YAML flow sequence (``[model, task_args.prompt]``)."""
    return "[" + ", ".join(yaml_scalar(str(i)) for i in items) + "]"


def shortened(name: str, width: int = 48) -> str:
    """A long or multi-line name shown on one short line (the full text is given beside it)."""
    flat = " ".join(str(name).split())
    return flat if len(flat) <= width and flat == name else flat[:width - 1].rstrip() + "…"


def candidate_names_hint(unknown: Sequence[str], plan: Any) -> str:
    """What to do about candidate names the plan lacks: map them when they are its candidates' models."""
    by_model = {str(c.model): str(key) for key, c in plan.candidates.items()}
    mapped = {n: by_model[n] for n in sorted(unknown) if n in by_model}
    if mapped:
        return (f"the results name candidates by their model; map them to the plan's keys with "
                f"data.candidate_names: {yaml_flow(mapped)}")
    keys = [str(k) for k in plan.candidates] + [str(k) for k in getattr(plan.data, "candidate_names", {}) or {}]
    guesses = {n: close[0] for n in sorted(unknown) if (close := difflib.get_close_matches(str(n), keys, n=1,
                                                                                          cutoff=0.7))}
    guess = "".join(f"did you mean {g!r} for {n!r}? " for n, g in guesses.items()) if len(guesses) > 1 else (
        f"did you mean {next(iter(guesses.values()))!r}? " if guesses else "")
    return (guess + "map the name to a plan key with data.candidate_names: {NAME: KEY}, add it under `candidates` in "
            "the plan, or remove these rows")


def no_rows_hint(displays: Sequence[str]) -> str:
    """A candidate with no rows: most often its file was not read or its name not mapped, not a candidate to drop."""
    files = ", ".join(displays[:5]) + (", ..." if len(displays) > 5 else "")
    return (f"the files read were {files}: check that data.results names this candidate's results and that "
            "data.candidate_names maps the name they give it; if it was never run, run it (dropping it from the "
            "plan after seeing the results is a change the lock records)")


def unnumbered_repeats_hint(repeat_column: str | None) -> str:
    """Duplicate attempts where the results have no repeat column: repeats that carry no number."""
    return (f"the results have no repeat column ({repeat_column!r}, data.columns.repeat), so every attempt of a case "
            "counts as repeat 1: if these are repeats, add a column numbering them 1, 2, ... (and set "
            "attempts.repeats); else remove the duplicates")


def delimiter_problems(files: Iterable[tuple[str, str, Sequence[str]]]) -> list[Diagnostic]:
    """A CSV ``(display, format, column names)`` whose one column name holds semicolons or tabs: say so first."""
    out = []
    for display, fmt, names in files:
        if fmt != "csv" or len(names) != 1:
            continue
        sep = next((word for ch, word in ((";", "semicolons"), ("\t", "tabs")) if ch in names[0]), None)
        if sep is not None:
            out.append(Diagnostic(
                file=display, line=1, message=f"the header is one column, {names[0][:60]!r}: the file is "
                f"separated by {sep}, and evalspec reads CSV separated by commas",
                hint="save it with commas (a spreadsheet's 'CSV UTF-8, comma-delimited'), or as JSONL"))
    return out
