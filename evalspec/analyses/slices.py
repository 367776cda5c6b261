"""The ``slices`` analysis: per-slice pass rates and paired differences.

Slices declared in the plan's top-level ``slices`` are *confirmatory*: they were chosen
before the results were seen. Columns requested under ``exploratory`` are reported and
labelled exploratory — "Repeat AI evaluations and report uncertainty honestly": choosing a
subgroup after seeing results can exaggerate apparent differences. Each group gets every
candidate's interval and, when the plan has a comparison, the paired difference on the
group's paired cases (``paired_method: auto`` = cluster-robust CR2 t with declared clusters,
Newcombe without; the same rules as the primary comparison, including "uninformative").

Multiplicity (confirmatory groups only)
    Every group of every confirmatory slice in this analysis is one hypothesis of a family
    of ``K``: "no material loss", H0: δ ≥ −m against δ < −m, with ``m`` the ``loss_margin``
    (default: the decision's margin, else its minimum improvement, else 0). A group of
    independent pass/fail cases gets the exact unconditional one-sided p-value
    (:func:`evalspec.stats.paired_exact.paired_loss_test`, Sidik 2003), whose error rate is at
    most α at every size -- inverting Newcombe's interval instead reached 5 % at n = 5 against
    a nominal 2.5 %. A group with declared clusters, or with fractional outcomes (the ``mean``
    rule), gets the p-value found by inverting its interval (the one-sided level at which its
    upper bound reaches −m). Holm's step-down procedure at the decision's one-sided
    α = (1 − level)/2 decides which groups show a material loss (family-wise error ≤ α).
    The interval reported for a confirmatory group is the one at its Holm step, two-sided
    level ``1 − 2α/(K − i)`` for the group ranked ``i`` (0-based) by p-value; a group is a
    loss only when both its Holm-adjusted p-value is below α and that interval's upper bound
    lies below −m. A group with a loss becomes a :class:`~evalspec.analyses.contract.Finding`
    that the decision names in its reasons and beside the verdict. Exploratory groups are
    unadjusted, labelled, and never findings.

Displayed interval of a small group
    A group of at most :data:`EXACT_INTERVAL_MAX_CASES` independent pass/fail cases (``paired_method:
    auto``) shows the interval that inverts the same exact test
    (:func:`evalspec.stats.paired_exact.paired_exact_interval`): its upper end lies below −m exactly
    when the test shows a loss at the interval's one-sided level, so the bound on the page and the
    finding agree, and each end's error is at most its one-sided level at every n. Larger groups show
    Newcombe's interval, whose one-sided error stays near its level there (2.5-2.8 %; docs/decision.md).

Smallest group that can show a loss
    With the exact test, a group of independent cases needs at least
    :data:`MIN_LOSS_CASES` (6) paired cases, all of them lost, to show a loss at one-sided
    2.5 % (five lost out of five give p = 1/32 or more); Holm's adjustment raises that for
    larger families. A clustered group needs at least 5 clusters, 5 of them with a
    disagreement (below that its interval is uninformative and it is never a finding).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalspec.analyses.base import AnalysisParams, ConfidenceLevel
from evalspec.analyses.contract import (
    AnalysisKind,
    Caveat,
    ColumnNeed,
    Finding,
    Issue,
    Offers,
    Outcome,
    ResultModel,
    SeedUse,
    default_comparison,
    did_you_mean,
    entries,
)
from evalspec.analyses.paired import EXACT_INTERVAL_MAX_CASES, EXACT_INTERVAL_METHOD, PairedCore, PairedMethod
from evalspec.labels import value_label as _label

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalspec.analyses.contract import Context

__all__ = ["EXACT_INTERVAL_MAX_CASES", "EXACT_INTERVAL_METHOD", "KIND", "MIN_LOSS_CASES", "SLICE_RESAMPLES", "SlicesParams", "SlicesResult", "compute", "holm"]

#: Bootstrap resamples per slice group when the paired method is the bootstrap.
SLICE_RESAMPLES = 2000


#: The fewest independent paired cases with which the exact test can show a loss at one-sided
#: 2.5 % (any margin >= 0): fewer are never a material loss (checked by the tests).
MIN_LOSS_CASES = 6

ProportionMethod = Literal["wilson", "wilson_cc", "clopper_pearson", "jeffreys", "agresti_coull", "mid_p", "wald"]


class SlicesParams(AnalysisParams):
    """Per-slice results: declared slices are confirmatory (Holm-adjusted); ``exploratory`` columns are labelled so."""

    kind: Literal["slices"]
    names: list[str] | None = Field(None, description="Declared slices to analyse (top-level `slices`); default all.")
    exploratory: list[str] = Field(
        default_factory=list,
        description="Undeclared results columns to slice by; reported as exploratory (unadjusted), never confirmatory.",
    )
    method: ProportionMethod = Field("wilson", description="Interval method for per-slice pass rates.")
    paired_method: PairedMethod = Field(
        "auto", description="Interval method for per-slice paired differences ('auto' = as the primary comparison: "
        "a group of at most 100 independent pass/fail cases shows the interval of the exact test that flags a "
        "loss)."
    )
    confidence_level: ConfidenceLevel | None = Field(None, description="Defaults to decision.confidence_level.")
    loss_margin: float | None = Field(
        None, ge=0.0, le=1.0, description="A confirmatory group whose adjusted upper bound lies below minus this "
        "is a material loss; default the decision's margin, else its minimum improvement."
    )
    seed: int = Field(0, ge=0, description="Seed of the per-group bootstrap (only with paired_method cluster_bootstrap).")


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built with the result that holds it


class SlicePaired(PairedCore):
    candidate: str
    baseline: str
    adjustment: str | None = Field(None, description="Multiplicity adjustment of this interval, if any.")
    pvalue_loss: float | None = Field(None, description="One-sided p-value of 'no material loss' (unadjusted).")
    pvalue_method: str | None = Field(None, description="How pvalue_loss was computed.")
    pvalue_loss_holm: float | None = Field(None, description="Holm-adjusted p-value of 'no material loss'.")
    material_loss: bool = False


class Group(_Part):
    value: str
    n: int
    candidates: dict[str, dict[str, Any]]
    paired: SlicePaired | None = None


class SliceEntry(_Part):
    name: str
    column: str
    confirmatory: bool
    label: Literal["confirmatory", "exploratory"]
    groups: list[Group]
    unlisted_values: list[str] = Field(default_factory=list)
    note: str | None = None


class SlicesResult(ResultModel):
    slices: list[SliceEntry]
    loss_margin: float
    family_size: int = Field(description="Confirmatory groups in the Holm family.")
    adjustment: str


def holm(pvalues: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (same order as given)."""
    k = len(pvalues)
    order = sorted(range(k), key=lambda i: pvalues[i])
    out = [1.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * pvalues[i]))
        out[i] = running
    return out


