"""Sample a reference model over a temperature grid, shard by shard: ``evalspec tbg sample``.

:func:`run_sampling` plans the shards, writes the manifest (or checks that a run already in
the folder can be resumed), and runs every pending shard on this machine with the
transformers backend, with vLLM, or as Ray tasks (:mod:`evalspec.tbg.backends`). The sampling
kernel is :mod:`evalspec.tbg.sampler`, the shard files :mod:`evalspec.tbg.shards`; this module
composes them with the backends (which use both, so neither can import them).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evalspec.errors import InputError
from evalspec.tbg.prompts import Prompt
from evalspec.tbg.sampler import deterministic_environment, encode_prompt
from evalspec.tbg.shards import (
    RunStats,
    SampleSettings,
    ShardPlan,
    build_manifest,
    check_resumable,
    plan_shards,
    run_shard_local,
    shard_done,
    write_shard,
)

__all__ = ["run_sampling"]


def run_sampling(model_spec: str, prompts: Sequence[Prompt], settings: SampleSettings, out: Path | str, *,
                 prompts_file: str = "", threads: int | None = None, deterministic: bool = True,
                 executor: str = "local", progress: bool = True,
                 on_shard: Callable[[ShardPlan, dict[str, Any]], None] | None = None) -> RunStats:
    """Sample every pending shard into ``out`` (resuming a run already there) and return what it did."""
    out = Path(out)
    shards = plan_shards(prompts, settings)
    stats = RunStats(shards_total=len(shards))
    if settings.backend == "vllm":
        from evalspec.tbg.backends import vllm_runner

        if executor != "local":
            raise InputError("--backend vllm runs on one machine (vLLM batches the shards itself); use --executor local")

        runner, model_info, environment, tokenizer = vllm_runner(model_spec, settings, {p.id: p for p in prompts})
    else:
        from evalspec.tbg.models import load_model, require_backend

        require_backend()  # a clear install hint (exit 2) where torch or transformers is missing
        environment = deterministic_environment(settings.device, threads, deterministic)
        loaded = load_model(model_spec, device=settings.device, dtype=settings.dtype)
        model_info = {"spec": model_spec, "name": loaded.name, "source": loaded.source, **loaded.info}
        model_info.pop("torch", None)
        model_info.pop("transformers", None)
        tokenizer = loaded.tokenizer
        encoded = {p.id: encode_prompt(tokenizer, p, settings.chat) for p in prompts}  # errors before any shard

        def runner(shard: ShardPlan) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            return run_shard_local(loaded, encoded, shard, settings)

    manifest = build_manifest(prompts, settings, model_info, environment, prompts_file)
    mpath = out / "manifest.json"
    if mpath.is_file():
        try:
            old = json.loads(mpath.read_text(encoding="utf-8"))
        except ValueError:
            raise InputError(f"{mpath}: not valid JSON; remove the folder or use a new --out") from None
        check_resumable(old, manifest, out)
    else:
        if out.exists() and any(out.iterdir()):
            raise InputError(f"--out {out}: the folder is not empty and holds no reference run; use a new folder")
        from evalspec._atomic import write_text_atomic

        write_text_atomic(mpath, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    pending = [s for s in shards if not shard_done(out, s)]
    stats.shards_done_before = len(shards) - len(pending)
    bar = _progress(len(shards), stats.shards_done_before, progress)
    t0 = time.perf_counter()
    del tokenizer

    def finish(shard: ShardPlan, lines: list[dict[str, Any]], shard_stats: dict[str, Any]) -> None:
        write_shard(out, shard, lines, shard_stats)
        stats.shards_run += 1
        stats.generated_tokens += int(shard_stats.get("generated_tokens", 0))
        stats.forward_rows += int(shard_stats.get("forward_rows", 0))
        stats.per_shard.append({"shard": shard.name, **shard_stats})
        stats.seconds = time.perf_counter() - t0
        bar(1, stats.tokens_per_second)
        if on_shard is not None:
            on_shard(shard, shard_stats)

    if executor == "ray":
        from evalspec.tbg.backends import run_with_ray

        run_with_ray(model_spec, list(prompts), settings, pending, finish, threads=threads,
                     deterministic=deterministic)
    elif executor == "local":
        for shard in pending:
            lines, shard_stats = runner(shard)
            finish(shard, lines, shard_stats)
    else:
        raise InputError(f"--executor: unknown executor {executor!r}; use local or ray")
    bar(0, stats.tokens_per_second, close=True)
    stats.seconds = time.perf_counter() - t0
    return stats


def _progress(total: int, initial: int, enabled: bool) -> Callable[..., None]:
    """A progress bar over shards with tokens/s (tqdm when installed, else a line per shard)."""
    if not enabled:
        return lambda n, rate, close=False: None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with transformers
        done = [initial]

        def plain(n: int, rate: float, close: bool = False) -> None:
            done[0] += n
            if n:
                print(f"shards {done[0]}/{total}  {rate:,.0f} tokens/s", file=sys.stderr, flush=True)

        return plain
    pbar = tqdm(total=total, initial=initial, unit="shard", desc="reference shards", file=sys.stderr)

    def update(n: int, rate: float, close: bool = False) -> None:
        if n:
            pbar.set_postfix_str(f"{rate:,.0f} tokens/s")
            pbar.update(n)
        if close:
            pbar.close()

    return update
