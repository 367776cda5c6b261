"""lm-evaluation-harness output: ``results_<date>.json`` plus ``samples_<task>_<date>.jsonl``.

lm-eval (``--output_path DIR --log_samples``) writes, per run, one results file and one
samples file per task, named with the same date stamp (``DIR/<model>/results_<date>.json``;
with ``--output_path FILE.json``, ``FILE_<date>.json`` beside the samples). Versions
0.4.0-0.4.2 wrote ``results.json`` and ``<model_args>_<task>.jsonl`` holding one JSON
array; both layouts are read. One row per
document of the selected task, with the selected metric under the selected filter:

* case = the ``doc`` field ``select.case_field`` (top-level ``doc_id`` is only the row
  index; it is kept as ``doc_index``), else the row index;
* repeat = 1: lm-eval scores a document once, after its filter (``first``, ``maj@k``)
  has reduced the task's repeats — **per-repeat outcomes are not in the file**, and the
  provenance says so;
* the ``doc`` fields become columns (cluster and slices; a field named like a column
    evalspec writes, e.g. ``answer``, becomes ``doc.answer``); the raw generations count is
  ``n_repeats``; multiple-choice log-likelihoods (stored as strings) are parsed, the
  argmax is the ``answer``;
* candidate = ``model_name`` (else taken from ``model_args``: ``pretrained``, ``model``,
  ``path``..., as lm-eval does); ``date`` (epoch seconds) is the ``timestamp``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from evalspec.results.adapters.base import (
    as_dict, candidate_fields, candidate_name, fields_shown, LogFile, Options, Rows, WrongTool, bad_log, compare_note, flatten_into, guard, iso_time, load_json, make_log_file,
    mean_or_none, number_or_none, read_bytes, sha256_of, valid_line,
)

__all__ = ["read_many", "read", "sniff", "TOOL"]

TOOL = "lm-evaluation-harness"
_NAME_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def sniff(doc: Any) -> bool:
    """Whether a parsed JSON document looks like an lm-eval results file."""
    return (isinstance(doc, dict) and isinstance(doc.get("results"), dict)
            and ("lm_eval_version" in doc or "versions" in doc or "n-shot" in doc or "configs" in doc)
            and "eval" not in doc)


def _date_id(path: Path) -> str | None:
    """The date stamp lm-eval puts in the results file name (None for an undated ``results.json``)."""
    m = re.match(r"^(?:results|.+)_(\d{4}-\d{2}-\d{2}T[\d\-.]+)\.json$", path.name)
    return m.group(1) if m else None


def read(path: Path, display: str, options: Options) -> list[LogFile]:
    return read_many([path], lambda p: display if p == path else str(p), options)


def read_many(paths: list[Path], display: Any, options: Options) -> list[LogFile]:
    """Read results files (samples files named directly are matched to their results file)."""
    results: dict[Path, list[Path]] = {}
    for p in paths:
        if p.name.startswith("samples_") and p.suffix == ".jsonl":
            m = re.match(r"^samples_.+_(\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$", p.name)
            stamp = m.group(1) if m else None
            match = [q for q in p.parent.glob("*.json") if stamp and _date_id(q) == stamp]
            if not match:
                raise bad_log(display(p), "no lm-eval results file with the same date stamp sits beside this "
                              "samples file", "keep results_<date>.json next to its samples_<task>_<date>.jsonl")
            results.setdefault(match[0], []).append(p)
        else:
            results.setdefault(p, [])
    out: list[LogFile] = []
    for res_path, named_samples in results.items():
        out.append(_read_run(res_path, named_samples, display, options))
    return out


def _model_name(doc: dict[str, Any]) -> str | None:
    if isinstance(doc.get("model_name"), str) and doc["model_name"]:
        return doc["model_name"]
    cfg = as_dict(doc.get("config"))
    args = cfg.get("model_args")
    if isinstance(args, dict):
        for k in _NAME_KEYS:
            if k in args:
                return str(args[k])
    elif isinstance(args, str):
        for k in _NAME_KEYS:
            m = re.search(rf"(?:^|,)\s*{k}=([^,]*)", args)
            if m:
                return m.group(1)
    model = cfg.get("model")
    return str(model) if model is not None else None


def _model_args(args: Any) -> dict[str, Any]:
    """``model_args`` as a mapping (current versions write one; older ones ``k=v,...`` text)."""
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        pairs = [p.split("=", 1) for p in args.split(",") if "=" in p]
        return {k.strip(): v.strip() for k, v in pairs if k.strip()}
    return {}


def _candidate_fields(doc: dict[str, Any], cfg: dict[str, Any], task: str) -> dict[str, Any]:
    """The fields of the run a candidate's name may use (``data.candidate_from``)."""
    n_shot = doc.get("n-shot")
    return candidate_fields({"model": _model_name(doc), "model_type": cfg.get("model"), "task": task,
                             "system_instruction": doc.get("system_instruction"),
                             "n_shot": n_shot.get(task) if isinstance(n_shot, dict) else None},
                            model_args=_model_args(cfg.get("model_args")), gen_kwargs=as_dict(cfg.get("gen_kwargs")))


