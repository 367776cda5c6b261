"""An inference environment I that is not batch-invariant: greedy answers under changing batches.

Section 6.2 of "Introducing Background Temperature to Characterise Hidden Randomness in
Large Language Models" (Messina and Scotta) lists the environment factors behind hidden
randomness at T = 0: batch size, co-batching with other prompts, precision, kernels. This
module reproduces the first two on a local model: each prompt is answered greedily
``repeats`` times, each time inside a left-padded batch of a different size with different
neighbours (``batch_sizes[r]`` for repeat ``r``, prompts shuffled per repeat). The answers
per prompt then play the system under test, and :mod:`evalspec.tbg.estimate` reads its
equivalent temperature T_n(I) against a deterministic one-prompt-at-a-time reference run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["batched_greedy", "environment_answers"]


def batched_greedy(model: Any, tokenizer: Any, batch: Sequence[Sequence[int]], max_new_tokens: int,
                   eos_ids: Sequence[int]) -> list[tuple[int, ...]]:
    """Greedy answers of a left-padded batch (token ids up to the first EOS, EOS excluded)."""
    import torch

    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos_ids[0] if eos_ids else 0)
    width = max(len(x) for x in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, x in enumerate(batch):
        ids[i, width - len(x):] = torch.tensor(list(x))
        mask[i, width - len(x):] = 1
    from transformers import GenerationConfig

    config = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens, eos_token_id=list(eos_ids) or None,
                              pad_token_id=pad)
    with torch.inference_mode():
        out = model.generate(ids.to(device), attention_mask=mask.to(device), generation_config=config)
    answers = []
    eos = set(int(e) for e in eos_ids)
    for row in out[:, width:].tolist():
        cut = next((j for j, t in enumerate(row) if t in eos), len(row))
        answers.append(tuple(int(t) for t in row[:cut]))
    return answers


def environment_answers(model: Any, tokenizer: Any, encoded: dict[str, Sequence[int]], batch_sizes: Sequence[int],
                        max_new_tokens: int, eos_ids: Sequence[int], seed: int = 0) -> dict[str, list[tuple[int, ...]]]:
    """``{prompt: answers}``: one greedy answer per repeat, repeat ``r`` in batches of ``batch_sizes[r]``."""
    rng = np.random.default_rng(seed)
    ids = list(encoded)
    out: dict[str, list[tuple[int, ...]]] = {p: [] for p in ids}
    for size in batch_sizes:
        order = [ids[i] for i in rng.permutation(len(ids))]
        for start in range(0, len(order), size):
            chunk = order[start:start + size]
            for pid, ans in zip(chunk, batched_greedy(model, tokenizer, [encoded[p] for p in chunk], max_new_tokens,
                                                      eos_ids), strict=True):
                out[pid].append(ans)
    return out
