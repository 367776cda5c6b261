"""The one-way layers of ``evalspec/`` (docs/ARCHITECTURE.md, "Layers"), checked on the import graph.

The graph is built from the source with :mod:`ast`, at every level an import can hide:
top level, inside functions and methods, under ``if TYPE_CHECKING:``, inside ``try`` blocks,
and the dynamic imports the package makes from module strings (the kind registry's
``KIND_MODULES``, the CLI's ``COMMANDS``, the adapters'
``ADAPTERS``, ``importlib.import_module("...")``): every string constant outside a docstring
that names an ``evalspec`` module (``"evalspec.x.y"`` or ``"evalspec.x.y:attr"``) is an edge.

A module may import its own layer or a lower one, never a higher one, and the graph has no
cycle. :data:`LAYERS` is the table: every module of the package is named in exactly one
layer, so a new module is placed on purpose (an unplaced one fails this test and says where
to add it). An analysis kind's module is placed by its line in ``KIND_MODULES``, and the
plots of its report section (``evalspec/report/sections/<kind>.py``) by their folder: adding a
kind needs no edit here. Run ``python tests/test_layers.py`` to print the graph's violations without pytest.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalspec"

#: Layers, bottom to top. A module imports only modules of its own layer or of a lower one.
#: Every module of ``evalspec/`` is listed once (``__init__`` modules by their package name).
LAYERS: dict[str, tuple[str, ...]] = {
    # 0. Leaves: numeric kernels, the analysis contract, small helpers every layer may use.
    "leaves": (
        "evalspec", "evalspec._version", "evalspec._resources", "evalspec._atomic", "evalspec.exit_codes",
        "evalspec.errors", "evalspec.limits", "evalspec.method_words", "evalspec._files", "evalspec.terminal",
        "evalspec.unit_order", "evalspec.labels", "evalspec.label_draw", "evalspec.numbers",
        "evalspec.analyses.base", "evalspec.analyses.contract",
        "evalspec.stats", "evalspec.stats._numeric", "evalspec.stats._results", "evalspec.stats._validation",
        "evalspec.stats.beta_binomial", "evalspec.stats.beta_binomial.contrast", "evalspec.stats.beta_binomial.counts",
        "evalspec.stats.beta_binomial.gamma_bar", "evalspec.stats.beta_binomial.grid",
        "evalspec.stats.beta_binomial.inference_data", "evalspec.stats.beta_binomial.model",
        "evalspec.stats.beta_binomial.nuts", "evalspec.stats.beta_binomial.posterior", "evalspec.stats.beta_binomial.ppc",
        "evalspec.stats.beta_binomial.profile", "evalspec.stats.beta_binomial.summaries", "evalspec.stats.bootstrap", "evalspec.stats.clustered",
        "evalspec.stats.mcnemar_clustered", "evalspec.stats.clustered_proportion", "evalspec.stats.distance",
        "evalspec.stats.highest_density", "evalspec.stats.paired", "evalspec.stats.power", "evalspec.stats.power_simulation",
        "evalspec.stats.proportion",
        "evalspec.stats.sequential", "evalspec.stats.agreement", "evalspec.stats.paired_exact", "evalspec.stats.ppi",
        "evalspec.stats.ranking",
        # The background-temperature engine: a kernel (numpy, torch inside functions) of its own.
        "evalspec.tbg", "evalspec.tbg.backends", "evalspec.tbg.data", "evalspec.tbg.environment",
        "evalspec.tbg.estimate", "evalspec.tbg.metrics", "evalspec.tbg.models", "evalspec.tbg.prompts",
        "evalspec.tbg.sampler", "evalspec.tbg.shards", "evalspec.tbg.runner",
    ),
    # 1. Kinds: the registry and one module per analysis kind (params, result, compute, rules). Every module
    #    named in KIND_MODULES (evalspec/analyses/registry.py) is placed here by its registry line.
    "kinds": ("evalspec.analyses", "evalspec.analyses.registry", "evalspec.analyses.params"),
    # 2. Plan: the plan model (its analyses union from the registry), loading, rules, lock, starter.
    "plan": (
        "evalspec.plan", "evalspec.plan.canonical", "evalspec.plan.diagnose", "evalspec.plan.load",
        "evalspec.plan.lock", "evalspec.plan.model", "evalspec.plan.positions", "evalspec.plan.reference",
        "evalspec.plan.rules", "evalspec.plan.schema", "evalspec.plan.source", "evalspec.plan.starter",
        "evalspec.plan.starter_examples", "evalspec.power", "evalspec.plan.case_table",
    ),
    # 3. Data: results files and tool logs read and checked against the plan; the attempt rule.
    "data": (
        "evalspec.results", "evalspec.results.checks", "evalspec.results.hints", "evalspec.results.readers",
        "evalspec.results.files", "evalspec.results.values", "evalspec.results.arrow", "evalspec.results.formats",
        "evalspec.results.formats.jsonl", "evalspec.results.formats.csv", "evalspec.results.formats.parquet",
        "evalspec.results.text_index", "evalspec.results.batches", "evalspec.results.ahead",
        "evalspec.results.table", "evalspec.results.adapters", "evalspec.results.adapters.base",
        "evalspec.results.adapters.inspect_ai", "evalspec.results.adapters.lm_eval",
        "evalspec.results.adapters.promptfoo", "evalspec.results.adapters.zip_members", "evalspec.results.lake", "evalspec.results.adapters.every_eval_ever",
        "evalspec.results.adapters.helm", "evalspec.results.adapters.openai_evals", "evalspec.results.adapters.graders", "evalspec.attempts",
        "evalspec.pilot", "evalspec.results.case_table", "evalspec.results.case_checks", "evalspec.results.case_reduce", "evalspec.results.case_model",
        "evalspec.results.reduce_sql", "evalspec.results.stream_reduce", "evalspec.results.stream_read",
        "evalspec.results.stream_batch", "evalspec.results.stream_finish", "evalspec.results.stream_state",
    ),
    # 4. Runtime: what a kind's compute receives (and contexts built from lists, for tests).
    "runtime": ("evalspec.analyses.context", "evalspec.testing", "evalspec.sensitivity_views",
                "evalspec.case_views", "evalspec.stream_views"),
    # 5. Decision: the preregistered rule applied to the kinds' offers.
    "decision": ("evalspec.decision", "evalspec.decision.guard", "evalspec.decision.record", "evalspec.decision.rules",
                 "evalspec.decision.table", "evalspec.decision.verdicts", "evalspec.decision.wording"),
    # 6. Claim: the claim record, its bytes, the ledger.
    "claim": ("evalspec.claim_model", "evalspec.claim", "evalspec.ledger", "evalspec.process", "evalspec.looks"),
    # 7. Pipeline: plan + data -> claim, a pure function (the audit replays it to reproduce a claim).
    "pipeline": ("evalspec.run",),
    # 8. Outputs: report, audit, gate.
    "outputs": (
        "evalspec.report", "evalspec.report.fmt", "evalspec.report.load", "evalspec.report.pdf_import",
        "evalspec.report.pdf_worker", "evalspec.report.plots", "evalspec.report.sections",
        "evalspec.report.render", "evalspec.report.sources", "evalspec.report.view", "evalspec.report.markdown",
        "evalspec.audit", "evalspec.audit.checks", "evalspec.audit.core", "evalspec.audit.gate",
        "evalspec.audit.model", "evalspec.audit.render", "evalspec.audit.reproduce", "evalspec.audit.attest",
        "evalspec.audit.evidence", "evalspec.audit.recompute", "evalspec.gate", "evalspec.diff", "evalspec.history",
    ),
    # 9. Entry points: the CLI and its commands (they compose the pipeline and the outputs).
    "entry": (
        "evalspec.__main__", "evalspec.cli", "evalspec.cli_runtime", "evalspec.regenerate", "evalspec.commands",
        "evalspec.commands.audit",
        "evalspec.commands.convert", "evalspec.commands.init", "evalspec.commands.lock",
        "evalspec.commands.power", "evalspec.commands.report", "evalspec.commands.run", "evalspec.commands.reduce_sql",
        "evalspec.commands.schema", "evalspec.commands.tbg", "evalspec.commands.validate",
        "evalspec.commands.attest", "evalspec.commands.gate", "evalspec.commands.validate_data", "evalspec.commands.diff",
        "evalspec.commands.order", "evalspec.commands.draw_labels", "evalspec.commands.beside_plan",
    ),
}


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line``; ``how`` is top, function, type-checking or dynamic."""

    source: str
    target: str
    line: int
    how: str

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self._path()}:{self.line}, {self.how})"

    def _path(self) -> str:
        return str(module_files()[self.source].relative_to(ROOT))


