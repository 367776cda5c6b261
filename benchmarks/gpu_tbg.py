"""GPU benchmark of background-temperature reference sampling, and T_n(I) of GPU environments.

Ready to run on a CUDA machine with torch and transformers (no weights to copy: the model is
a random-weight Llama built on the spot, its final norm sharpened so temperature matters)::

    PYTHONPATH=. python3 benchmarks/gpu_tbg.py [--quick] [--json-out results.json]

Part A, speed (side by side, same model, prompts, grid, K and uniforms), float32 and bfloat16:
the shared-prefill / distinct-prefix sampler vs a plain ``model.generate`` loop per
(temperature, sample); tokens/s, the ratio, and how many answers differ between the two.

Part B, the environment effect: for float32 and bfloat16, each with and without the
deterministic settings (``torch.use_deterministic_algorithms``, no TF32, no cuDNN autotuning),
every prompt is answered greedily once per repeat inside left-padded batches of changing size
and neighbours (:mod:`evalspec.tbg.environment`). The answers play the system under test; the
reference is the same model in float32, deterministic, one prompt at a time, over a
temperature grid. Printed per setting: prompts whose greedy answer changed with the batch,
and T_n(I) with its interval (or "indistinguishable from deterministic").

``--quick`` shrinks everything to run on a CPU in a minute (a smoke test of the script).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts: deterministic cuBLAS
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = ("the of and to in is you that it he was for on are as with his they at be this have from or one had by "
         "word but not what all were we when your can said there use an each which she do how their if will up "
         "other about out many then them these so some her would make like him into time has look two more").split()


def build(hidden: int, layers: int, vocab: int, device: str, target_std: float, seed: int = 0):
    """A random-weight Llama (float32) with the byte-level tokenizer; final norm scaled to ``target_std`` logits."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from evalspec.tbg.models import build_tiny_tokenizer

    tok = build_tiny_tokenizer()
    heads = max(4, hidden // 64)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=int(hidden * 2.75) // 64 * 64,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 4),
                      max_position_embeddings=1024, tie_word_embeddings=False, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).eval().to(device)
    with torch.no_grad():
        probe = torch.tensor([tok("the capital of france is")["input_ids"]], device=device)
        std = float(model(probe).logits[0, -1].float().std())
        model.model.norm.weight.mul_(target_std / std)
    return model, tok


