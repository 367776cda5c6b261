"""The ``paired_difference`` analysis: candidate minus baseline on the same cases.

"Repeat AI evaluations and report uncertainty honestly" ("Compare paired cases"): run both
candidates on the same cases, look at the cases where they disagree, and resample
independent units — whole clusters when cases share a document — keeping both candidates'
outcomes together. The result carries the 2×2 disagreement table with the ids of the
disagreeing cases, the difference with its interval, McNemar's test, and how much of the
net difference the top few clusters give.

Method ``auto``
    Without ``units.cluster``: for at most :data:`EXACT_INTERVAL_MAX_CASES` (100) pass/fail cases,
    the interval that inverts the exact unconditional test (Sidik 2003;
    :func:`evalspec.stats.paired_exact.paired_exact_interval`), whose each end misses at most the
    stated one-sided rate at every n (Newcombe's misses 3.6 % instead of 2.5 % at n = 10);
    above that, Newcombe's interval (method 10) on the 2×2 table. With
    clusters: the cluster-robust t interval of the per-case differences with the CR2
    (Bell–McCaffrey bias-reduced) standard error and Bell–McCaffrey Satterthwaite degrees
    of freedom, at every number of clusters (no switch to another method at any G). Under
    the ``mean`` attempt rule, case outcomes are fractions and the 2×2 table is undefined:
    the same t interval, every case its own cluster when none is declared.

``cluster_t`` (``correction`` CR2, CR1 or CR0) and ``cluster_bootstrap`` (percentile by
default, ``bootstrap_interval: bca`` on request) stay available explicitly. With fewer than
:data:`BOOTSTRAP_MIN_CLUSTERS` clusters the bootstrap carries a caveat that bears on the
verdict: it cannot show more between-cluster variation than the few clusters in hand.

When is the interval uninformative (``PrimaryInterval.informative = False``: the decision
reaches ``inconclusive``, whatever the bounds)?

* it has zero width (an interval that claims certainty);
* a cluster method on fewer than :data:`MIN_CLUSTERS` (5) clusters: below that a
  cluster-robust variance has too little to estimate from (its degrees of freedom are at
  most 3) and a run of identical clusters gives a zero-width interval;
* a cluster method (or the ``mean`` rule) where fewer than :data:`MIN_DISAGREEING_UNITS` (5)
  independent units hold any disagreement: the interval's width is then an artefact of
  those few units (every cluster's net zero gives [0, 0]; two disagreeing cases in 60
  clusters give a bootstrap interval with a lower bound of exactly 0).

One fallback instead: a clustered 0/1 design where no case disagrees (b = c = 0) uses
Newcombe's interval with the *clusters* as the units (the table scaled to G cases: as if
every case of a cluster behaved alike, the most conservative design effect), because no
cluster method can estimate a variance from zero disagreements.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import (
    AnalysisKind,
    Caveat,
    ColumnNeed,
    Issue,
    Offers,
    Outcome,
    PrimaryInterval,
    ResultModel,
    SeedUse,
    entries,
    pair_issues,
)

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.contract import Context, Pair

__all__ = [
    "BOOTSTRAP_MIN_CLUSTERS",
    "DOMINANT_SHARE",
    "EXACT_INTERVAL_MAX_CASES",
    "EXACT_INTERVAL_METHOD",
    "FEW_CLUSTERS",
    "KIND",
    "MIN_CLUSTERS",
    "MIN_DISAGREEING_UNITS",
    "PairedDifferenceParams",
    "PairedResult",
    "compute",
    "paired_core",
]

PairedMethod = Literal[
    "auto", "cluster_t", "cluster_bootstrap", "newcombe", "tango", "wald", "wald_cc", "agresti_min", "bonett_price"
]

#: Below this many clusters a cluster interval is uninformative (see the module notes).
MIN_CLUSTERS = 5
#: Below this many independent units holding a disagreement, a cluster interval is uninformative.
MIN_DISAGREEING_UNITS = 5
#: Below this many clusters, a verdict from a cluster interval carries a 'few clusters' caveat.
FEW_CLUSTERS = 10
#: Below this many clusters the cluster bootstrap under-covers (docs/coverage.md): verdict caveat.
BOOTSTRAP_MIN_CLUSTERS = 50
#: One cluster holding more than this share of the cases dominates (verdict caveat).
DOMINANT_SHARE = 0.25
#: "A few clusters drive the difference" is said only when the top clusters give more than
#: CONCENTRATED_SHARE of the net difference, the ranking is not a tie-break (the last of the top
#: clusters contributes more than the next one), and at least CONCENTRATION_MIN_DISAGREEMENTS
#: paired disagreements carry the difference: with fewer, where a handful of them fall is chance.
CONCENTRATED_SHARE = 0.5
CONCENTRATION_MIN_DISAGREEMENTS = 20
#: An effective number of clusters (n² / Σ n_g²) below this fraction of the clusters means unequal sizes let a
#: few clusters dominate (verdict caveat); equal sizes give 1.
MIN_EFFECTIVE_FRACTION = 0.5

CLUSTER_METHODS = ("cluster_bootstrap", "cluster_t")

#: Up to this many independent pass/fail cases, method auto (the primary comparison and each slice
#: group) takes the interval that inverts the exact unconditional test: Newcombe's one-sided error
#: exceeds its stated level at small n (3.6 / 2.9 / 2.7 % for 2.5 % at n = 10 / 20 / 30); the exact
#: interval never does, and costs well under a second up to this size. Above it Newcombe's worst case over
#: the nuisance stays a little above (2.63 % at 101 cases, 2.54 % at 200, with at most half the cases disagreeing).
EXACT_INTERVAL_MAX_CASES = 100
EXACT_INTERVAL_METHOD = "exact (inverted exact unconditional test, Sidik 2003)"


class PairedDifferenceParams(AnalysisParams):
    """Paired difference in pass rates, first minus second of ``compare`` ("Compare paired cases")."""

    kind: Literal["paired_difference"]
    compare: tuple[str, str] | None = Field(
        None, description="[candidate, baseline]; default: the first non-baseline candidate against the baseline."
    )
    method: PairedMethod = Field(
        "auto",
        description="'auto' = with units.cluster (or under attempt rule 'mean'): cluster_t with the CR2 standard "
        "error and Bell-McCaffrey degrees of freedom; otherwise, for at most 100 pass/fail cases, the interval that "
        "inverts the exact unconditional test (Sidik 2003), which holds its one-sided level at every n, and "
        "newcombe above 100 ('newcombe' asks for Newcombe's interval at any n).",
    )
    correction: Literal["CR2", "CR1", "CR0"] = Field(
        "CR2", description="Small-sample correction of cluster_t: CR2 (Bell-McCaffrey, with its degrees of freedom), "
        "CR1 or CR0 (t on G-1 degrees of freedom)."
    )
    bootstrap_interval: Literal["percentile", "bca"] = Field(
        "percentile", description="Interval from the cluster bootstrap distribution."
    )
    resamples: int = Field(10_000, ge=100, le=10_000_000, description="Bootstrap resamples.")
    seed: int = Field(0, ge=0, description="Seed of the bootstrap generator (recorded in the claim when used).")
    confidence_level: ConfidenceLevel | None = Field(
        None, description="Defaults to decision.confidence_level; the primary comparison must use that level."
    )
    top_clusters: int = Field(3, ge=1, le=100, description="How many clusters to list as driving the difference.")
    primary: bool = Field(
        True, description="Whether this comparison drives the verdict (exactly one analysis is primary: this or, e.g., a judge_corrected comparison)."
    )


# -- result model ----------------------------------------------------------------------------


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built with the result that holds it


class Table(_Part):
    """Paired 2×2 table: a both pass, b only the candidate, c only the baseline, d both fail."""

    a: int
    b: int
    c: int
    d: int
    n: int


class McNemar(_Part):
    statistic: float | None = None
    pvalue: float
    method: str
    clustered: bool = Field(False, description="Whether the test accounts for the declared clusters.")


class CaseRef(_Part):
    case: str
    cluster: str | None = None


class CaseRefs:
    """Cases of a result as the claim lists them (each ``{"case", "cluster"}``, as :class:`CaseRef` dumps),
    kept as indices until the result is written.

    A paired comparison of millions of cases lists every disagreeing one: as :class:`CaseRef` models
    they would be hundreds of bytes each, held through the rest of the run beside its attempt rows.
    """

    __slots__ = ("case_ids", "cases", "labels", "case_cluster")

    def __init__(self, case_ids: Any, cases: Any, labels: Any = None, case_cluster: Any = None) -> None:
        self.case_ids, self.cases = case_ids, cases  # ids of every case; positions of the listed ones
        self.labels, self.case_cluster = labels, case_cluster  # cluster labels; each case's cluster (or None)

    def refs(self) -> list[dict[str, str | None]]:
        """The listed cases as :class:`CaseRef` dumps them."""
        import numpy as np

        every = self.case_ids  # (case ids a reader keeps as Arrow texts make only the listed ones Python strings)
        listed = np.asarray(every, dtype=object)[self.cases] if isinstance(every, (np.ndarray, list, tuple)) \
            else every[self.cases]
        ids = [str(c) for c in listed.tolist()]
        if self.case_cluster is None:
            return [{"case": c, "cluster": None} for c in ids]
        return [{"case": c, "cluster": g} for c, g in zip(ids, self.labels[self.case_cluster[self.cases]].tolist())]

    def __len__(self) -> int:
        return len(self.cases)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CaseRefs):
            return self.refs() == other.refs()
        if isinstance(other, list):
            return self.refs() == [c.model_dump() if isinstance(c, CaseRef) else c for c in other]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class Disagreements(_Part):
    candidate_only: list[CaseRef]
    baseline_only: list[CaseRef]

    @field_serializer("candidate_only", "baseline_only", mode="wrap")
    def _listed(self, value: Any, handler: Any) -> Any:
        """:class:`CaseRefs` (how :func:`compute` builds a result) become the cases' dicts only here."""
        return value.refs() if isinstance(value, CaseRefs) else handler(value)


