"""The preregistered random order of the cases, for sequential designs (``evalspec order`` writes it).

A confidence sequence holds at every look only if each new unit is a random draw from the
population. Harnesses run cases in dataset order (all of one category, then the next), so
the order must be random **by design**: drawn before any result, from a seed, written to a
file the harness follows, and fixed by the plan (``stopping.order`` records the file's
SHA-256, so the plan's hash and its lock cover the order itself). At each look the analysed
units must be the first units of that order.

The file is plain text: a header line ``# evalspec case order, seed N``, then one line per
case, ``case_id`` or ``case_id,cluster``, in the order to run them. With clusters, the
clusters are shuffled and each cluster's cases are kept together (a cluster is the unit the
sequence takes), shuffled within it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["CaseOrder", "HEADER", "draw_order", "parse_order"]

HEADER = "# evalspec case order"


@dataclass(frozen=True)
class CaseOrder:
    """Case ids in the order to run them, with each case's cluster (None without clusters)."""

    cases: list[str]
    clusters: list[str | None]
    seed: int | None = None

    @property
    def clustered(self) -> bool:
        return any(c is not None for c in self.clusters)

    def unit_positions(self) -> dict[str, int]:
        """Position (0-based) of each unit: each cluster by its first case, else each case."""
        keys = self.clusters if self.clustered else self.cases
        out: dict[str, int] = {}
        for k in keys:
            if k is not None and k not in out:
                out[k] = len(out)
        return out

    def largest_cluster(self) -> int:
        """Cases in the largest cluster (1 without clusters): the bound the weighted sequence needs."""
        if not self.clustered:
            return 1
        sizes: dict[str, int] = {}
        for c in self.clusters:
            if c is not None:
                sizes[c] = sizes.get(c, 0) + 1
        return max(sizes.values())

    def text(self) -> str:
        """The file's text."""
        lines = [f"{HEADER}, seed {self.seed}"]
        for case, cluster in zip(self.cases, self.clusters, strict=True):
            lines.append(case if cluster is None else f"{case},{cluster}")
        return "\n".join(lines) + "\n"

    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode("utf-8")).hexdigest()


def draw_order(cases: list[str], clusters: list[str | None], seed: int) -> CaseOrder:
    """A seeded random order of ``cases``: clusters shuffled, each kept together and shuffled within."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if not any(c is not None for c in clusters):
        idx = rng.permutation(len(cases))
        return CaseOrder([cases[i] for i in idx], [None] * len(cases), seed)
    groups: dict[str, list[str]] = {}
    for case, cluster in zip(cases, clusters, strict=True):
        groups.setdefault(cluster if cluster is not None else case, []).append(case)
    labels = list(groups)
    out_cases: list[str] = []
    out_clusters: list[str | None] = []
    for g in rng.permutation(len(labels)):
        members = groups[labels[g]]
        for i in rng.permutation(len(members)):
            out_cases.append(members[i])
            out_clusters.append(labels[g])
    return CaseOrder(out_cases, out_clusters, seed)


def parse_order(text: str) -> tuple[CaseOrder | None, str | None]:
    """(order, None), or (None, a message naming the first bad line)."""
    cases: list[str] = []
    clusters: list[str | None] = []
    seen: set[str] = set()
    seed: int | None = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith(HEADER) and "seed" in line:
                tail = line.rsplit("seed", 1)[1].strip()
                seed = int(tail) if tail.lstrip("-").isdigit() else None
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) > 2 or not parts[0]:
            return None, f"line {n}: expected 'case_id' or 'case_id,cluster' (got {line[:60]!r})"
        if parts[0] in seen:
            return None, f"line {n}: case {parts[0]!r} is listed twice"
        seen.add(parts[0])
        cases.append(parts[0])
        clusters.append(parts[1] if len(parts) == 2 and parts[1] else None)
    if not cases:
        return None, "the order lists no case"
    return CaseOrder(cases, clusters, seed), None
