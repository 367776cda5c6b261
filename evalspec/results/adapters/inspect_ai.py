"""inspect_ai logs: ``.eval`` (a zip of JSON members) and ``.json`` (one JSON document).

One row per sample-epoch: case = ``sample.id``, repeat = ``sample.epoch``, outcome = the
selected scorer's value (``C``/``I``/``P``/``N`` read as inspect reads them: 1, 0, 0.5, 0;
numbers and booleans as they are; a dict-valued score needs ``select.metric`` naming the
key). The sample's metadata keys become columns (cluster and slices), the served model
(``sample.output.model``) is ``model_version``, ``sample.started_at`` (else
``eval.created``) the ``timestamp``; per-sample time, tokens and cost are carried when the
log has them.

A sample with an error and no score is a **missing outcome**, counted in the provenance
and left to the plan's missing-outcome policy (inspect itself leaves it out of the
sample's epoch mean). A log whose run status is not ``success`` (``error``,
``cancelled``, ``started``) is refused unless the plan sets ``data.allow_partial``.

Format notes, from inspect_ai's own log reader: ``.eval`` members are zstd-compressed
(zip method 93) in current versions and DEFLATE in older ones; the log header is
``header.json`` (absent while a run is in progress: then ``_journal/start.json``); a sample
is one member ``samples/<id>_epoch_<n>.json`` or, in the chunked shape, a folder
``samples/<id>_epoch_<n>/`` holding ``sample.json`` and ``metadata.json``. Old logs store
one ``score`` per sample instead of ``scores``, and ``results.scorer`` instead of
``results.scores``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from evalspec.results.adapters.graders import inspect_model_scorer
from evalspec.results.adapters.base import (
    as_dict, candidate_fields, candidate_name, fields_shown, LogFile, Options, Rows, WrongTool, bad_log, compare_note, flatten_into, guard, iso_time, load_json, make_log_file,
    number_or_none, read_bytes, sha256_of,
)
from evalspec.results.adapters.zip_members import ZipLog, open_zip

__all__ = ["read", "sniff", "TOOL"]

TOOL = "inspect_ai"
_SCORE_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def sniff(doc: Any) -> bool:
    """Whether a parsed JSON document looks like an inspect_ai log."""
    return isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and "model" in doc["eval"] and (
        "status" in doc or "version" in doc)


def read(path: Path, display: str, options: Options) -> list[LogFile]:
    """Read one inspect_ai log (``.eval`` or ``.json``) into one :class:`LogFile`."""
    data = read_bytes(path, display)
    digest = sha256_of(data)
    if data[:4] == b"PK\x03\x04" or path.suffix.lower() == ".eval":
        header, samples, container = _read_zip(data, display)
    else:
        doc = load_json(data, display, "an inspect_ai log (.json)")
        if not sniff(doc):
            raise _not_inspect(doc, display)
        with guard(display, TOOL, "log"):
            samples = [(i + 1, _light(s) if isinstance(s, dict) else s) for i, s in enumerate(doc.get("samples") or [])]
            header = doc
        container = "json"
    with guard(display, TOOL, "samples"):
        got = _rows(path, display, digest, header, samples, container, options)
    return [] if got is None else [got]


def _not_inspect(doc: Any, display: str) -> Exception:
    return WrongTool(display, doc, "an inspect_ai log",
                     "is JSON but not an inspect_ai log (no `eval` block with a `model`)",
                     "point data.results at the .eval or .json files inspect wrote (inspect log convert --to json)")


# -- the zip container --------------------------------------------------------------------


def _read_zip(data: bytes, display: str) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]], str]:
    z = open_zip(data, display)
    by_name = z.members
    header = None
    if "header.json" in by_name:
        header = _member_json(z, "header.json")
    elif "_journal/start.json" in by_name:
        header = _member_json(z, "_journal/start.json")
        if isinstance(header, dict):
            header = {**header, "status": "started"}
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise bad_log(display, "is a zip file but not an inspect_ai .eval log (no header.json or "
                      "_journal/start.json with an `eval` block)", "point data.results at the logs inspect wrote")
    samples: list[tuple[int, dict[str, Any]]] = []
    position = 0
    for name in by_name:
        if not name.startswith("samples/") or not name.endswith(".json"):
            continue
        parts = name.split("/")
        if len(parts) == 2:  # monolith sample
            doc = _member_json(z, name)
        elif len(parts) == 3 and parts[2] == "sample.json":  # chunked shell; metadata lives beside it
            doc = _member_json(z, name)
            meta = f"{parts[0]}/{parts[1]}/metadata.json"
            if isinstance(doc, dict) and meta in by_name:
                doc = {**doc, "metadata": _member_json(z, meta)}
        else:
            continue
        if not isinstance(doc, dict):
            raise bad_log(display, f"sample member {name} is not a JSON object")
        position += 1
        samples.append((position, _light(doc)))
    return header, samples, "eval"


_HEAVY = ("events", "messages", "attachments", "events_data", "store", "input", "timelines")


def _light(sample: dict[str, Any]) -> dict[str, Any]:
    """The sample without its transcript (events, messages...): not read, and costly to keep."""
    for key in _HEAVY:
        sample.pop(key, None)
    output = sample.get("output")
    if isinstance(output, dict):
        sample["output"] = {"model": output.get("model"), "choices": bool(output.get("choices"))}
    return sample


def _member_json(z: ZipLog, name: str) -> Any:
    return load_json(z.read(name), f"{z.display}[{name}]", "a JSON member")


# -- rows ---------------------------------------------------------------------------------


def _scores_of(sample: dict[str, Any], first_scorer: str | None) -> dict[str, Any]:
    scores = sample.get("scores")
    if scores is None and isinstance(sample.get("score"), dict):  # old logs: one `score`
        return {first_scorer or "score": sample["score"]}
    return scores if isinstance(scores, dict) else {}


def _result_scores(header: dict[str, Any]) -> list[dict[str, Any]]:
    results = header.get("results")
    if not isinstance(results, dict):
        return []
    if isinstance(results.get("scores"), list):
        return [s for s in results["scores"] if isinstance(s, dict)]
    if isinstance(results.get("scorer"), dict):  # old logs: one scorer, metrics beside it
        s = dict(results["scorer"])
        s.setdefault("scorer", s.get("name"))
        s["metrics"] = results.get("metrics") or {}
        return [s]
    return []


def value_to_float(value: Any) -> float | None:
    """A score value as inspect's ``value_to_float`` reads it; None if it is not one number."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, str):
        s = value.strip()
        if s.upper() in _SCORE_LETTERS:
            return _SCORE_LETTERS[s.upper()]
        low = s.lower()
        if low in ("yes", "true"):
            return 1.0
        if low in ("no", "false"):
            return 0.0
        try:
            v = float(s)
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