class ClusterRow(_Part):
    cluster: str
    cases: int
    b: float
    c: float
    net: float
    share: float | None = Field(None, description="net / total net difference; None when the total is zero.")


class Contributions(_Part):
    n: int
    contributions: list[ClusterRow] = Field(description="Clusters ranked by their contribution toward the total.")
    top_clusters: int
    top_share: float | None = Field(
        None, description="Share of the net difference given by the top clusters, ranked by signed contribution "
        "toward the total (can exceed 1 when other clusters pull the other way)."
    )
    effective_clusters: float = Field(description="n² / Σ n_g²: equal-size clusters giving the same precision.")
    largest_share: float = Field(description="Largest share of the cases held by one cluster.")
    disagreeing: int = Field(description="Clusters holding at least one disagreement.")
    concentrated: bool = Field(False, description="The top clusters give more than half the net difference, their "
                               "ranking is no tie-break, and at least 20 disagreements carry it (see CONCENTRATED_SHARE).")
    tie_at_top: bool = Field(False, description="The last of the top clusters contributes as much as the next one: "
                             "which clusters are 'the top' is a tie-break.")


class BootstrapInfo(_Part):
    resamples: int
    seed: int
    interval: str
    requested_interval: str
    units: str
    n_units: int
    standard_error: float | None = None


