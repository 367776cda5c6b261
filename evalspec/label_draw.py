"""The preregistered random draw of the cases people label (``evalspec draw-labels`` writes it).

A judge-corrected interval (prediction-powered inference) is unbiased only if the cases people
labelled are a random subset. The labels alone cannot show how they were chosen, so the draw
is made **by design**: from the full list of cases and a seed, before anyone labels, written to
a file the labelling follows, and fixed by the plan (``labelled_subset.file`` and its SHA-256,
so the plan's hash and its lock cover the draw). At the run, evalspec compares the cases that
carry a human label with the drawn ones.

The draw depends only on the *set* of units, not on the list's order: units (cases, or whole
clusters with ``unit: cluster``) are sorted by id, and ``round(fraction x N)`` of them (at
least one) are drawn without replacement by NumPy's generator seeded with ``seed``; a
stratified draw does the same within each stratum, strata in sorted order, one generator.

The file is plain text: a header line ``# evalspec labelled subset, seed S, selection X, unit
U, fraction F, of N units``, then one line per drawn case, ``case_id`` or ``case_id,cluster``,
sorted.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

__all__ = ["HEADER", "LabelDraw", "draw_labelled", "parse_draw"]

HEADER = "# evalspec labelled subset"


@dataclass(frozen=True)
class LabelDraw:
    """The drawn cases (sorted), their clusters, and how they were drawn."""

    cases: list[str]
    clusters: list[str | None]
    seed: int | None
    selection: str
    unit: str
    fraction: float | None
    population: int | None

    def text(self) -> str:
        lines = [f"{HEADER}, seed {self.seed}, selection {self.selection}, unit {self.unit}, fraction {self.fraction}, "
                 f"of {self.population} units"]
        for case, cluster in zip(self.cases, self.clusters, strict=True):
            lines.append(case if cluster is None else f"{case},{cluster}")
        return "\n".join(lines) + "\n"

    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode("utf-8")).hexdigest()


def _size(fraction: float, n: int) -> int:
    return min(n, max(1, int(math.floor(fraction * n + 0.5))))


def draw_labelled(cases: list[str], clusters: list[str | None], strata: list[str] | None, *, fraction: float,
                  seed: int, unit: str = "case", selection: str = "simple_random") -> LabelDraw:
    """Draw ``fraction`` of the units at random (within each stratum for ``selection="stratified"``).

    ``unit="cluster"`` draws whole clusters (every case of a drawn cluster is drawn); a cluster must
    then lie in one stratum. Raises ``ValueError`` with a sentence for a user when it cannot draw.
    """
    import numpy as np

    if not 0 < fraction <= 1:
        raise ValueError("the fraction to draw must be above 0 and at most 1")
    if unit == "cluster" and any(c is None for c in clusters):
        raise ValueError("a draw of whole clusters needs every case's cluster")
    key = [c if unit == "cluster" else case for case, c in zip(cases, clusters, strict=True)]
    stratum_of: dict[str, str] = {}
    for k, s in zip(key, strata if strata is not None else ["" for _ in cases], strict=True):
        if stratum_of.setdefault(str(k), s) != s:
            raise ValueError(f"cluster {k!r} has cases in two strata ({stratum_of[str(k)]!r} and {s!r}); draw cases, "
                             "or stratify by a property of whole clusters")
    by_stratum: dict[str, list[str]] = {}
    for k in sorted(stratum_of):
        by_stratum.setdefault(stratum_of[k], []).append(k)
    rng = np.random.default_rng(seed)
    drawn: set[str] = set()
    for s in sorted(by_stratum):
        units = by_stratum[s]
        drawn.update(units[i] for i in rng.choice(len(units), _size(fraction, len(units)), replace=False).tolist())
    rows = sorted((case, c) for case, c, k in zip(cases, clusters, key, strict=True) if str(k) in drawn)
    return LabelDraw(cases=[r[0] for r in rows], clusters=[r[1] for r in rows], seed=seed, selection=selection,
                     unit=unit, fraction=fraction, population=len(stratum_of))


def parse_draw(text: str) -> tuple[LabelDraw | None, str | None]:
    """(draw, None), or (None, a message naming the first bad line)."""
    cases: list[str] = []
    clusters: list[str | None] = []
    seen: set[str] = set()
    fields: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith(HEADER):
                for part in line[len(HEADER):].split(","):
                    words = part.split()
                    if len(words) >= 2:
                        fields[words[0]] = words[1]
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
        return None, "the draw lists no case"

    def number(name: str, kind: type) -> float | int | None:
        try:
            return kind(fields[name]) if name in fields else None
        except ValueError:
            return None

    seed = number("seed", int)
    fraction = number("fraction", float)
    population = number("of", int)
    return LabelDraw(cases=cases, clusters=clusters, seed=None if seed is None else int(seed),
                     selection=fields.get("selection", "simple_random"), unit=fields.get("unit", "case"),
                     fraction=None if fraction is None else float(fraction),
                     population=None if population is None else int(population)), None
