"""Read the logs evaluation tools write: inspect_ai, lm-evaluation-harness, promptfoo.

A small registry, format name -> adapter module. Each adapter reads a tool's files
unchanged into :class:`~evalspec.results.adapters.base.LogFile` objects: the same raw
columns the JSONL/CSV/Parquet readers produce (so the table, the checks and every
analysis work unchanged) plus a provenance record (tool, version, files with SHA-256,
rows, errors, the tool's own reported metric and stderr).

Entry points:

* :func:`read_logs` — read the files of one format (used by ``evalspec run`` and
  ``evalspec convert``);
* :func:`expand` — the log files a directory holds, for a format;
* :func:`apply_plan` — after reading (any format): map log candidate names to plan keys
  (``data.candidate_names``), blank the declared missing values of the outcome
  (``data.missing_values``), and refuse candidates that share no case id;
* :func:`sniff_tool` / :func:`detect` — which tool wrote a file.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import Diagnostic, InputError
from evalspec.labels import identifier_label as _text
from evalspec.results.adapters.base import LogFile, Options, WrongTool, bad_log
from evalspec.results.table import FileInfo

__all__ = ["ADAPTERS", "LOG_FORMATS", "SUPPORTED", "LogFile", "LogFileInfo", "Options", "read_logs", "expand", "apply_plan",
           "sniff_tool", "detect", "provenance_of", "claim_limits", "attach_provenance"]

#: format name (as in ``data.format``) -> adapter module.
ADAPTERS: dict[str, str] = {
    "inspect": "evalspec.results.adapters.inspect_ai",
    "lm_eval": "evalspec.results.adapters.lm_eval",
    "promptfoo": "evalspec.results.adapters.promptfoo",
    "openai_evals": "evalspec.results.adapters.openai_evals",
    "every_eval_ever": "evalspec.results.adapters.every_eval_ever",
    "helm": "evalspec.results.adapters.helm",
}
LOG_FORMATS = frozenset(ADAPTERS)

_TOOL_NAMES = {"inspect": "inspect_ai", "lm_eval": "lm-evaluation-harness", "promptfoo": "promptfoo",
               "openai_evals": "openai/evals", "every_eval_ever": "Every Eval Ever", "helm": "HELM"}
#: The tools whose logs are read, as a sentence (for messages about files no tool wrote).
SUPPORTED = ("inspect_ai (format: inspect), lm-evaluation-harness (lm_eval), promptfoo (promptfoo), "
             "openai/evals (openai_evals), HELM run folders (helm), Every Eval Ever instance-level records "
             "(every_eval_ever)")


_HELM_FILES = frozenset({"per_instance_stats.json", "run_spec.json", "scenario_state.json", "stats.json"})


def _module(fmt: str) -> Any:
    return importlib.import_module(ADAPTERS[fmt])


def sniff_tool(doc: Any) -> str | None:
    """The format name of the tool that wrote a parsed JSON document, or None."""
    for fmt in ("inspect", "lm_eval", "promptfoo"):
        if _module(fmt).sniff(doc):
            return fmt
    return None


def detect(path: Path) -> str | None:
    """The log format of ``path`` (a file or a directory), or None when it is not a known log."""
    helm = _module("helm")
    if path.is_dir() and helm.run_folder(path) is not None:
        return "helm"
    if path.name in _HELM_FILES and path.is_file() and helm.run_folder(path) is not None:
        return "helm"
    if path.is_dir():
        for fmt in ("inspect", "lm_eval", "promptfoo", "openai_evals", "every_eval_ever", "helm"):
            if expand(path, fmt):
                return fmt
        return None
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if path.name.startswith("samples_") and suffix == ".jsonl":
        return "lm_eval"
    if not path.is_file():  # a FIFO or device: never opened to sniff it (the reader refuses it, located)
        return None
    if suffix == ".jsonl":
        try:
            with path.open("rb") as fh:
                first = json.loads(fh.readline(1 << 20) or b"null")
        except (OSError, ValueError, RecursionError):
            return None
        if _module("openai_evals").sniff_line(first):
            return "openai_evals"
        if _module("every_eval_ever").sniff_line(first):
            return "every_eval_ever"
        return "promptfoo" if isinstance(first, dict) and "testIdx" in first and "provider" in first else None
    if suffix == ".json":
        try:
            doc = json.loads(path.read_bytes().decode("utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            return None
        return sniff_tool(doc)
    return None


def expand(path: Path, fmt: str) -> list[Path]:
    """The log files of format ``fmt`` under the directory ``path`` (sorted, recursive)."""
    if fmt == "inspect":
        found = [p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".eval", ".json")
                 and not p.name.startswith(".")]
        return sorted(p for p in found if p.suffix.lower() == ".eval" or _sniffs(p, "inspect"))
    if fmt == "lm_eval":
        return sorted(p for p in path.rglob("*.json") if p.is_file() and _sniffs(p, "lm_eval"))
    if fmt == "promptfoo":
        return sorted(p for p in path.rglob("*.json") if p.is_file() and _sniffs(p, "promptfoo"))
    if fmt == "helm":
        return sorted(p for p in path.rglob("per_instance_stats.json") if p.is_file()
                      and _module("helm").run_folder(p) is not None)
    if fmt in ("openai_evals", "every_eval_ever"):
        return sorted(p for p in path.rglob("*.jsonl") if p.is_file() and detect(p) == fmt)
    return []


def _sniffs(p: Path, fmt: str) -> bool:
    try:
        with p.open("rb") as fh:
            head = fh.read(1 << 16)
        if fmt == "lm_eval" and b'"results"' not in head:
            return False
        if fmt == "inspect" and b'"eval"' not in head:
            return False
        doc = json.loads(p.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return False
    return bool(_module(fmt).sniff(doc))


def read_logs(paths: list[Path], fmt: str, options: Options, display: Any = str) -> list[LogFile]:
    """Read the log files ``paths`` of format ``fmt``; ``display(path)`` names a file in messages."""
    if fmt not in ADAPTERS:
        raise InputError(f"unknown log format {fmt!r}; known: {', '.join(sorted(ADAPTERS))}")
    try:
        out = _read_logs(paths, fmt, options, display)
    except WrongTool as exc:  # JSON of another tool: name it (the adapter knows only its own)
        other = sniff_tool(exc.doc)
        if other is None or other == fmt:
            raise
        raise bad_log(exc.display, f"is a {other} file, not {exc.what}",
                      f"set data.format: {other} (or pass --format {other})") from None
    if not out:
        which = f" of task {options.task!r}" if options.task else ""
        raise InputError(f"no {_TOOL_NAMES[fmt]} log{which} was found",
                         [Diagnostic(file=", ".join(display(p) for p in paths) or ".",
                                     message=f"no {_TOOL_NAMES[fmt]} log{which} was found in these paths",
                                     hint="point data.results at the tool's log files or their folder"
                                     + (", or fix data.select.task" if options.task else ""))])
    return out


def _read_logs(paths: list[Path], fmt: str, options: Options, display: Any) -> list[LogFile]:
    module = _module(fmt)
    out: list[LogFile] = []
    if hasattr(module, "read_many"):
        out = module.read_many(paths, display, options)
    else:
        skipped = []
        for path in paths:
            got = module.read(path, display(path), options)
            if not got:
                skipped.append(display(path))
            out.extend(got)
        if skipped and out:  # logs of another task than data.select.task: say which were left out
            out = [replace(lf, provenance={**lf.provenance, "skipped_logs": skipped,
                                           "notes": [*lf.provenance.get("notes", []),
                                                     f"{len(skipped)} log(s) of other tasks than {options.task!r} "
                                                     "were left out."]}) for lf in out]
    return out


def provenance_of(raws: list[Any]) -> list[dict[str, Any]]:
    """The provenance records of the log files among ``raws`` (empty for JSONL/CSV/Parquet)."""
    return [r.provenance for r in raws if isinstance(r, LogFile)]


@dataclass(frozen=True)
class LogFileInfo(FileInfo):
    """A results file's fingerprint for the claim, with what was read from a tool log."""

    provenance: dict[str, Any] = field(default_factory=dict)