class ClusterTInfo(_Part):
    se: float
    df: float
    units: str
    n_units: int
    correction: str
    clipped: bool


class PairedCore(_Part):
    """The interval part, shared with the ``slices`` analysis."""

    n: int
    estimate: float
    low: float
    high: float
    method: str
    confidence_level: float
    one_sided_level: float
    informative: bool = True
    why_uninformative: str | None = None
    units: int
    unit_name: str
    table: Table | None = None
    bootstrap: BootstrapInfo | None = None
    cluster_t: ClusterTInfo | None = None
    notes: list[str] = Field(default_factory=list)


class PairedResult(ResultModel, PairedCore):
    """The ``paired_difference`` result (``candidate − baseline``)."""

    candidate: str
    baseline: str
    mcnemar: McNemar | None = None
    disagreements: Disagreements
    clusters: Contributions | None = None


# -- computation -----------------------------------------------------------------------------


def _table(pair: Pair) -> Table:
    import numpy as np

    x, y = pair.x, pair.y
    a = int(np.count_nonzero((x == 1) & (y == 1)))
    b = int(np.count_nonzero((x == 1) & (y == 0)))
    c = int(np.count_nonzero((x == 0) & (y == 1)))
    d = int(np.count_nonzero((x == 0) & (y == 0)))
    return Table(a=a, b=b, c=c, d=d, n=a + b + c + d)


def _units_with_disagreement(diff: np.ndarray, clusters: np.ndarray) -> int:

    from evalspec.stats import clusters_among

    return clusters_among(clusters, diff != 0)


