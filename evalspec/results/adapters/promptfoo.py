"""promptfoo output files (``promptfoo eval -o results.json``), results format version 2 and 3.

The file is ``{evalId, results: {version, timestamp, results: [...], prompts, stats},
config, shareableUrl, metadata}`` (promptfoo's ``OutputFile``; its internal
``ResultsFile`` has the same ``results`` block). One row per entry of ``results.results``:

``promptfoo eval -o results.jsonl`` (one result a line, without the config) is read too.

* candidate = the provider's label, else its id; with several prompts in the file, the
  prompt's label is appended (``label|prompt``) — map either to plan keys with
  ``data.candidate_names``;
* case = ``select.case_field``: ``description``, ``vars.<name>`` or ``metadata.<name>``
  of the test case; default the test's number (0, 1, ...), a test being its description
  and vars. promptfoo gives every repeat of a test its own ``testIdx`` (0.120 numbers the
  repeats of test t as ``t * repeat + r``; the layout is not relied on, and ``--repeat``
  given on the command line is not written into the file), so the results of one test
  are its repeats, numbered in ``testIdx`` order;
* outcome = ``success``; ``failureReason == 2`` (a provider or runtime error, not a failed
  assertion) is a **missing outcome**, counted; ``select.metric`` picks a named score
  instead; ``score``, ``latency_s``, tokens and ``cost`` are carried; test vars and
  metadata become ``vars.<name>`` / ``metadata.<name>`` columns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.results.adapters.graders import promptfoo_model_assertions
from evalspec.results.adapters.base import (
    as_dict, candidate_fields, candidate_name, fields_shown, LogFile, Options, Rows, WrongTool, bad_log, compare_note, flatten_into, guard, iso_time, load_json, make_log_file,
    mean_or_none, read_bytes, sha256_of, valid_line,
)

__all__ = ["read", "sniff", "TOOL"]

TOOL = "promptfoo"
_ERROR = 2


def _block(doc: Any) -> Any:
    if isinstance(doc, dict) and isinstance(doc.get("results"), dict) and isinstance(doc["results"].get("results"),
                                                                                     list):
        return doc["results"]
    return None


def sniff(doc: Any) -> bool:
    """Whether a parsed JSON document looks like a promptfoo output file."""
    block = _block(doc)
    if block is None:
        return False
    return "evalId" in doc or "shareableUrl" in doc or "stats" in block or any(
        isinstance(r, dict) and "testIdx" in r for r in block["results"][:5])


def _jsonl_doc(data: bytes, display: str) -> dict[str, Any]:
    """``promptfoo eval -o results.jsonl``: one EvaluateResult a line, no config (repeats unknown)."""
    results = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise bad_log(display, f"line {number} is not valid JSON", "the file may be truncated; rerun promptfoo",
                          line=number) from None
        if not isinstance(obj, dict) or "testIdx" not in obj:
            raise bad_log(display, f"line {number} is not a promptfoo result (no testIdx)", line=number)
        valid_line(obj, line, display, number)
        results.append(obj)
    return {"results": {"version": 3, "results": results}, "jsonl": True}


def read(path: Path, display: str, options: Options) -> list[LogFile]:
    data = read_bytes(path, display)
    digest = sha256_of(data)
    if path.suffix.lower() == ".jsonl":
        doc: Any = _jsonl_doc(data, display)
        if not doc["results"]["results"]:
            raise bad_log(display, "the promptfoo output file has no results", "rerun promptfoo eval")
    else:
        doc = load_json(data, display, "a promptfoo output file (promptfoo eval -o results.json)")
    if not sniff(doc):
        raise WrongTool(display, doc, "a promptfoo output file",
                        "is JSON but not a promptfoo output file (no `results.results` list)",
                        "write the file with `promptfoo eval -o results.json` (or `promptfoo export`)")
    with guard(display, TOOL, "results"):
        return [_rows(path, display, digest, doc, options)]


def _index(result: dict[str, Any]) -> int:
    value = result.get("testIdx", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"testIdx is not a number: {value!r}")
    return int(value)


def _test_key(result: dict[str, Any]) -> str:
    """What makes a test the same test: its description and its vars."""
    test = as_dict(result.get("testCase"))
    vars_ = result.get("vars") if isinstance(result.get("vars"), dict) else test.get("vars")
    desc = result.get("description", test.get("description"))
    return json.dumps({"d": desc, "v": vars_}, sort_keys=True, default=str)


def _repeat_count(config: Any) -> int:
    if not isinstance(config, dict):
        return 1
    for block in ("evaluateOptions", "commandLineOptions"):
        b = config.get(block)
        if isinstance(b, dict) and isinstance(b.get("repeat"), (int, float)) and not isinstance(b["repeat"], bool):
            return max(1, int(b["repeat"]))
    return 1


def _case_key(result: dict[str, Any], field: str, display: str, position: int) -> Any:
    test = as_dict(result.get("testCase"))
    if field == "description":
        value = result.get("description", test.get("description"))
    elif field.startswith("vars."):
        vars_ = result.get("vars") if isinstance(result.get("vars"), dict) else test.get("vars") or {}
        value = vars_.get(field[5:]) if isinstance(vars_, dict) else None
    elif field.startswith("metadata."):
        meta = as_dict(test.get("metadata"))
        value = meta.get(field[9:])
    elif field == "testIdx":
        value = result.get("testIdx")
    else:
        raise bad_log(display, f"case_field {field!r} is not one promptfoo results have",
                      "use description, vars.<name>, metadata.<name> or testIdx", key="select.case_field")
    if value is None:
        raise bad_log(display, f"result {position} has no {field} to name its case", "fix data.select.case_field",
                      key="select.case_field", line=position)
    return value


def _candidate_fields(result: dict[str, Any], provider: Any, prompt: dict[str, Any]) -> dict[str, Any]:
    """The fields of a result a candidate's name may use (``data.candidate_from``)."""
    p = as_dict(result.get("provider"))
    label = prompt.get("label")
    prompt_file = None
    if isinstance(label, str) and ": " in label:  # a prompt read from a file is labelled "<file>: <text>"
        head = label.split(": ", 1)[0]
        if head and " " not in head and "." in head:
            prompt_file = head
    return candidate_fields({"provider": provider, "model": provider, "provider_id": p.get("id"),
                             "provider_label": p.get("label"), "prompt": label, "prompt_file": prompt_file,
                             "prompt_id": result.get("promptId") or prompt.get("id")},
                            config=as_dict(p.get("config")) or None)