def attach_provenance(tidy: Any, raws: list[Any], base: Path | None = None) -> None:
    """Give each file of ``tidy.files`` read from a tool log its provenance (``LogFileInfo``).

    The claim writer then finds it as ``file.provenance`` (tool, version, every file read
    with its SHA-256, rows, errors, the tool's own metric); tables keep plain FileInfo.
    With ``base`` (the plan's folder), the paths of the files read are written relative to
    it, like the claim's ``data.files[].path``: the claim then does not depend on the folder
    the run was started from, and an audit finds every file (an lm-eval results file beside
    its samples) where the plan is.
    """
    by_display = {r.display: r for r in raws if isinstance(r, LogFile)}
    if not by_display:
        return
    for i, info in enumerate(tidy.files):
        raw = by_display.get(info.path)
        if raw is not None and not isinstance(info, LogFileInfo):
            values = {f.name: getattr(info, f.name) for f in fields(info)}
            provenance = raw.provenance if base is None else _paths_relative_to(raw.provenance, base)
            tidy.files[i] = LogFileInfo(**values, provenance=provenance)


def _relative(path: str, base: Path) -> str:
    """``path`` relative to ``base`` (``../x`` outside it); as given on another drive (Windows)."""
    import os

    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(base))).as_posix()
    except ValueError:
        return path