def _label_codes(ctx: Context, col: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each case's label as a code into the distinct labels (-1 = missing).

    ``_label`` runs once per distinct value, not once per case; values that print alike
    (``1`` and ``1.0``) share a label, as before.
    """
    import numpy as np

    codes, uniques = ctx.codes(col)
    names: list[str] = []
    index: dict[str, int] = {}
    remap = np.full(len(uniques) + 1, -1, dtype=np.int64)  # code -1 (missing) reads the last slot
    for i, v in enumerate(uniques.tolist()):
        lab = _label(v)
        if lab is not None:
            j = index.setdefault(lab, len(names))
            if j == len(names):
                names.append(lab)
            remap[i] = j
    return remap[codes], names


def _mask(coded: tuple[np.ndarray, list[str]], value: str) -> np.ndarray:
    import numpy as np

    codes, names = coded
    return codes == names.index(value) if value in names else np.zeros(len(codes), dtype=bool)


def _comparison(ctx: Context) -> tuple[str, str] | None:
    if ctx.primary is not None:
        return ctx.primary
    return default_comparison(ctx.candidates, ctx.baseline)


class _PairsOnce:
    """The context, with each pair of candidates' outcomes on a group's cases (``pair``) made once per group.

    A group's cases are the same array each time (:meth:`_Runner.mask`), kept here with its pair;
    the pairs are only read (``x``, ``y``, ``cases``, ``clusters``). Everything else is the context's.
    """

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._pairs: dict[tuple[str, str, int], tuple[np.ndarray | None, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def pair(self, first: str, second: str, mask: np.ndarray | None = None) -> Any:
        key = (first, second, id(mask))
        held = self._pairs.get(key)
        if held is None or held[0] is not mask:
            held = self._pairs[key] = (mask, self._ctx.pair(first, second, mask))
        return held[1]


class _Runner:
    def __init__(self, ctx: Context, params: SlicesParams) -> None:
        self.ctx = ctx
        self.params = params
        self.level = ctx.level(params)
        self.alpha = (1 - self.level) / 2
        self.comparison = _comparison(ctx)
        m = params.loss_margin
        if m is None:
            m = ctx.margin if ctx.margin is not None else getattr(ctx, "minimum_improvement", None)
        self.loss_margin = float(m or 0.0)
        self.bootstrapped = False
        self._coded: dict[str, tuple[np.ndarray, list[str]]] = {}
        self._masks: dict[tuple[str, str], np.ndarray] = {}
        self.paired_ctx = _PairsOnce(ctx)  # (a group is paired up to four times: its pair is made once)
        self._memos: dict[int, tuple[np.ndarray, dict[Any, Any]]] = {}  # each group's interval parts (any level)

    def keeps_pair(self, cand: str) -> bool:
        """Whether ``cand`` keeps the cases of the compared pair in any group: it is one of the two, and neither
        lacks an outcome for any case (told once, by the context)."""
        if self.comparison is None or cand not in self.comparison:
            return False
        return all(self.ctx.has_every_outcome(c) for c in self.comparison)

    def coded(self, column: str, col: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """The column's label codes, computed once per column."""
        if column not in self._coded:
            self._coded[column] = _label_codes(self.ctx, col)
        return self._coded[column]

    def mask(self, column: str, value: str) -> np.ndarray:
        """The cases of the group ``column = value``, computed once per group (the same array each time)."""
        key = (column, value)
        if key not in self._masks:
            self._masks[key] = _mask(self.coded(column, self.ctx.case_columns[column]), value)
        return self._masks[key]

    def paired(self, mask: np.ndarray, level: float) -> PairedCore | None:
        from evalspec.analyses.paired import paired_core

        assert self.comparison is not None
        held = self._memos.get(id(mask))
        if held is None or held[0] is not mask:  # (a group's mask is the same array each time: :meth:`mask`)
            held = self._memos[id(mask)] = (mask, {})
        got = paired_core(self.paired_ctx, self.comparison[0], self.comparison[1], method=self.params.paired_method,
                          level=level, mask=mask, resamples=SLICE_RESAMPLES, seed=self.params.seed, memo=held[1])
        if got is None:
            return None
        if got[0].bootstrap is not None:
            self.bootstrapped = True
        return got[0]  # a small group of independent pass/fail cases: the exact interval (as the primary)

    def pvalue_loss(self, mask: np.ndarray) -> tuple[float, str]:
        """One-sided p of H0 δ ≥ −m and how it was computed.

        Independent pass/fail cases: the exact unconditional test. Otherwise the α at which the
        one-sided upper bound of the group's interval reaches −m (by bisection over α).
        """
        assert self.comparison is not None
        pair = self.paired_ctx.pair(self.comparison[0], self.comparison[1], mask)
        if self.ctx.outcomes.binary and pair.clusters is None and pair.x.size:
            from evalspec.stats.paired_exact import paired_loss_test

            b = int(((pair.x == 1) & (pair.y == 0)).sum())
            c = int(((pair.x == 0) & (pair.y == 1)).sum())
            t = paired_loss_test(b, c, int(pair.x.size), min(self.loss_margin, 0.999))
            return t.pvalue, t.method
        target = -self.loss_margin

        def below(a: float) -> bool:
            core = self.paired(mask, 1 - 2 * a)
            return core is not None and core.informative and core.high < target

        how = "inverted interval (one-sided level at which its upper bound reaches minus the margin)"
        # the top of the search is a 0.2 % interval, not a zero-width one (which is never informative:
        # a 3-case group b = 0, c = 3 returned 1.0); not below there means p > 0.499, reported as 1
        lo, hi = 1e-12, 0.499
        if not below(hi):
            return 1.0, how
        if below(lo):
            return lo, how
        for _ in range(40):
            mid = (lo * hi) ** 0.5 if hi / lo > 4 else (lo + hi) / 2
            if below(mid):
                hi = mid
            else:
                lo = mid
        return hi, how

    def one(self, name: str, column: str, confirmatory: bool, values: list[Any] | None) -> SliceEntry:

        from evalspec.analyses.proportion import proportion_of

        col = self.ctx.case_columns.get(column)
        if col is None:
            from evalspec.analyses.contract import AnalysisRefused

            raise AnalysisRefused(f"the slice column {column!r} is not in the results")
        coded = self.coded(column, col)
        present = sorted(coded[1])
        wanted = [str(_label(v)) for v in values] if values else present
        groups = []
        for value in wanted:
            mask = self.mask(column, value)
            cands = {}
            pair = None if self.comparison is None else self.paired_ctx.pair(*self.comparison, mask)
            among = None if pair is None else (pair.cases, pair.clusters)  # (the group's clusters, counted once)
            for cand in self.ctx.candidates:
                kept = among is not None and self.keeps_pair(cand)
                held = None  # (a compared candidate's outcomes on the pair's cases: the pair's own, not gathered again)
                if kept and pair is not None and self.comparison is not None:
                    held = pair.x if cand == self.comparison[0] else pair.y if cand == self.comparison[1] else None
                res = proportion_of(self.ctx, cand, self.params.method, self.level, mask, among, kept, held)
                if res is not None:
                    cands[cand] = res
            paired = None
            if self.comparison is not None:
                core = self.paired(mask, self.level)
                if core is not None:
                    paired = SlicePaired(**core.model_dump(), candidate=self.comparison[0],
                                         baseline=self.comparison[1],
                                         adjustment=None if confirmatory else "none (exploratory)")
            groups.append(Group(value=value, n=int(mask.sum()), candidates=cands, paired=paired))
        note = None
        if not confirmatory:
            note = ("Exploratory: this slice was not declared in the plan before the results were seen; its "
                    "intervals are not adjusted for the number of groups looked at. Treat its differences as "
                    "hypotheses, not findings.")
        return SliceEntry(name=name, column=column, confirmatory=confirmatory,
                          label="confirmatory" if confirmatory else "exploratory", groups=groups,
                          unlisted_values=[v for v in present if v not in wanted], note=note)

    def adjust(self, entries: list[SliceEntry]) -> tuple[list[Finding], int]:
        """Holm over every confirmatory group with a paired difference; returns the findings."""

        family = [(e, g) for e in entries if e.confirmatory for g in e.groups if g.paired is not None]
        k = len(family)
        if k == 0:
            return [], 0
        masks = []
        for e, g in family:
            masks.append(self.mask(e.column, g.value))
        tests = [self.pvalue_loss(mask) if g.paired is not None and g.paired.informative else (1.0, None)
                 for (e, g), mask in zip(family, masks)]
        raw = [p for p, _ in tests]
        adj = holm(raw)
        order = sorted(range(k), key=lambda i: raw[i])
        rank = {i: r for r, i in enumerate(order)}
        findings: list[Finding] = []
        own = {"candidate", "baseline", "adjustment", "pvalue_loss", "pvalue_method", "pvalue_loss_holm",
               "material_loss"}
        for i, ((e, g), mask) in enumerate(zip(family, masks)):
            step_level = 1 - 2 * self.alpha / (k - rank[i])
            core = self.paired(mask, step_level) if k > 1 else g.paired
            assert core is not None and g.paired is not None
            below = core.informative and core.high < -self.loss_margin
            loss = bool(adj[i] < self.alpha) and below
            how = (f"Holm over {k} confirmatory groups: interval at its Holm step, two-sided level "
                   f"{step_level:.4g}" if k > 1 else "none needed (one confirmatory group)")
            fields = core.model_dump(exclude=own)
            if below and not loss:
                fields["notes"] = [*fields.get("notes", []), (
                    f"The interval's upper end lies below minus the loss margin, but the "
                    f"{'exact ' if 'exact' in str(tests[i][1]) else ''}test of this "
                    f"{g.n}-case group (p = {raw[i]:.3g}{', Holm-adjusted ' + format(adj[i], '.3g') if k > 1 else ''}"
                    f") does not show a loss at one-sided {self.alpha:.3g}: intervals of small groups are too "
                    "narrow, so this is not a finding.")]
            g.paired = SlicePaired(**fields, candidate=g.paired.candidate, baseline=g.paired.baseline,
                                   adjustment=how, pvalue_loss=raw[i], pvalue_method=tests[i][1],
                                   pvalue_loss_holm=adj[i], material_loss=loss)
            if loss:
                findings.append(Finding(
                    name=f"{e.name} = {g.value}", estimate=core.estimate, low=core.low, high=core.high,
                    confidence_level=step_level, adjustment=how, material_loss=True,
                    message=f"In the confirmatory slice {e.name} = {g.value} ({g.n} cases), {g.paired.candidate} "
                    f"is worse than {g.paired.baseline} by {-core.estimate * 100:.1f} points (adjusted interval "
                    f"{core.low * 100:+.1f} to {core.high * 100:+.1f} points), a loss beyond "
                    f"{self.loss_margin * 100:.1f} points after Holm's adjustment over {k} groups."))
        return findings, k


def compute(ctx: Context, params: SlicesParams) -> Outcome:
    """Declared slices (confirmatory, Holm-adjusted), then requested exploratory columns."""
    from evalspec.analyses.contract import AnalysisRefused

    run = _Runner(ctx, params)
    declared = {s.name: s for s in ctx.slices}
    entries = []
    for name in (params.names if params.names is not None else list(declared)):
        if name not in declared:
            raise AnalysisRefused(f"{name!r} is not a declared slice")
        s = declared[name]
        entries.append(run.one(s.name, s.column, True, s.values))
    for column in params.exploratory:
        entries.append(run.one(column, column, False, None))
    findings, k = run.adjust(entries)
    caveats: list[Caveat] = []
    independent = sorted({c["method"] for e in entries for g in e.groups for c in g.candidates.values()
                          if "cluster" not in str(c.get("method", ""))})
    if ctx.case_cluster is not None and independent:
        caveats.append(Caveat(code="cases_independent", severity="note",
                              message=f"Per-group pass-rate intervals ({', '.join(independent)}) treat cases as "
                              "independent although they share clusters, so they may be too narrow."))
    if any(not e.confirmatory for e in entries):
        caveats.append(Caveat(code="exploratory_slices", severity="note",
                              message="Exploratory slices are unadjusted for multiplicity and were not declared "
                              "before the results: hypotheses, not findings."))
    adjustment = (f"Holm over {k} confirmatory groups at one-sided alpha {run.alpha:.4g} (no material loss beyond "
                  f"{run.loss_margin * 100:.1f} points)" if k else "none (no confirmatory group with a comparison)")
    seeds = [SeedUse(purpose="per-slice cluster bootstrap resamples", seed=params.seed)] if run.bootstrapped else []
    result = SlicesResult(slices=entries, loss_margin=run.loss_margin, family_size=k, adjustment=adjustment)
    return Outcome(result=result, caveats=caveats, seeds=seeds, offers=Offers(findings=findings))


def columns(params: SlicesParams, plan: Any) -> list[ColumnNeed]:
    """The declared slices' columns and the exploratory columns."""
    out = []
    declared = {s.name: (j, s) for j, s in enumerate(getattr(plan, "slices", []) or [])}
    for name in (params.names if params.names is not None else list(declared)):
        if name in declared:
            j, s = declared[name]
            out.append(ColumnNeed(column=s.column, key=f"slices[{j}].column"))
    for j, col in enumerate(params.exploratory):
        out.append(ColumnNeed(column=col, key=f"exploratory[{j}]"))
    return out


def _declared(view: Any) -> Iterable[Issue]:
    """Validate-time rule: the slices analysed are declared (or asked for as exploratory)."""
    declared = [s.name for s in view.slices]
    for i, a in entries(view, "slices"):
        for j, name in enumerate(a.names or []):
            if name not in declared:
                hint = did_you_mean(name, declared) or "declare it under `slices`, or list its column under `exploratory`"
                yield Issue(("analyses", i, "names", j), "not a declared slice", hint, name)
        if not view.slices and not a.exploratory:
            yield Issue(("analyses", i), "no slices are declared and none are requested as exploratory",
                        "declare slices at the top level (confirmatory) or list columns under `exploratory`")


KIND = AnalysisKind(name="slices", params=SlicesParams, result=SlicesResult, compute=compute, title="Slices",
                    columns=columns, order=50, rules=((("slices", "analyses*"), _declared),), attempt_rows=None)