def paired_core(ctx: Context, first: str, second: str, *, method: str, level: float,
                mask: np.ndarray | None = None, resamples: int = 10_000, seed: int = 0,
                bootstrap_interval: str = "percentile", correction: str = "CR2",
                memo: dict[Any, Any] | None = None) -> tuple[PairedCore, Pair] | None:
    """Estimate and interval of ``first − second`` on their paired cases (within ``mask``).

    Returns None when no case is paired. Used by ``paired_difference`` and ``slices``. ``memo``: a
    dict kept by a caller that asks for the same pair (the same context, candidates, mask and
    parameters) at several levels: what does not depend on the level is computed once and kept
    there (``slices`` reads a group's difference at its level, its loss test's and its Holm step's).
    """
    pair = ctx.pair(first, second, mask)
    if pair.x.size == 0:
        return None
    core = _interval(ctx, pair, first, second, method=method, level=level, resamples=resamples, seed=seed,
                     bootstrap_interval=bootstrap_interval, correction=correction, memo={} if memo is None else memo)
    return core, pair


def _bootstrap_core(pair: Pair, clusters: np.ndarray, base: dict[str, Any], notes: list[str], *, declared: bool,
                    resamples: int, seed: int, bootstrap_interval: str) -> PairedCore:
    """The cluster (or case) bootstrap interval of the paired difference."""
    from evalspec.stats import paired_cluster_bootstrap

    boot = paired_cluster_bootstrap(pair.x, pair.y, clusters, resamples=resamples,
                                    confidence_level=base["confidence_level"], interval=bootstrap_interval, seed=seed)
    if boot.note:
        notes.append(boot.note)
    return PairedCore(
        **base, estimate=boot.estimate, low=boot.low, high=boot.high,
        method=f"{'cluster' if declared else 'case'}_bootstrap ({boot.method})",
        bootstrap=BootstrapInfo(resamples=boot.resamples, seed=boot.seed, interval=boot.method,
                                requested_interval=boot.requested_method, units=base["unit_name"],
                                n_units=boot.n_clusters, standard_error=boot.standard_error), notes=notes)


def _cluster_t_core(diff: np.ndarray, clusters: np.ndarray, base: dict[str, Any], notes: list[str], *,
                    declared: bool, method: str, correction: str, memo: dict[Any, Any]) -> PairedCore:
    """The cluster-robust t interval; ``auto`` with heavy-tailed cluster sizes takes the skewness-corrected CR3."""

    from evalspec.stats import cluster_sizes, clustered_mean_parts
    from evalspec.stats.clustered import HEAVY_TAIL_SIZE_CV

    unit = base["unit_name"]
    key = ("cluster_t", method, declared, correction)
    if key not in memo:  # (all but the level's t: the same at every level)
        sizes = cluster_sizes(clusters).astype(float)
        heavy = bool(method == "auto" and declared and correction == "CR2"
                     and sizes.std() / sizes.mean() > HEAVY_TAIL_SIZE_CV)
        used = "CR3" if heavy else correction
        memo[key] = (sizes, heavy, used, clustered_mean_parts(diff, clusters, correction=used, skew_corrected=heavy))
    sizes, heavy, used_correction, parts = memo[key]
    ct = parts.interval(base["confidence_level"])
    df = float(ct.df)
    low, high = max(-1.0, ct.low), min(1.0, ct.high)
    if heavy:
        cv = sizes.std() / sizes.mean()
        notes.append(f"The cluster sizes are heavy-tailed (coefficient of variation {cv:.1f}, above "
                     f"{HEAVY_TAIL_SIZE_CV:g}): the interval is the skewness-corrected jackknife (CR3) "
                     "interval (Hall's transformation, degrees of freedom of the clusters that carry the "
                     "variance), which can be asymmetric.")
    return PairedCore(
        **base, estimate=ct.estimate, low=low, high=high,
        method=f"{'cluster' if declared else 'case'}_t ("
        f"{'CR3 jackknife, skewness-corrected' if heavy else correction}, t on {df:.1f} df)",
        cluster_t=ClusterTInfo(se=ct.se, df=df, units=unit, n_units=ct.n_clusters, correction=used_correction,
                               clipped=bool(ct.low < -1.0 or ct.high > 1.0)), notes=notes)


