"""Optional backends: vLLM against a fake engine (no GPU, no vLLM), Ray only where it is installed."""

from __future__ import annotations

import json
import sys
import types

import pytest

from evalspec.tbg.prompts import Prompt
from evalspec.tbg.runner import run_sampling
from evalspec.tbg.shards import SampleSettings


class _Out:
    def __init__(self, token_ids, text, finish_reason):
        self.token_ids, self.text, self.finish_reason = token_ids, text, finish_reason


class _Req:
    def __init__(self, outputs):
        self.outputs = outputs


def _fake_vllm(calls: dict) -> types.ModuleType:
    """A stand-in for vllm: records how it was built and called; answers depend on (seed, T) only."""
    mod = types.ModuleType("vllm")
    mod.__version__ = "0.0-fake"

    class SamplingParams:
        def __init__(self, n, temperature, max_tokens, seed):
            self.n, self.temperature, self.max_tokens, self.seed = n, temperature, max_tokens, seed

    class Tok:
        def apply_chat_template(self, messages, add_generation_prompt, tokenize):
            return "<chat>" + messages[-1]["content"]

    class LLM:
        def __init__(self, model, dtype, seed, enable_prefix_caching):
            calls["init"] = {"model": model, "dtype": dtype, "seed": seed, "prefix": enable_prefix_caching}

        def get_tokenizer(self):
            return Tok()

        def generate(self, prompts, params):
            calls.setdefault("prompts", []).extend(prompts)
            out = []
            for p in params:
                calls.setdefault("seeds", []).append(p.seed)
                answers = []
                for i in range(p.n):
                    k = 0 if p.temperature == 0 else (p.seed + i) % 3
                    toks = [k] * min(3, p.max_tokens)
                    answers.append(_Out(toks, "abc"[k] * len(toks), "length"))
                out.append(_Req(answers))
            return out

    mod.SamplingParams, mod.LLM = SamplingParams, LLM
    return mod


def test_vllm_backend_with_a_fake_engine(tmp_path, monkeypatch):
    calls: dict = {}
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(calls))
    monkeypatch.delenv("VLLM_BATCH_INVARIANT", raising=False)
    prompts = [Prompt(id=f"p{i}", text=f"question {i}") for i in range(6)] + [
        Prompt(id="chat", messages=(("user", "hello"),))]
    settings = SampleSettings(temperatures=(0.0, 0.5), samples=4, max_new_tokens=3, backend="vllm", dtype="bfloat16",
                              seed=7, prompt_chunk=4)
    stats = run_sampling("/models/ref-3b", prompts, settings, tmp_path / "out", progress=False)
    assert stats.shards_run == 2 and stats.generated_tokens == 7 * 2 * 4 * 3
    assert calls["init"] == {"model": "/models/ref-3b", "dtype": "bfloat16", "seed": 7, "prefix": True}
    import os

    assert os.environ["VLLM_BATCH_INVARIANT"] == "1"
    assert "<chat>hello" in calls["prompts"]
    assert len(set(calls["seeds"])) == len(calls["seeds"]) == 14  # a seed per (prompt, temperature)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["settings"]["backend"] == "vllm" and manifest["environment"]["VLLM_BATCH_INVARIANT"] == "1"
    from evalspec.tbg.data import load_reference

    ref = load_reference(tmp_path / "out")
    assert ref.tokens[("p0", 0.0)] == [(0, 0, 0)] * 4
    # the same seeds on a rerun into a new folder: the same answers
    calls2: dict = {}
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(calls2))
    run_sampling("/models/ref-3b", prompts, settings, tmp_path / "again", progress=False)
    assert calls2["seeds"] == calls["seeds"]
    with pytest.raises(Exception, match="use --executor local"):
        run_sampling("/models/ref-3b", prompts, settings, tmp_path / "ray", progress=False, executor="ray")


def test_vllm_missing_is_a_clear_error(tmp_path, monkeypatch):
    from evalspec.errors import InputError

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    settings = SampleSettings(temperatures=(0.0,), samples=2, max_new_tokens=2, backend="vllm")
    with pytest.raises(InputError, match="vLLM is not installed"):
        run_sampling("m", [Prompt(id="a", text="x")], settings, tmp_path / "o", progress=False)


def test_ray_executor_with_a_local_instance(tmp_path, torch_cpu):
    pytest.importorskip("ray")
    from tbg_synthetic import SyntheticModel  # noqa: F401  (conftest path)

    prompts = [Prompt(id=f"p{i}", text=f"question number {i}") for i in range(4)]
    settings = SampleSettings(temperatures=(0.0, 0.3), samples=4, max_new_tokens=4, prompt_chunk=2, temperature_block=1)
    import ray

    local = run_sampling("tiny:0", prompts, settings, tmp_path / "local", progress=False, threads=1)
    started_here = not ray.is_initialized()
    try:
        remote = run_sampling("tiny:0", prompts, settings, tmp_path / "ray", progress=False, threads=1,
                              executor="ray")
    finally:
        if started_here:
            ray.shutdown()
    assert local.shards_run == remote.shards_run == 4
    body = {p.name: p.read_text().splitlines()[:-1] for p in (tmp_path / "local" / "shards").glob("*.jsonl")}
    body_ray = {p.name: p.read_text().splitlines()[:-1] for p in (tmp_path / "ray" / "shards").glob("*.jsonl")}
    assert body == body_ray
