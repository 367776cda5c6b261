"""``evalspec diff CLAIM_A CLAIM_B``: what changed between two claims, side by side.

Three parts, each computed from the two claim records only (no statistic is recomputed):

* **plan**: every plan key whose value differs between the plans the claims were made from
  (their registered plans, compared in canonical form as the lock compares them), the period
  and the plan hashes;
* **data**: results files added, removed, or changed (SHA-256, rows), matched by path;
* **numbers**: every number of the decision's primary interval, of what the number covers and of
  each analysis's result (matched by analysis index and kind), A beside B, changed ones marked;
  and the verdict.

Text for people, ``--json`` for machines, ``--format markdown`` for a pull-request comment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ClaimDiff", "diff_claims", "to_markdown", "to_text"]

#: Lists longer than this are summarised by their length (case lists, posterior draws).
_LIST_LIMIT = 20


@dataclass
class ClaimDiff:
    a: str
    b: str
    verdict: tuple[Any, Any]
    plan_changes: list[tuple[str, Any, Any]] = field(default_factory=list)  # (key, old, new)
    plan_hash: tuple[Any, Any] = (None, None)
    period: tuple[Any, Any] = (None, None)
    data: list[tuple[str, str, Any, Any]] = field(default_factory=list)  # (path, added|removed|changed|same, a, b)
    numbers: list[tuple[str, Any, Any]] = field(default_factory=list)  # (key, a, b)

    @property
    def changed_numbers(self) -> list[tuple[str, Any, Any]]:
        return [n for n in self.numbers if not _same(n[1], n[2])]

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b,
                "verdict": {"a": self.verdict[0], "b": self.verdict[1], "changed": self.verdict[0] != self.verdict[1]},
                "plan": {"hash": {"a": self.plan_hash[0], "b": self.plan_hash[1]},
                         "period": {"a": self.period[0], "b": self.period[1]},
                         "changes": [{"key": k, "a": o, "b": n} for k, o, n in self.plan_changes]},
                "data": [{"path": p, "status": s, "a": x, "b": y} for p, s, x, y in self.data],
                "numbers": [{"key": k, "a": x, "b": y, "changed": not _same(x, y)} for k, x, y in self.numbers]}


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return bool(x == y and type(x) is type(y)) or (_num(x) and _num(y) and float(x) == float(y))


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _d(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _numbers(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Every numeric (and true/false) leaf of ``value`` under dotted keys; long lists by their length."""
    if isinstance(value, dict):
        for k in sorted(value, key=str):
            _numbers(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        if len(value) > _LIST_LIMIT:
            out[f"{prefix} (entries)"] = len(value)
        else:
            for i, v in enumerate(value):
                _numbers(v, f"{prefix}[{i}]", out)
    elif _num(value) or isinstance(value, bool):
        out[prefix] = value


def _claim_numbers(claim: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _numbers(_d(claim.get("decision")).get("primary"), "decision.primary", out)
    _numbers(_d(claim.get("decision")).get("critical"), "decision.critical", out)
    _numbers(claim.get("coverage"), "coverage", out)
    for a in claim.get("analyses") or []:
        if isinstance(a, dict):
            _numbers(a.get("result"), f"analyses[{a.get('index')}] {a.get('kind')}", out)
    return out


def _plan_changes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    from evalspec.plan.canonical import _MISSING, diff_keys
    from evalspec.process import claimed_plan

    pa, pb = claimed_plan(a), claimed_plan(b)
    if pa is None or pb is None:  # a plan this version cannot validate: compare the raw registered copies
        pa, pb = _d(_d(a.get("plan")).get("registered")), _d(_d(b.get("plan")).get("registered"))
    return [(c.key, None if c.old is _MISSING else c.old, None if c.new is _MISSING else c.new)
            for c in diff_keys(pa, pb)]


def _data(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, Any, Any]]:
    def files(c: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {str(f.get("path")): {"sha256": f.get("sha256"), "rows": f.get("rows")}
                for f in _d(c.get("data")).get("files") or [] if isinstance(f, dict)}

    fa, fb = files(a), files(b)
    out = []
    for path in sorted(set(fa) | set(fb)):
        x, y = fa.get(path), fb.get(path)
        status = "added" if x is None else "removed" if y is None else "same" if x == y else "changed"
        out.append((path, status, x, y))
    return out


def diff_claims(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str] = ("A", "B")) -> ClaimDiff:
    """The differences between two validated claim records (see the module docstring)."""
    na, nb = _claim_numbers(a), _claim_numbers(b)
    keys = list(na) + [k for k in nb if k not in na]
    pa, pb = _d(a.get("plan")), _d(b.get("plan"))
    return ClaimDiff(
        a=names[0], b=names[1], verdict=(_d(a.get("decision")).get("verdict"), _d(b.get("decision")).get("verdict")),
        plan_changes=_plan_changes(a, b), plan_hash=(pa.get("hash"), pb.get("hash")),
        period=(_d(pa.get("registered")).get("period"), _d(pb.get("registered")).get("period")),
        data=_data(a, b), numbers=[(k, na.get(k), nb.get(k)) for k in keys])


def _show(x: Any) -> str:
    from evalspec.errors import one_line

    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.6g}"
    text = one_line(str(x))
    return text if len(text) <= 80 else text[:79] + "…"


