"""Optional execution backends of ``evalspec tbg sample``: vLLM on a GPU, shards as Ray tasks.

Neither is a dependency of evalspec: each is imported only when asked for, with a clear
message when it is missing.

**vLLM** (``--backend vllm``): the GPU user's choice where vLLM is installed. It is started
with ``VLLM_BATCH_INVARIANT=1`` (batch-invariant kernels, so an answer does not depend on what
else is in the batch), prefix caching on (the prompt's prefill is shared by every sample) and
the requested precision; each (prompt, temperature) is one request with ``n = K`` samples and
its own seed derived from ``(seed, prompt id, T)``. vLLM draws its own random numbers, so its
samples are not token-for-token those of the transformers backend (the distribution is the
same); the manifest records the backend. T = 0 is greedy.

**Ray** (``--executor ray``): each pending shard becomes a Ray task on an existing cluster
(``ray.init(address="auto")``, or a local instance when none is running); every task loads the
model itself and returns its lines, which the driver writes, so resuming works as locally.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from evalspec.errors import InputError

__all__ = ["run_with_ray", "vllm_runner"]


def vllm_runner(model_spec: str, settings: Any, prompts: dict[str, Any]) -> tuple[Callable[[Any], tuple[list[dict[str, Any]], dict[str, Any]]],
                                                          dict[str, Any], dict[str, Any], Any]:
    """``(runner, model_info, environment, tokenizer)`` for the vLLM backend."""
    import hashlib
    import time

    os.environ.setdefault("VLLM_BATCH_INVARIANT", "1")
    try:
        import vllm
    except ImportError:
        raise InputError("--backend vllm: vLLM is not installed here; install it on a GPU machine "
                         "(pip install vllm) or use --backend transformers") from None
    from evalspec.tbg.sampler import _key

    llm = vllm.LLM(model=model_spec, dtype=settings.dtype, seed=settings.seed, enable_prefix_caching=True)
    tokenizer = llm.get_tokenizer()
    environment = {"backend": "vllm", "vllm": getattr(vllm, "__version__", "unknown"),
                   "VLLM_BATCH_INVARIANT": os.environ.get("VLLM_BATCH_INVARIANT"), "prefix_caching": True,
                   "device": settings.device, "batch_composition": "vLLM scheduler (batch-invariant kernels)"}
    model_info = {"spec": model_spec, "name": os.path.basename(os.path.normpath(model_spec)), "backend": "vllm"}

    def runner(shard: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        t0 = time.perf_counter()
        requests, keys = [], []
        for pid in shard.prompt_ids:
            prompt = prompts[pid]
            for t in shard.temperatures:
                seed = int(hashlib.sha256(f"{settings.seed}|{_key(pid)}|{round(t * 1e6)}".encode()).hexdigest()[:8], 16)
                params = vllm.SamplingParams(n=settings.samples, temperature=float(t), max_tokens=settings.max_new_tokens,
                                             seed=seed)
                text = prompt.text if prompt.messages is None else tokenizer.apply_chat_template(
                    prompt.chat(), add_generation_prompt=True, tokenize=False)
                requests.append((text, params))
                keys.append((pid, t))
        outputs = llm.generate([r[0] for r in requests], [r[1] for r in requests])
        lines, generated = [], 0
        for (pid, t), out in zip(keys, outputs, strict=True):
            toks = [list(map(int, o.token_ids)) for o in out.outputs]
            finish = ["eos" if o.finish_reason == "stop" else "length" for o in out.outputs]
            generated += sum(len(x) for x in toks)
            lines.append({"prompt": pid, "temperature": t, "tokens": toks, "text": [o.text for o in out.outputs],
                          "finish": finish})
        return lines, {"generated_tokens": generated, "forward_rows": 0, "seconds": round(time.perf_counter() - t0, 3)}

    return runner, model_info, environment, tokenizer


def run_with_ray(model_spec: str, prompts: Sequence[Any], settings: Any, pending: Sequence[Any],
                 finish: Callable[[Any, list[dict[str, Any]], dict[str, Any]], None], *, threads: int | None,
                 deterministic: bool) -> None:
    """Run ``pending`` shards as Ray tasks; ``finish`` writes each as it returns."""
    try:
        import ray
    except ImportError:
        raise InputError("--executor ray: ray is not installed here (pip install ray); or use --executor local") from None
    if not ray.is_initialized():
        try:
            ray.init(address="auto", ignore_reinit_error=True, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError):
            ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)

    @ray.remote
    def shard_task(shard: Any) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
        from evalspec.tbg.models import load_model
        from evalspec.tbg.sampler import deterministic_environment, encode_prompt
        from evalspec.tbg.shards import run_shard_local

        deterministic_environment(settings.device, threads, deterministic)
        loaded = load_model(model_spec, device=settings.device, dtype=settings.dtype)
        by_id = {p.id: p for p in prompts}
        encoded = {pid: encode_prompt(loaded.tokenizer, by_id[pid], settings.chat) for pid in shard.prompt_ids}
        lines, stats = run_shard_local(loaded, encoded, shard, settings)
        return shard, lines, stats

    refs = [shard_task.remote(s) for s in pending]
    while refs:
        done, refs = ray.wait(refs, num_returns=1)
        shard, lines, stats = ray.get(done[0])
        finish(shard, lines, stats)