def _rows(path: Path, display: str, digest: str, doc: dict[str, Any], options: Options) -> LogFile:
    block = _block(doc)
    version = block.get("version")
    results = [r for r in block["results"] if isinstance(r, dict)]
    if not results:
        raise bad_log(display, "the promptfoo output file has no results", "rerun promptfoo eval")
    config = as_dict(doc.get("config"))
    repeats = _repeat_count(config)
    prompt_ids = {(r.get("promptIdx"), ((r.get("prompt") or {}).get("label") if isinstance(r.get("prompt"), dict)
                                        else None)) for r in results}
    providers: dict[str, set[Any]] = {}
    for r in results:
        p = r.get("provider")
        name = (p.get("label") or p.get("id")) if isinstance(p, dict) else p
        providers.setdefault(str(name), set()).add(r.get("promptIdx"))
    several_prompts = any(len(v) > 1 for v in providers.values()) or (len(prompt_ids) > 1 and len(providers) == 1)
    # a test's identity: its description and vars; its repeats are the results with the same identity,
    # numbered in testIdx order (promptfoo gives each repeat its own testIdx; the layout changed across
    # versions and the CLI's --repeat is not always in the file, so no index arithmetic is assumed)
    first_idx: dict[str, int] = {}
    for r in results:
        key = _test_key(r)
        idx = _index(r)
        if key not in first_idx or idx < first_idx[key]:
            first_idx[key] = idx
    test_number = {k: n for n, k in enumerate(sorted(first_idx, key=lambda k: first_idx[k]))}
    n_tests = len(test_number)
    note_repeat = None
    when = iso_time(block.get("timestamp")) or iso_time(doc.get("createdAt"))
    rows = Rows()
    missing = 0
    failures = 0
    passes = 0
    counter: dict[tuple[str, str], int] = {}
    metric = options.metric
    order = sorted(range(len(results)), key=lambda i: (_index(results[i]), i))
    named_seen: set[str] = set()
    field_sets: dict[str, dict[str, str]] = {}
    cached_keys: dict[tuple[str, str], int] = {}
    for i in order:
        r = results[i]
        position = i + 1
        p = r.get("provider")
        prov = (p.get("label") or p.get("id")) if isinstance(p, dict) else p
        prompt = as_dict(r.get("prompt"))
        candidate = str(prov)
        if several_prompts:
            candidate = f"{prov}|{prompt.get('label') or r.get('promptIdx')}"
        fields = _candidate_fields(r, prov, prompt)
        candidate = candidate_name(candidate, fields, options, display, TOOL)
        field_sets.setdefault(str(candidate), fields_shown(fields))
        test_idx = _index(r)
        if options.case_field is None:
            case: Any = test_number[_test_key(r)]
        else:
            case = _case_key(r, options.case_field, display, position)
        key = (candidate, repr(case))
        counter[key] = counter.get(key, 0) + 1
        repeat = counter[key]
        reason = r.get("failureReason", 0)
        error = r.get("error")
        named = as_dict(r.get("namedScores"))
        named_seen.update(map(str, named))
        if reason == _ERROR:
            outcome: Any = None
            missing += 1
        elif metric is not None:
            outcome = named.get(metric)
        else:
            outcome = bool(r.get("success"))
            passes += outcome
            failures += not outcome
        record: dict[str, Any] = {"candidate": candidate, "case_id": case, "repeat": repeat, "outcome": outcome,
                                  "test_idx": test_idx, "prompt": prompt.get("label"), "timestamp": when,
                                  "error": str(error) if error and reason == _ERROR else None,
                                  "failure_reason": reason, "score": r.get("score")}
        if isinstance(r.get("latencyMs"), (int, float)):
            record["latency_s"] = r["latencyMs"] / 1000.0
        if isinstance(r.get("cost"), (int, float)):
            record["cost"] = r["cost"]
        usage = r.get("tokenUsage")
        if not isinstance(usage, dict):
            resp = as_dict(r.get("response"))
            usage = as_dict(resp.get("tokenUsage"))
        for src, dst in (("prompt", "input_tokens"), ("completion", "output_tokens"), ("total", "total_tokens")):
            if isinstance(usage.get(src), (int, float)) and not isinstance(usage.get(src), bool):
                record[dst] = usage[src]
        resp = as_dict(r.get("response"))
        if "output" in resp:
            record["response"] = resp.get("output")
        if resp.get("cached") is True:
            record["cached"] = True
            cached_keys.setdefault(key, 0)
            cached_keys[key] += 1
        for name, v in named.items():
            record[f"score.{name}"] = v
        test = as_dict(r.get("testCase"))
        record["description"] = r.get("description", test.get("description"))
        vars_ = r.get("vars") if isinstance(r.get("vars"), dict) else test.get("vars")
        flatten_into(record, vars_, prefix="vars.")
        flatten_into(record, test.get("metadata"), prefix="metadata.")
        rows.add(position, record)
    sizes = set(counter.values())
    if repeats > 1 and sizes and sizes != {repeats}:
        note_repeat = (f"The config says {repeats} repeats, but cases have {min(sizes)} to {max(sizes)} results per "
                       "candidate.")
    if metric is not None and metric not in named_seen:
        raise bad_log(display, f"named score {metric!r} is not in the results; they have "
                      f"{', '.join(sorted(named_seen)) or 'none'}", "fix data.select.metric", key="select.metric",
                      got=metric, has_got=True)
    per_candidate: dict[str, Any] = {}
    for pr in block.get("prompts") or []:
        m = as_dict(as_dict(pr).get("metrics"))
        counts = [m.get(k) for k in ("testPassCount", "testFailCount", "testErrorCount")]
        if all(isinstance(c, (int, float)) for c in counts) and sum(counts) > 0:
            label = str(pr.get("provider"))
            if several_prompts:
                label = f"{label}|{pr.get('label')}"
            per_candidate[label] = {"passes": counts[0], "failures": counts[1], "errors": counts[2],
                                    "pass_rate": counts[0] / sum(counts)}
    stats = as_dict(block.get("stats"))
    reported = None
    if all(isinstance(stats.get(k), (int, float)) for k in ("successes", "failures", "errors")):
        total = stats["successes"] + stats["failures"] + stats["errors"]
        reported = stats["successes"] / total if total else None
    recomputed = passes / (passes + failures + missing) if (passes + failures + missing) and metric is None else None
    notes = [
        "promptfoo counts a provider error (failureReason 2) as a failed test in its pass rate; evalspec reads it as "
        "a missing outcome and applies the plan's missing-outcome policy.",
    ]
    if note_repeat:
        notes.append(note_repeat)
    diff = compare_note("promptfoo", reported, recomputed,
                        "promptfoo's stats count every result of the file; a difference means the file was edited or "
                        "merged.")
    if diff:
        notes.append(diff)
    if missing:
        notes.append(f"{missing} result(s) are provider errors (failureReason 2): missing outcomes, not failures.")
    cached = sum(cached_keys.values())
    cached_repeats = sum(n for k, n in cached_keys.items() if counter.get(k, 0) > 1)
    if cached:
        notes.append(f"{cached} result(s) were served from promptfoo's cache (response.cached): the response of an "
                     "earlier call, not a new one" + (f"; {cached_repeats} of them are repeats of a case, which are "
                                                       "therefore copies, not independent attempts." if cached_repeats
                                                       else "."))
    meta = as_dict(doc.get("metadata"))
    provenance = {
        "tool": TOOL, "tool_version": meta.get("promptfooVersion"), "results_version": version,
        "container": "json", "files": [{"path": display, "sha256": digest}], "status": "success", "partial": False,
        "eval_id": doc.get("evalId"), "candidates": sorted({c for c, _ in counter}), "providers": sorted(providers), "repeats": max(counter.values()), "repeats_in_config": repeats,
        "tests": n_tests,
        "created": when, "selected": {"metric": metric, "case_field": options.case_field},
        "samples": len(rows), "errors": missing, "missing_outcomes": missing,
        "reported": {"metric": "pass rate (successes / all results)", "value": reported, "stderr": None,
                     "recomputed_value": mean_or_none([recomputed]) if recomputed is not None else None,
                     "per_candidate": per_candidate},
        "per_repeat_outcomes": True, "notes": notes, "candidate_fields_by_candidate": field_sets,
        "cached_results": cached, "cached_repeats": cached_repeats,
        "graded_by_model": promptfoo_model_assertions(results),
    }
    return make_log_file(path, display, "promptfoo", digest, rows, "result", provenance)