def to_text(d: ClaimDiff, *, all_numbers: bool = False) -> str:
    """The diff for a terminal: the verdict, then plan, data and the numbers that changed (all with ``all_numbers``)."""
    mark = "changed" if d.verdict[0] != d.verdict[1] else "same"
    lines = [f"verdict: {_show(d.verdict[0])} -> {_show(d.verdict[1])} ({mark})"]
    if d.period != (None, None):
        lines.append(f"period: {_show(d.period[0])} -> {_show(d.period[1])}")
    if d.plan_changes:
        lines.append(f"plan: {len(d.plan_changes)} key(s) changed")
        lines += [f"  {k}: {_show(o)} -> {_show(n)}" for k, o, n in d.plan_changes]
    else:
        lines.append("plan: same keys and values" + (" (same hash)" if d.plan_hash[0] == d.plan_hash[1] else ""))
    changed = [x for x in d.data if x[1] != "same"]
    lines.append(f"data: {len(changed)} of {len(d.data)} file(s) differ" if changed else "data: the same files")
    for path, status, x, y in changed:
        lines.append(f"  {status} {_show(path)}" + (f" (rows {_show(_d(x).get('rows'))} -> {_show(_d(y).get('rows'))})"
                                                   if status == "changed" else ""))
    shown = d.numbers if all_numbers else d.changed_numbers
    lines.append(f"numbers: {len(d.changed_numbers)} of {len(d.numbers)} differ"
                 + ("" if all_numbers or not d.changed_numbers else " (--all shows every number)"))
    width = max((len(k) for k, _, _ in shown), default=0)
    lines += [f"  {k.ljust(width)}  {_show(x):>14}  {_show(y):>14}" + ("" if _same(x, y) else "  *")
              for k, x, y in shown]
    return "\n".join(lines) + "\n"


def to_markdown(d: ClaimDiff) -> str:
    """The diff as Markdown (values escaped): verdict, plan keys, data files and every number side by side."""
    from evalspec.report.markdown import md_text as m

    def cell(x: Any) -> str:
        return m(_show(x))

    out = [f"### evalspec diff: {m(d.a)} → {m(d.b)}", "",
           f"**Verdict:** {cell(d.verdict[0])} → {cell(d.verdict[1])}"
           + (" (changed)" if d.verdict[0] != d.verdict[1] else " (same)"), ""]
    if d.plan_changes:
        out += ["**Plan keys changed**", "", "| Key | A | B |", "| --- | --- | --- |"]
        out += [f"| {m(k)} | {cell(o)} | {cell(n)} |" for k, o, n in d.plan_changes]
    else:
        out.append("**Plan:** the same keys and values.")
    out += ["", "**Data**", "", "| File | Status | Rows A | Rows B |", "| --- | --- | --- | --- |"]
    out += [f"| {m(p)} | {s} | {cell(_d(x).get('rows'))} | {cell(_d(y).get('rows'))} |" for p, s, x, y in d.data]
    out += ["", "**Numbers**", "", "| Number | A | B | |", "| --- | --- | --- | --- |"]
    out += [f"| {m(k)} | {cell(x)} | {cell(y)} | {'' if _same(x, y) else 'changed'} |" for k, x, y in d.numbers]
    return "\n".join(out) + "\n"
