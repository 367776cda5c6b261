"""The shards of a reference run: settings, layout, manifest, shard files, one shard sampled locally.

Output (``--out DIR``): ``manifest.json`` (settings, model identity, environment and library
versions) and one file per shard ``shards/t<block>-p<chunk>.jsonl`` (reference x temperature
block x prompt chunk), written atomically when the shard finishes; a rerun skips the shards
already there, so an interrupted run resumes where it stopped. Answers are token ids
(compared as ids) with their decoded text. The samples themselves come from the kernel,
:mod:`evalspec.tbg.sampler`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import InputError
from evalspec.tbg.prompts import Prompt, prompts_digest
from evalspec.tbg.sampler import PromptSamples, sample_prompt, temperature_uniforms

__all__ = [
    "FORMAT",
    "RunStats",
    "SampleSettings",
    "ShardPlan",
    "build_manifest",
    "check_resumable",
    "plan_shards",
    "run_shard_local",
    "shard_done",
    "shard_lines",
    "write_shard",
]

FORMAT = "evalspec-tbg-reference/1"


@dataclass(frozen=True)
class SampleSettings:
    """What determines the samples (a rerun into the same folder must match exactly)."""

    temperatures: tuple[float, ...]
    samples: int
    max_new_tokens: int
    seed: int = 0
    dtype: str = "float32"
    device: str = "cpu"
    chat: bool | None = None
    temperature_block: int = 4
    prompt_chunk: int = 8
    backend: str = "transformers"

    def __post_init__(self) -> None:
        if not self.temperatures:
            raise InputError("--temperatures: the grid is empty")
        if any(not np.isfinite(t) or t < 0 for t in self.temperatures):
            raise InputError(f"--temperatures: every temperature must be >= 0 (got {list(self.temperatures)})")
        if len(set(self.temperatures)) != len(self.temperatures):
            raise InputError(f"--temperatures: a temperature is listed twice (got {list(self.temperatures)})")
        if self.samples < 2:
            raise InputError(f"--samples: need at least 2 answers per prompt to see any spread (got {self.samples})")
        if self.max_new_tokens < 1:
            raise InputError(f"--max-new-tokens: must be at least 1 (got {self.max_new_tokens})")
        if self.temperature_block < 1 or self.prompt_chunk < 1:
            raise InputError("--temperature-block and --prompt-chunk must be at least 1")


@dataclass(frozen=True)
class ShardPlan:
    """Shard ``(block, chunk)``: temperatures ``block`` of the grid x prompts ``chunk``."""

    block: int
    chunk: int
    temperatures: tuple[float, ...]
    prompt_ids: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"t{self.block:03d}-p{self.chunk:04d}"


def plan_shards(prompts: Sequence[Prompt], settings: SampleSettings) -> list[ShardPlan]:
    """The shard layout: every temperature block x every prompt chunk, in a fixed order."""
    temps = settings.temperatures
    blocks = [temps[i:i + settings.temperature_block] for i in range(0, len(temps), settings.temperature_block)]
    ids = [p.id for p in prompts]
    chunks = [ids[i:i + settings.prompt_chunk] for i in range(0, len(ids), settings.prompt_chunk)]
    return [ShardPlan(b, c, tuple(bt), tuple(ci)) for c, ci in enumerate(chunks) for b, bt in enumerate(blocks)]


def build_manifest(prompts: Sequence[Prompt], settings: SampleSettings, model_info: dict[str, Any],
              environment: dict[str, Any], prompts_file: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "settings": {
            "temperatures": list(settings.temperatures),
            "samples": settings.samples,
            "max_new_tokens": settings.max_new_tokens,
            "seed": settings.seed,
            "dtype": settings.dtype,
            "device": settings.device,
            "chat": settings.chat,
            "temperature_block": settings.temperature_block,
            "prompt_chunk": settings.prompt_chunk,
            "backend": settings.backend,
        },
        "model": model_info,
        "prompts": {"file": prompts_file, "sha256": prompts_digest(list(prompts)), "count": len(prompts),
                    "ids": [p.id for p in prompts]},
        "environment": environment,
    }


#: Parts of the manifest a resumed run must match (environment versions included: mixing
#: shards from two library versions would defeat a reference run).
_MATCH = ("format", "settings", "model", "prompts")
_MATCH_ENV = ("torch", "transformers", "numpy", "device", "deterministic_algorithms", "torch_threads")


def check_resumable(old: dict[str, Any], new: dict[str, Any], out: Path) -> None:
    for key in _MATCH:
        o, n = old.get(key), new.get(key)
        if key == "prompts" and isinstance(o, dict) and isinstance(n, dict):
            o, n = {k: v for k, v in o.items() if k != "file"}, {k: v for k, v in n.items() if k != "file"}
        if o != n:
            raise InputError(f"{out / 'manifest.json'}: {key}: this folder holds a run with other {key} "
                             f"(got {json.dumps(o)[:120]}, now {json.dumps(n)[:120]}); "
                             "use a new --out folder, or rerun with the same settings to resume")
    oe, ne = old.get("environment", {}), new.get("environment", {})
    for key in _MATCH_ENV:
        if oe.get(key) != ne.get(key):
            raise InputError(f"{out / 'manifest.json'}: environment.{key}: the run in this folder used "
                             f"{oe.get(key)!r}, this one {ne.get(key)!r}; a reference run must come from one "
                             "environment: use a new --out folder")


def shard_lines(shard: ShardPlan, samples: dict[str, PromptSamples], tokenizer: Any) -> list[dict[str, Any]]:
    """JSON lines of a finished shard: one per (prompt, temperature)."""
    lines = []
    for pid in shard.prompt_ids:
        ps = samples[pid]
        for t in shard.temperatures:
            toks = ps.tokens[t]
            lines.append({
                "prompt": pid,
                "temperature": t,
                "tokens": toks,
                "text": [tokenizer.decode(x, skip_special_tokens=True) for x in toks] if tokenizer is not None else None,
                "finish": ps.finish[t],
            })
    return lines


def write_shard(out: Path, shard: ShardPlan, lines: list[dict[str, Any]], stats: dict[str, Any]) -> Path:
    """Write a finished shard atomically (a shard file exists only once it is complete)."""
    from evalspec._atomic import write_text_atomic

    body = "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines)
    trailer = json.dumps({"shard": shard.name, "complete": True, "lines": len(lines), **stats}) + "\n"
    return write_text_atomic(out / "shards" / f"{shard.name}.jsonl", body + trailer)


def shard_done(out: Path, shard: ShardPlan) -> bool:
    """Whether ``shard`` was finished by an earlier run (its file exists and ends with its trailer)."""
    path = out / "shards" / f"{shard.name}.jsonl"
    if not path.is_file():
        return False
    try:
        last = path.read_text(encoding="utf-8").rstrip("\n").rsplit("\n", 1)[-1]
        return bool(json.loads(last).get("complete"))
    except (OSError, ValueError, AttributeError):
        return False


@dataclass
class RunStats:
    """What a run did (for the progress bar and the command's summary)."""

    shards_total: int = 0
    shards_done_before: int = 0
    shards_run: int = 0
    generated_tokens: int = 0
    forward_rows: int = 0
    seconds: float = 0.0
    per_shard: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float:
        return self.generated_tokens / self.seconds if self.seconds > 0 else 0.0


def run_shard_local(loaded: Any, encoded: dict[str, list[int]], shard: ShardPlan, settings: SampleSettings) -> tuple[
        list[dict[str, Any]], dict[str, Any]]:
    """Sample one shard with the transformers backend: ``(lines, stats)``."""
    t0 = time.perf_counter()
    results: dict[str, PromptSamples] = {}
    for pid in shard.prompt_ids:
        ids = encoded[pid]
        unif = {t: temperature_uniforms(settings.seed, pid, t, settings.samples, settings.max_new_tokens)
                for t in shard.temperatures}
        results[pid] = sample_prompt(loaded.model, ids, shard.temperatures, unif, settings.max_new_tokens,
                                     loaded.eos_ids)
    lines = shard_lines(shard, results, loaded.tokenizer)
    stats = {"generated_tokens": sum(r.generated for r in results.values()),
             "forward_rows": sum(r.forward_rows for r in results.values()),
             "seconds": round(time.perf_counter() - t0, 3)}
    return lines, stats
