"""``evalspec convert LOG... --to jsonl|csv``: write the tidy table evalspec reads from tool logs.

So a user sees exactly what was ingested from inspect_ai, lm-evaluation-harness or
promptfoo logs: one row per attempt with the columns the plan's defaults read
(``candidate``, ``case_id``, ``repeat``, ``outcome``, ...). What was read (tool, version,
files and their SHA-256, rows, errors, the tool's own metric) is printed to stderr and,
with ``--provenance FILE``, written as JSON.

Exit status: 0 written; 2 bad input (unreadable or malformed log, an ambiguous selection).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import click

__all__ = ["convert", "convert_logs", "tidy_text"]


def convert_logs(paths: list[Path], fmt: str, options: Any) -> list[Any]:
    """Read ``paths`` (files or folders) of format ``fmt`` (``auto`` detects it) into log files."""
    from evalspec.errors import Diagnostic, InputError
    from evalspec.results import adapters

    if not paths:
        raise InputError("no log named", [Diagnostic(file=".", message="name at least one log file or folder")])
    files: list[Path] = []
    formats: set[str] = set()
    for p in paths:
        if not p.exists():
            raise InputError(f"{p}: no such file or folder", [Diagnostic(file=str(p), message="no such file or folder")])
        this = fmt if fmt != "auto" else adapters.detect(p)
        if this is None:
            raise InputError(f"{p}: not a log of a known tool",
                             [Diagnostic(file=str(p), message="cannot tell which tool wrote this: it is not a log of a "
                                         f"tool evalspec reads ({adapters.SUPPORTED})",
                                         hint="for another tool's results, write them as a table (JSONL or CSV) with "
                                         "one row per attempt and the columns candidate, case_id, repeat, outcome "
                                         "(optional: model_version, timestamp, error, answer, target, latency_s, "
                                         "input_tokens, output_tokens, cost, and any case field such as a cluster) "
                                         "and set data.format: jsonl or csv; for one of these tools' logs, pass "
                                         "--format with its name")])
        formats.add(this)
        if p.is_dir():
            found = adapters.expand(p, this)
            if not found:
                raise InputError(f"{p}: no {this} log in this folder",
                                 [Diagnostic(file=str(p), message=f"no {this} log in this folder")])
            files.extend(found)
        else:
            files.append(p)
    if len(formats) > 1:
        raise InputError("logs of several tools", [Diagnostic(file=", ".join(map(str, paths)),
                                                             message=f"these are logs of several tools ({', '.join(sorted(formats))})",
                                                             hint="convert one tool's logs at a time")])
    return adapters.read_logs(files, formats.pop(), options)


def _columns(raws: list[Any]) -> list[str]:
    first = ["candidate", "case_id", "repeat", "outcome"]
    names: dict[str, None] = {}
    for r in raws:
        for k in r.columns:
            names.setdefault(k, None)
    return [c for c in first if c in names] + [c for c in names if c not in first]


def _cell(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def tidy_text(raws: list[Any], to: str) -> str:
    """The rows of ``raws`` as JSONL or CSV text (columns in a stable order, missing = null / empty)."""
    cols = _columns(raws)
    if to == "jsonl":
        out = []
        for r in raws:
            for i in range(r.rows):
                out.append(json.dumps({c: _cell(r.columns[c][i]) if c in r.columns else None for c in cols},
                                      ensure_ascii=False))
        return "\n".join(out) + ("\n" if out else "")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in raws:
        for i in range(r.rows):
            row = []
            for c in cols:
                v = _cell(r.columns[c][i]) if c in r.columns else None
                row.append("" if v is None else (str(v).lower() if isinstance(v, bool) else v))
            w.writerow(row)
    return buf.getvalue()


@click.command("convert")
@click.argument("logs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--to", "to", type=click.Choice(["jsonl", "csv", "every_eval_ever"]), default="jsonl",
              show_default=True, help="Output format. every_eval_ever: LOGS is one claim.json; its headline numbers "
              "are written as Every Eval Ever aggregate results, one document per candidate (-o names a folder).")
@click.option("--output", "-o", type=click.Path(path_type=Path),
              help="Write the table to this file (atomically) instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["auto", "inspect", "lm_eval", "promptfoo", "openai_evals",
                                                   "helm", "every_eval_ever"]),
              default="auto",
              show_default=True, help="Which tool wrote the logs.")
@click.option("--task", help="Task to read (logs holding several).")
@click.option("--scorer", help="inspect_ai scorer whose value is the outcome.")
@click.option("--metric", help="lm-eval metric; key of a dict-valued inspect score; promptfoo named score.")
@click.option("--filter", "filter_", help="lm-eval filter (none, first, maj@3, ...).")
@click.option("--case-field", help="lm-eval doc field, or promptfoo description / vars.NAME / metadata.NAME, "
              "that names the case.")
@click.option("--allow-partial", is_flag=True, help="Read runs that stopped early (status error/cancelled).")
@click.option("--candidate-from", "candidate_from", multiple=True, metavar="FIELD",
              help="Name each candidate from these log fields, joined with '|' (repeatable): model, "
              "task_args.NAME, solver, metadata.NAME, tags; model_args.NAME (lm-eval); provider, prompt, "
              "prompt_file (promptfoo).")
@click.option("--provenance", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write what was read (tool, version, files, SHA-256, rows, errors, reported metric) as JSON.")
def convert(logs: tuple[Path, ...], to: str, output: Path | None, fmt: str, task: str | None, scorer: str | None,
            metric: str | None, filter_: str | None, case_field: str | None, allow_partial: bool,
            candidate_from: tuple[str, ...], provenance: Path | None) -> None:
    """Write the tidy table evalspec reads from tool LOGS (inspect_ai, lm-eval, promptfoo, openai/evals, HELM, Every
    Eval Ever); with --to every_eval_ever, export a claim's pass rates instead."""
    from evalspec._atomic import write_text_atomic
    from evalspec.results.adapters import Options

    if to == "every_eval_ever":
        _export_claim(list(logs), output)
        return
    options = Options(task=task, scorer=scorer, metric=metric, filter=filter_, case_field=case_field,
                      allow_partial=allow_partial, candidate_from=tuple(candidate_from) or None)
    raws = convert_logs(list(logs), fmt, options)
    text = tidy_text(raws, to)
    prov = [r.provenance for r in raws]
    if provenance is not None:
        write_text_atomic(provenance, json.dumps(prov, indent=2, ensure_ascii=False, default=str) + "\n")
    if output is not None:
        write_text_atomic(output, text)
    else:
        import sys

        from evalspec.terminal import unescaped

        click.echo(text, nl=False, file=unescaped(sys.stdout))  # data, byte for byte (messages are escaped)
    for p in prov:
        rep = p.get("reported") or {}
        tail = ""
        if rep.get("value") is not None:
            tail = f"; {p['tool']} reports {rep.get('metric') or 'accuracy'} {rep['value']:.4g}"
            if isinstance(rep.get("stderr"), (int, float)):
                tail += f" (stderr {rep['stderr']:.4g})"
        click.echo(f"read {p['files'][-1]['path']}: {p['tool']} {p.get('tool_version') or '?'}, {p['rows']} rows, "
                   f"{p.get('missing_outcomes', 0)} missing outcome(s)"
                   + (" [PARTIAL RUN]" if p.get("partial") else "") + tail, err=True)
    if output is not None:
        click.echo(f"wrote {output}", err=True)


