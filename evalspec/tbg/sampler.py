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

This module is the kernel: one prompt's samples (:func:`sample_prompt`), the sampling rule,
the seeds, the plain loop it is checked against and the deterministic torch settings. The
shard files and the manifest are :mod:`evalspec.tbg.shards`'s; :mod:`evalspec.tbg.runner`
runs the shards with a backend.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalspec.errors import InputError
from evalspec.tbg.prompts import Prompt

__all__ = [
    "PromptSamples",
    "choose_tokens",
    "deterministic_environment",
    "encode_prompt",
    "generate_plain",
    "sample_prompt",
    "temperature_uniforms",
]


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
