"""Reference sampling over a temperature grid: one prefill per prompt, distinct prefixes only.

A reference run answers every prompt ``K`` times at every temperature of a grid (section
6.3 of "Introducing Background Temperature to Characterise Hidden Randomness in Large
Language Models", Messina and Scotta). Done naively that is ``|grid| x K`` calls of
``generate`` per prompt. At low temperature most of those samples share their prefix, so
this sampler:

* runs the prompt's **prefill once** and shares its key/value cache with every temperature
  and sample of a shard;
* keeps the set of **distinct prefixes** (a trie level) and runs one batched decoding step
  over them: samples that agree so far cost one row, not ``K``; all prefixes of one prompt
  have the same length, so the batch needs no padding;
* draws each token by **inverse-CDF sampling** from ``softmax(logits / T)`` (float64) with a
  uniform number fixed in advance for (prompt, temperature, sample, step): each sample has
  its own generator, seeded from ``(seed, prompt id, T, sample index)``, so the random draws
  do not change when the grid, K, the shard layout or the batch changes. T = 0 is greedy
  (first maximum). (The logits of a batched forward are not always bit-identical to a
  single-sequence forward's, so at a rare near-tie a token can differ between groupings;
  the manifest records the settings and a resumed run must match them.)

:func:`choose_tokens` is the one sampling rule; the benchmark's plain ``generate`` loop uses
it too (as a logits processor), which makes the two produce the same token ids.

Output (``--out DIR``): ``manifest.json`` (settings, model identity, environment and library
versions) and one file per shard ``shards/t<block>-p<chunk>.jsonl`` (reference x temperature
block x prompt chunk), written atomically when the shard finishes; a rerun skips the shards
already there, so an interrupted run resumes where it stopped. Answers are token ids
(compared as ids) with their decoded text.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalspec.errors import InputError
from evalspec.tbg.prompts import Prompt, prompts_digest

__all__ = [
    "FORMAT",
    "SampleSettings",
    "ShardPlan",
    "choose_tokens",
    "deterministic_environment",
    "encode_prompt",
    "sample_prompt",
    "temperature_uniforms",
]

FORMAT = "evalspec-tbg-reference/1"


# -- seeds and the sampling rule -----------------------------------------------------------

def _key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def temperature_uniforms(seed: int, prompt_id: str, temperature: float, samples: int, steps: int) -> np.ndarray:
    """Uniforms ``[samples, steps]`` for one (prompt, temperature): a generator per sample.

    Sample ``k`` draws from its own generator seeded from ``(seed, sha256(prompt id),
    round(T * 1e6), k)``, so a sample does not depend on which other prompts or temperatures
    are in the run, the first ``k`` samples of a run with more samples are the same, and a
    longer ``--max-new-tokens`` extends the answers rather than changing them.
    """
    base = [int(seed), _key(prompt_id), int(round(float(temperature) * 1_000_000))]
    out = np.empty((samples, steps), dtype=np.float64)
    for k in range(samples):
        out[k] = np.random.Generator(np.random.PCG64(np.random.SeedSequence(base + [k]))).random(steps)
    return out


def choose_tokens(logits: Any, temperatures: Any, uniforms: Any, rows: Any = None) -> Any:
    """Next tokens: sample ``i`` draws from row ``rows[i]`` of ``logits`` (torch ``[P, V]``).

    ``temperatures`` has one value per row of ``logits``, ``uniforms`` one per sample
    (``rows`` defaults to one sample per row). T = 0: the first maximum. T > 0: the smallest
    token ``j`` with ``cdf[j] > u * cdf[-1]``, ``cdf`` the cumulative ``softmax(logits / T)``
    in float64 over the vocabulary order. Returns a torch int64 tensor, one token per sample.
    """
    import torch

    logits64 = logits.to(torch.float64)
    dev = logits64.device
    temps = torch.as_tensor(temperatures, dtype=torch.float64, device=dev).reshape(-1)
    u = torch.as_tensor(uniforms, dtype=torch.float64, device=dev).reshape(-1)
    row_of = (torch.arange(u.numel(), device=dev) if rows is None
              else torch.as_tensor(rows, dtype=torch.long, device=dev).reshape(-1))
    out = torch.empty(u.numel(), dtype=torch.int64, device=dev)
    greedy_rows = temps <= 0
    sample_greedy = greedy_rows[row_of]
    if bool(sample_greedy.any()):
        out[sample_greedy] = torch.argmax(logits64, dim=-1)[row_of[sample_greedy]]
    hot = ~sample_greedy
    if bool(hot.any()):
        hot_rows = torch.unique(row_of[hot])
        cdf = torch.cumsum(torch.softmax(logits64[hot_rows] / temps[hot_rows, None], dim=-1), dim=-1)
        local = torch.searchsorted(hot_rows, row_of[hot])
        per_sample = cdf[local]
        target = (u[hot] * per_sample[:, -1]).unsqueeze(1)
        idx = torch.searchsorted(per_sample, target, right=True).squeeze(1)
        out[hot] = idx.clamp_(max=logits64.shape[-1] - 1)
    return out


def _cache_keyword(model: Any) -> str:
    """``cache`` (transformers >= 5.2x) or ``past_key_values`` (earlier): the forward's cache argument."""
    import inspect

    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _cache_of(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


# -- one prompt ------------------------------------------------------------------------------

@dataclass
class PromptSamples:
    """Answers of one prompt: per temperature, ``K`` token-id lists and how each ended."""

    tokens: dict[float, list[list[int]]]
    finish: dict[float, list[str]]
    forward_rows: int = 0
    generated: int = 0


def encode_prompt(tokenizer: Any, prompt: Prompt, chat: bool | None) -> list[int]:
    """Token ids of a prompt: through the chat template when ``chat`` (None: when the tokenizer has one)."""
    use_chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
    if use_chat:
        if not getattr(tokenizer, "chat_template", None):
            raise InputError("--chat: this tokenizer has no chat template; use --no-chat")
        ids = tokenizer.apply_chat_template(prompt.chat(), add_generation_prompt=True, tokenize=True)
        if hasattr(ids, "keys"):  # BatchEncoding in recent transformers
            ids = ids["input_ids"]
        return [int(x) for x in ids]
    if prompt.text is None:
        raise InputError(f"prompt {prompt.id!r} has chat messages, but the prompts are not sent through a chat "
                         "template (--no-chat, or the tokenizer has none); give it as text")
    return [int(x) for x in tokenizer(prompt.text, add_special_tokens=True)["input_ids"]]


def sample_prompt(model: Any, input_ids: Sequence[int], temperatures: Sequence[float],
                  uniforms: dict[float, np.ndarray], max_new_tokens: int, eos_ids: Iterable[int]) -> PromptSamples:
    """Sample ``K`` answers at each temperature: one shared prefill, one row per distinct prefix.

    ``uniforms[T]`` is ``[K, max_new_tokens]``. An answer stops at an EOS token (not included
    in the answer) or after ``max_new_tokens`` tokens.
    """
    import torch

    device = next(model.parameters()).device
    cache_kw = _cache_keyword(model)
    temps = [float(t) for t in temperatures]
    k = uniforms[temps[0]].shape[0]
    s_temp = np.repeat(np.asarray(temps, dtype=np.float64), k)
    temp_grid = np.sort(np.asarray(temps, dtype=np.float64))
    u_all = np.concatenate([uniforms[t][:, :max_new_tokens] for t in temps], axis=0)
    n_samples = s_temp.size
    eos = torch.tensor(sorted(set(int(e) for e in eos_ids)) or [-1], device=device)
    tokens: list[list[int]] = [[] for _ in range(n_samples)]
    finish = ["length"] * n_samples
    alive = np.ones(n_samples, dtype=bool)
    node_of = np.zeros(n_samples, dtype=np.int64)
    rows = 0
    with torch.inference_mode():
        ids = torch.tensor([list(input_ids)], dtype=torch.long, device=device)
        out = model(input_ids=ids, use_cache=True)
        cache = _cache_of(out)
        logits = out.logits[:, -1, :]
        rows += 1
        for step in range(max_new_tokens):
            idx = np.flatnonzero(alive)
            if idx.size == 0:
                break
            nodes = node_of[idx]
            # one distribution per distinct (node, temperature); each sample draws with its own uniform
            t_code = np.searchsorted(temp_grid, s_temp[idx])
            pairs, row_of = np.unique(nodes * len(temps) + t_code, return_inverse=True)
            pair_nodes = torch.as_tensor(pairs // len(temps), device=logits.device)
            pair_temps = temp_grid[pairs % len(temps)]
            chosen = choose_tokens(logits[pair_nodes], pair_temps, u_all[idx, step], row_of)
            is_eos = torch.isin(chosen, eos).cpu().numpy()
            chosen_np = chosen.cpu().numpy()
            for j, s in enumerate(idx):
                if is_eos[j]:
                    alive[s] = False
                    finish[s] = "eos"
                else:
                    tokens[s].append(int(chosen_np[j]))
            if step == max_new_tokens - 1:
                break
            keep = ~is_eos
            if not keep.any():
                break
            vocab = int(logits.shape[-1])
            keys = nodes[keep] * vocab + chosen_np[keep]
            new_keys, new_of = np.unique(keys, return_inverse=True)
            node_of[idx[keep]] = new_of
            parents = torch.as_tensor(new_keys // vocab, dtype=torch.long, device=device)
            step_ids = torch.as_tensor(new_keys % vocab, dtype=torch.long, device=device).unsqueeze(1)
            cache.reorder_cache(parents)
            out = model(input_ids=step_ids, use_cache=True, **{cache_kw: cache})
            cache = _cache_of(out)
            logits = out.logits[:, -1, :]
            rows += int(new_keys.size)
    result = PromptSamples(tokens={}, finish={}, forward_rows=rows)
    for i, t in enumerate(temps):
        block = slice(i * k, (i + 1) * k)
        result.tokens[t] = tokens[block]
        result.finish[t] = finish[block]
    result.generated = sum(len(x) + (f == "eos") for x, f in zip(tokens, finish, strict=True))
    return result


# -- environment -----------------------------------------------------------------------------

def deterministic_environment(device: str, threads: int | None = None, deterministic: bool = True) -> dict[str, Any]:
    """Make torch as deterministic as it allows and return every setting and version, for the manifest.

    Fixed thread count, ``torch.use_deterministic_algorithms``, no cuDNN autotuning, no TF32,
    ``CUBLAS_WORKSPACE_CONFIG`` for deterministic cuBLAS. Precision and batch composition
    are fixed by the sampler itself (one prompt at a time, rows of distinct prefixes).
    """
    import torch
    import transformers

    env: dict[str, Any] = {}
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    if threads:
        torch.set_num_threads(int(threads))
    env.update({
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cublas_workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        "torch_threads": int(torch.get_num_threads()),
        "batch_composition": "one prompt at a time; rows = distinct prefixes of that prompt (no padding)",
        "sampling": "inverse-CDF on float64 softmax(logits / T), uniforms seeded per (seed, prompt, T)",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": device,
    })
    if device.startswith("cuda") and torch.cuda.is_available():
        env["cuda_device"] = torch.cuda.get_device_name(torch.device(device))
        env["cuda"] = torch.version.cuda
    return env


# -- shards ------------------------------------------------------------------------------------

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


# -- the plain loop (baseline and cross-check) ----------------------------------------------

def generate_plain(model: Any, input_ids: Sequence[int], temperature: float, uniforms_row: np.ndarray,
                   max_new_tokens: int, eos_ids: Iterable[int], pad_id: int | None = None) -> tuple[list[int], str]:
    """One answer with ``model.generate`` (batch of one), drawing with :func:`choose_tokens`.

    The same rule and uniforms as :func:`sample_prompt`, applied in a logits processor that
    leaves only the chosen token; ``generate`` then decodes greedily. This is the plain loop
    the benchmark compares against, and the cross-check that the distinct-prefix sampler
    gives the same token ids.
    """
    import torch
    from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

    step = {"i": 0}

    class _Rule(LogitsProcessor):
        def __call__(self, ids: Any, scores: Any) -> Any:
            tok = choose_tokens(scores, [temperature], [float(uniforms_row[step["i"]])])
            step["i"] += 1
            out = torch.full_like(scores, float("-inf"))
            out[0, tok[0]] = 0.0
            return out

    eos = sorted(set(int(e) for e in eos_ids))
    config = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens, eos_token_id=eos or None,
                              pad_token_id=pad_id if pad_id is not None else (eos[0] if eos else 0))
    device = next(model.parameters()).device
    with torch.inference_mode():
        ids = torch.tensor([list(input_ids)], dtype=torch.long, device=device)
        out = model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=config,
                             logits_processor=LogitsProcessorList([_Rule()]))
    new = [int(x) for x in out[0, len(input_ids):].tolist()]
    for j, t in enumerate(new):
        if t in eos:
            return new[:j], "eos"
    return new, "length"