def _export_claim(paths: list[Path], output: Path | None) -> None:
    """``convert CLAIM --to every_eval_ever``: the claim's pass rates as Every Eval Ever aggregate documents."""
    from evalspec._atomic import write_text_atomic
    from evalspec.errors import Diagnostic, InputError
    from evalspec.results.adapters.base import load_json, read_bytes
    from evalspec.results.adapters.every_eval_ever import aggregate_documents, datastore_path

    if len(paths) != 1:
        raise InputError("name one claim", [Diagnostic(file=", ".join(map(str, paths)) or ".",
                                                       message="--to every_eval_ever exports one claim.json",
                                                       hint="evalspec convert out/claim.json --to every_eval_ever -o eee/")])
    display = str(paths[0])
    claim = load_json(read_bytes(paths[0], display), display, "a claim.json written by `evalspec run`")
    if not isinstance(claim, dict) or "decision" not in claim or "coverage" not in claim:
        raise InputError(f"{display}: not a claim", [Diagnostic(file=display, message="is not a claim.json written by "
                                                                "`evalspec run` (no decision and coverage)")])
    docs = aggregate_documents(claim)
    if not docs:
        raise InputError(f"{display}: no pass rate to export",
                         [Diagnostic(file=display, message="the claim has no proportion analysis with an estimate",
                                     hint="add `- {kind: proportion}` to the plan's analyses and run it again")])
    if output is None:
        for doc in docs.values():
            click.echo(json.dumps(doc, ensure_ascii=False, sort_keys=True))
        return
    for doc in docs.values():
        target = output / datastore_path(doc)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
        click.echo(f"wrote {target}", err=True)
