"""HELM run folders (``crfm-helm``, ``helm-run ... -o OUT``: ``OUT/runs/<suite>/<run name>/``).

A run folder holds ``run_spec.json`` (the scenario, the adapter spec with the model, the
instructions and the number of train trials), ``per_instance_stats.json`` (one entry per
instance and train trial: ``{instance_id, train_trial_index, stats: [{name: {name, split,
perturbation?}, mean, ...}]}``), ``scenario_state.json`` (the requests and completions) and
``stats.json`` (HELM's aggregates). One row per instance and train trial:

* candidate = ``adapter_spec.model`` (``data.candidate_from``: ``model``, ``run_name``,
  ``instructions``, ``adapter.<name>``, ``scenario``, ``scenario_args.<name>``);
* case = ``instance_id``; repeat = ``train_trial_index + 1``: a HELM *train trial* draws
  other in-context examples, so a repeat is a different few-shot prompt, not a redraw of
  the same one;
* outcome = the per-instance stat named by ``select.metric`` (default ``exact_match``) on
  the test split, without perturbation (perturbed entries are counted and left out);
  ``answer`` = the first completion, ``target`` = the references tagged correct.

HELM's own number (``stats.json``, the same metric on the test split) is the mean over
train trials of the per-trial means over instances.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalspec.results.adapters.base import (
    LogFile, Options, Rows, as_dict, bad_log, candidate_fields, candidate_name, compare_note, fields_shown, guard,
    load_json, make_log_file, mean_or_none, number_or_none, read_bytes, sha256_of,
)

__all__ = ["read", "sniff", "run_folder", "TOOL"]

TOOL = "HELM"
_SPLITS = ("test", "valid")


def sniff(doc: Any) -> bool:
    """Whether a parsed JSON document is a HELM run spec (``run_spec.json``)."""
    return isinstance(doc, dict) and isinstance(doc.get("adapter_spec"), dict) and "scenario_spec" in doc \
        and "metric_specs" in doc


def run_folder(path: Path) -> Path | None:
    """The run folder of ``path`` (the folder itself, or the folder of one of its files), or None."""
    folder = path if path.is_dir() else path.parent
    return folder if (folder / "per_instance_stats.json").is_file() and (folder / "run_spec.json").is_file() else None


def _json(path: Path, display: str, what: str) -> tuple[Any, str]:
    data = read_bytes(path, display)
    return load_json(data, display, what), sha256_of(data)


def read(path: Path, display: str, options: Options) -> list[LogFile]:
    folder = run_folder(path)
    if folder is None:
        raise bad_log(display, "is not a HELM run folder (it needs run_spec.json and per_instance_stats.json)",
                      "point data.results at the run folders under OUT/runs/<suite>/ that helm-run wrote")
    base = display if path.is_dir() else str(Path(display).parent)
    spec_d, stats_d = f"{base}/run_spec.json", f"{base}/per_instance_stats.json"
    spec, spec_sha = _json(folder / "run_spec.json", spec_d, "a HELM run_spec.json")
    if not sniff(spec):
        raise bad_log(spec_d, "is not a HELM run spec (no adapter_spec / scenario_spec / metric_specs)")
    per, per_sha = _json(folder / "per_instance_stats.json", stats_d, "HELM per_instance_stats.json")
    if not isinstance(per, list):
        raise bad_log(stats_d, "is not a list of per-instance entries")
    files = [{"path": spec_d, "sha256": spec_sha}]
    extra: dict[str, Any] = {}
    for name, what in (("scenario_state.json", "HELM scenario_state.json"), ("stats.json", "HELM stats.json")):
        if (folder / name).is_file():
            doc, sha = _json(folder / name, f"{base}/{name}", what)
            extra[name] = doc
            files.append({"path": f"{base}/{name}", "sha256": sha})
    files.append({"path": stats_d, "sha256": per_sha})  # the rows' file last, as lm-eval's samples file
    with guard(stats_d, TOOL, "per-instance stats"):
        return [_rows(folder / "per_instance_stats.json", stats_d, per_sha, spec, per, extra, files, options)]


def _stat(stats: Any, metric: str) -> tuple[Any, bool]:
    """(value, found) of ``metric`` on the test (else valid) split, without perturbation."""
    found = False
    for split in _SPLITS:
        for s in stats if isinstance(stats, list) else []:
            name = as_dict(as_dict(s).get("name"))
            if name.get("name") != metric or "perturbation" in name:
                continue
            found = True
            if name.get("split") == split:
                return as_dict(s).get("mean"), True
    return None, found


def _completions(state: Any) -> dict[tuple[str, int], dict[str, Any]]:
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for rs in as_dict(state).get("request_states") or []:
        rs = as_dict(rs)
        inst = as_dict(rs.get("instance"))
        if inst.get("perturbation"):
            continue
        comps = as_dict(rs.get("result")).get("completions") or []
        refs = [as_dict(as_dict(r).get("output")).get("text") for r in inst.get("references") or []
                if "correct" in (as_dict(r).get("tags") or [])]
        out[(str(inst.get("id")), int(rs.get("train_trial_index") or 0))] = {
            "answer": as_dict(comps[0]).get("text") if comps else None, "target": refs[0] if len(refs) == 1 else
            (json.dumps(refs) if refs else None), "split": inst.get("split"), "sub_split": inst.get("sub_split"),
            "cached": as_dict(rs.get("result")).get("cached")}
    return out


def _rows(path: Path, display: str, digest: str, spec: dict[str, Any], per: list[Any], extra: dict[str, Any],
          files: list[dict[str, Any]], options: Options) -> LogFile:
    adapter = as_dict(spec.get("adapter_spec"))
    scen = as_dict(spec.get("scenario_spec"))
    metric = options.metric or "exact_match"
    fields = candidate_fields({"model": adapter.get("model"), "model_deployment": adapter.get("model_deployment"),
                               "run_name": spec.get("name"), "instructions": adapter.get("instructions"),
                               "scenario": scen.get("class_name")},
                              adapter={k: v for k, v in adapter.items() if isinstance(v, (str, int, float, bool))},
                              scenario_args=as_dict(scen.get("args")))
    candidate = candidate_name(adapter.get("model"), fields, options, display, TOOL)
    done = _completions(extra.get("scenario_state.json"))
    rows = Rows()
    perturbed = missing = 0
    by_trial: dict[int, list[float]] = {}
    names: set[str] = set()
    for position, e in enumerate(per, start=1):
        e = as_dict(e)
        if e.get("perturbation"):
            perturbed += 1
            continue
        stats = e.get("stats")
        names.update(str(as_dict(as_dict(s).get("name")).get("name")) for s in stats or [] if isinstance(s, dict))
        value, _ = _stat(stats, metric)
        outcome = number_or_none(value)
        if value is not None and outcome is None:
            raise bad_log(display, f"entry {position}: {metric} is not a number ({str(value)[:40]})", line=position)
        trial = e.get("train_trial_index", 0)
        if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
            raise bad_log(display, f"entry {position}: train_trial_index is not a count ({trial!r})", line=position)
        case = e.get("instance_id")
        if not isinstance(case, (str, int)) or isinstance(case, bool):
            raise bad_log(display, f"entry {position}: the entry has no instance_id", line=position)
        if outcome is None:
            missing += 1
        else:
            by_trial.setdefault(trial, []).append(outcome)
        record: dict[str, Any] = {"candidate": candidate, "case_id": case, "repeat": trial + 1, "outcome": outcome,
                                  "metric": metric, "train_trial": trial}
        record.update({k: v for k, v in done.get((str(case), trial), {}).items() if v is not None})
        rows.add(position, record)
    if not len(rows):
        raise bad_log(display, "no per-instance entry without perturbation", "rerun helm-run without perturbations")
    if metric not in names:
        shown = ", ".join(sorted(n for n in names if "match" in n or "accuracy" in n or n.startswith("f1"))[:8])
        raise bad_log(display, f"the per-instance stats have no {metric!r}", f"set data.select.metric to one of "
                      f"them ({shown or ', '.join(sorted(names)[:8])})", key="select.metric", got=metric, has_got=True)
    reported = None
    for s in extra.get("stats.json") or []:
        name = as_dict(as_dict(s).get("name"))
        if name.get("name") == metric and name.get("split") == "test" and "perturbation" not in name:
            reported = number_or_none(as_dict(s).get("mean"))
    means = [sum(v) / len(v) for _, v in sorted(by_trial.items()) if v]
    recomputed = mean_or_none(means)
    trials = adapter.get("num_train_trials")
    notes = [f"HELM's {metric} is the mean over its {len(by_trial)} train trial(s) of the per-trial mean over "
             "instances, with no interval from the instances; evalspec reads each instance and train trial as an "
             "attempt and applies the plan's attempt rule and clusters.",
             "A HELM train trial draws other in-context (few-shot) examples: the repeats of a case are different "
             "prompts, not redraws of one prompt, so run-to-run variation here includes the choice of examples."]
    if perturbed:
        notes.append(f"{perturbed} perturbed entr(ies) (robustness/fairness variants) were left out.")
    diff = compare_note(TOOL, reported, recomputed, "stats.json and per_instance_stats.json disagree: they may be "
                        "from different runs.")
    if diff:
        notes.append(diff)
    cached = sum(1 for v in done.values() if v.get("cached") is True)
    provenance = {
        "tool": TOOL, "tool_version": None, "container": "run folder", "files": files, "status": "success",
        "partial": False, "candidate": candidate, "log_model": adapter.get("model"),
        "candidate_fields": fields_shown(fields), "run_name": spec.get("name"), "task": scen.get("class_name"),
        "num_train_trials": trials, "selected": {"metric": metric}, "samples": len(rows), "errors": 0,
        "missing_outcomes": missing, "perturbed_left_out": perturbed, "cached_results": cached,
        "reported": {"metric": metric, "value": reported, "stderr": None, "recomputed_value": recomputed},
        "per_repeat_outcomes": True, "notes": notes,
    }
    return make_log_file(path, display, "helm", digest, rows, "entry", provenance)
