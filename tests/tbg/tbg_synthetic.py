"""A numpy stand-in for a language model, for fast estimator tests (no torch).

Prompt ``p`` has its own random logits for each (position, previous token); an answer is
``length`` tokens drawn from ``softmax(logits / T)`` by inverse-CDF sampling (greedy at
T = 0). Like a real model, low temperatures change a few answers (near-ties) and high ones
change most.
"""

from __future__ import annotations

import numpy as np


class SyntheticModel:
    def __init__(self, prompts: int = 40, vocab: int = 12, length: int = 6, scale: float = 3.0, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.logits = rng.normal(0.0, scale, size=(prompts, length, vocab + 1, vocab))
        self.prompts = [f"p{i}" for i in range(prompts)]
        self.length = length
        self.vocab = vocab

    def answers(self, temperature: float, k: int, seed: int) -> dict[str, list[tuple[int, ...]]]:
        rng = np.random.default_rng([seed, int(round(temperature * 1e6))])
        out: dict[str, list[tuple[int, ...]]] = {}
        for p, pid in enumerate(self.prompts):
            prev = np.full(k, self.vocab)
            seqs = np.empty((k, self.length), dtype=np.int64)
            u = rng.random((k, self.length))
            for i in range(self.length):
                z = self.logits[p, i, prev]  # [k, vocab]
                if temperature <= 0:
                    tok = np.argmax(z, axis=1)
                else:
                    q = np.exp((z - z.max(axis=1, keepdims=True)) / temperature)
                    cdf = np.cumsum(q, axis=1)
                    tok = np.minimum((cdf <= u[:, i:i + 1] * cdf[:, -1:]).sum(axis=1), self.vocab - 1)
                seqs[:, i] = tok
                prev = tok
            out[pid] = [tuple(int(x) for x in row) for row in seqs]
        return out

    def table(self, grid: list[float], k: int, seed: int) -> dict[float, dict[str, list[tuple[int, ...]]]]:
        return {t: self.answers(t, k, seed) for t in grid}


def write_reference_folder(folder, table: dict[float, dict[str, list[tuple[int, ...]]]], name: str = "synthetic",
                           seed: int = 0):
    """Write ``{T: {prompt: answers}}`` as an `evalspec tbg sample` folder (no torch needed).

    The answers are written as token ids (text: the ids as characters), with the manifest
    of a real run, so the estimator and the plan analysis read it like any other.
    """
    import json
    from pathlib import Path

    from evalspec.tbg.prompts import Prompt
    from evalspec.tbg.shards import SampleSettings, build_manifest, plan_shards, write_shard

    folder = Path(folder)
    temps = sorted(table)
    pids = list(next(iter(table.values())))
    k = len(next(iter(table[temps[0]].values())))
    prompts = [Prompt(id=p, text=p) for p in pids]
    settings = SampleSettings(temperatures=tuple(temps), samples=k, max_new_tokens=64, seed=seed)
    manifest = build_manifest(prompts, settings, {"spec": name, "name": name, "source": "synthetic numpy model"},
                         {"device": "cpu"}, "prompts.jsonl")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    for shard in plan_shards(prompts, settings):
        lines = [{"prompt": p, "temperature": t, "tokens": [list(a) for a in table[t][p]],
                  "text": ["".join(chr(65 + x) for x in a) for a in table[t][p]], "finish": ["length"] * k}
                 for p in shard.prompt_ids for t in shard.temperatures]
        write_shard(folder, shard, lines, {"generated_tokens": 0})
    return folder