def _paths_relative_to(provenance: dict[str, Any], base: Path) -> dict[str, Any]:
    """A copy of ``provenance`` whose ``files[].path`` are relative to ``base`` (``../x`` outside it)."""
    files = provenance.get("files")
    if not isinstance(files, list):
        return provenance
    out = [{**f, "path": _relative(f["path"], base)} if isinstance(f, dict) and isinstance(f.get("path"), str) else f
           for f in files]
    return {**provenance, "files": out}


def claim_limits(raws: list[Any], base: Path | None = None) -> list[dict[str, str]]:
    """Systematic limits the logs themselves show, as claim entries (``systematic_limits.detected``).

    A run read as partial (``data.allow_partial``), and a tool that stored one value per case
    after reducing the repeats itself (lm-eval's filters): the claim must say so. With ``base``
    (the plan's folder) each log is named relative to it, as in ``data.files``.
    """
    out: list[dict[str, str]] = []
    for r in raws:
        if not isinstance(r, LogFile):
            continue
        p = r.provenance
        name = r.display if base is None else _relative(r.display, base)
        who = f"{p.get('tool')} log {name} ({p.get('candidate') or ', '.join(p.get('candidates') or [])})"
        if p.get("partial"):
            out.append({"code": "partial_run",
                        "message": f"The {who} is from a run that did not finish (status {p.get('status')!r}); only "
                        f"its {p.get('rows')} completed attempts were analysed, which may favour the cases that ran "
                        "first."})
        if p.get("per_repeat_outcomes") is False and p.get("repeats_reduced", True):
            sel = p.get("selected") or {}
            n = p.get("task_repeats")
            funcs = p.get("filter_functions") or []
            how = (" took the first generation only" if "take_first" in funcs and "majority_vote" not in funcs
                   else " took a majority vote" if "majority_vote" in funcs else " reduced them")
            out.append({"code": "tool_reduced_repeats",
                        "message": f"The {who} holds one value per case: lm-eval generated "
                        f"{n if isinstance(n, int) else 'several'} answers per case and its filter "
                        f"{sel.get('filter')!r}{how}; per-repeat outcomes are not in the file, so the plan's attempt "
                        "rule saw one attempt per case and its repeats are not independent attempts evalspec could "
                        "count."})
    return out


# -- what the plan says about the rows, for every format ------------------------------------


