"""Benchmark: the shared-prefill / distinct-prefix reference sampler vs a plain ``generate`` loop.

Side by side, in one run, same model, prompts, grid, K and seeds:

* ``plain``  -- one ``model.generate`` call per (prompt, temperature, sample), batch of one,
                drawing each token with the same rule and uniforms (a logits processor);
* ``shared`` -- :func:`evalspec.tbg.sampler.sample_prompt`: one prefill per prompt, one
                batched decoding row per distinct prefix.

Prints tokens/s of each (answer tokens, EOS included, divided by wall time), the speed-up,
the forward rows the sampler needed against the plain loop's, and how many answers differ
between the two (expected 0: same rule, same uniforms; a difference would come from the
batched forward's numerics).

Usage::

    python benchmarks/bench_tbg_sampler.py                      # tiny random-weight model
    python benchmarks/bench_tbg_sampler.py --model smollm2 --prompts 2 --samples 8 --max-new-tokens 16

Measured on the shared 2-core development machine (load average 6-8; torch 2.13 CPU, one
thread, float32, the paper's 32-temperature grid):

* tiny model (2 layers, 64 wide), ``--prompts 2 --samples 16`` (32 new tokens): shared 2.9 s
  (11,109 tokens/s, 8,011 forward rows) vs plain loop 409 s (80 tokens/s, 33,735 forward calls):
  139x; 0 of 1,024 answers differ.
* SmolLM2-135M-Instruct, ``--model smollm2 --prompts 2 --samples 8 --max-new-tokens 16``:
  shared 13.3 s (514 tokens/s, 1,426 forward rows) vs plain 519 s (13 tokens/s, 7,326 calls):
  39x, 2 of 512 answers differing (near-ties where batched and single-row logits round
  differently). An earlier run while other test suites loaded the cores: 115 s vs 525 s, 4.6x.

On an H200 (benchmarks/gpu_tbg.py, results in benchmarks/results/): 71x in float32, 16x in
bfloat16, 1 of 192 answers differing (GPU kernels are not batch-invariant).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PROMPTS = [
    "What is the capital of France?",
    "Name three primary colours.",
    "Explain in one sentence what a prime number is.",
    "Who wrote Romeo and Juliet?",
    "Give a synonym for happy.",
    "What is the boiling point of water at sea level?",
    "Translate 'good morning' into Spanish.",
    "What is 12 times 12?",
    "Name a planet in the solar system.",
    "What colour is the sky on a clear day?",
    "Write a haiku about autumn.",
    "What is the largest ocean on Earth?",
]


def run(model_spec: str, n_prompts: int, grid: list[float], k: int, n_tokens: int, threads: int, dtype: str,
        device: str, skip_plain: bool = False) -> dict:
    import torch

    from evalspec.tbg.models import load_model
    from evalspec.tbg.prompts import Prompt
    from evalspec.tbg.sampler import (
        deterministic_environment,
        encode_prompt,
        generate_plain,
        sample_prompt,
        temperature_uniforms,
    )

    env = deterministic_environment(device, threads)
    loaded = load_model(model_spec, device=device, dtype=dtype)
    prompts = [Prompt(id=f"q{i}", text=PROMPTS[i % len(PROMPTS)]) for i in range(n_prompts)]
    encoded = {p.id: encode_prompt(loaded.tokenizer, p, None) for p in prompts}
    unif = {p.id: {t: temperature_uniforms(0, p.id, t, k, n_tokens) for t in grid} for p in prompts}
    eos = loaded.eos_ids
    pad = loaded.tokenizer.pad_token_id

    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    # warm-up (first call allocates)
    sample_prompt(loaded.model, encoded[prompts[0].id], grid[:1], {grid[0]: unif[prompts[0].id][grid[0]]}, 2, eos)
    sync()
    t0 = time.perf_counter()
    shared = {}
    rows = 0
    for p in prompts:
        res = sample_prompt(loaded.model, encoded[p.id], grid, unif[p.id], n_tokens, eos)
        shared[p.id] = res
        rows += res.forward_rows
    sync()
    t_shared = time.perf_counter() - t0
    tokens = sum(r.generated for r in shared.values())
    out = {"model": loaded.name, "device": device, "dtype": dtype, "threads": env["torch_threads"],
           "prompts": n_prompts, "temperatures": len(grid), "samples": k, "max_new_tokens": n_tokens,
           "answers": n_prompts * len(grid) * k, "tokens": tokens,
           "shared_seconds": round(t_shared, 3), "shared_tokens_per_s": round(tokens / t_shared, 1),
           "shared_forward_rows": rows}
    if skip_plain:
        return out
    t0 = time.perf_counter()
    differ = 0
    plain_rows = 0
    for p in prompts:
        for t in grid:
            for j in range(k):
                toks, finish = generate_plain(loaded.model, encoded[p.id], t, unif[p.id][t][j], n_tokens, eos, pad)
                plain_rows += 1 + len(toks) + (finish == "eos")
                differ += (toks != shared[p.id].tokens[t][j]) or (finish != shared[p.id].finish[t][j])
    sync()
    t_plain = time.perf_counter() - t0
    out.update({"plain_seconds": round(t_plain, 3), "plain_tokens_per_s": round(tokens / t_plain, 1),
                "plain_forward_calls": plain_rows, "speedup": round(t_plain / t_shared, 2),
                "answers_differing": differ})
    return out


def main() -> None:
    from evalspec.commands.tbg import PAPER_GRID, parse_grid

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="tiny:0")
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--temperatures", default="paper")
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--skip-plain", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    grid = PAPER_GRID if a.temperatures == "paper" else parse_grid(a.temperatures)
    res = run(a.model, a.prompts, grid, a.samples, a.max_new_tokens, a.threads, a.dtype, a.device, a.skip_plain)
    if a.json:
        print(json.dumps(res))
        return
    print(f"{res['model']} on {res['device']} ({res['dtype']}, {res['threads']} thread(s)): {res['prompts']} prompts x "
          f"{res['temperatures']} temperatures x K = {res['samples']} x {res['max_new_tokens']} new tokens "
          f"= {res['answers']} answers, {res['tokens']} tokens")
    print(f"  shared prefill / distinct prefix: {res['shared_seconds']:8.2f} s  {res['shared_tokens_per_s']:10,.0f} "
          f"tokens/s  ({res['shared_forward_rows']} forward rows)")
    if "plain_seconds" in res:
        print(f"  plain generate loop:              {res['plain_seconds']:8.2f} s  {res['plain_tokens_per_s']:10,.0f} "
              f"tokens/s  ({res['plain_forward_calls']} forward calls)")
        print(f"  speed-up: {res['speedup']:.1f}x (target >= 5x on CPU); answers differing: {res['answers_differing']}")


if __name__ == "__main__":
    main()