def _read_run(res_path: Path, named_samples: list[Path], display: Any, options: Options) -> LogFile:
    rdisp = display(res_path)
    data = read_bytes(res_path, rdisp)
    rdigest = sha256_of(data)
    doc = load_json(data, rdisp, "an lm-evaluation-harness results file")
    if not sniff(doc):
        raise WrongTool(rdisp, doc, "an lm-evaluation-harness results file",
                        "is JSON but not an lm-evaluation-harness results file (no `results` block with "
                        "`versions` / `lm_eval_version`)", "point data.results at results_<date>.json or its folder")
    with guard(rdisp, TOOL, "results file"):
        return _read_task(res_path, rdisp, rdigest, doc, named_samples, display, options)


def _read_task(res_path: Path, rdisp: str, rdigest: str, doc: dict[str, Any], named_samples: list[Path],
               display: Any, options: Options) -> LogFile:
    stamp = _date_id(res_path)
    results: dict[str, Any] = doc["results"]
    # samples files of this run, by task
    by_task: dict[str, Path] = {}
    candidates = named_samples or sorted(res_path.parent.glob("samples_*.jsonl"))
    for p in candidates:
        m = re.match(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$", p.name)
        if m is not None and (named_samples or stamp is None or m.group(2) == stamp):
            by_task[m.group(1)] = p
    if not by_task and not named_samples:  # lm-eval 0.4.0-0.4.2: <model_args>_<task>.jsonl beside results.json
        for t in results:
            olds = sorted(p for p in res_path.parent.glob(f"*_{t}.jsonl") if not p.name.startswith("samples_"))
            if olds:
                by_task[t] = olds[0]
    tasks = [t for t in results if t in by_task]
    if options.task is not None:
        if options.task not in results:
            raise bad_log(rdisp, f"task {options.task!r} is not in this results file; it has "
                          f"{', '.join(results) or 'none'}", "fix data.select.task", key="select.task",
                          got=options.task, has_got=True)
        if options.task not in by_task:
            raise bad_log(rdisp, f"no samples file for task {options.task!r} beside this results file (expected "
                          f"samples_{options.task}_{stamp}.jsonl)", "run lm-eval with --log_samples")
        task = options.task
    elif len(tasks) == 1:
        task = tasks[0]
    elif not tasks:
        raise bad_log(rdisp, "no samples_<task>_<date>.jsonl file sits beside this results file, so there are no "
                      "per-document outcomes to read", "run lm-eval with --log_samples and keep the samples files "
                      "next to the results file")
    else:
        raise bad_log(rdisp, f"the run holds several tasks ({', '.join(tasks)}); evalspec needs to know which one "
                      "the plan is about", "set data.select.task (evalspec convert --task NAME)")
    spath = by_task[task]
    sdisp = display(spath)
    sdata = read_bytes(spath, sdisp)
    sdigest = sha256_of(sdata)
    try:
        text = sdata.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad_log(sdisp, f"is not UTF-8 text (byte {exc.start})") from None
    lines: list[tuple[int, dict[str, Any]]] = []
    if text.lstrip().startswith("["):  # lm-eval 0.4.0-0.4.2 wrote the samples as one JSON array
        arr = load_json(sdata, sdisp, "lm-eval samples")
        if not isinstance(arr, list) or not all(isinstance(x, dict) for x in arr):
            raise bad_log(sdisp, "the samples file is a JSON array but not of sample objects")
        lines = [(i + 1, x) for i, x in enumerate(arr)]
        text = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise bad_log(sdisp, f"line {number} is not valid JSON ({msg})",
                          "the samples file may be truncated; rerun lm-eval", line=number) from None
        if not isinstance(obj, dict):
            raise bad_log(sdisp, f"line {number} is not a JSON object", line=number)
        valid_line(obj, line, sdisp, number)
        lines.append((number, obj))
    if not lines:
        raise bad_log(sdisp, "the samples file is empty: no per-document outcome to read",
                      "rerun lm-eval with --log_samples (and without --limit 0)")
    with guard(sdisp, TOOL, "samples"):
        return _rows(res_path, rdisp, rdigest, doc, task, spath, sdisp, sdigest, lines, options)


def _task_repeats(doc: dict[str, Any], task: str, filt: str, rows: Rows) -> tuple[int, list[str]]:
    """The task's generations per document (``configs[task].repeats``, else the longest ``resps``) and the
    functions of the selected filter (``take_first``, ``majority_vote``...)."""
    cfg = as_dict(as_dict(doc.get("configs")).get(task))
    reps = cfg.get("repeats")
    seen = max((r.get("n_repeats") or 1 for r in rows.records if isinstance(r.get("n_repeats"), int)), default=1)
    n = reps if isinstance(reps, int) and not isinstance(reps, bool) and 0 < reps < 10**6 else seen
    functions: list[str] = []
    for f in cfg.get("filter_list") or []:
        if isinstance(f, dict) and f.get("name") == filt and isinstance(f.get("filter"), list):
            functions = [str(x.get("function")) for x in f["filter"] if isinstance(x, dict)]
    return max(int(n), 1), functions


def _parse_ll(pair: Any) -> tuple[float, bool | None] | None:
    """``["-0.1", "True"]`` (log-likelihood, is-greedy) as numbers; None if not such a pair."""
    if isinstance(pair, list) and len(pair) == 1 and isinstance(pair[0], list):
        pair = pair[0]
    if not isinstance(pair, list) or not pair:
        return None
    try:
        ll = float(pair[0])
    except (TypeError, ValueError):
        return None
    greedy = None
    if len(pair) > 1:
        g = str(pair[1]).strip().lower()
        greedy = True if g == "true" else False if g == "false" else None
    return ll, greedy


def _rows(res_path: Path, rdisp: str, rdigest: str, doc: dict[str, Any], task: str, spath: Path, sdisp: str,
          sdigest: str, lines: list[tuple[int, dict[str, Any]]], options: Options) -> LogFile:
    filters: dict[str, None] = {}
    metrics: dict[str, None] = {}
    for _, s in lines:
        filters.setdefault(str(s.get("filter", "none")), None)
        for m in s.get("metrics") or []:
            metrics.setdefault(str(m), None)
    if not metrics:  # older files: metric values sit beside the known keys
        known = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
                 "prompt_hash", "target_hash"}
        for k in lines[0][1]:
            if k not in known:
                metrics.setdefault(k, None)
    metric = options.metric
    if metric is None:
        if len(metrics) != 1:
            raise bad_log(sdisp, f"task {task!r} has several metrics ({', '.join(metrics) or 'none'}); evalspec needs "
                          "to know which one is the outcome", "set data.select.metric (evalspec convert --metric NAME)")
        metric = next(iter(metrics))
    elif metric not in metrics:
        raise bad_log(sdisp, f"metric {metric!r} is not in the samples of task {task!r}; they have "
                      f"{', '.join(metrics) or 'none'}", "fix data.select.metric", key="select.metric", got=metric,
                      has_got=True)
    filt = options.filter
    if filt is None:
        if len(filters) != 1:
            raise bad_log(sdisp, f"task {task!r} was scored under several filters ({', '.join(filters)}); evalspec "
                          "needs to know which one is the outcome",
                          "set data.select.filter (evalspec convert --filter NAME), e.g. the first answer or maj@k")
        filt = next(iter(filters))
    elif filt not in filters:
        raise bad_log(sdisp, f"filter {filt!r} is not in the samples of task {task!r}; they have "
                      f"{', '.join(filters)}", "fix data.select.filter", key="select.filter", got=filt, has_got=True)
    cfg = as_dict(doc.get("config"))
    fields = _candidate_fields(doc, cfg, task)
    candidate = candidate_name(_model_name(doc), fields, options, rdisp, TOOL)
    when = iso_time(doc.get("date"))
    rows = Rows()
    values: list[float | None] = []
    missing = 0
    for number, s in lines:
        if str(s.get("filter", "none")) != filt:
            continue
        d = as_dict(s.get("doc"))
        if options.case_field is not None:
            if options.case_field not in d:
                raise bad_log(sdisp, f"the document has no field {options.case_field!r} for the case id; its fields "
                              f"are {', '.join(map(str, d)) or 'none'}", "fix data.select.case_field", line=number,
                              key="select.case_field", got=options.case_field, has_got=True)
            case = d[options.case_field]
        else:
            case = s.get("doc_id")
        value = s.get(metric)
        if isinstance(value, (list, dict)):
            raise bad_log(sdisp, f"the per-document value of metric {metric!r} is not one number ({type(value).__name__}"
                          "): lm-eval aggregates this metric over the whole corpus, so it has no per-case outcome",
                          "choose a per-document metric (acc, exact_match, ...) in data.select.metric", line=number)
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, (int, float)) and not isinstance(value, bool) and number_or_none(value) is None \
                and not (isinstance(value, float) and math.isnan(value)):
            raise bad_log(sdisp, f"the value of metric {metric!r} is not a finite number ({str(value)[:40]})",
                          "the samples file was damaged or edited; rerun lm-eval", line=number)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            missing += 1
            value = None
        record: dict[str, Any] = {"candidate": candidate, "case_id": case, "repeat": 1, "outcome": value,
                                  "task": task, "metric": metric, "filter": filt, "doc_index": s.get("doc_id"),
                                  "timestamp": when, "target": s.get("target")}
        resps = s.get("resps")
        if isinstance(resps, list) and resps and isinstance(resps[0], list):
            record["n_repeats"] = len(resps[0]) if all(not isinstance(x, list) for x in resps[0]) else 1
        fr = s.get("filtered_resps")
        if isinstance(fr, list) and fr:
            parsed = [_parse_ll(x) for x in fr]
            if len(fr) > 1 and all(p is not None for p in parsed):  # multiple choice: one log-likelihood per choice
                lls = [p[0] for p in parsed if p is not None]
                record["loglikelihoods"] = lls
                record["answer"] = max(range(len(lls)), key=lambda i: lls[i])
            else:
                first = fr[0]
                record["answer"] = first if not isinstance(first, list) else json.dumps(first)
        flatten_into(record, d, clash="doc.")
        rows.add(number, record)
        values.append(float(value) if isinstance(value, (int, float)) else None)
    if not len(rows):
        raise bad_log(sdisp, f"no sample line of task {task!r} has filter {filt!r}")
    task_results = doc["results"].get(task) if isinstance(doc["results"].get(task), dict) else {}
    rep_value = task_results.get(f"{metric},{filt}", task_results.get(metric) if filt == "none" else None)
    rep_stderr = task_results.get(f"{metric}_stderr,{filt}",
                                  task_results.get(f"{metric}_stderr") if filt == "none" else None)
    recomputed = mean_or_none(values)
    not_numbers = [f"{what} {v!r:.40}" for what, v in (("value", rep_value), ("stderr", rep_stderr))
                   if v is not None and number_or_none(v) is None]
    rep_value, rep_stderr = number_or_none(rep_value), number_or_none(rep_stderr)
    task_repeats, functions = _task_repeats(doc, task, filt, rows)
    if task_repeats > 1:
        how = ("its majority vote" if "majority_vote" in functions else
               "taking the first generation only (take_first): the other generations are not in the outcome"
               if "take_first" in functions else f"filter {filt!r}")
        first = (f"lm-eval generated {task_repeats} answers per document and scored one value per document after "
                 f"{how}: per-repeat outcomes are not in the file, so evalspec reads one attempt per case; the "
                 "attempt rule applies to that one value.")
    else:
        first = "lm-eval scored each document once (the task has one repeat); evalspec reads one attempt per case."
    notes = [
        first,
        "lm-eval's stderr treats documents as independent (no clusters); evalspec resamples the plan's clusters.",
    ]
    if options.case_field is None:
        notes.append("The case id is the row index of the document (top-level doc_id); set data.select.case_field "
                     "to a field of the document to pair with logs of other tools.")
    diff = compare_note("lm-eval", rep_value, recomputed,
                        "lm-eval averages the same per-document values; a difference means the samples file and "
                        "the results file are not from the same run.")
    if diff:
        notes.append(diff)
    if missing:
        notes.append(f"{missing} document(s) have no value for {metric!r}; evalspec counts them as missing outcomes.")
    if not_numbers:
        notes.append(f"The results file's reported {' and '.join(not_numbers)} for {metric},{filt} is not a finite "
                     "number; it is not shown as the tool's number.")
    provenance = {
        "tool": TOOL, "tool_version": doc.get("lm_eval_version"), "container": "results+samples",
        "files": [{"path": rdisp, "sha256": rdigest}, {"path": sdisp, "sha256": sdigest}], "status": "success",
        "partial": False, "candidate": candidate, "model": cfg.get("model"), "model_args": cfg.get("model_args"),
        "generate_config": cfg.get("gen_kwargs") or {}, "task": task,
        "task_version": (doc.get("versions") or {}).get(task) if isinstance(doc.get("versions"), dict) else None,
        "n_shot": (doc.get("n-shot") or {}).get(task) if isinstance(doc.get("n-shot"), dict) else None,
        "task_hash": (doc.get("task_hashes") or {}).get(task) if isinstance(doc.get("task_hashes"), dict) else None,
        "seeds": {k: cfg.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed") if k in cfg},
        "created": iso_time(doc.get("date")), "git_hash": doc.get("git_hash"),
        "selected": {"task": task, "metric": metric, "filter": filt, "case_field": options.case_field},
        "samples": len(rows), "errors": 0, "missing_outcomes": missing,
        "reported": {"metric": f"{metric},{filt}", "value": rep_value, "stderr": rep_stderr,
                     "recomputed_value": recomputed},
        "per_repeat_outcomes": False, "task_repeats": task_repeats, "filter_functions": functions,
        "repeats_reduced": task_repeats > 1, "notes": notes, "log_model": _model_name(doc),
        "candidate_fields": fields_shown(fields),
    }
    return make_log_file(spath, sdisp, "lm_eval", sdigest, rows, "line", provenance)
