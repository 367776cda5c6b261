"""Read reference runs (``evalspec tbg sample`` folders) and the system under test's answers.

The system under test (SUT) answers arrive as JSONL, one answer a line::

    {"prompt": "q17", "repeat": 3, "answer": "Paris is the capital of France."}
    {"prompt": "q17", "repeat": 4, "tokens": [791, 6864, 315, 9822, 374, 12366, 13]}

(``prompt_id`` is accepted for ``prompt``; ``text`` for ``answer``). With ``tokens`` on
every line the answers are compared as token ids (only meaningful when the SUT and the
reference share a tokenizer, e.g. a SUT simulated with ``evalspec tbg sample``); otherwise
as text, and the reference answers are compared by their decoded text too. A ``tbg
sample`` folder is also accepted as the target (a simulated SUT): its answers at one
temperature.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalspec.errors import InputError

__all__ = ["ReferenceRun", "TargetAnswers", "load_reference", "load_target"]

Answer = tuple[int, ...] | str


@dataclass
class ReferenceRun:
    """A finished reference run: answers per (prompt, temperature), as token ids and as text."""

    name: str
    path: str
    temperatures: list[float]
    prompt_ids: list[str]
    samples: int
    max_new_tokens: int
    tokens: dict[tuple[str, float], list[tuple[int, ...]]]
    text: dict[tuple[str, float], list[str]]
    manifest: dict[str, Any]

    def answers(self, units: str) -> dict[float, dict[str, list[Answer]]]:
        """``{T: {prompt: answers}}`` in ``units`` ('tokens' or 'text')."""
        table = self.tokens if units == "tokens" else self.text
        out: dict[float, dict[str, list[Answer]]] = {t: {} for t in self.temperatures}
        for (pid, t), answers in table.items():
            out[t][pid] = list(answers)
        return out


@dataclass
class TargetAnswers:
    """The SUT's answers per prompt, and whether they are token ids or text."""

    name: str
    units: str
    answers: dict[str, list[Answer]]


def _read(path: Path, what: str) -> str:
    from evalspec._files import read_text

    text = read_text(path, what=what, display=str(path), hint="rerun evalspec tbg sample to write it again")
    assert text is not None
    return text


def _manifest(folder: Path) -> tuple[Path, dict[str, Any], list[float], list[str], int, int]:
    """The manifest of a reference run, every field it needs checked (a located error, never a crash)."""
    import math

    from evalspec._files import loads_json
    from evalspec.tbg.shards import FORMAT

    mpath = folder / "manifest.json"
    if not mpath.is_file() and not mpath.exists():
        raise InputError(f"{folder}: not a reference run (no manifest.json); make one with evalspec tbg sample")
    manifest = loads_json(_read(mpath, "the reference run's manifest"), display=str(mpath),
                          what="the reference run's manifest")
    if not isinstance(manifest, dict):
        raise InputError(f"{mpath}: not a reference-run manifest (expected a JSON object)")
    if manifest.get("format") != FORMAT:
        raise InputError(f"{mpath}: format: expected {FORMAT!r} (got {manifest.get('format')!r})")
    settings = manifest.get("settings")
    prompts = manifest.get("prompts")
    if not isinstance(settings, dict) or not isinstance(prompts, dict):
        raise InputError(f"{mpath}: settings and prompts must be objects; rerun evalspec tbg sample")
    temps_raw, ids = settings.get("temperatures"), prompts.get("ids")
    if not isinstance(temps_raw, list) or not temps_raw or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and 0 <= t <= 100
            for t in temps_raw):
        raise InputError(f"{mpath}: settings.temperatures: must be a non-empty list of temperatures from 0 to 100 "
                         f"(got {str(temps_raw)[:80]})")
    temps = [float(t) for t in temps_raw]
    if len(set(temps)) != len(temps):
        raise InputError(f"{mpath}: settings.temperatures: a temperature is listed twice")
    if not isinstance(ids, list) or not ids or not all(isinstance(p, (str, int)) and not isinstance(p, bool)
                                                       for p in ids):
        raise InputError(f"{mpath}: prompts.ids: must be a non-empty list of prompt ids (got {str(ids)[:80]})")
    pids = [str(p) for p in ids]
    if len(set(pids)) != len(pids):
        raise InputError(f"{mpath}: prompts.ids: a prompt id is listed twice")
    counts = []
    for key in ("samples", "max_new_tokens"):
        v = settings.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1_000_000:
            raise InputError(f"{mpath}: settings.{key}: must be a whole number from 1 (got {v!r})")
        counts.append(v)
    return mpath, manifest, temps, pids, counts[0], counts[1]


def _shard_cell(obj: Any, where: str, temps: set[float]) -> tuple[tuple[str, float], list[tuple[int, ...]],
                                                                   list[str] | None]:
    """One (prompt, temperature) cell of a shard line, checked."""
    import math

    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected an object with prompt, temperature and tokens")
    pid, t, toks, text = obj.get("prompt"), obj.get("temperature"), obj.get("tokens"), obj.get("text")
    if not isinstance(pid, (str, int)) or isinstance(pid, bool):
        raise InputError(f"{where}: prompt: missing or not a string/integer (got {str(pid)[:40]!r})")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t) or float(t) not in temps:
        raise InputError(f"{where}: temperature: not one of the manifest's temperatures (got {str(t)[:40]!r})")
    if not isinstance(toks, list) or not all(
            isinstance(a, list) and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**31 for x in a)
            for a in toks):
        raise InputError(f"{where}: tokens: must be a list of answers, each a list of token ids")
    if text is not None and (not isinstance(text, list) or len(text) != len(toks)
                             or not all(isinstance(x, str) for x in text)):
        raise InputError(f"{where}: text: must be a list of one string per answer")
    return (str(pid), float(t)), [tuple(a) for a in toks], text