def _method_used(rule: str, method: str, *, binary: bool, declared: bool, notes: list[str]) -> str:
    """The interval method the plan's ``method`` means for these outcomes (a note when it had to change)."""
    if binary:
        return ("cluster_t" if declared else "newcombe") if method == "auto" else method
    used = method
    if method not in CLUSTER_METHODS:
        if method != "auto":
            notes.append(f"Attempt rule {rule!r} gives fractional case outcomes, so the 2x2 table is undefined; "
                         f"cluster_t was used instead of the plan's {method!r}.")
        used = "cluster_t"
    if not declared:
        notes.append(f"Attempt rule {rule!r}: no cluster is declared, so every case is its own unit.")
    return used


def _pair_parts(ctx: Context, pair: Pair, memo: dict[Any, Any]) -> tuple[Any, ...]:
    """What every level's interval of ``pair`` reads: made once into ``memo``."""
    import numpy as np

    from evalspec.stats import cluster_labels, cluster_sizes

    if "pair" not in memo:
        n = int(pair.x.size)
        clusters = cluster_labels(pair.clusters if pair.clusters is not None else np.arange(n))
        diff = pair.x - pair.y
        table = _table(pair) if ctx.outcomes.binary else None
        memo["pair"] = (n, clusters, int(cluster_sizes(clusters).size), diff, float(diff.mean()),
                        None if table is None else table.model_dump())
    return memo["pair"]  # type: ignore[no-any-return]


def _interval(ctx: Context, pair: Pair, first: str, second: str, *, method: str, level: float,
              resamples: int, seed: int, bootstrap_interval: str, correction: str,
              memo: dict[Any, Any]) -> PairedCore:
    from evalspec.stats import paired_difference_interval

    n, clusters, n_units, diff, est, counts = _pair_parts(ctx, pair, memo)
    binary = ctx.outcomes.binary
    declared = pair.clusters is not None
    unit = "clusters" if declared else "cases"
    notes: list[str] = []
    table = None if counts is None else Table(**counts)  # (a Table of its own for each level's result)
    one_sided = 1 - (1 - level) / 2

    used = _method_used(ctx.outcomes.rule, method, binary=binary, declared=declared, notes=notes)
    base: dict[str, Any] = {"n": n, "confidence_level": level, "one_sided_level": one_sided, "table": table,
                            "units": n_units, "unit_name": unit}

    def uninformative(why: str, low: float = -1.0, high: float = 1.0, how: str | None = None) -> PairedCore:
        return PairedCore(**base, estimate=est, low=low, high=high, method=how or f"none ({why})",
                          informative=False, why_uninformative=why, notes=notes)

    if used in CLUSTER_METHODS:
        if "disagreeing" not in memo:
            memo["disagreeing"] = _units_with_disagreement(diff, clusters)
        disagreeing = memo["disagreeing"]
        if declared and n_units < MIN_CLUSTERS:
            return uninformative(f"only {n_units} clusters; a cluster interval needs at least {MIN_CLUSTERS} "
                                 "to mean anything")
        if binary and table is not None and table.b + table.c == 0:
            # no disagreement: no variance to estimate; Newcombe with the clusters as the units
            g = n_units
            a_s = int(round(table.a * g / n))
            r = paired_difference_interval(a_s, 0, 0, g - a_s, method="newcombe", confidence_level=level)
            notes.append(f"No case disagrees (b = c = 0): a cluster interval would be [0, 0]. Newcombe's interval "
                         f"was computed with the {g} {unit} as the units (as if every case of a {unit[:-1]} behaved "
                         "alike), which is conservative.")
            return PairedCore(**base, estimate=est, low=r.low, high=r.high,
                              method=f"newcombe on {g} {unit} (no disagreement)", notes=notes)
        if disagreeing < MIN_DISAGREEING_UNITS:
            return uninformative(f"only {disagreeing} of {n_units} {unit} {'holds' if disagreeing == 1 else 'hold'} "
                                 f"any disagreement between {first} and "
                                 f"{second}; at least {MIN_DISAGREEING_UNITS} are needed for a {unit[:-1]}-level "
                                 "interval to mean anything")
        if used == "cluster_bootstrap":
            core = _bootstrap_core(pair, clusters, base, notes, declared=declared, resamples=resamples, seed=seed,
                                   bootstrap_interval=bootstrap_interval)
        else:
            core = _cluster_t_core(diff, clusters, base, notes, declared=declared, method=method,
                                   correction=correction, memo=memo)
        if not core.high - core.low > 1e-12:
            return uninformative(f"the {unit[:-1]}-level interval has zero width: the {unit} give no variation "
                                 "to estimate from (their net contributions cancel or are identical)",
                                 how=core.method)
        return core

    assert table is not None
    if method == "auto" and n <= EXACT_INTERVAL_MAX_CASES:
        from evalspec.stats.paired_exact import paired_exact_interval

        low, high = paired_exact_interval(table.b, table.c, n, level)
        return PairedCore(**base, estimate=est, low=low, high=high, method=EXACT_INTERVAL_METHOD, notes=notes)
    r = paired_difference_interval(table.a, table.b, table.c, table.d, method=used, confidence_level=level)
    core = PairedCore(**base, estimate=r.estimate, low=r.low, high=r.high, method=r.method, notes=notes)
    if not core.high - core.low > 1e-12:
        return uninformative(f"the {used} interval has zero width (b = {table.b}, c = {table.c})", how=r.method)
    return core