def module_files() -> dict[str, Path]:
    """module name -> file, for every module under ``evalspec/``."""
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: set[str]) -> str | None:
    """The longest prefix of dotted ``name`` that is an ``evalspec`` module, or None."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _docstring_nodes(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    ids.add(id(stmt.value))
    return ids


def _imports(name: str, path: Path, modules: set[str]) -> Iterator[Edge]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    docstrings = _docstring_nodes(tree)

    def visit(node: ast.AST, how: str) -> Iterator[Edge]:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from visit(child, "type-checking")
            for child in node.orelse:
                yield from visit(child, how)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and how == "top":
            how = "function"
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, modules)
                if target is not None:
                    yield Edge(name, target, node.lineno, how)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                target = _resolve(f"{origin}.{alias.name}", modules) if alias.name != "*" else None
                target = target if target is not None and target != origin else _resolve(origin, modules)
                if target is not None:
                    yield Edge(name, target, node.lineno, how)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value.partition(":")[0]
            if text.startswith("evalspec") and text in modules:
                yield Edge(name, text, node.lineno, "dynamic")
        for child in ast.iter_child_nodes(node):
            yield from visit(child, how)

    yield from visit(tree, "top")


def import_graph() -> list[Edge]:
    """Every import edge between modules of ``evalspec/`` (self-references dropped)."""
    files = module_files()
    modules = set(files)
    return [e for name, path in files.items() for e in _imports(name, path, modules) if e.target != name]


def registered_kinds() -> list[str]:
    """The modules of ``KIND_MODULES`` in ``evalspec/analyses/registry.py``, read from its source."""
    tree = ast.parse((PACKAGE / "analyses" / "registry.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "KIND_MODULES" and isinstance(node.value, ast.Dict):
            return [ast.literal_eval(v) for v in node.value.values]
    raise AssertionError("evalspec/analyses/registry.py defines no KIND_MODULES dict")


#: A kind's report-section plots, ``evalspec/report/sections/<kind>.py``: in the outputs layer by their folder.
SECTION_PLOTS_PACKAGE = "evalspec.report.sections"


def layers() -> dict[str, tuple[str, ...]]:
    """:data:`LAYERS` with the registered kind modules in the kinds layer and the section plots in outputs."""
    out = dict(LAYERS)
    listed = {m for members in LAYERS.values() for m in members}
    out["kinds"] = LAYERS["kinds"] + tuple(m for m in registered_kinds() if m not in listed)
    out["outputs"] = LAYERS["outputs"] + tuple(
        m for m in sorted(module_files()) if m.startswith(SECTION_PLOTS_PACKAGE + ".") and m not in listed)
    return out


def layer_of() -> dict[str, int]:
    out: dict[str, int] = {}
    for rank, members in enumerate(layers().values()):
        for module in members:
            out[module] = rank
    return out


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a cycle path."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_cycle_path(graph, set(component)))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def _cycle_path(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """One cycle through the component's first module, found by breadth-first search."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, v, start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(component)