def apply_plan(raws: list[Any], plan: Any) -> list[Any]:
    """Candidate mapping and declared missing values, applied to the raw columns of ``raws``.

    ``data.candidate_names`` maps a name as the log writes it (``coinflip/strong``) to a
    plan key; ``data.missing_values`` lists raw outcome values that mean "no outcome"
    (``ERROR``, ``timeout``...), compared as text, case-sensitively. Both are recorded in
    a log's provenance. Then, for tool logs, every pair of candidates the plan pairs must
    share a case id: when they share none, the message shows a few ids from each side.
    """
    data = plan.data
    _check_shared_candidates(raws, plan)
    mapping = dict(getattr(data, "candidate_names", None) or {})
    missing = [str(v) for v in (getattr(data, "missing_values", None) or [])]
    cand_col = data.columns.candidate
    out_col = data.columns.outcome
    result = []
    for raw in raws:
        cols = dict(raw.columns)
        changed = False
        counts: dict[str, int] = {}
        if mapping and cand_col in cols:
            codes, uniques = _factorize(cols[cand_col])
            mapped = np.array([mapping.get(_text(u), u) for u in uniques] + [None], dtype=object)
            cols[cand_col] = mapped[codes]
            changed = True
        if missing and out_col in cols:
            col = cols[out_col]
            codes, uniques = _factorize(col)
            hit_u = np.array([_text(u) in missing for u in uniques] + [False], dtype=bool)
            hit = hit_u[codes]
            if hit.any():
                for v in col[hit]:
                    counts[_text(v)] = counts.get(_text(v), 0) + 1
                new = np.array(col, dtype=object)  # a plain copy: a coded column's copy keeps its old codes
                new[hit] = None
                cols[out_col] = new
                changed = True
        if changed:
            kw: dict[str, Any] = {"columns": cols}
            if isinstance(raw, LogFile):
                prov = dict(raw.provenance)
                if mapping:
                    prov["candidate_names"] = mapping
                if counts:
                    prov["declared_missing"] = counts
                kw["provenance"] = prov
            raw = replace(raw, **kw)
        result.append(raw)
    _check_log_candidates(result, plan)
    _check_case_overlap(result, plan)
    _check_copied_repeats(result)
    return result


def _check_copied_repeats(raws: list[Any]) -> None:
    """Refuse repeats the log shows to be copies (promptfoo served them from its cache).

    A cached response repeats an earlier call; counting it as another attempt would make
    the candidate look more consistent than it is and shrink every interval built on the
    repeats (run variation, the ``mean`` and pass rules), so it is refused, not counted.
    """
    problems = []
    for raw in raws:
        if not isinstance(raw, LogFile):
            continue
        copied = raw.provenance.get("copied_repeats")
        if isinstance(copied, dict) and isinstance(copied.get("count"), int) and copied["count"] > 0:
            problems.append(Diagnostic(
                file=raw.display, key="data.results",
                message=f"{copied['count']} of the repeats in this log are copies, not independent attempts: "
                f"{copied.get('why')}", hint=str(copied.get("fix") or "rerun so every repeat is a new call")))
        n = raw.provenance.get("cached_repeats")
        if isinstance(n, int) and n > 0:
            problems.append(Diagnostic(
                file=raw.display, key="data.results",
                message=f"{n} of the repeats in this promptfoo file were served from promptfoo's cache "
                "(response.cached): each is a copy of an earlier response, not an independent attempt",
                hint="rerun with `promptfoo eval --no-cache --repeat N` so every repeat is a new call; or read one "
                "attempt per case from a run without --repeat"))
    if problems:
        raise InputError("repeats that are copies are not independent attempts", problems)


#: Fields that tell apart runs of one model, most telling first (what data.candidate_from should name).
_TELLING = ("task_args.", "solver", "solver_args.", "prompt_file", "prompt", "system_instruction", "metadata.",
            "model_args.", "generate_config.", "gen_kwargs.", "config.", "n_shot", "tags", "task", "dataset")


def _fields_of(raw: LogFile, name: str) -> dict[str, str]:
    p = raw.provenance
    by = p.get("candidate_fields_by_candidate")
    if isinstance(by, dict) and isinstance(by.get(name), dict):
        return by[name]
    f = p.get("candidate_fields")
    return f if isinstance(f, dict) else {}


