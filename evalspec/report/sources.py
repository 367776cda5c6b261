"""What the evaluation tool itself reported, beside evalspec's numbers (tool logs only).

A run that reads inspect_ai, lm-evaluation-harness or promptfoo logs records, per log, the
tool's own headline number and standard error and the adapter's notes on how the tool's
statistic differs from what the plan asks for (``data.files[].provenance`` in the claim). A
decision owner who has seen "accuracy 0.9" in the tool and reads 70 % in the report needs both
numbers side by side and the reason they differ; :func:`tool_reports` arranges them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolReport", "tool_notes", "tool_reports"]

#: Tool names as their users know them.
_TOOLS = {"inspect": "inspect_ai", "inspect_ai": "inspect_ai", "lm_eval": "lm-evaluation-harness",
          "promptfoo": "promptfoo"}


@dataclass
class ToolReport:
    """One row: a log, the candidate it holds, and the number its tool reported."""

    path: str
    tool: str
    candidate: str  # the plan's key
    tool_name: str  # the tool's own name for it ('' when the same as ``candidate``)
    metric: str
    value: float | None
    stderr: float | None
    samples: int | None
    problems: list[str] = field(default_factory=list)  # partial run, errors, missing outcomes


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def _metric_name(rep: dict[str, Any]) -> str:
    if isinstance(rep.get("metric"), str) and rep["metric"]:
        return str(rep["metric"])
    value = _number(rep.get("value"))
    metrics = rep.get("metrics") if isinstance(rep.get("metrics"), dict) else {}
    name = next((str(k) for k, m in metrics.items() if isinstance(m, dict) and value is not None
                 and _number(m.get("value")) == value), "score")
    extras = [f"scorer {rep['scorer']}" if isinstance(rep.get("scorer"), str) else "",
              f"epochs reduced by {rep['reducer']}" if isinstance(rep.get("reducer"), str) else ""]
    extras = [e for e in extras if e]
    return f"{name} ({', '.join(extras)})" if extras else name


def _problems(prov: dict[str, Any]) -> list[str]:
    out = []
    if prov.get("partial") is True:
        out.append(f"the run did not finish (status {prov.get('status')!s})")
    for key, words in (("errors", "error"), ("missing_outcomes", "missing outcome")):
        n = prov.get(key)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            out.append(f"{n} {words}{'s' if n != 1 else ''}")
    return out


def tool_reports(claim: dict[str, Any]) -> list[ToolReport]:
    """One :class:`ToolReport` per tool log (per candidate, for a promptfoo file) the claim read."""
    files = (claim.get("data") or {}).get("files") if isinstance(claim.get("data"), dict) else None
    out: list[ToolReport] = []
    for f in files if isinstance(files, list) else []:
        prov = f.get("provenance") if isinstance(f, dict) else None
        if not isinstance(prov, dict) or not isinstance(prov.get("reported"), dict):
            continue
        rep = prov["reported"]
        tool = _TOOLS.get(str(prov.get("tool") or f.get("format")), str(prov.get("tool") or f.get("format")))
        names = prov.get("candidate_names") if isinstance(prov.get("candidate_names"), dict) else {}
        samples = prov.get("samples") if isinstance(prov.get("samples"), int) else None
        per = rep.get("per_candidate") if isinstance(rep.get("per_candidate"), dict) else {}
        if per:  # promptfoo: one file, every provider
            for name, stats in per.items():
                if isinstance(stats, dict):
                    key = str(names.get(name, name))
                    out.append(ToolReport(path=str(f.get("path")), tool=tool, candidate=key,
                                          tool_name="" if key == name else str(name), metric=_metric_name(rep),
                                          value=_number(stats.get("pass_rate")), stderr=None, samples=None,
                                          problems=_problems(prov)))
            continue
        name = str(prov.get("candidate") or "")
        key = str(names.get(name, name))
        out.append(ToolReport(path=str(f.get("path")), tool=tool, candidate=key, tool_name="" if key == name else name,
                              metric=_metric_name(rep), value=_number(rep.get("value")),
                              stderr=_number(rep.get("stderr")), samples=samples, problems=_problems(prov)))
    return out


def tool_notes(claim: dict[str, Any]) -> list[str]:
    """The adapters' notes on how each tool's statistic differs from the plan's, each once."""
    files = (claim.get("data") or {}).get("files") if isinstance(claim.get("data"), dict) else None
    notes: dict[str, None] = {}
    for f in files if isinstance(files, list) else []:
        prov = f.get("provenance") if isinstance(f, dict) else None
        if isinstance(prov, dict) and isinstance(prov.get("notes"), list):
            for n in prov["notes"]:
                if isinstance(n, str) and n.strip():
                    notes.setdefault(n.strip(), None)
    return list(notes)