def prompts(n: int, seed: int = 0) -> list[tuple[str, str]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return [(f"p{i}", " ".join(rng.choice(WORDS, size=int(rng.integers(3, 12))))) for i in range(n)]


def set_deterministic(on: bool) -> None:
    import torch

    torch.use_deterministic_algorithms(on, warn_only=True)
    torch.backends.cudnn.benchmark = not on
    torch.backends.cudnn.deterministic = on
    torch.backends.cuda.matmul.allow_tf32 = not on
    torch.backends.cudnn.allow_tf32 = not on


def speed(model, tok, device: str, grid, n_prompts: int, k: int, n: int) -> dict:
    import torch

    from evalspec.tbg.sampler import generate_plain, sample_prompt, temperature_uniforms

    ps = prompts(n_prompts, seed=1)
    enc = {p: tok(t)["input_ids"] for p, t in ps}
    unif = {p: {t: temperature_uniforms(0, p, t, k, n) for t in grid} for p, _ in ps}
    eos = [tok.eos_token_id]
    sample_prompt(model, enc[ps[0][0]], grid[:2], {t: unif[ps[0][0]][t] for t in grid[:2]}, 2, eos)  # warm-up
    generate_plain(model, enc[ps[0][0]], 0.5, unif[ps[0][0]][grid[0]][0], 2, eos, tok.pad_token_id)
    torch.cuda.synchronize() if device == "cuda" else None
    t0 = time.perf_counter()
    shared = {p: sample_prompt(model, enc[p], grid, unif[p], n, eos) for p, _ in ps}
    torch.cuda.synchronize() if device == "cuda" else None
    t_shared = time.perf_counter() - t0
    tokens = sum(r.generated for r in shared.values())
    t0 = time.perf_counter()
    differ = 0
    for p, _ in ps:
        for t in grid:
            for j in range(k):
                toks, fin = generate_plain(model, enc[p], t, unif[p][t][j], n, eos, tok.pad_token_id)
                differ += (toks != shared[p].tokens[t][j]) or (fin != shared[p].finish[t][j])
    torch.cuda.synchronize() if device == "cuda" else None
    t_plain = time.perf_counter() - t0
    return {"prompts": n_prompts, "temperatures": len(grid), "samples": k, "max_new_tokens": n, "tokens": tokens,
            "shared_s": round(t_shared, 3), "plain_s": round(t_plain, 3),
            "shared_tok_s": round(tokens / t_shared, 1), "plain_tok_s": round(tokens / t_plain, 1),
            "speedup": round(t_plain / t_shared, 2), "answers_differing": differ,
            "forward_rows": sum(r.forward_rows for r in shared.values())}


def environment(model32, tok, device: str, n_prompts: int, batch_sizes, n: int, grid, k_ref: int,
                variants, resamples: int) -> list[dict]:
    import copy

    import torch

    from evalspec.tbg.environment import environment_answers
    from evalspec.tbg.estimate import estimate_from_answers
    from evalspec.tbg.sampler import sample_prompt, temperature_uniforms

    ps = prompts(n_prompts, seed=2)
    enc = {p: tok(t)["input_ids"] for p, t in ps}
    eos = [tok.eos_token_id]
    set_deterministic(True)
    ref: dict[float, dict[str, list]] = {t: {} for t in grid}
    t0 = time.perf_counter()
    for p, _ in ps:
        res = sample_prompt(model32, enc[p], grid, {t: temperature_uniforms(0, p, t, k_ref, n) for t in grid}, n, eos)
        for t in grid:
            ref[t][p] = [tuple(x) for x in res.tokens[t]]
    print(f"  reference run (float32, deterministic, one prompt at a time): {time.perf_counter() - t0:.1f} s",
          flush=True)
    one_at_a_time = {p: ref[0.0][p][0] for p, _ in ps}
    rows = []
    for dtype_name, det in variants:
        set_deterministic(det)
        model = model32 if dtype_name == "float32" else copy.deepcopy(model32).to(torch.bfloat16)
        t0 = time.perf_counter()
        answers = environment_answers(model, tok, enc, batch_sizes, n, eos, seed=3)
        secs = time.perf_counter() - t0
        changed = sum(len(set(a)) > 1 for a in answers.values())
        vs_single = sum(any(x != one_at_a_time[p] for x in a) for p, a in answers.items())
        row = {"dtype": dtype_name, "deterministic": det, "prompts": n_prompts, "repeats": len(batch_sizes),
               "batch_sizes": list(batch_sizes), "prompts_varying_with_batch": changed,
               "prompts_differing_from_fp32_single": vs_single, "seconds": round(secs, 1)}
        for metric in ("exact_match", "first_divergence"):
            est = estimate_from_answers([("same model, fp32, one at a time", ref)], answers, metric=metric,
                                        resamples=resamples)
            r = est.references[0]
            row[metric] = {"t_hat": r.t_hat, "interval": list(r.interval), "tied": r.tied,
                           "indistinguishable": r.indistinguishable, "ks_min": round(r.ks_min, 4)}
        rows.append(row)
        em = row["exact_match"]
        verdict = ("indistinguishable from deterministic" if em["indistinguishable"] else
                   f"T_n(I) = {em['t_hat']:g} [{em['interval'][0]:g}, {em['interval'][1]:g}]")
        print(f"  {dtype_name:8s} deterministic={det!s:5s}: {changed}/{n_prompts} prompts change with the batch, "
              f"{vs_single} differ from fp32 one-at-a-time; exact match: {verdict}; "
              f"first divergence: T = {row['first_divergence']['t_hat']:g} ({secs:.1f} s)", flush=True)
        if model is not model32:
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
    set_deterministic(True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, CPU allowed (smoke test)")
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--skip-speed", action="store_true")
    a = ap.parse_args()
    import torch
    import transformers

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not a.quick:
        sys.exit("no CUDA device: run with --quick for a CPU smoke test")
    if a.quick:
        size = {"hidden": 64, "layers": 2, "vocab": 300}
        sp = {"n_prompts": 1, "k": 4, "n": 8}
        env = {"n_prompts": 8, "batch_sizes": [1, 3, 8, 2], "n": 8, "k_ref": 4, "resamples": 100}
    else:
        size = {"hidden": 1024, "layers": 12, "vocab": 32000}
        sp = {"n_prompts": 2, "k": 8, "n": 32}
        env = {"n_prompts": 48, "batch_sizes": [1, 16, 3, 48, 7, 24, 2, 12], "n": 32, "k_ref": 8, "resamples": 500}
    grid = [0.0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0]
    info = {"torch": torch.__version__, "transformers": transformers.__version__, "device": device,
            "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None, "model": size}
    print(json.dumps(info), flush=True)
    set_deterministic(True)
    model32, tok = build(size["hidden"], size["layers"], size["vocab"], device, target_std=6.0)
    print(f"model: random-weight Llama, {sum(p.numel() for p in model32.parameters()) / 1e6:.0f}M parameters", flush=True)
    out = {"info": info, "speed": {}, "environment": []}
    if not a.skip_speed:
        import copy

        for dtype_name in ("float32", "bfloat16"):
            model = model32 if dtype_name == "float32" else copy.deepcopy(model32).to(torch.bfloat16)
            res = speed(model, tok, device, grid, sp["n_prompts"], sp["k"], sp["n"])
            out["speed"][dtype_name] = res
            print(f"A {dtype_name}: shared {res['shared_s']:.2f} s ({res['shared_tok_s']:,.0f} tok/s) vs plain "
                  f"{res['plain_s']:.2f} s ({res['plain_tok_s']:,.0f} tok/s): {res['speedup']:.1f}x; "
                  f"answers differing {res['answers_differing']} of {res['prompts'] * res['temperatures'] * res['samples']}",
                  flush=True)
            if model is not model32:
                del model
    print("B environment effect (greedy answers under changing batches vs the deterministic reference):", flush=True)
    variants = [("float32", True), ("float32", False), ("bfloat16", True), ("bfloat16", False)]
    out["environment"] = environment(model32, tok, device, env["n_prompts"], env["batch_sizes"], env["n"], grid,
                                     env["k_ref"], variants, env["resamples"])
    text = json.dumps(out, indent=2)
    if a.json_out:
        Path(a.json_out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
