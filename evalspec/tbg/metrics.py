"""Variability of the answers to one prompt (section 6.4 of the background-temperature paper).

"Introducing Background Temperature to Characterise Hidden Randomness in Large Language
Models" (Alberto Messina, Stefano Scotta) lists the statistics that turn ``K`` answers to
one prompt into one number; the estimator compares their distribution over prompts. An
answer is a sequence: a tuple of token ids (compared as ids) or a string (compared by
character). For a set of ``K`` answers:

``exact_match`` (the paper's primary)
    fraction of the answers equal to the most common one, in ``[1/K, 1]``.
``first_divergence``
    mean over the ``K(K-1)/2`` pairs of the index of the first position where the two
    answers differ (their common-prefix length; an identical pair counts its full length).
``edit_distance``
    mean over pairs of the Levenshtein distance divided by the longer answer's length, in
    ``[0, 1]`` (0 for two empty answers).
``entropy``
    Shannon entropy, in bits, of the empirical distribution of distinct answers, in
    ``[0, log2 K]``.
``token_entropy``
    entropy of the empirical next-token distribution: for each position up to the longest
    answer, the entropy in bits of the symbol there across the ``K`` answers (an answer that
    has ended shows an end symbol), averaged over positions.

The paper's last metric, a divergence between top-k next-token log-probabilities, needs
log-probabilities from both systems; deployed systems under test rarely give them, and it is
not implemented here.

:class:`AnswerSet` computes the pairwise quantities once over the *distinct* answers, so
the value of any sub-multiset (the estimator subsamples to match ``K`` between the system
under test and the reference) is a weighted sum and costs nothing extra.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["METRICS", "AnswerSet", "metric_value"]

#: name -> one-line description (the estimator's ``--metric`` choices).
METRICS: dict[str, str] = {
    "exact_match": "fraction of answers equal to the most common answer (the paper's primary)",
    "first_divergence": "mean first-divergence index over pairs of answers (tokens, or characters for text)",
    "edit_distance": "mean normalised Levenshtein distance over pairs of answers",
    "entropy": "entropy (bits) of the distribution of distinct answers",
    "token_entropy": "entropy (bits) of the per-position token distribution, averaged over positions",
}

_END = -1  # end-of-answer symbol in the position table (token ids and code points are >= 0)


def _as_codes(answer: Sequence[int] | str) -> tuple[int, ...]:
    if isinstance(answer, str):
        return tuple(ord(c) for c in answer)
    return tuple(int(x) for x in answer)


def _levenshtein_pairs(a: np.ndarray, la: np.ndarray, b: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Levenshtein distances of many pairs at once (rows of ``a``/``b`` padded; true lengths ``la``/``lb``)."""
    p, width = a.shape
    prev = np.broadcast_to(np.arange(width + 1), (p, width + 1)).copy()
    result = lb.astype(np.int64).copy()  # la == 0: the distance is lb
    for i in range(1, width + 1):
        cur = np.empty_like(prev)
        cur[:, 0] = i
        ai = a[:, i - 1]
        for j in range(1, width + 1):
            sub = prev[:, j - 1] + (ai != b[:, j - 1])
            cur[:, j] = np.minimum(np.minimum(prev[:, j] + 1, cur[:, j - 1] + 1), sub)
        done = la == i
        if done.any():
            result[done] = cur[done, lb[done]]
        prev = cur
    return result