def _contributions(ctx: Context, pair: Pair, top: int) -> Contributions | None:
    """Net difference per cluster, ranked by signed contribution toward the total."""
    import numpy as np

    if pair.clusters is None:
        return None
    diff = pair.x - pair.y
    n_cl = len(ctx.cluster_ids) if ctx.cluster_ids is not None else 0
    cases = np.bincount(pair.clusters, minlength=n_cl)
    b = np.bincount(pair.clusters, weights=np.clip(diff, 0, None), minlength=n_cl)
    c = np.bincount(pair.clusters, weights=np.clip(-diff, 0, None), minlength=n_cl)
    net = b - c
    total = float(diff.sum())
    sign = 1.0 if total >= 0 else -1.0
    present = np.flatnonzero(cases > 0)
    labels = [ctx.cluster_label(int(j)) for j in present]
    order = _ranked(-sign * net[present], labels)
    binary = ctx.outcomes.binary
    rows = []
    for t in order:
        j = present[t]
        rows.append(ClusterRow(cluster=labels[t], cases=int(cases[j]),
                               b=int(round(b[j])) if binary else float(b[j]),
                               c=int(round(c[j])) if binary else float(c[j]),
                               net=int(round(net[j])) if binary else float(net[j]),
                               share=(float(net[j]) / total) if abs(total) > 1e-12 else None))
    top_n = int(min(top, present.size))
    top_net = sum(float(net[present[t]]) for t in order[:top_n])
    sizes = cases[present].astype(float)
    n = float(sizes.sum())
    share = (top_net / total) if abs(total) > 1e-12 else None
    ranked = [sign * float(net[present[t]]) for t in order]
    tie = top_n < len(ranked) and abs(ranked[top_n - 1] - ranked[top_n]) < 1e-12
    disagreements = float(b.sum() + c.sum())
    concentrated = (share is not None and share > CONCENTRATED_SHARE and not tie
                    and disagreements >= CONCENTRATION_MIN_DISAGREEMENTS)
    return Contributions(n=int(present.size), contributions=rows, top_clusters=top_n, top_share=share,
                         effective_clusters=float(n * n / float(np.sum(sizes * sizes))),
                         largest_share=float(sizes.max() / n),
                         disagreeing=int(np.count_nonzero((b[present] + c[present]) > 0)),
                         concentrated=bool(concentrated), tie_at_top=bool(tie))


def _ranked(keys: Any, labels: list[str]) -> list[int]:
    """Positions ordered by ``keys`` (floats), ties by label: ``sorted(range(n), key=lambda t: (keys[t], labels[t]))``
    in one NumPy sort (a stable sort by label, then by key), not a Python tuple a cluster."""
    import numpy as np

    texts = np.empty(len(labels), dtype=object)
    texts[:] = labels
    return np.lexsort((texts, np.asarray(keys, dtype=np.float64))).tolist()