def _check_shared_candidates(raws: list[Any], plan: Any) -> None:
    """Several logs that give one candidate the same (case, repeat): name the fields that tell them apart.

    Two system prompts on one model are the most common A/B test; inspect_ai names the
    candidate after the model, so both logs' rows would collide as duplicates. Said here,
    before any mapping, with the fields that differ and the plan key that separates them.
    """
    cand_col, case_col, rep_col = plan.data.columns.candidate, plan.units.case, plan.data.columns.repeat
    by_name: dict[str, list[tuple[LogFile, set[tuple[str, str]]]]] = {}
    for raw in raws:
        if not isinstance(raw, LogFile) or cand_col not in raw.columns or case_col not in raw.columns:
            continue
        cands = np.asarray(raw.columns[cand_col], dtype=object)
        cases = np.asarray(raw.columns[case_col], dtype=object)
        reps = np.asarray(raw.columns[rep_col], dtype=object) if rep_col in raw.columns else np.ones(len(cases))
        keys: dict[str, set[tuple[str, str]]] = {}
        for c, k, r in zip(cands.tolist(), cases.tolist(), reps.tolist()):
            keys.setdefault(_text(c), set()).add((_text(k), _text(r)))
        for name, got in keys.items():
            by_name.setdefault(name, []).append((raw, got))
    problems = []
    chosen = list(getattr(plan.data, "candidate_from", None) or [])
    for name, logs in by_name.items():
        clash = [i for i in range(len(logs)) if any(logs[i][1] & logs[j][1] for j in range(len(logs)) if j != i)]
        if len(clash) < 2:
            continue
        group = [logs[i][0] for i in clash]
        fields = [_fields_of(r, name) for r in group]
        keys = sorted({k for f in fields for k in f})
        differ = [k for k in keys if len({f.get(k) for f in fields}) > 1]
        rank = {k: next((i for i, p in enumerate(_TELLING) if k == p or (p.endswith(".") and k.startswith(p))),
                        len(_TELLING)) for k in differ}
        differ.sort(key=lambda k: (rank[k], k))
        who = f"{len(group)} logs of {name}"
        files = ", ".join(r.display for r in group)
        if differ:
            shown = ", ".join(differ[:4]) + (" ..." if len(differ) > 4 else "")
            from evalspec.results.hints import yaml_flow_list

            message = f"{who} differ only in {shown}, so their rows have the same candidate, case and repeat"
            if chosen:
                message += f" (data.candidate_from: {yaml_flow_list(chosen)} does not tell them apart)"
            hint = (f"set data.candidate_from: {yaml_flow_list([differ[0]])} (or {yaml_flow_list(['model', differ[0]])}"
                    ") so each log's candidate is named by what differs, then map the names with "
                    "data.candidate_names")
        else:
            message = f"{who} hold the same cases and repeats and no field of the logs tells them apart"
            hint = "the same run may be read twice: remove one of the files from data.results"
            cached = [r.display for r in group if (r.provenance.get("cached_results") or 0) > 0]
            if cached:
                message += (f"; {', '.join(cached)} was served from promptfoo's cache (response.cached), so its "
                            "results are copies of an earlier run, not new attempts")
                hint = ("read one run, or rerun with `promptfoo eval --no-cache --repeat N` for repeats that are new "
                        "calls")
        problems.append(Diagnostic(file=files, key="data.candidate_from" if differ else "data.results",
                                   message=message, hint=hint))
    if problems:
        raise InputError("several logs give one candidate the same attempts", problems)


