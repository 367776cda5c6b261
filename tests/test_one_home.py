"""One home per concept, and nothing outside a kind's module names the kind (issue 23).

Each test names the concept's home and fails if an old home comes back (a second copy of
the rule, a table of kinds). The kind-name scan is a ratchet like the function-length one:
a new place that names a kind fails, and so does an allowed entry that no longer does.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalspec"

#: (file, kind) -> why that file names the kind. ``slices`` and ``critical_failures`` are not
#: scanned: they are also the names of plan sections (``plan.slices``, ``decision.critical_failures``).
ALLOWED_KIND_NAMES: dict[tuple[str, str], str] = {
    ("evalspec/plan/starter_examples.py", "proportion"): "the starter plan's example analyses (plan text, no dispatch)",
    ("evalspec/plan/starter_examples.py", "paired_difference"): "the starter plan's example analyses",
    ("evalspec/results/adapters/__init__.py", "paired_difference"):
        "not moved yet: tool logs' case-overlap refusal for paired comparisons (results/, another owner)",
    ("evalspec/results/adapters/every_eval_ever.py", "proportion"):
        "not moved yet: the Every Eval Ever export reads the proportion record (and writes metric_unit 'proportion')",
    ("evalspec/analyses/ranking.py", "paired_difference"):
        "not moved yet: ranking reads the plan's paired_difference entries without compare (another owner)",
}


def _string_constants(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(s.value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            for s in node.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def kind_names_outside_their_modules() -> dict[tuple[str, str], int]:
    """(file, kind) -> first line, for every string equal to a kind's name outside that kind's own files."""
    from evalspec.analyses.registry import KIND_MODULES

    names = set(KIND_MODULES) - {"slices", "critical_failures"}
    own = {str(Path(*m.split(".")).with_suffix(".py")): k for k, m in KIND_MODULES.items()}
    found: dict[tuple[str, str], int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "evalspec/analyses/registry.py":  # the registry: one line per kind
            continue
        sections = rel.startswith("evalspec/report/sections/")  # a section's plots are named after their kind
        for line, text in _string_constants(path):
            if text in names and own.get(rel) != text and not (sections and path.stem == text):
                found.setdefault((rel, text), line)
    return found


def test_nothing_outside_a_kind_names_it() -> None:
    found = kind_names_outside_their_modules()
    new = {k: v for k, v in found.items() if k not in ALLOWED_KIND_NAMES}
    assert not new, ("these name an analysis kind outside its module; ask the kind instead (an AnalysisKind "
                     "field, ctx, offers): " + ", ".join(f"{f}:{line} {k!r}" for (f, k), line in sorted(new.items())))


def test_every_allowed_kind_name_is_still_there() -> None:
    stale = sorted(set(ALLOWED_KIND_NAMES) - set(kind_names_outside_their_modules()))
    assert not stale, f"no longer named there, remove from ALLOWED_KIND_NAMES: {stale}"


def test_section_plots_are_found_by_the_kind_not_a_table() -> None:
    """``evalspec/report/sections/<kind>.py`` replaces render's ``SECTION_PLOTS`` table."""
    import evalspec.report.render as render
    import evalspec.report.sections as sections
    from evalspec.analyses.registry import KIND_MODULES

    assert not hasattr(render, "SECTION_PLOTS")
    modules = [m.name for m in pkgutil.iter_modules(sections.__path__)]
    assert {"background_temperature", "beta_binomial", "paired_difference", "proportion", "ranking",
            "slices"} <= set(modules)
    for name in modules:
        assert name in KIND_MODULES, f"evalspec/report/sections/{name}.py is named after no kind"
        assert sections.plotter(name) is importlib.import_module(f"evalspec.report.sections.{name}").section_plots
    assert sections.plotter("clustered_mean") is None  # a kind without plots
    assert sections.plotter("os") is None and sections.plotter(None) is None  # not a kind: nothing imported


def test_the_hdi_has_one_home() -> None:
    """``evalspec.stats.highest_density`` holds every HDI rule; the Beta-Binomial engine uses it."""
    from evalspec.stats import beta_binomial, hdi, highest_density

    assert beta_binomial.hdi_rows is highest_density.hdi_rows
    assert beta_binomial.weighted_hdi is highest_density.weighted_hdi
    for path in (PACKAGE / "stats" / "beta_binomial").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "def hdi" not in text and "def weighted_hdi" not in text and "argmin(widths" not in text, path
    rng = np.random.default_rng(3)
    draws = rng.gamma(2.0, size=(4, 501))
    low, high = highest_density.hdi_rows(draws, 0.9)
    for row, lo, hi in zip(draws, low, high, strict=True):
        one = hdi(row, 0.9)
        assert (one.low, one.high) == (lo, hi)