def _mcnemar(table: Table | None, pair: Pair) -> tuple[McNemar | None, list[Caveat]]:
    if table is None:
        return None, []
    from evalspec import stats

    clustered = getattr(stats, "clustered_mcnemar", None)
    if pair.clusters is not None and clustered is not None:
        m = clustered(pair.x, pair.y, pair.clusters)
        return McNemar(statistic=getattr(m, "statistic", None), pvalue=float(m.pvalue), method=str(m.method),
                       clustered=True), []
    m = stats.mcnemar(table.b, table.c, method="exact")
    out = McNemar(statistic=m.statistic, pvalue=float(m.pvalue), method=m.method)
    if pair.clusters is None:
        return out, []
    return out, [Caveat(code="mcnemar_ignores_clusters", severity="note",
                        message="McNemar's test here treats cases as independent although they share clusters, so "
                        "its p-value may be too small. The verdict reads the cluster-aware interval, not this test.")]


def _caveats(core: PairedCore, contrib: Contributions | None, params: PairedDifferenceParams,
             primary: bool) -> list[Caveat]:
    sev: Literal["verdict", "note"] = "verdict" if primary else "note"
    out: list[Caveat] = []
    if not core.informative:
        out.append(Caveat(code="uninformative_interval", severity=sev,
                          message=f"The interval cannot decide anything: {core.why_uninformative}."))
    if core.unit_name == "clusters" and core.informative and core.units < FEW_CLUSTERS:
        out.append(Caveat(code="few_clusters", severity=sev,
                          message=f"Only {core.units} independent clusters: an interval from so few groups may itself "
                          "be unstable, and a different sample of clusters could move it a lot."))
    if core.bootstrap is not None and core.unit_name == "clusters" and core.units < BOOTSTRAP_MIN_CLUSTERS:
        out.append(Caveat(code="bootstrap_few_clusters", severity=sev,
                          message=f"The interval may be too narrow: with only {core.units} clusters, the resampling "
                          "method the plan chose misses the true difference more often than its stated level says "
                          "(in evalspec's simulations of clustered data, a 95% interval held 81–93% of the time)."))
        out.append(Caveat(code="bootstrap_few_clusters_remedy", severity="note",
                          message=f"For the plan's author: below {BOOTSTRAP_MIN_CLUSTERS} clusters the cluster "
                          "bootstrap tends to under-cover; method auto (the CR2 cluster-robust t interval with "
                          "Bell–McCaffrey degrees of freedom) holds its level there."))
    if contrib is not None and (contrib.largest_share > DOMINANT_SHARE
                                or contrib.effective_clusters < MIN_EFFECTIVE_FRACTION * contrib.n) and core.informative:
        out.append(Caveat(code="dominant_cluster", severity=sev,
                          message=f"A few clusters hold most of the cases (the largest holds "
                          f"{contrib.largest_share:.0%}; the clusters weigh as much as {contrib.effective_clusters:.1f} "
                          "equal ones): the interval rests on them and can be less reliable than its level says."))
    if core.informative and "skewness-corrected" in core.method:
        out.append(Caveat(code="heavy_tailed_cluster_sizes", severity=sev,
                          message="The cluster sizes are heavy-tailed. If the difference grows with cluster size, the "
                          "few largest clusters carry it and a sample can miss them: in evalspec's simulations the "
                          "interval's upper end then fell below the truth in 3–5 % of studies, not 2.5 % (more if the "
                          "population holds clusters far larger than any sampled), and no method tried held 2.5 %, so "
                          "a regression or equivalence read from it is less certain than its level says (the same "
                          "holds for the lower end and a gain if the difference shrinks with size)."))
    if contrib is not None and contrib.concentrated and contrib.top_share is not None \
            and contrib.n > contrib.top_clusters:
        out.append(Caveat(code="top_clusters", severity="note",
                          message=f"The top {contrib.top_clusters} of {contrib.n} clusters give {contrib.top_share:.0%} "
                          "of the net difference: check them before acting."))
    return out


