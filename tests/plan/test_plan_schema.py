"""The checked-in JSON Schema equals the one generated from the models; `evalspec schema` prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalspec.cli import cli
from evalspec.plan.schema import plan_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "schemas" / "plan.schema.json"


def test_schema_in_sync() -> None:
    assert CHECKED_IN.read_text(encoding="utf-8") == schema_text(), (
        "schemas/plan.schema.json is out of date with the plan models; regenerate it with\n"
        "  .venv/bin/evalspec schema --output schemas/plan.schema.json\nand commit the result"
    )


def test_schema_command_prints_it() -> None:
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0
    assert result.stdout == schema_text()


def test_schema_check_option(tmp_path: Path) -> None:
    good = tmp_path / "s.json"
    good.write_text(schema_text(), encoding="utf-8")
    assert CliRunner().invoke(cli, ["schema", "--check", str(good)]).exit_code == 0
    good.write_text("{}", encoding="utf-8")
    stale = CliRunner().invoke(cli, ["schema", "--check", str(good)])
    assert stale.exit_code == 1 and "out of date" in stale.output
    out = tmp_path / "out.json"
    assert CliRunner().invoke(cli, ["schema", "--output", str(out)]).exit_code == 0
    assert out.read_text(encoding="utf-8") == schema_text()


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = plan_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    kinds = {m["properties"]["kind"]["const"] for m in schema["$defs"].values()
             if "kind" in m.get("properties", {}) and "const" in m["properties"]["kind"]}
    from evalspec.analyses.params import PARAMS

    assert kinds == set(PARAMS)


def test_schema_rejects_what_validate_rejects() -> None:
    """Field-level mistakes are caught by editors too (cross-field rules are not in the schema)."""
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    validator = jsonschema.Draft202012Validator(plan_schema())
    base = yaml.safe_load((ROOT / "examples" / "policy-migration" / "plan.yaml").read_text())
    base = json.loads(json.dumps(base, default=str))
    assert not list(validator.iter_errors(base))
    for mutate in (
        lambda d: d.update(titel="x"),
        lambda d: d["analyses"][0].update(method="wilsn"),
        lambda d: d["analyses"][0].update(kind="proportions"),
        lambda d: d["decision"].update(confidence_level=95),
        lambda d: d.pop("units"),
    ):
        data = json.loads(json.dumps(base))
        mutate(data)
        assert list(validator.iter_errors(data)), mutate
