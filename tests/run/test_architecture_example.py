"""docs/ARCHITECTURE.md's "Adding an analysis" example works as written.

The module, the section template and the registry line are taken from the document's code
blocks, installed in a temporary folder (the registry line added to ``KIND_MODULES``, the
template to a copy of the templates folder) and run through the pipeline and the report in
a fresh process, so the worked example cannot drift from the contract.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def _block(name: str) -> str:
    m = re.search(rf"<!-- example:{name} -->\n```\w*\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert m, f"docs/ARCHITECTURE.md lacks the example:{name} code block"
    return m.group(1)


DRIVER = """
import json, sys
from pathlib import Path
tmp = Path(sys.argv[1])
sys.path.insert(0, str(tmp))
import evalspec._resources as resources
resources.templates_dir = lambda: tmp / "templates"
from evalspec.analyses import registry
line = (tmp / "registry_line.txt").read_text().strip().rstrip(",")
key, module = [part.strip().strip('"') for part in line.split(":")]
registry.KIND_MODULES[key] = module.replace("evalspec.analyses.", "")
from evalspec.claim import dumps
from evalspec.report.load import validate_claim
from evalspec.report.render import render_html
from evalspec.run import run_plan
claim = json.loads(dumps(run_plan(tmp / "study" / "plan.yaml")))
html = render_html(validate_claim(claim), with_plots=False)
from evalspec.plan import load_plan
from evalspec.plan.rules import warnings
warned = [i.message for i in warnings(load_plan(tmp / "study" / "plan.yaml").plan)]
print(json.dumps({"claim": claim, "html": html, "warnings": warned}))
"""


def test_the_documented_toy_kind_runs_through_pipeline_and_report(tmp_path: Path) -> None:
    registry_line = _block("registry")
    module_name = registry_line.split(":")[1].strip().strip('",').replace("evalspec.analyses.", "")
    (tmp_path / f"{module_name}.py").write_text(_block("module"), encoding="utf-8")
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    (tmp_path / "templates" / "sections" / "pass_count.html.j2").write_text(_block("template"), encoding="utf-8")
    (tmp_path / "registry_line.txt").write_text(registry_line, encoding="utf-8")
    study = tmp_path / "study"
    shutil.copytree(ROOT / "examples" / "policy-migration", study,
                    ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock*"))
    plan = (study / "plan.yaml").read_text(encoding="utf-8")
    plan = re.sub(r"\nanalyses:\n", "\nanalyses:\n  - {kind: pass_count, minimum_cases: 500}\n", plan, count=1)
    (study / "plan.yaml").write_text(plan, encoding="utf-8")

    proc = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=tmp_path,
                          env={"SOURCE_DATE_EPOCH": "1796299200", "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
                               "PYTHONPATH": str(ROOT)})  # this checkout, not an installed copy
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    record = next(a for a in out["claim"]["analyses"] if a["kind"] == "pass_count")
    # policy-migration: A passes 82 of 100 cases, B 78 ("Repeat AI evaluations and report uncertainty honestly")
    assert record["result"] == {"passed": {"A": 82, "B": 78}, "cases": {"A": 100, "B": 100}}
    assert record["params"]["minimum_cases"] == 500
    assert [c["code"] for c in record["caveats"]] == ["few_cases", "few_cases"]
    assert "exceeds stopping.max_units (400)" in out["warnings"]  # the kind's own validate-time rule
    html = out["html"]
    assert "Cases passed" in html and "A has only 100 cases." in html
    section = html.split(f'id="analysis-{record["index"]}"')[1].split("</section>")[0]
    assert "<td>A</td><td class=\"num\">82</td>" in section.replace("\n", "").replace("    ", "")
