"""Candidates named from any log field (``data.candidate_from``), and suggestions that are valid YAML.

The inspect_ai logs in ``fixtures/inspect_ai/passk/`` are two runs of one model
(``mockllm/model``) that differ only in the task argument ``prompt`` (terse / verbose),
written by inspect_ai 0.3.285: the A/B test of two system prompts.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_helpers import FIX, LMEVAL, promptfoo_doc, stage, write_plan  # noqa: E402

from evalspec.cli import cli  # noqa: E402
from evalspec.errors import InputError  # noqa: E402
from evalspec.results.adapters import Options, read_logs  # noqa: E402
from evalspec.results.hints import shortened, yaml_flow, yaml_flow_list, yaml_scalar  # noqa: E402

pytest.importorskip("zstandard")
PASSK = FIX / "inspect_ai" / "passk"
TERSE = PASSK / "mockllm-terse_p0.75_epochs5_pass-at-2_pass-k-2.eval"
VERBOSE = PASSK / "mockllm-verbose_p0.45_epochs5_pass-at-2_pass-k-2.eval"
ENV = {"EVALSPEC_NO_REPORT": "1", "SOURCE_DATE_EPOCH": "1796126400"}


def _run(plan: Path) -> object:
    return CliRunner().invoke(cli, ["run", str(plan), "--out", str(plan.parent / "out")], env=ENV)


def test_two_prompts_on_one_model_name_the_cause(tmp_path: Path) -> None:
    stage(tmp_path, TERSE, VERBOSE)
    plan = write_plan(tmp_path, f'  results: ["{TERSE.name}", "{VERBOSE.name}"]\n  format: inspect',
                      candidates=("terse", "verbose"), repeats=5)
    res = _run(plan)
    assert res.exit_code == 2, res.output
    assert "2 logs of mockllm/model differ only in task_args.prompt" in res.output
    assert "set data.candidate_from: [task_args.prompt]" in res.output
    assert "duplicate (candidate, case, repeat)" not in res.output  # said once, with the cause


def test_candidate_from_names_them_and_keeps_the_tools_number(tmp_path: Path) -> None:
    stage(tmp_path, TERSE, VERBOSE)
    plan = write_plan(tmp_path, f'  results: ["{TERSE.name}", "{VERBOSE.name}"]\n  format: inspect\n'
                      "  candidate_from: [task_args.prompt]", candidates=("terse", "verbose"), repeats=5)
    res = _run(plan)
    assert res.exit_code == 0, res.output
    claim = json.loads((tmp_path / "out" / "claim.json").read_text(encoding="utf-8"))
    provs = {f["provenance"]["candidate"]: f["provenance"] for f in claim["data"]["files"]}
    assert set(provs) == {"terse", "verbose"}
    assert provs["terse"]["log_model"] == "mockllm/model"
    assert provs["terse"]["reported"]["value"] == pytest.approx(0.74)  # inspect's own accuracy, still in the claim
    assert provs["terse"]["candidate_fields"]["task_args.prompt"] == "terse"


def test_composed_names_and_a_missing_field() -> None:
    (lf,) = read_logs([TERSE], "inspect", Options(candidate_from=("model", "task_args.prompt")))
    assert set(lf.columns["candidate"]) == {"mockllm/model|terse"}
    (lf,) = read_logs([TERSE], "inspect", Options(candidate_from=("solver",)))
    assert set(lf.columns["candidate"]) == {"system_message+generate"}
    with pytest.raises(InputError, match="task_args.nope") as info:
        read_logs([TERSE], "inspect", Options(candidate_from=("task_args.nope",)))
    assert TERSE.name in info.value.render() and "task_args.prompt" in info.value.render()  # the fields it has


def test_lm_eval_candidates_from_model_name_or_model_args() -> None:
    res = next((LMEVAL / "coinflip-strong").glob("results_*.json"))
    (lf,) = read_logs([res], "lm_eval", Options(task="evalspec_mc"))
    assert set(lf.columns["candidate"]) == {"coinflip-strong"}  # model_name, never the folder
    (lf,) = read_logs([res], "lm_eval", Options(task="evalspec_mc", candidate_from=("model_type", "model_args.p")))
    assert set(lf.columns["candidate"]) == {"coinflip|0.8"}


def test_lm_eval_name_ignores_the_output_folder(tmp_path: Path) -> None:
    """A run whose results hold no model_name: the model type and its arguments, not the folder it sits in."""
    import shutil

    dst = tmp_path / "kb5rz5z7"
    shutil.copytree(LMEVAL / "coinflip-strong", dst)
    rp = next(dst.glob("results_*.json"))
    doc = json.loads(rp.read_text())
    doc.pop("model_name", None)
    doc["model_name_sanitized"] = "kb5rz5z7"
    doc["config"]["model_args"] = {}
    doc["config"]["model"] = "dummy"
    rp.write_text(json.dumps(doc))
    (lf,) = read_logs([rp], "lm_eval", Options(task="evalspec_mc"))
    assert set(lf.columns["candidate"]) == {"dummy"}


def _two_file_prompts() -> dict:
    doc = promptfoo_doc(n_tests=3, repeat=1, providers=(("mock", 0.8),))
    texts = {"terse": "prompt_terse.txt: System: Answer with the number only.\nUser: {{question}}",
             "verbose": "prompt_verbose.txt: System: Think it through: {steps}, \"then\" answer.\nUser: {{question}}"}
    extra = []
    for r in doc["results"]["results"]:
        r["prompt"] = {"raw": "x", "label": texts["terse"]}
        r2 = json.loads(json.dumps(r))
        r2["prompt"] = {"raw": "y", "label": texts["verbose"]}
        r2["promptIdx"] = 1
        extra.append(r2)
    doc["results"]["results"] += extra
    return doc


def test_promptfoo_long_names_are_shortened_with_a_key_and_the_yaml_loads(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_two_file_prompts()))
    plan = write_plan(tmp_path, "  results: [results.json]\n  format: promptfoo", candidates=("terse", "verbose"),
                      repeats=1, cluster=None)
    res = _run(plan)
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "name 1 in full" in text and "candidate_from: [provider, prompt_file]" in text
    line = re.search(r"data\.candidate_names: (\{.*?\})(;|$)", res.output.replace("\n", " ")).group(1)
    loaded = yaml.safe_load(line)
    assert set(loaded) == {"mock|" + lbl for lbl in (
        "prompt_terse.txt: System: Answer with the number only.\nUser: {{question}}",
        "prompt_verbose.txt: System: Think it through: {steps}, \"then\" answer.\nUser: {{question}}")}
    # the short way: name them by provider and prompt file
    (lf,) = read_logs([path], "promptfoo", Options(candidate_from=("prompt_file",)))
    assert set(lf.columns["candidate"]) == {"prompt_terse.txt", "prompt_verbose.txt"}


_NAMES = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(list(':{}[],"\'\n\t#&*!|>%@`-? ')),
                 min_size=1, max_size=40)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(names=st.lists(_NAMES, min_size=1, max_size=4, unique=True), key=st.sampled_from(["strong", "weak", "a_b"]))
def test_every_suggested_yaml_line_loads_back(names: list[str], key: str) -> None:
    line = yaml_flow({n: key for n in names})
    assert "\n" not in line
    assert yaml.safe_load(line) == {n: key for n in names}
    assert yaml.safe_load(f"data:\n  candidate_names: {line}\n") == {"data": {"candidate_names": {n: key for n in names}}}
    assert yaml.safe_load(yaml_flow_list(names)) == names
    for n in names:
        assert yaml.safe_load(f"x: {yaml_scalar(n)}") == {"x": n}
        assert "\n" not in shortened(n) and len(shortened(n)) <= 48


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(label=_NAMES)
def test_fuzz_promptfoo_provider_names_in_the_hint(tmp_path_factory: pytest.TempPathFactory, label: str) -> None:
    """Whatever the provider is called, the mapping the refusal suggests is valid YAML naming it."""
    folder = tmp_path_factory.mktemp("pf")
    doc = promptfoo_doc(n_tests=3, repeat=1, providers=((label, 0.8), ("weak", 0.5)))
    (folder / "r.json").write_text(json.dumps(doc))
    plan = write_plan(folder, "  results: [r.json]\n  format: promptfoo", repeats=1, cluster=None)
    from evalspec.plan.load import load_plan
    from evalspec.results import adapters

    loaded = load_plan(plan)
    raws = read_logs([folder / "r.json"], "promptfoo", Options())
    try:
        adapters.apply_plan(raws, loaded.plan)
    except InputError as exc:
        for d in exc.diagnostics:
            m = re.search(r"data\.candidate_names: (\{.*\})", d.hint or "")
            if m:
                got = yaml.safe_load(m.group(1).split("; shorter names")[0])
                assert label.strip() in got or label in got
