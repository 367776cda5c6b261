"""A numpy stand-in for a language model, for fast estimator tests (no torch).

Prompt ``p`` has its own random logits for each (position, previous token); an answer is
``length`` tokens drawn from ``softmax(logits / T)`` (greedy at T = 0). Like a real model,
low temperatures change a few answers (near-ties) and high ones change most.
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
            answers = []
            for _ in range(k):
                prev, seq = self.vocab, []
                for i in range(self.length):
                    z = self.logits[p, i, prev]
                    if temperature <= 0:
                        tok = int(np.argmax(z))
                    else:
                        q = np.exp((z - z.max()) / temperature)
                        tok = int(rng.choice(self.vocab, p=q / q.sum()))
                    seq.append(tok)
                    prev = tok
                answers.append(tuple(seq))
            out[pid] = answers
        return out

    def table(self, grid: list[float], k: int, seed: int) -> dict[float, dict[str, list[tuple[int, ...]]]]:
        return {t: self.answers(t, k, seed) for t in grid}
