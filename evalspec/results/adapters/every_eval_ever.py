"""Every Eval Ever (``every-eval-ever`` 0.3.0): instance-level records in, aggregate results out.

**Reading.** An instance-level file is JSONL, one record a line (schema
``instance_level_eval.schema.json``, version 0.3.0): ``schema_version``, ``evaluation_id``,
``model_id``, ``evaluation_name``, ``evaluation_result_id``, ``sample_id``, ``input``,
``output``, ``evaluation: {score, is_correct}``, ``error``, ``metadata`` (text values; the
inspect_ai converter writes the sample's ``epoch`` there). One row per record:

* candidate = ``model_id`` (``data.candidate_from``: ``model_id``, ``evaluation_name``,
  ``evaluation_id``, ``metadata.<name>``);
* case = ``sample_id`` (``select.case_field``: ``sample_hash`` or ``metadata.<name>``);
  repeat = ``metadata.epoch`` when present, else the record's order among the sample's;
* outcome = ``evaluation.is_correct``; ``select.metric: score`` reads ``evaluation.score``;
  a record with an ``error`` is a missing outcome;
* ``select.task`` picks one ``evaluation_name`` (or ``evaluation_result_id``) when the file
  holds several. The aggregate file beside it (same ``evaluation_id``) gives the tool's own
  number when present.

**Writing.** :func:`aggregate_documents` turns a claim into one aggregate document per
candidate (``eval.schema.json``): the pass rate with the claim's interval, the number of
cases, and in ``score_details.details`` the clusters, the effective number of independent
units, the attempt rule and the verdict, as text (the schema's details are strings).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.results.adapters.base import (
    LogFile, Options, Rows, as_dict, bad_log, candidate_fields, candidate_name, compare_note, fields_shown, guard,
    flatten_into, log_text, make_log_file, mean_or_none, number_or_none, read_bytes, sha256_of, valid_line,
)

__all__ = ["read", "sniff", "sniff_line", "aggregate_documents", "datastore_path", "TOOL", "SCHEMA_VERSION"]

TOOL = "every-eval-ever"
SCHEMA_VERSION = "0.3.0"


def sniff_line(doc: Any) -> bool:
    """Whether a JSONL line is an Every Eval Ever instance-level record."""
    return isinstance(doc, dict) and "sample_id" in doc and "evaluation_id" in doc and isinstance(
        doc.get("evaluation"), dict) and "model_id" in doc


def sniff(doc: Any) -> bool:
    """A parsed JSON document is an aggregate file (read only for the tool's number), never the rows."""
    return False


def read(path: Path, display: str, options: Options) -> list[LogFile]:
    data = read_bytes(path, display)
    digest = sha256_of(data)
    text = log_text(data, display, "Every Eval Ever records")
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise bad_log(display, f"line {number} is not valid JSON", "the file may be truncated", line=number) from None
        if not sniff_line(obj):
            raise bad_log(display, f"line {number} is not an Every Eval Ever instance-level record (it needs "
                          "model_id, evaluation_id, sample_id and an evaluation block)", line=number)
        valid_line(obj, line, display, number)
        records.append((number, obj))
    if not records:
        raise bad_log(display, "the file holds no instance-level record")
    with guard(display, TOOL, "records"):
        return [_rows(path, display, digest, records, options)]


def _select(records: list[tuple[int, dict[str, Any]]], options: Options, display: str
            ) -> list[tuple[int, dict[str, Any]]]:
    names = sorted({str(r.get("evaluation_name")) for _, r in records})
    if options.task is not None:
        got = [(n, r) for n, r in records if options.task in (r.get("evaluation_name"), r.get("evaluation_result_id"))]
        if not got:
            raise bad_log(display, f"no record of evaluation {options.task!r}; the file has {', '.join(names)}",
                          "fix data.select.task", key="select.task", got=options.task, has_got=True)
        return got
    results = sorted({str(r.get("evaluation_result_id") or r.get("evaluation_name")) for _, r in records})
    if len(results) > 1:
        raise bad_log(display, f"the file holds several evaluation results ({', '.join(results[:6])}); evalspec needs "
                      "to know which one is the outcome", "set data.select.task to its evaluation_name or "
                      "evaluation_result_id")
    return records


def _case(r: dict[str, Any], field: str | None, display: str, number: int) -> Any:
    if field is None:
        value = r.get("sample_id")
    elif field == "sample_hash":
        value = r.get("sample_hash")
    elif field.startswith("metadata."):
        value = as_dict(r.get("metadata")).get(field[9:])
    else:
        raise bad_log(display, f"case_field {field!r} is not one Every Eval Ever records have",
                      "use sample_hash or metadata.<name> (default: sample_id)", key="select.case_field")
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise bad_log(display, f"line {number}: the record has no {field or 'sample_id'} to name its case",
                      line=number, key="select.case_field")
    return value


def _rows(path: Path, display: str, digest: str, records: list[tuple[int, dict[str, Any]]],
          options: Options) -> LogFile:
    chosen = _select(records, options, display)
    metric = options.metric
    if metric not in (None, "score", "is_correct"):
        raise bad_log(display, f"metric {metric!r} is not an Every Eval Ever outcome", "use is_correct (default) or "
                      "score", key="select.metric", got=metric, has_got=True)
    rows = Rows()
    counter: dict[tuple[str, str], int] = {}
    values: list[float | None] = []
    missing = errors = 0
    seen_fields: dict[str, dict[str, str]] = {}
    for number, r in chosen:
        meta = as_dict(r.get("metadata"))
        fields = candidate_fields({"model_id": r.get("model_id"), "model": r.get("model_id"),
                                   "evaluation_name": r.get("evaluation_name"),
                                   "evaluation_id": r.get("evaluation_id")}, metadata=meta)
        candidate = candidate_name(r.get("model_id"), fields, options, display, TOOL)
        seen_fields.setdefault(str(candidate), fields_shown(fields))
        case = _case(r, options.case_field, display, number)
        key = (str(candidate), str(case))
        counter[key] = counter.get(key, 0) + 1
        epoch = meta.get("epoch")
        repeat = int(epoch) if isinstance(epoch, str) and epoch.isdigit() else counter[key]
        ev = as_dict(r.get("evaluation"))
        raw = ev.get("score") if metric == "score" else ev.get("is_correct")
        outcome: Any = raw if isinstance(raw, bool) else number_or_none(raw)
        if r.get("error"):
            errors += 1
            outcome = None
        if outcome is None:
            missing += 1
        record: dict[str, Any] = {"candidate": candidate, "case_id": case, "repeat": repeat, "outcome": outcome,
                                  "task": r.get("evaluation_name"), "score": ev.get("score"),
                                  "error": str(r["error"])[:500] if r.get("error") else None,
                                  "target": json.dumps(as_dict(r.get("input")).get("reference")),
                                  "sample_hash": r.get("sample_hash")}
        answers = [a.get("extracted_value") for a in r.get("answer_attribution") or [] if isinstance(a, dict)]
        if answers:
            record["answer"] = answers[-1]
        usage = as_dict(r.get("token_usage"))
        for k in ("input_tokens", "output_tokens", "total_tokens"):
            if number_or_none(usage.get(k)) is not None:
                record[k] = usage[k]
        latency = number_or_none(as_dict(r.get("performance")).get("latency_ms"))
        if latency is not None:
            record["latency_s"] = latency / 1000.0
        flatten_into(record, meta, prefix="metadata.")
        rows.add(number, record)
        values.append(float(outcome) if isinstance(outcome, (bool, int, float)) else None)
    first = chosen[0][1]
    reported = _reported(path, display, first)
    recomputed = mean_or_none(values)
    notes = ["Every Eval Ever records one row per sample (and per epoch where the converter wrote it); evalspec reads "
             "each record as one attempt and applies the plan's attempt rule and missing-outcome policy."]
    if errors:
        notes.append(f"{errors} record(s) carry an error: evalspec counts them as missing outcomes.")
    diff = compare_note(TOOL, reported.get("value"), recomputed, "The aggregate file reduces repeats or counts errors "
                        "differently from the records read.") if metric != "score" else None
    if diff:
        notes.append(diff)
    provenance = {
        "tool": TOOL, "tool_version": first.get("schema_version"), "container": "jsonl",
        "files": reported.pop("files", []) + [{"path": display, "sha256": digest}], "status": "success",
        "partial": False, "candidates": sorted({c for c, _ in counter}), "candidate_fields_by_candidate": seen_fields,
        "evaluation_id": first.get("evaluation_id"), "evaluation_name": first.get("evaluation_name"),
        "selected": {"task": options.task, "metric": metric or "is_correct", "case_field": options.case_field},
        "samples": len(rows), "errors": errors, "missing_outcomes": missing,
        "reported": {**reported, "recomputed_value": recomputed},
        "repeats": max(counter.values()), "per_repeat_outcomes": True, "notes": notes,
    }
    return make_log_file(path, display, "every_eval_ever", digest, rows, "line", provenance)


def _reported(path: Path, display: str, first: dict[str, Any]) -> dict[str, Any]:
    """The aggregate file beside the records (same evaluation_id): its score for this result, if any."""
    from evalspec.results.adapters.base import read_bytes as _read

    want_id, want_result = first.get("evaluation_id"), first.get("evaluation_result_id")
    for agg in sorted(path.parent.glob("*.json"))[:50]:
        shown = str(Path(display).parent / agg.name)
        try:
            doc = json.loads(_read(agg, str(agg)))
        except Exception:  # noqa: BLE001 - a sibling that is not an aggregate file is simply not one
            continue
        if not isinstance(doc, dict) or doc.get("evaluation_id") != want_id:
            continue
        for res in doc.get("evaluation_results") or []:
            res = as_dict(res)
            if want_result is not None and res.get("evaluation_result_id") not in (None, want_result):
                continue
            sd = as_dict(res.get("score_details"))
            unc = as_dict(sd.get("uncertainty"))
            return {"metric": as_dict(res.get("metric_config")).get("metric_id") or res.get("evaluation_name"),
                    "value": number_or_none(sd.get("score")),
                    "stderr": number_or_none(as_dict(unc.get("standard_error")).get("value")),
                    "files": [{"path": shown, "sha256": sha256_of(_read(agg, shown))}]}
    return {"metric": None, "value": None, "stderr": None}


# -- writing: a claim's headline numbers as aggregate results -------------------------------


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


def aggregate_documents(claim: dict[str, Any], source: str = "evalspec") -> dict[str, dict[str, Any]]:
    """One Every Eval Ever aggregate document per candidate of ``claim`` (a parsed claim.json)."""
    cov = as_dict(claim.get("coverage"))
    plan = as_dict(claim.get("plan"))
    dec = as_dict(claim.get("decision"))
    rule = as_dict(cov.get("attempt_rule"))
    units = as_dict(cov.get("independent_units"))
    created = str(claim.get("created") or "")
    analyses = [a for a in claim.get("analyses") or [] if isinstance(a, dict)]
    props = next((as_dict(as_dict(a.get("result")).get("candidates")) for a in analyses
                  if a.get("kind") == "proportion"), {})
    out: dict[str, dict[str, Any]] = {}
    for name, entry in props.items():
        e = as_dict(entry)
        if number_or_none(e.get("estimate")) is None:
            continue
        cand = as_dict(as_dict(cov.get("candidates")).get(name))
        n = e.get("n")
        deff = number_or_none(e.get("design_effect"))
        details = {
            "cases": _text(n), "clusters": _text(e.get("n_clusters") or cov.get("clusters")),
            "cluster_column": _text(cov.get("cluster_column")),
            "independent_units": _text(f"{units.get('count')} {units.get('unit')}" if units else None),
            "effective_n": _text(round(n / deff, 3) if isinstance(n, int) and deff else units.get("count")),
            "effective_n_basis": "cases / design effect" if isinstance(n, int) and deff else
            "independent units (clusters, else cases)",
            "attempt_rule": _text(rule.get("rule")), "attempt_rule_k": _text(rule.get("k")),
            "attempts_per_case": _text(as_dict(cov.get("repeats")).get("planned")),
            "interval_method": _text(e.get("method")), "verdict": _text(dec.get("label")),
            "verdict_headline": _text(dec.get("headline")), "evalspec_claim_id": _text(plan.get("id")),
        }
        result = {
            "evaluation_result_id": f"{plan.get('id') or 'evalspec'}/{name}/pass_rate",
            "evaluation_name": str(plan.get("title") or plan.get("id") or "evalspec claim"),
            "source_data": {"dataset_name": str(as_dict(cov.get("dataset")).get("name") or cov.get("population")
                                                 or "unnamed"), "source_type": "other"},
            "metric_config": {"metric_id": "accuracy" if rule.get("rule") in (None, "first") else
                              f"evalspec.{rule.get('rule')}", "metric_name": "pass rate", "metric_kind": "pass_rate",
                              "metric_unit": "proportion", "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0, "max_score": 1,
                              "metric_parameters": {"k": rule.get("k")} if rule.get("k") else {}},
            "score_details": {"score": float(e["estimate"]), "details": details, "uncertainty": {
                "confidence_interval": {"lower": float(e["low"]), "upper": float(e["high"]),
                                        "confidence_level": float(e.get("confidence_level") or 0.95),
                                        "method": str(e.get("method"))},
                "num_samples": int(n) if isinstance(n, int) else 0}},
        }
        model = str(cand.get("model") or name)
        out[name] = {
            "schema_version": SCHEMA_VERSION, "evaluation_id": f"{plan.get('id') or 'evalspec'}/{name}",
            "retrieved_timestamp": created,
            "source_metadata": {"source_name": "evalspec claim", "source_type": "evaluation_run",
                                "source_organization_name": source, "evaluator_relationship": "other"},
            "eval_library": {"name": "evalspec", "version": str(claim.get("evalspec_version") or "unknown")},
            "model_info": {"name": model, "id": model, "developer": model.split("/")[0] if "/" in model else source,
                           "additional_details": {"plan_candidate": name, "deployment_type": "unknown",
                                                  "model_availability": "unknown"}},
            "evaluation_results": [result],
        }
    return out


def datastore_path(doc: dict[str, Any]) -> Path:
    """Where Every Eval Ever's datastore keeps ``doc``: ``data/<benchmark>/<developer>/<model>/<uuid>.json``."""
    import re
    import uuid

    def slug(text: Any) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-")[:80] or "unnamed"

    info = as_dict(doc.get("model_info"))
    model = str(info.get("id") or "model").split("/")[-1]
    bench = as_dict(as_dict((doc.get("evaluation_results") or [{}])[0]).get("source_data")).get("dataset_name")
    digest = sha256_of(f"evalspec:{doc.get('evaluation_id')}".encode("utf-8", "replace"))
    name = uuid.UUID(bytes=bytes.fromhex(digest[:32]), version=4)  # the layout asks for a UUID4; this one is stable
    return Path("data") / slug(bench) / slug(info.get("developer")) / slug(model) / f"{name}.json"
