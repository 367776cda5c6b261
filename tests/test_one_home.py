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
    assert sorted(modules) == ["background_temperature", "beta_binomial", "paired_difference", "proportion",
                               "ranking", "slices"]
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