def load_reference(path: Path | str) -> ReferenceRun:
    """Read a complete ``tbg sample`` folder (refuses an unfinished or damaged one, saying where and what to do)."""
    from evalspec._files import loads_json

    folder = Path(path)
    _mpath, manifest, temps, pids, samples, max_new = _manifest(folder)
    tokens: dict[tuple[str, float], list[tuple[int, ...]]] = {}
    text: dict[tuple[str, float], list[str]] = {}
    tset = set(temps)
    shards = folder / "shards"
    for shard in sorted(p for p in shards.glob("*.jsonl") if not p.is_symlink()) if shards.is_dir() else []:
        lines = _read(shard, "a reference shard").splitlines()
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            hint = "delete this shard file and rerun evalspec tbg sample to redo it"
            obj = loads_json(line, display=str(shard), what=f"shard line {lineno}", hint=hint, line=lineno)
            if isinstance(obj, dict) and "complete" in obj:
                continue
            key, toks, texts = _shard_cell(obj, f"{shard}:{lineno}", tset)
            tokens[key] = toks
            try:
                text[key] = list(texts) if texts is not None else ["".join(map(chr, a)) for a in toks]
            except (ValueError, OverflowError):
                raise InputError(f"{shard}:{lineno}: tokens: ids too large to stand for text; give text") from None
    missing = [(p, t) for p in pids for t in temps if (p, t) not in tokens]
    if missing:
        raise InputError(f"{folder}: the reference run is unfinished ({len(missing)} of {len(pids) * len(temps)} "
                         "prompt x temperature cells missing); rerun the same evalspec tbg sample command to resume it")
    model = manifest.get("model")
    name = str((model.get("name") if isinstance(model, dict) else None) or folder.name)
    return ReferenceRun(name=name, path=str(folder), temperatures=temps, prompt_ids=pids,
                        samples=samples, max_new_tokens=max_new, tokens=tokens, text=text, manifest=manifest)


def load_target(path: Path | str, temperature: float | None = None) -> TargetAnswers:
    """The SUT's answers: a JSONL file, or a ``tbg sample`` folder at one temperature."""
    p = Path(path)
    if p.is_dir():
        ref = load_reference(p)
        if temperature is None:
            if len(ref.temperatures) != 1:
                raise InputError(f"{p}: this reference run has {len(ref.temperatures)} temperatures; "
                                 "say which one plays the system under test (--target-temperature)")
            temperature = ref.temperatures[0]
        if float(temperature) not in ref.temperatures:
            raise InputError(f"{p}: --target-temperature {temperature} is not in its grid {ref.temperatures}")
        t = float(temperature)
        answers: dict[str, list[Answer]] = {pid: list(ref.tokens[(pid, t)]) for pid in ref.prompt_ids}
        return TargetAnswers(name=f"{ref.name} at T={t:g}", units="tokens", answers=answers)
    from evalspec._files import loads_json, read_text

    body = read_text(p, what="the target answers", display=str(p),
                     hint="give the system under test's answers as JSONL (prompt, repeat, answer or tokens)")
    assert body is not None
    lines = body.splitlines()
    rows: dict[str, dict[int, Answer]] = {}
    kinds: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        obj = loads_json(line, display=str(p), what=f"line {lineno}", line=lineno)
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected an object with prompt, repeat and answer or tokens")
        pid = obj.get("prompt", obj.get("prompt_id"))
        if not isinstance(pid, (str, int)) or isinstance(pid, bool):
            raise InputError(f"{where}: prompt: missing or not a string/integer (got {pid!r})")
        rep = obj.get("repeat")
        if not isinstance(rep, int) or isinstance(rep, bool):
            raise InputError(f"{where}: repeat: missing or not an integer (got {rep!r})")
        if "tokens" in obj:
            toks = obj["tokens"]
            if not isinstance(toks, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in toks):
                raise InputError(f"{where}: tokens: must be a list of integer token ids")
            ans: Answer = tuple(toks)
            kinds.add("tokens")
        else:
            text = obj.get("answer", obj.get("text"))
            if not isinstance(text, str):
                raise InputError(f"{where}: answer: missing or not a string (got {text!r}); "
                                 "give answer (text) or tokens (ids)")
            ans = text
            kinds.add("text")
        slot = rows.setdefault(str(pid), {})
        if rep in slot:
            raise InputError(f"{where}: prompt {pid!r} repeat {rep} appears twice")
        slot[rep] = ans
    if not rows:
        raise InputError(f"{p}: no answers")
    if len(kinds) > 1:
        raise InputError(f"{p}: some lines give tokens and others answer text; use one kind for every line")
    answers = {pid: [slot[r] for r in sorted(slot)] for pid, slot in rows.items()}
    return TargetAnswers(name=p.stem, units=kinds.pop(), answers=answers)