class AnswerSet:
    """The answers to one prompt, reduced to distinct answers and a code per answer."""

    def __init__(self, answers: Sequence[Sequence[int] | str]) -> None:
        if len(answers) == 0:
            raise ValueError("an answer set needs at least one answer")
        index: dict[Hashable, int] = {}
        codes = np.empty(len(answers), dtype=np.int64)
        for i, ans in enumerate(answers):
            key = _as_codes(ans)
            codes[i] = index.setdefault(key, len(index))
        self.distinct: list[tuple[int, ...]] = list(index)
        self.codes = codes
        self.lengths = np.array([len(d) for d in self.distinct], dtype=np.int64)
        self._prefix: np.ndarray | None = None
        self._edit: np.ndarray | None = None
        self._table: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.codes.size)

    # -- pairwise tables over distinct answers ------------------------------------------------
    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        d = len(self.distinct)
        return np.triu_indices(d, k=1)

    def _padded(self, fill: int) -> np.ndarray:
        width = max(1, int(self.lengths.max()))
        out = np.full((len(self.distinct), width), fill, dtype=np.int64)
        for r, seq in enumerate(self.distinct):
            out[r, : len(seq)] = seq
        return out

    def prefix_matrix(self) -> np.ndarray:
        """Common-prefix length of every two distinct answers (diagonal: the answer's length)."""
        if self._prefix is None:
            d = len(self.distinct)
            m = np.diag(self.lengths).astype(np.float64)
            if d > 1:
                pad_a = self._padded(-2)
                ii, jj = self._pairs()
                same = pad_a[ii] == pad_a[jj]  # padding values differ from every symbol only if one side pads
                same &= (np.arange(pad_a.shape[1]) < np.minimum(self.lengths[ii], self.lengths[jj])[:, None])
                first_diff = np.where(same.all(axis=1), np.minimum(self.lengths[ii], self.lengths[jj]),
                                      np.argmin(same, axis=1))
                m[ii, jj] = first_diff
                m[jj, ii] = first_diff
            self._prefix = m
        return self._prefix

    def edit_matrix(self) -> np.ndarray:
        """Normalised Levenshtein distance of every two distinct answers (diagonal 0)."""
        if self._edit is None:
            d = len(self.distinct)
            m = np.zeros((d, d), dtype=np.float64)
            if d > 1:
                ii, jj = self._pairs()
                a = self._padded(-2)[ii]
                b = self._padded(-3)[jj]
                dist = _levenshtein_pairs(a, self.lengths[ii], b, self.lengths[jj])
                longer = np.maximum(self.lengths[ii], self.lengths[jj])
                norm = np.where(longer > 0, dist / np.maximum(longer, 1), 0.0)
                m[ii, jj] = norm
                m[jj, ii] = norm
            self._edit = m
        return self._edit

    # -- metrics of a sub-multiset --------------------------------------------------------------
    def counts(self, subset: np.ndarray | None = None) -> np.ndarray:
        """How many times each distinct answer occurs (in ``subset``, indices into the answers)."""
        codes = self.codes if subset is None else self.codes[subset]
        return np.bincount(codes, minlength=len(self.distinct)).astype(np.float64)

    def value(self, metric: str, subset: np.ndarray | None = None) -> float:
        """``metric`` of all answers, or of the answers at indices ``subset``."""
        c = self.counts(subset)
        n = float(c.sum())
        if metric == "exact_match":
            return float(c.max() / n)
        if metric == "entropy":
            p = c[c > 0] / n
            return float(max(0.0, -(p * np.log2(p)).sum()))
        if metric in ("first_divergence", "edit_distance"):
            if n < 2:
                raise ValueError(f"{metric} needs at least two answers")
            mat = self.prefix_matrix() if metric == "first_divergence" else self.edit_matrix()
            total = float(c @ mat @ c - (c * np.diag(mat)).sum())
            return total / (n * (n - 1))
        if metric == "token_entropy":
            return self._token_entropy(c)
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")

    def _token_entropy(self, c: np.ndarray) -> float:
        present = c > 0
        lengths = self.lengths[present]
        width = int(lengths.max()) if lengths.size else 0
        if width == 0:
            return 0.0
        if self._table is None:
            self._table = self._padded(_END)
        table = self._table[present][:, :width]
        weights = c[present]
        n = weights.sum()
        total = 0.0
        for pos in range(width):
            _, inv = np.unique(table[:, pos], return_inverse=True)
            p = np.bincount(inv, weights=weights) / n
            p = p[p > 0]
            total += float(-(p * np.log2(p)).sum())
        return max(0.0, total / width)


def metric_value(metric: str, answers: Sequence[Sequence[int] | str]) -> float:
    """``metric`` of one prompt's answers (see the module docstring)."""
    return AnswerSet(answers).value(metric)