def violations() -> list[str]:
    """Every problem, in words: unplaced or stale table entries, upward edges, cycles."""
    files = module_files()
    ranks = layer_of()
    names = list(LAYERS)
    problems: list[str] = []
    listed = [m for members in LAYERS.values() for m in members]
    for module in registered_kinds():
        if module in listed and module not in LAYERS["kinds"]:
            problems.append(f"{module} is registered as an analysis kind but listed in another layer of LAYERS")
    for module in sorted({m for m in listed if listed.count(m) > 1}):
        problems.append(f"{module} is listed in more than one layer of LAYERS (tests/test_layers.py)")
    for module in sorted(set(files) - set(ranks)):
        problems.append(
            f"{module} ({files[module].relative_to(ROOT)}) is in no layer: add it to LAYERS in tests/test_layers.py "
            "under the layer it belongs to (docs/ARCHITECTURE.md, 'Layers'): the lowest layer whose modules it "
            "needs, so that nothing below imports it")
    for module in sorted(set(ranks) - set(files)):
        problems.append(f"{module} is listed in LAYERS (tests/test_layers.py) but there is no such module: remove it")
    edges = import_graph()
    for e in edges:
        if e.source in ranks and e.target in ranks and ranks[e.target] > ranks[e.source]:
            problems.append(f"upward import: {e} - layer {names[ranks[e.source]]!r} may not import "
                            f"layer {names[ranks[e.target]]!r}")
    for cycle in cycles(edges):
        problems.append("import cycle: " + " -> ".join(cycle))
    return problems


def test_every_module_is_placed_and_imports_only_downward_without_cycles() -> None:
    problems = violations()
    assert not problems, f"{len(problems)} layer problem(s):\n" + "\n".join(problems)


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The graph builder finds imports at every level and in module strings (a self-test)."""
    source = (
        '"""Doc naming evalspec.cli, which is no import."""\n'
        "from typing import TYPE_CHECKING\n"
        "import evalspec.errors\n"
        "if TYPE_CHECKING:\n"
        "    from evalspec.plan import model\n"
        "def f():\n"
        "    from evalspec.analyses.context import AnalysisContext\n"
        "    from . import limits\n"
        "TABLE = {'x': 'evalspec.run', 'y': 'evalspec.commands.run:run'}\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    modules = set(module_files()) | {"evalspec.probe"}
    got = {(e.target, e.how) for e in _imports("evalspec.probe", path, modules)}
    assert got == {
        ("evalspec.errors", "top"),
        ("evalspec.plan.model", "type-checking"),
        ("evalspec.analyses.context", "function"),
        ("evalspec.limits", "function"),
        ("evalspec.run", "dynamic"),
        ("evalspec.commands.run", "dynamic"),
    }


def test_cycles_are_named() -> None:
    edges = [Edge("a", "b", 1, "top"), Edge("b", "c", 1, "function"), Edge("c", "a", 1, "top"),
             Edge("c", "d", 1, "top")]
    assert cycles(edges) == [["a", "b", "c", "a"]]


if __name__ == "__main__":
    for problem in violations():
        print(problem)
