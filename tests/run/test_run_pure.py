"""The claim is typed and generated; a run is a pure function of plan, data and seeds.

* ``schemas/claim.schema.json`` equals the schema generated from the claim model
  (``evalspec schema --claim``), and every example claim validates against both.
* Running the pipeline twice in one process, and once in a worker process, gives the same
  claim bytes (no module-level cache or state survives between runs).
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from evalspec.claim import dumps
from evalspec.claim_model import CLAIM_FORMAT, claim_model, claim_schema_text
from evalspec.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "schemas" / "claim.schema.json"


def _copy(example: str, folder: Path) -> Path:
    shutil.copytree(ROOT / "examples" / example, folder / example,
                    ignore=shutil.ignore_patterns("out", ".evalspec", "*.lock*"))
    return folder / example / "plan.yaml"


def _claim_bytes(plan: str) -> str:
    """One run in whatever process calls it (module-level so a worker process can run it)."""
    os.environ["SOURCE_DATE_EPOCH"] = "1796299200"
    from evalspec.run import run_plan

    return dumps(run_plan(plan))


def test_checked_in_claim_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == claim_schema_text(), (
        "schemas/claim.schema.json is out of date; regenerate: evalspec schema --claim --output schemas/claim.schema.json")


def test_schema_command_prints_the_claim_schema(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["schema", "--claim"])
    assert res.exit_code == 0
    assert res.output == claim_schema_text()
    assert CliRunner().invoke(cli, ["schema", "--claim", "--check", str(SCHEMA_FILE)]).exit_code == 0
    stale = tmp_path / "old.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["schema", "--claim", "--check", str(stale)]).exit_code == 1


@pytest.mark.parametrize("example", ["policy-migration", "support-triage", "repeated-trials"])
def test_pipeline_twice_and_in_a_worker_process_gives_identical_claims(tmp_path: Path, example: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796299200")
    plan = str(_copy(example, tmp_path))
    first = _claim_bytes(plan)
    second = _claim_bytes(plan)
    assert first == second
    with ProcessPoolExecutor(max_workers=1) as pool:
        in_worker = pool.submit(_claim_bytes, plan).result(timeout=300)
    assert in_worker == first
    claim = json.loads(first)
    assert claim["claim_format"] == CLAIM_FORMAT == 2
    jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))).validate(claim)
    assert claim_model().model_validate_json(first, strict=True).model_dump(mode="json", exclude={"integrity"}) == claim
    for record in claim["analyses"]:
        assert set(record) == {"index", "kind", "label", "params", "result", "caveats", "seeds", "offers"}
    # the claim's seeds are exactly those the analyses report using (Outcome.seeds), in order
    assert [(s["analysis"], s["seed"]) for s in claim["seeds"]["used"]] == [
        (a["index"], s["seed"]) for a in claim["analyses"] for s in a["seeds"]]
    if example == "policy-migration":  # its cluster bootstrap (seed 7) draws random numbers
        assert [(s["kind"], s["seed"]) for s in claim["seeds"]["used"]] == [("paired_difference", 7)]


def test_seeds_come_from_outcomes_and_unused_declared_seeds_are_named(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796299200")
    plan = _copy("support-triage", tmp_path)
    claim = json.loads(_claim_bytes(str(plan)))
    used = [(s["analysis"], s["seed"]) for s in claim["seeds"]["used"]]
    from_records = [(a["index"], s["seed"]) for a in claim["analyses"] for s in a["seeds"]]
    assert used == from_records
    declared = {(a["index"], a["params"].get("seed")) for a in claim["analyses"] if "seed" in a["params"]}
    for s in claim["seeds"]["declared_unused"]:
        assert (s["analysis"], s["seed"]) in declared and (s["analysis"], s["seed"]) not in used
    from evalspec.report.render import render_html

    html = render_html(claim, with_plots=False)
    seeds_row = html.split("<dt>Seeds</dt>")[1].split("</dd>")[0]
    assert claim["seeds"]["declared_unused"], "support-triage declares seed 11 for a method that draws none"
    assert "none used" not in seeds_row
    for s in claim["seeds"]["declared_unused"]:
        assert f"analysis {s['analysis']} ({s['kind']}) {s['key']} {s['seed']}" in seeds_row
    assert "declared in the plan and not used" in seeds_row


def test_claim_schema_command_imports_no_heavy_library() -> None:
    import subprocess
    import sys

    heavy = ["scipy", "statsmodels", "pymc", "arviz", "torch", "transformers", "weasyprint", "matplotlib", "pandas"]
    probe = ("import sys\nfrom evalspec.cli import main\ntry:\n    main(['schema', '--claim'])\nexcept SystemExit:\n"
             f"    pass\nprint(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert json.loads(proc.stdout)["title"] == "evalspec claim"