def compute(ctx: Context, params: PairedDifferenceParams) -> Outcome:
    """Paired difference of pass rates, ``candidate − baseline`` (``compare[0] − compare[1]``)."""
    import numpy as np

    from evalspec.analyses.contract import AnalysisRefused

    first, second = ctx.compared(params)
    level = ctx.level(params)
    got = paired_core(ctx, first, second, method=params.method, level=level, resamples=params.resamples,
                      seed=params.seed, bootstrap_interval=params.bootstrap_interval, correction=params.correction)
    if got is None:
        out = ctx.outcomes
        if out.rule in ("pass_at_k", "pass_hat_k"):  # a case with fewer than k attempts has no outcome
            raise AnalysisRefused(f"no case has an outcome for both {first} and {second}: under {out.rule} a case "
                                  f"needs at least k = {out.k} attempts of each candidate; run at least {out.k} "
                                  "attempts of both on the same cases")
        raise AnalysisRefused(f"no case was run for both {first} and {second}, so there is nothing to pair; "
                              "run both candidates on the same cases")
    core, pair = got
    diff = pair.x - pair.y

    labels = None
    if ctx.case_cluster is not None:
        n_clusters = 0 if ctx.cluster_ids is None else len(ctx.cluster_ids)
        labels = np.empty(n_clusters, dtype=object)
        labels[:] = [ctx.cluster_label(j) for j in range(n_clusters)]

    def listed(sel: np.ndarray) -> CaseRefs:
        return CaseRefs(ctx.case_ids, pair.cases[sel], labels, ctx.case_cluster)

    mc, mc_caveats = _mcnemar(core.table, pair)
    contrib = _contributions(ctx, pair, params.top_clusters)
    # (the cases' ids and clusters are str: what validating the lists as CaseRef would check)
    only: dict[str, Any] = {"candidate_only": listed(diff > 0), "baseline_only": listed(diff < 0)}
    disagreements = Disagreements.model_construct(**only)  # (CaseRefs, dumped as the lists they stand for)
    result = PairedResult(**core.model_dump(), candidate=first, baseline=second, mcnemar=mc,
                          disagreements=disagreements, clusters=contrib)
    caveats = _caveats(core, contrib, params, params.primary) + mc_caveats
    if (pair.clusters is not None and core.informative and core.cluster_t is None and core.bootstrap is None
            and not core.method.startswith("newcombe on")):
        caveats.append(Caveat(code="cases_independent", severity="verdict" if params.primary else "note",
                              message=f"The {core.method} interval treats the {core.n} cases as independent although "
                              f"they share {core.units} clusters, so it may be too narrow; method auto would account "
                              "for the clusters."))
    seeds = [SeedUse(purpose=f"{core.unit_name[:-1]} bootstrap resamples", seed=params.seed)] if core.bootstrap else []
    offers = Offers()
    if params.primary:
        offers = Offers(primary=PrimaryInterval(
            candidate=first, baseline=second, estimate=core.estimate, low=core.low, high=core.high, method=core.method,
            confidence_level=core.confidence_level, one_sided_alpha=(1 - core.confidence_level) / 2,
            informative=core.informative, why_uninformative=core.why_uninformative, units=core.units,
            unit_name=core.unit_name, candidate_only=None if core.table is None else core.table.b,
            baseline_only=None if core.table is None else core.table.c))
    return Outcome(result=result, caveats=caveats, seeds=seeds, offers=offers)


def columns(params: PairedDifferenceParams, plan: Any) -> list[ColumnNeed]:
    """Reads no column beyond the outcomes."""
    return []


# -- validate-time rules (run by evalspec.plan.rules with the plan's own) ---------------------------


def _two_sides(view: Any) -> Iterable[Issue]:
    """A paired_difference always compares two candidates (a primary one is checked by the plan's rule)."""
    for i, a in entries(view, "paired_difference"):
        if not view.offers_primary(a):
            yield from pair_issues(view, i, a)


def _one_is_primary(view: Any) -> Iterable[Issue]:
    paired = list(entries(view, "paired_difference"))
    if paired and not any(view.offers_primary(a) for _, a in view.analyses):
        yield Issue(("analyses", paired[0][0], "primary"), "no paired_difference is primary; the decision needs one",
                    "set `primary: true` on the comparison that drives the verdict")


def _cluster_methods_need_clusters(view: Any) -> Iterable[Issue]:
    if view.units.cluster is not None:
        return
    for i, a in entries(view, "paired_difference"):
        if a.method in ("cluster_bootstrap", "cluster_t"):
            yield Issue(("analyses", i, "method"), f"{a.method} needs units.cluster (the resampling unit)",
                        "declare units.cluster, or use method: auto", a.method)


KIND = AnalysisKind(name="paired_difference", params=PairedDifferenceParams, result=PairedResult, compute=compute,
                    title="Paired comparison", columns=columns, order=20,
                    rules=((("candidates", "baseline", "analyses*"), _two_sides), (("analyses",), _one_is_primary),
                           (("units", "analyses*"), _cluster_methods_need_clusters)), attempt_rows=None)