def _rows(path: Path, display: str, digest: str, header: dict[str, Any], samples: list[tuple[int, dict[str, Any]]],
          container: str, options: Options) -> LogFile | None:
    ev = header["eval"]
    task = ev.get("task")
    if options.task is not None and task != options.task:
        return None  # a log of another task in the folder: skipped, and listed in the provenance
    status = header.get("status", "started")
    err = header.get("error")
    err_msg = (err.get("message") if isinstance(err, dict) else err) if err else None
    partial = status != "success"
    if partial and not options.allow_partial:
        why = f": {str(err_msg).splitlines()[0][:200]}" if err_msg else ""
        raise bad_log(display, f"the inspect_ai run did not finish (status {status!r}{why}); its samples may be "
                      "incomplete or biased toward the cases that ran first",
                      "rerun the evaluation, or set data.allow_partial: true (evalspec convert --allow-partial) to "
                      "read the samples it completed, flagged as partial", key="status", got=status, has_got=True)
    reported = _result_scores(header)
    first_scorer = reported[0].get("scorer") or reported[0].get("name") if reported else None
    # which scorer is the outcome
    seen: dict[str, None] = {}
    for _, s in samples:
        for k in _scores_of(s, first_scorer):
            seen.setdefault(k, None)
    for r in reported:
        seen.setdefault(str(r.get("scorer") or r.get("name")), None)
    scorer = options.scorer
    if scorer is None:
        if len(seen) > 1:
            raise bad_log(display, f"the log has several scorers ({', '.join(seen)}); evalspec needs to know which "
                          "one is the outcome", "set data.select.scorer (evalspec convert --scorer NAME)")
        scorer = next(iter(seen), None)
    elif seen and scorer not in seen:
        raise bad_log(display, f"scorer {scorer!r} is not in the log; it has {', '.join(seen) or 'none'}",
                      "fix data.select.scorer", key="select.scorer", got=scorer, has_got=True)
    if not samples:
        raise bad_log(display, "the log has no samples (was it written with --no-log-samples, or did the run stop "
                      "before any sample finished?)", "rerun with sample logging on")
    fields = _candidate_fields(header)
    candidate = candidate_name(ev.get("model"), fields, options, display, TOOL)
    created = iso_time(ev.get("created"))
    rows = Rows()
    errors = 0
    unscored = 0
    invalidated = 0
    dict_keys: set[str] = set()
    per_case: dict[str, list[float]] = {}
    for position, s in samples:
        scores = _scores_of(s, first_scorer)
        sc = scores.get(scorer) if scorer is not None else None
        value = sc.get("value") if isinstance(sc, dict) else None
        if isinstance(value, dict):
            dict_keys.update(map(str, value))
            if options.metric is None:
                raise bad_log(display, f"scorer {scorer!r} gives several values per sample ({', '.join(map(str, value))})",
                              "set data.select.metric to the one that is the outcome", key="select.metric")
            if options.metric not in value:
                raise bad_log(display, f"metric {options.metric!r} is not among the values of scorer {scorer!r} "
                              f"({', '.join(map(str, value))})", "fix data.select.metric", key="select.metric",
                              got=options.metric, has_got=True)
            value = value[options.metric]
        if isinstance(value, list):
            raise bad_log(display, f"scorer {scorer!r} gives a list per sample, not one value", key="scores",
                          line=position)
        error = s.get("error")
        error_text = (error.get("message") if isinstance(error, dict) else error) if error else None
        if s.get("invalidation"):
            invalidated += 1
            value = None
            error_text = error_text or "sample invalidated"
        if value is None:
            unscored += 1
            if error_text:
                errors += 1
        outcome = value
        if isinstance(value, str) and value.strip().upper() in _SCORE_LETTERS:
            outcome = _SCORE_LETTERS[value.strip().upper()]
        record: dict[str, Any] = {
            "candidate": candidate, "case_id": s.get("id"), "repeat": s.get("epoch", 1), "outcome": outcome,
            "task": task, "scorer": scorer,
        }
        output = s.get("output")
        model = output.get("model") if isinstance(output, dict) else None
        if isinstance(output, dict) and not output.get("choices"):
            model = None  # no generation (an errored sample): inspect fills in the requested model name
        record["model_version"] = model or None
        record["timestamp"] = iso_time(s.get("started_at")) or created
        record["error"] = str(error_text) if error_text else None
        if isinstance(sc, dict) and "answer" in sc:
            record["answer"] = sc.get("answer")
        target = s.get("target")
        record["target"] = target
        if s.get("total_time") is not None:
            record["latency_s"] = s.get("total_time")
        if s.get("working_time") is not None:
            record["working_time_s"] = s.get("working_time")
        usage = s.get("model_usage")
        if isinstance(usage, dict) and usage:
            totals: dict[str, float] = {}
            for u in usage.values():
                if not isinstance(u, dict):
                    continue
                for src, dst in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                                 ("total_tokens", "total_tokens"), ("total_cost", "cost")):
                    if isinstance(u.get(src), (int, float)) and not isinstance(u.get(src), bool):
                        totals[dst] = totals.get(dst, 0) + u[src]
            record.update(totals)
        limit = s.get("limit")
        if isinstance(limit, dict):
            record["limit"] = limit.get("type")
        flatten_into(record, s.get("metadata"))
        rows.add(position, record)
        f = value_to_float(value)
        per_case.setdefault(str(s.get("id")), [])
        if f is not None:
            per_case[str(s.get("id"))].append(f)

    provenance = _provenance(display, digest, header, container, scorer, reported, status, err_msg, len(samples),
                             errors, unscored, invalidated, per_case, options)
    provenance.update(candidate=candidate, log_model=ev.get("model"), candidate_fields=fields_shown(fields))
    return make_log_file(path, display, "inspect", digest, rows, "sample", provenance)


