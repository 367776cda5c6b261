"""openai/evals record logs (``oaieval <completion_fn> <eval> --record_path run.jsonl``).

The record log is JSONL: a ``{"spec": ...}`` line (completion functions, eval name,
split, run id), a ``{"final_report": ...}`` line (the tool's own metrics, e.g. ``accuracy``
and ``boostrap_std`` [sic]), and one event a line: ``{"run_id", "event_id", "sample_id",
"type", "data", "created_at"}``. One row per outcome event:

* candidate = the completion function(s) of the spec (``coinflip-strong``), joined with
  ``+`` when there are several; ``data.candidate_from`` may name ``completion_fn``,
  ``eval_name``, ``base_eval``, ``split``, ``run_id`` instead;
* case = ``sample_id`` (``<eval>.<split>.<index>``); repeat = the order of the sample's
  outcome events in the log (1, 2, ...);
* outcome = ``data.correct`` of ``match`` events (the basic Match / Includes / FuzzyMatch
  evals); with ``select.metric`` the named key of ``metrics`` events (model-graded and custom
  evals record ``record_metrics(score=...)``); ``answer`` = ``data.picked``, ``response`` =
  ``data.sampled``, ``target`` = ``data.expected``;
* ``sampling`` events are counted, not read as outcomes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.results.adapters.base import (
    LogFile, Options, Rows, as_dict, bad_log, candidate_fields, candidate_name, compare_note, fields_shown, guard,
    iso_time, log_text, make_log_file, mean_or_none, number_or_none, read_bytes, sha256_of, valid_line,
)

__all__ = ["read", "sniff", "sniff_line", "TOOL"]

TOOL = "openai/evals"


def sniff_line(doc: Any) -> bool:
    """Whether the first line of a JSONL file is an openai/evals spec line."""
    spec = doc.get("spec") if isinstance(doc, dict) else None
    return isinstance(spec, dict) and ("completion_fns" in spec or "eval_name" in spec)


def sniff(doc: Any) -> bool:
    """A parsed JSON document is never an openai/evals log (those are JSONL)."""
    return False


def read(path: Path, display: str, options: Options) -> list[LogFile]:
    data = read_bytes(path, display)
    digest = sha256_of(data)
    text = log_text(data, display, "an openai/evals record log")
    spec: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    events: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise bad_log(display, f"line {number} is not valid JSON", "the record log may be truncated; rerun oaieval",
                          line=number) from None
        if not isinstance(obj, dict):
            raise bad_log(display, f"line {number} is not a JSON object", line=number)
        valid_line(obj, line, display, number)
        if "spec" in obj and spec is None:
            spec = as_dict(obj["spec"])
        elif "final_report" in obj:
            report = as_dict(obj["final_report"])
        elif "type" in obj and "sample_id" in obj:
            events.append((number, obj))
    if spec is None:
        raise bad_log(display, "is not an openai/evals record log (no {\"spec\": ...} line)",
                      "point data.results at the file oaieval wrote with --record_path")
    if report is None and not options.allow_partial:
        raise bad_log(display, "the record log has no final_report line: the oaieval run did not finish",
                      "rerun the evaluation, or set data.allow_partial: true (evalspec convert --allow-partial) to "
                      "read the events it logged, flagged as partial")
    with guard(display, TOOL, "events"):
        return [_rows(path, display, digest, spec, report, events, options)]


def _outcome_events(events: list[tuple[int, dict[str, Any]]], metric: str | None, display: str
                    ) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    types: dict[str, int] = {}
    for _, e in events:
        types[str(e.get("type"))] = types.get(str(e.get("type")), 0) + 1
    if metric is None:
        matches = [(n, e) for n, e in events if e.get("type") == "match"]
        if matches:
            return "match", matches
        keys = sorted({str(k) for _, e in events if e.get("type") == "metrics" for k in as_dict(e.get("data"))})
        found = ", ".join(f"{t} ({n})" for t, n in sorted(types.items())) or "none"
        raise bad_log(display, f"the log has no match events to read as outcomes (events: {found})",
                      "set data.select.metric to the key of its metrics events that is the outcome"
                      + (f" ({', '.join(keys)})" if keys else ""), key="select.metric")
    metrics = [(n, e) for n, e in events if e.get("type") == "metrics" and metric in as_dict(e.get("data"))]
    if not metrics:
        keys = sorted({str(k) for _, e in events if e.get("type") == "metrics" for k in as_dict(e.get("data"))})
        raise bad_log(display, f"no metrics event of the log records {metric!r}; its metrics events record "
                      f"{', '.join(keys) or 'nothing'}", "fix data.select.metric", key="select.metric", got=metric,
                      has_got=True)
    return "metrics", metrics


def _rows(path: Path, display: str, digest: str, spec: dict[str, Any], report: dict[str, Any] | None,
          events: list[tuple[int, dict[str, Any]]], options: Options) -> LogFile:
    kind, chosen = _outcome_events(events, options.metric, display)
    fns = spec.get("completion_fns")
    default = "+".join(map(str, fns)) if isinstance(fns, list) and fns else str(spec.get("completion_fn") or "unknown")
    fields = candidate_fields({"completion_fn": default, "model": default, "eval_name": spec.get("eval_name"),
                               "base_eval": spec.get("base_eval"), "split": spec.get("split"),
                               "run_id": spec.get("run_id")})
    candidate = candidate_name(default, fields, options, display, TOOL)
    created = iso_time(spec.get("created_at"))
    rows = Rows()
    counter: dict[str, int] = {}
    values: list[float | None] = []
    missing = 0
    for number, e in sorted(chosen, key=lambda ne: (_event_id(ne[1]), ne[0])):
        d = as_dict(e.get("data"))
        case = e.get("sample_id")
        if not isinstance(case, (str, int)) or isinstance(case, bool):
            raise bad_log(display, f"line {number}: the event's sample_id is not a name ({case!r})", line=number)
        counter[str(case)] = counter.get(str(case), 0) + 1
        raw = d.get("correct") if kind == "match" else d.get(options.metric or "")
        outcome: Any = raw if isinstance(raw, (bool, str)) else number_or_none(raw)
        if raw is not None and outcome is None:
            raise bad_log(display, f"line {number}: the outcome {str(raw)[:40]!r} is not a number or true/false",
                          line=number)
        if outcome is None:
            missing += 1
        record: dict[str, Any] = {"candidate": candidate, "case_id": case, "repeat": counter[str(case)],
                                  "outcome": outcome, "timestamp": iso_time(e.get("created_at")) or created,
                                  "event_type": kind, "event_id": e.get("event_id")}
        if kind == "match":
            record.update(answer=d.get("picked"), response=d.get("sampled"), target=d.get("expected"))
        else:
            for k, v in d.items():
                record.setdefault(f"metrics.{k}", v)
        rows.add(number, record)
        values.append(float(outcome) if isinstance(outcome, (bool, int, float)) else None)
    rep = report or {}
    name = "accuracy" if kind == "match" else options.metric or ""
    reported = number_or_none(rep.get(name))
    stderr = number_or_none(rep.get("bootstrap_std", rep.get("boostrap_std")))
    recomputed = mean_or_none(values)
    notes = [f"openai/evals reports {name} over the events it logged; its bootstrap_std resamples samples as "
             "independent (no clusters). evalspec reads each outcome event as one attempt and resamples the plan's "
             "clusters."]
    diff = compare_note(TOOL, reported, recomputed, "The final report and the events disagree; the log may have been "
                        "edited or several runs appended to one file.")
    if diff:
        notes.append(diff)
    if report is None:
        notes.append("The log has no final_report line: the run may not have finished.")
    sampling = sum(1 for _, e in events if e.get("type") == "sampling")
    provenance = {
        "tool": TOOL, "tool_version": None, "container": "jsonl", "files": [{"path": display, "sha256": digest}],
        "status": "success" if report is not None else "unknown", "partial": report is None,
        "candidate": candidate, "log_model": default, "candidate_fields": fields_shown(fields),
        "eval_name": spec.get("eval_name"), "split": spec.get("split"), "run_id": spec.get("run_id"),
        "seed": as_dict(spec.get("run_config")).get("seed"), "created": created,
        "selected": {"metric": options.metric, "events": kind}, "samples": len(counter), "errors": 0,
        "missing_outcomes": missing, "sampling_events": sampling,
        "reported": {"metric": name, "value": reported, "stderr": stderr, "recomputed_value": recomputed},
        "repeats": max(counter.values()) if counter else 0, "per_repeat_outcomes": True, "notes": notes,
    }
    return make_log_file(path, display, "openai_evals", digest, rows, "line", provenance)


def _event_id(e: dict[str, Any]) -> int:
    v = e.get("event_id")
    return v if isinstance(v, int) and not isinstance(v, bool) else 0