def _check_log_candidates(raws: list[Any], plan: Any) -> None:
    """A tool log's candidate that is not a plan key: say how to map it (``data.candidate_names``)."""
    cand_col = plan.data.columns.candidate
    known = set(map(str, plan.candidates))
    problems = []
    for raw in raws:
        if not isinstance(raw, LogFile) or cand_col not in raw.columns:
            continue
        _, uniques = _factorize(raw.columns[cand_col])
        unknown = sorted({_text(u) for u in uniques} - known)
        if unknown:
            from evalspec.results.hints import shortened, yaml_flow

            keys = sorted(known)
            example = yaml_flow({u: _guess_key(u, keys) for u in unknown})
            long = [u for u in unknown if shortened(u) != u]
            named = ", ".join(repr(shortened(u)) + (f" (name {long.index(u) + 1} below)" if u in long else "")
                              for u in unknown)
            key = "".join(f"; name {i + 1} in full: {u!r}" for i, u in enumerate(long))
            better = ""
            if long and raw.provenance.get("tool") == "promptfoo":
                better = ("; shorter names: data.candidate_from: [provider, prompt_file] (or prompt_id), or give "
                          "each prompt a label in promptfooconfig.yaml")
            problems.append(Diagnostic(
                file=raw.display, key="data.candidate_names",
                message=f"the log names its candidate {named}, which is not a key of the plan's candidates "
                f"({', '.join(keys)}){key}",
                hint=f"map the log's name to a plan key, e.g. data.candidate_names: {example}{better}"))
    if problems:
        raise InputError("the logs' candidates are not the plan's", problems)


def _factorize(col: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """``(codes, uniques)`` of an object column; code -1 (None/NaN) picks the trailing extra entry."""
    from evalspec.results.table import factorize

    codes, uniques = factorize(np.asarray(col, dtype=object))
    return codes, list(uniques)


def _guess_key(name: str, keys: list[str]) -> str:
    """The plan key a log's candidate name most likely means (``coinflip/weak`` -> ``weak``)."""
    hits = sorted((k for k in keys if k.lower() in name.lower()), key=len, reverse=True)
    return hits[0] if hits else "<plan key>"


def _check_case_overlap(raws: list[Any], plan: Any) -> None:
    """Refuse a paired comparison whose candidates share no case id, showing ids from each side.

    Only for tool logs (two tools often number cases differently); for tables the paired
    analysis refuses at its plan line.
    """
    if not any(isinstance(r, LogFile) for r in raws):
        return
    pairs: list[tuple[str, str]] = []
    for a in plan.analyses:
        if getattr(a, "kind", None) != "paired_difference":
            continue
        compare = getattr(a, "compare", None)
        if compare:
            pairs.append((str(compare[0]), str(compare[1])))
        elif plan.baseline is not None:
            pairs += [(c, plan.baseline) for c in plan.candidates if c != plan.baseline]
    if not pairs:
        return
    cand_col = plan.data.columns.candidate
    case_col = plan.units.case
    from evalspec.results.table import factorize

    ids: dict[str, dict[str, None]] = {}
    for raw in raws:
        if cand_col not in raw.columns or case_col not in raw.columns:
            return  # the table reports the missing column
        cc, cu = factorize(np.asarray(raw.columns[cand_col], dtype=object))
        kc, ku = factorize(np.asarray(raw.columns[case_col], dtype=object))
        keep = (cc >= 0) & (kc >= 0)
        if not keep.any():
            continue
        for c, k in np.unique(np.stack([cc[keep], kc[keep]], axis=1), axis=0).tolist():
            ids.setdefault(_text(cu[c]), {}).setdefault(_text(ku[k]), None)
    problems = []
    for first, second in dict.fromkeys(pairs):
        a, b = ids.get(first), ids.get(second)
        if not a or not b or set(a) & set(b):
            continue
        show_a = ", ".join(repr(x) for x in sorted(a)[:5]) + (" ..." if len(a) > 5 else "")
        show_b = ", ".join(repr(x) for x in sorted(b)[:5]) + (" ..." if len(b) > 5 else "")
        problems.append(Diagnostic(
            file=", ".join(r.display for r in raws), key=case_col,
            message=f"no case was run for both {first} and {second}: their case ids do not match "
            f"({first}: {show_a}; {second}: {show_b})",
            hint="the two logs number their cases differently; choose the case id column (units.case) or, for "
            "lm_eval / promptfoo logs, data.select.case_field, so both sides name a case the same way"))
    if problems:
        raise InputError("the candidates' case ids do not match", problems)
