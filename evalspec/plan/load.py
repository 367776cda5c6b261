"""Load a plan file: read, parse with positions, validate, and report every problem.

:func:`load_plan` is the one entry point the rest of evalspec uses. It returns a
:class:`LoadedPlan` (the validated :class:`~evalspec.plan.model.Plan`, its path, the
raw mapping and the position of every value) or raises

* :class:`~evalspec.errors.InputError` (exit 2) when the file cannot be read as one
  YAML mapping (missing, directory, huge, not UTF-8, syntax, tabs, duplicate keys,
  alias bomb, ...), or
* :class:`~evalspec.errors.PlanInvalid` (exit 1) listing *all* schema and cross-field
  problems, each at its line.

Later checks (a column named by the plan but absent from the results) call
:meth:`LoadedPlan.locate` or :meth:`LoadedPlan.diagnostic` to point at the plan line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from pydantic import ValidationError

from evalspec.errors import Diagnostic, PlanInvalid
from evalspec.plan import rules as _rules
from evalspec.plan.diagnose import (
    diagnose,
    issue_diagnostic,
    partial_view,
    section_issues,
)
from evalspec.plan.model import Plan
from evalspec.plan.positions import Path, PositionMap, excerpt, format_path
from evalspec.plan.source import SourceDocument, parse_source, read_source, refuse_other_document

__all__ = ["LoadedPlan", "load_plan", "validate_document"]

_NO_VALUE = object()


@dataclass(frozen=True)
class LoadedPlan:
    """A validated plan together with where it came from.

    Attributes
    ----------
    plan : Plan
        The validated model (defaults filled in).
    path : pathlib.Path
        The plan file; relative paths in the plan (``data.results``) are relative to
        ``path.parent``.
    display : str
        The path as the user wrote it, used in messages.
    raw : dict
        The mapping as parsed from YAML, before validation.
    positions : PositionMap
        Dotted key / path -> source position of every value.
    text : str
        The source text.
    """

    plan: Plan
    path: FsPath
    display: str
    raw: dict[str, Any]
    positions: PositionMap
    text: str = field(repr=False)

    @property
    def base_dir(self) -> FsPath:
        """The folder relative paths in the plan are resolved against."""
        return self.path.parent

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def locate(self, key: str | Path) -> tuple[int, int] | None:
        """1-based ``(line, col)`` of ``key`` (e.g. ``"units.cluster"``), or of its nearest ancestor."""
        return self.positions.locate(key)

    def diagnostic(self, key: str | Path, message: str, *, got: Any = _NO_VALUE,
                   hint: str | None = None, file: str | None = None) -> Diagnostic:
        """A :class:`Diagnostic` pointing at the plan line of ``key``, with excerpt and caret.

        For checks made after loading, e.g.
        ``loaded.diagnostic("units.cluster", "column not in the results", got="policy_doc",
        hint="columns found: ...")``.
        """
        path, pos, exact = self.positions.resolve(key)
        dotted = key if isinstance(key, str) else format_path(key)
        line = col = None
        width = 1
        if pos is not None:
            line, col = (pos.line, pos.col) if exact else pos.key_pos
            if exact and pos.source is not None and pos.end_line == pos.line:
                width = max(1, pos.end_col - pos.col)
        text = excerpt(self.lines, line, col, width) if line and col else ""
        return Diagnostic(file=file or self.display, message=message, line=line, col=col, key=dotted or None,
                          got=None if got is _NO_VALUE else got, has_got=got is not _NO_VALUE, hint=hint,
                          excerpt=text or None)


def validate_document(doc: SourceDocument) -> tuple[Plan | None, list[Diagnostic]]:
    """Validate a parsed document; return the plan (or None) and every diagnostic, in line order."""
    try:
        return Plan.model_validate(doc.data), []
    except ValidationError as exc:
        lines = doc.lines
        errors = exc.errors()
        diags = diagnose(exc, doc.data, doc.positions, doc.file, lines, Plan)
        diags.extend(issue_diagnostic(i, doc.positions, doc.file, lines)
                     for i in section_issues(Plan, doc.data, errors))
        plan_level_ran = any(e["type"] == "plan_rule" and e["loc"] == () for e in errors)
        if not plan_level_ran:
            broken = {str(e["loc"][0]) for e in errors if e["loc"]}
            view = partial_view(Plan, doc.data, broken)
            diags.extend(issue_diagnostic(i, doc.positions, doc.file, lines) for i in _rules.check(view))
        return None, _sorted_unique(diags)


def _sorted_unique(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[str] = set()
    out: list[Diagnostic] = []
    for d in sorted(diags, key=lambda d: (d.line or 0, d.col or 0, d.key or "", d.message)):
        text = d.headline()
        if text not in seen:
            seen.add(text)
            out.append(d)
    return out


def load_plan(path: str | os.PathLike[str], display: str | None = None) -> LoadedPlan:
    """Read, parse and validate the plan at ``path``.

    Raises
    ------
    InputError
        The file cannot be read as a single YAML mapping (exit code 2).
    PlanInvalid
        The plan breaks the schema or a cross-field rule; ``.diagnostics`` lists
        every problem (exit code 1).
    """
    name = display if display is not None else os.fspath(path)
    text = read_source(path, name)
    doc = parse_source(text, name)
    refuse_other_document(doc)  # a claim, lock file or tool log given as the plan: say so in one line
    plan, diags = validate_document(doc)
    if plan is None:
        n = len(diags)
        raise PlanInvalid(f"{name}: {n} problem{'s' if n != 1 else ''}", diags)
    loaded = LoadedPlan(plan=plan, path=FsPath(path), display=name, raw=doc.data, positions=doc.positions, text=text)
    over = limit_problems(loaded)
    if over:
        n = len(over)
        raise PlanInvalid(f"{name}: {n} problem{'s' if n != 1 else ''}", over)
    return loaded


def limit_problems(loaded: LoadedPlan) -> list[Diagnostic]:
    """Where the plan exceeds a documented size limit (:mod:`evalspec.limits`), each at its line."""
    from evalspec import limits as L

    plan = loaded.plan
    out: list[Diagnostic] = []

    def count(key: str, n: int, most: int, what: str) -> None:
        if n > most:
            out.append(loaded.diagnostic(key, f"{n} {what}; a plan may have at most {most}",
                                         hint="split the study into several plans"))

    count("analyses", len(plan.analyses), L.MAX_ANALYSES, "analyses")
    count("slices", len(plan.slices), L.MAX_SLICES, "slices")
    count("candidates", len(plan.candidates), L.MAX_CANDIDATES, "candidates")

    def text(key: str, value: object, most: int) -> None:
        if isinstance(value, str) and len(value) > most:
            out.append(loaded.diagnostic(key, f"{len(value):,} characters; at most {most:,} are accepted here",
                                         hint="shorten it; details belong in a linked document"))

    text("title", plan.title, L.MAX_TITLE_CHARS)
    for key in ("question", "population", "decision_owner"):
        text(key, getattr(plan, key, None), L.MAX_TEXT_CHARS)
    for i, item in enumerate(plan.systematic_limits):
        text(f"systematic_limits[{i}]", item, L.MAX_TEXT_CHARS)
    for i, a in enumerate(plan.analyses):
        text(f"analyses[{i}].label", getattr(a, "label", None), L.MAX_TITLE_CHARS)
    for name in plan.candidates:
        if len(str(name)) > L.MAX_LABEL_CHARS:
            out.append(loaded.diagnostic(f"candidates.{name}", f"the candidate name is {len(str(name)):,} characters; "
                                         f"at most {L.MAX_LABEL_CHARS} are accepted", hint="use a short name"))
    return out
