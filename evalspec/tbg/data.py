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

import json
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


def load_reference(path: Path | str) -> ReferenceRun:
    """Read a complete ``tbg sample`` folder (refuses an unfinished one, saying how to finish it)."""
    from evalspec.tbg.sampler import FORMAT

    folder = Path(path)
    mpath = folder / "manifest.json"
    if not mpath.is_file():
        raise InputError(f"{folder}: not a reference run (no manifest.json); make one with evalspec tbg sample")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"{mpath}: not valid JSON ({exc})") from None
    if manifest.get("format") != FORMAT:
        raise InputError(f"{mpath}: format: expected {FORMAT!r} (got {manifest.get('format')!r})")
    settings = manifest["settings"]
    temps = [float(t) for t in settings["temperatures"]]
    pids = [str(p) for p in manifest["prompts"]["ids"]]
    tokens: dict[tuple[str, float], list[tuple[int, ...]]] = {}
    text: dict[tuple[str, float], list[str]] = {}
    for shard in sorted((folder / "shards").glob("*.jsonl")) if (folder / "shards").is_dir() else []:
        lines = shard.read_text(encoding="utf-8").splitlines()
        for lineno, line in enumerate(lines, start=1):
            try:
                obj = json.loads(line)
            except ValueError:
                raise InputError(f"{shard}:{lineno}: not valid JSON; delete this shard file and rerun "
                                 "evalspec tbg sample to redo it") from None
            if "complete" in obj:
                continue
            key = (str(obj["prompt"]), float(obj["temperature"]))
            tokens[key] = [tuple(int(x) for x in a) for a in obj["tokens"]]
            text[key] = list(obj["text"]) if obj.get("text") is not None else ["".join(map(chr, a)) for a in tokens[key]]
    missing = [(p, t) for p in pids for t in temps if (p, t) not in tokens]
    if missing:
        raise InputError(f"{folder}: the reference run is unfinished ({len(missing)} of {len(pids) * len(temps)} "
                         "prompt x temperature cells missing); rerun the same evalspec tbg sample command to resume it")
    name = str(manifest.get("model", {}).get("name") or folder.name)
    return ReferenceRun(name=name, path=str(folder), temperatures=temps, prompt_ids=pids,
                        samples=int(settings["samples"]), max_new_tokens=int(settings["max_new_tokens"]),
                        tokens=tokens, text=text, manifest=manifest)


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
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{p}: cannot read the target answers: {exc.strerror or exc}") from None
    rows: dict[str, dict[int, Answer]] = {}
    kinds: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{where}: not valid JSON ({exc})") from None
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