def test_labels_have_one_home() -> None:
    """``evalspec.labels``: identifiers (results table, tool-log adapters) and slice values (slices)."""
    import evalspec.analyses.slices as slices
    import evalspec.results.adapters as adapters
    import evalspec.results.table as table
    from evalspec.labels import identifier_label, value_label

    assert table._label is identifier_label and adapters._text is identifier_label
    assert slices._label is value_label
    assert [identifier_label(v) for v in (True, 17.0, " a ", 2.5, None)] == ["true", "17", "a", "2.5", "None"]
    assert [value_label(v) for v in (False, 3.0, " a ", None, float("nan"))] == ["false", "3", " a ", None, None]
    for old, name in (("results/table.py", "def _label("), ("results/adapters/__init__.py", "def _text("),
                      ("analyses/slices.py", "def _label(")):
        assert name not in (PACKAGE / old).read_text(encoding="utf-8"), f"a second label rule in {old}"


def test_the_default_comparison_has_one_home() -> None:
    """``contract.default_comparison``: the first candidate other than the baseline, against the baseline."""
    from evalspec.analyses.contract import default_comparison

    assert default_comparison(["a", "base", "b"], "base") == ("a", "base")
    assert default_comparison(["base"], "base") is None and default_comparison(["a", "b"], None) is None
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "!= " in line and "baseline" in line and " for c in " in line and rel != "evalspec/analyses/contract.py":
                copies.append(f"{rel}:{line_no}")
    # the tool-log case-overlap check pairs *every* other candidate with the baseline: another set
    assert all(c.startswith("evalspec/results/adapters/__init__.py:") for c in copies), copies


def test_attempt_order_and_ranks_have_one_home() -> None:
    """``attempts.attempt_order``/``attempt_ranks``: the checks and the attempt rules share them."""
    import evalspec.results.checks as checks
    from evalspec.attempts import attempt_order, attempt_ranks

    assert checks.attempt_order is attempt_order and not hasattr(checks, "_order")
    for path in PACKAGE.rglob("*.py"):
        if path.name != "attempts.py":
            assert "lexsort((repeat, case, cand))" not in path.read_text(encoding="utf-8"), path
    rng = np.random.default_rng(7)
    for big in (False, True):  # the one-key path and the lexsort path (spans past 2**62)
        cand = rng.integers(0, 3, 400)
        case = rng.integers(0, 2**40 if big else 20, 400)
        repeat = rng.integers(0, 2**30 if big else 4, 400)
        order = attempt_order(cand, case, repeat)
        assert np.array_equal(order, np.lexsort((repeat, case, cand)))
        rank, size = attempt_ranks(cand, case, order)
        for r in range(0, 400, 37):
            same = np.flatnonzero((cand == cand[r]) & (case == case[r]))
            before = [s for s in same if (repeat[s], s) < (repeat[r], r)]
            assert rank[r] == len(before) and size[r] == len(same)


def test_number_formats_have_one_home() -> None:
    """``evalspec.numbers``: the report's filters and the verdict's claim text write numbers from there."""
    import evalspec.decision.wording as wording
    import evalspec.numbers as numbers
    import evalspec.report.fmt as fmt

    for name in ("pct", "pts", "interval", "level", "count", "number", "pvalue", "signed_count"):
        assert getattr(fmt, name) is getattr(numbers, name), name
    assert (wording.pp, wording.signed, wording.pct, wording.lvl) == (
        numbers.claim_points, numbers.claim_signed, numbers.claim_pct, numbers.claim_level)
    for path in PACKAGE.rglob("*.py"):
        if path.name != "numbers.py":
            text = path.read_text(encoding="utf-8")
            for fn in ("def pct(", "def pts(", "def pp(", "def lvl(", "def signed(", "def pvalue("):
                assert fn not in text, f"{path.relative_to(ROOT)} defines {fn[4:-1]} again"
    # the two registers differ only in the minus sign, the missing value and the unsigned zero
    assert (numbers.pts(-0.04), numbers.claim_signed(-0.04)) == ("\u22124.0 points", "-4.0")
    assert (numbers.pct(None), numbers.claim_pct(None)) == ("\u2014", "undefined")