def _candidate_fields(header: dict[str, Any]) -> dict[str, Any]:
    """The fields of the log a candidate's name may use (``data.candidate_from``)."""
    ev = header["eval"]
    steps = as_dict(header.get("plan")).get("steps")
    solver = ev.get("solver")
    if not solver and isinstance(steps, list):
        solver = "+".join(str(as_dict(st).get("solver")) for st in steps if as_dict(st).get("solver")) or None
    dataset = as_dict(ev.get("dataset")).get("name")
    return candidate_fields({"model": ev.get("model"), "task": ev.get("task"), "solver": solver,
                             "tags": ev.get("tags") or header.get("tags") or None, "dataset": dataset},
                            task_args=ev.get("task_args"), model_args=ev.get("model_args"),
                            metadata=ev.get("metadata"), solver_args=ev.get("solver_args"),
                            generate_config=ev.get("model_generate_config"))


def _provenance(display: str, digest: str, header: dict[str, Any], container: str, scorer: str | None,
                reported: list[dict[str, Any]], status: str, err_msg: Any, n: int, errors: int, unscored: int,
                invalidated: int, per_case: dict[str, list[float]], options: Options) -> dict[str, Any]:
    ev = header["eval"]
    packages = as_dict(ev.get("packages"))
    config = as_dict(ev.get("config"))
    rep = next((r for r in reported if (r.get("scorer") or r.get("name")) == scorer), None)
    tool_metrics: dict[str, Any] = {}
    if rep is not None and isinstance(rep.get("metrics"), dict):
        for key, m in rep["metrics"].items():
            if isinstance(m, dict):
                tool_metrics[key] = {"name": m.get("name", key), "value": number_or_none(m.get("value")),
                                     "params": m.get("params") or {}}
    reducer = rep.get("reducer") if rep else None
    by_reducer = _by_reducer(reported, scorer)
    means = [sum(v) / len(v) for v in per_case.values() if v]
    recomputed = sum(means) / len(means) if means else None
    acc = tool_metrics.get("accuracy", {}).get("value") if "accuracy" in tool_metrics else (
        tool_metrics.get("mean", {}).get("value"))
    stderr = next((m["value"] for m in tool_metrics.values() if m["name"] == "stderr" and not m["params"]), None)
    notes = [
        f"inspect_ai reduces the epochs of each sample first (reducer {reducer or config.get('epochs_reducer')!r}) "
        "and computes its metrics over samples: its accuracy is a mean of per-sample means and its stderr treats the "
        "samples as independent (n = samples, not epochs; clusters only where a clustered stderr was configured). "
        "evalspec keeps every epoch as a row, applies the plan's attempt rule and missing-outcome policy, and "
        "resamples the plan's clusters.",
    ]
    if unscored:
        notes.append(f"{unscored} sample-epoch(s) have no score ({errors} with an error"
                     + (f", {invalidated} invalidated" if invalidated else "") + "); inspect_ai leaves them out of "
                     "the epoch mean without counting them, evalspec counts them as missing outcomes.")
    if reducer == "mean" and acc is not None:
        diff = compare_note("inspect_ai", acc, recomputed,
                            "The log's scores and its reported metric disagree; the log may have been rescored or "
                            "edited.")
        if diff:
            notes.append(diff)
    epochs, reducers = config.get("epochs"), config.get("epochs_reducer")
    copied = _epoch_copies(header, epochs, per_case)
    if copied:
        notes.append(f"The solver generates with a cache that is shared across epochs (generate(cache=CachePolicy("
                     f"per_epoch=False))): epochs 2 to {epochs} of a sample replay its first response, so "
                     f"{copied} sample-epoch(s) are copies, not independent attempts.")
    if isinstance(epochs, int) and epochs > 1 and reducers == []:
        notes.append(f"inspect_ai ran without an epoch reducer (--no-epochs-reducer): its metrics treat each of the "
                     f"{n} sample-epochs as its own sample, so its stderr counts the {epochs} epochs of a sample as "
                     "independent cases. evalspec keeps the epochs of a sample as repeats of one case.")
    if partial := status != "success":
        notes.append(f"The run status is {status!r}: the samples read are a partial run, read because "
                     "data.allow_partial is set.")
    return {
        "tool": TOOL, "tool_version": packages.get("inspect_ai"), "log_format_version": header.get("version"),
        "container": container, "files": [{"path": display, "sha256": digest}], "status": status,
        "partial": partial, "run_error": str(err_msg).splitlines()[0][:500] if err_msg else None,
        "candidate": ev.get("model"), "model_args": ev.get("model_args") or {},
        "generate_config": {**as_dict(as_dict(header.get("plan")).get("config")),
                            **as_dict(ev.get("model_generate_config"))}, "task": ev.get("task"),
        "task_version": ev.get("task_version"), "task_args": ev.get("task_args") or {},
        "eval_metadata": ev.get("metadata") or {}, "tags": ev.get("tags") or header.get("tags") or [],
        "run_id": ev.get("run_id"), "eval_id": ev.get("eval_id"),
        "dataset": (ev.get("dataset") or {}).get("name") if isinstance(ev.get("dataset"), dict) else None,
        "epochs": config.get("epochs"), "created": iso_time(ev.get("created")), "selected": {"scorer": scorer,
                                                                                               "metric": options.metric},
        "samples": n, "errors": errors, "missing_outcomes": unscored, "invalidated": invalidated,
        "reported": {"scorer": scorer, "reducer": reducer, "metrics": tool_metrics, "value": acc, "stderr": stderr,
                     "recomputed_value": recomputed, "by_reducer": by_reducer},
        "per_repeat_outcomes": True, "notes": notes, "graded_by_model": inspect_model_scorer(scorer),
        **({"copied_repeats": {"count": copied, "why": "inspect_ai's generate cache is shared across epochs "
                               "(CachePolicy per_epoch=False): later epochs replay the first response",
                               "fix": "rerun without the cache, or with CachePolicy(per_epoch=True)"}}
           if copied else {}),
    }


def _by_reducer(reported: list[dict[str, Any]], scorer: str | None) -> dict[str, dict[str, float | None]]:
    """The selected scorer's metrics under each epoch reducer the run used (``mean``, ``pass_at_2``...)."""
    out: dict[str, dict[str, float | None]] = {}
    for r in reported:
        if (r.get("scorer") or r.get("name")) != scorer or not isinstance(r.get("metrics"), dict):
            continue
        key = str(r.get("reducer")) if r.get("reducer") is not None else "none"
        out[key] = {str(m.get("name", k)): number_or_none(m.get("value")) for k, m in r["metrics"].items()
                    if isinstance(m, dict) and not m.get("params")}
    return out


def _epoch_copies(header: dict[str, Any], epochs: Any, per_case: dict[str, list[float]]) -> int:
    """Sample-epochs replayed from a cache shared across epochs (a generate step with per_epoch false)."""
    if not isinstance(epochs, int) or epochs < 2:
        return 0
    for step in as_dict(header.get("plan")).get("steps") or []:
        cache = as_dict(as_dict(step).get("params")).get("cache")
        if isinstance(cache, dict) and cache.get("per_epoch") is False:
            return sum(max(len(v) - 1, 0) for v in per_case.values())
    return 0
