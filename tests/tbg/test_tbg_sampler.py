"""The distinct-prefix sampler with a tiny random-weight model (torch; skips without it).

* It gives the same token ids as a plain ``model.generate`` per (temperature, sample) with
  the same uniforms (the sampling rule is shared; the forward passes are not).
* A (prompt, temperature) has its own seed: the samples do not change with the grid or K.
* Recovery: the tiny model (sharpened final norm) sampled at a hidden T in {0.03, 0.07, 0.15,
  0.3} as the system under test; with 30 prompts, K = 16 and 8 new tokens, T_hat lands within
  one grid step for every metric (measured; asserted).
* Resume: a sampling run killed midway and rerun gives the same files as an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evalspec.cli import cli
from evalspec.tbg.metrics import METRICS

WORDS = ("the of and to in is you that it he was for on are as with his they at be this have from or one had by "
         "word but not what all were we when your can said there use an each which she do how their if will up "
         "other about out many then them these so some her would make like him into time has look two more").split()


def _prompts(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    return [(f"p{i}", " ".join(rng.choice(WORDS, size=int(rng.integers(3, 9))))) for i in range(n)]


def _write_prompts(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": pid, "text": text}) + "\n" for pid, text in _prompts(n)))
    return path


def _sample(model, tok, pid, text, temps, k, n, seed=0):
    from evalspec.tbg.sampler import sample_prompt, temperature_uniforms

    ids = tok(text)["input_ids"]
    unif = {t: temperature_uniforms(seed, pid, t, k, n) for t in temps}
    return ids, unif, sample_prompt(model, ids, temps, unif, n, [tok.eos_token_id])


def test_same_tokens_as_plain_generate(tiny):
    from evalspec.tbg.sampler import generate_plain

    model, tok = tiny
    temps = [0.0, 0.05, 0.3, 1.0]
    checked = 0
    for pid, text in _prompts(3):
        ids, unif, res = _sample(model, tok, pid, text, temps, 4, 8)
        for t in temps:
            for j in range(4):
                toks, finish = generate_plain(model, ids, t, unif[t][j], 8, [tok.eos_token_id], tok.pad_token_id)
                assert toks == res.tokens[t][j] and finish == res.finish[t][j], (pid, t, j)
                checked += 1
        assert res.forward_rows < len(temps) * 4 * 8  # distinct prefixes only: fewer rows than samples x steps
    assert checked == 48


def test_samples_do_not_depend_on_grid_or_k(tiny):
    model, tok = tiny
    pid, text = _prompts(1)[0]
    _, _, a = _sample(model, tok, pid, text, [0.05, 1.0], 4, 8)
    _, _, b = _sample(model, tok, pid, text, [1.0, 0.3, 0.07], 8, 8)
    assert a.tokens[1.0] == b.tokens[1.0][:4]
    assert len(set(map(tuple, a.tokens[1.0]))) > 1  # a temperature where the samples differ
    _, _, c = _sample(model, tok, pid, text, [1.0], 4, 8, seed=1)
    assert c.tokens[1.0] != a.tokens[1.0]  # another seed, other samples


def test_temperature_changes_the_spread(tiny):
    """The sharpened tiny model is usable: spread grows with T from all-identical at T = 0."""
    from evalspec.tbg.metrics import metric_value

    model, tok = tiny
    temps = [0.0, 0.03, 0.15, 0.5]
    mean_exact = {t: [] for t in temps}
    for pid, text in _prompts(12):
        _, _, res = _sample(model, tok, pid, text, temps, 16, 8)
        for t in temps:
            mean_exact[t].append(metric_value("exact_match", res.tokens[t]))
    means = [float(np.mean(mean_exact[t])) for t in temps]
    assert means[0] == 1.0
    assert means[0] >= means[1] > means[2] > means[3]


@pytest.fixture(scope="module")
def tiny_runs(tiny):
    model, tok = tiny
    grid = [0.0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5]
    hidden = [0.03, 0.07, 0.15, 0.3]
    ref = {t: {} for t in grid}
    sut = {t: {} for t in hidden}
    for pid, text in _prompts(30):
        _, _, r = _sample(model, tok, pid, text, grid, 16, 8, seed=0)
        _, _, s = _sample(model, tok, pid, text, hidden, 16, 8, seed=1)
        for t in grid:
            ref[t][pid] = r.tokens[t]
        for t in hidden:
            sut[t][pid] = s.tokens[t]
    return grid, ref, sut


@pytest.mark.parametrize("hidden", [0.03, 0.07, 0.15, 0.3])
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_tiny_model_recovers_hidden_temperature(tiny_runs, hidden, metric):
    from evalspec.tbg.estimate import estimate_from_answers

    grid, ref, sut = tiny_runs
    est = estimate_from_answers([("tiny", ref)], sut[hidden], metric=metric, resamples=200)
    i = grid.index(hidden)
    assert grid[i - 1] <= est.references[0].t_hat <= grid[i + 1], (est.references[0].t_hat, est.references[0].tied)
    assert est.references[0].interval[0] <= est.references[0].t_hat <= est.references[0].interval[1]


def _cli(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _shard_bodies(out: Path) -> dict[str, list[str]]:
    """Shard files without their trailer line (which records seconds)."""
    return {p.name: p.read_text().splitlines()[:-1] for p in sorted((out / "shards").glob("*.jsonl"))}


def test_cli_sample_and_estimate(tmp_path, torch_cpu):
    prompts = _write_prompts(tmp_path / "prompts.jsonl", 8)
    ref, sut = tmp_path / "ref", tmp_path / "sut"
    r = _cli("tbg", "sample", "--model", "tiny:0", "--prompts", str(prompts), "--temperatures", "0,0.05:0.15:0.05,0.3",
             "--samples", "8", "--max-new-tokens", "6", "--out", str(ref), "--threads", "1", "--quiet")
    assert r.exit_code == 0, r.output
    manifest = json.loads((ref / "manifest.json").read_text())
    assert manifest["settings"]["temperatures"] == [0.0, 0.05, 0.1, 0.15, 0.3]
    env = manifest["environment"]
    assert env["deterministic_algorithms"] is True and env["torch_threads"] == 1 and env["torch"]
    r = _cli("tbg", "sample", "--model", "tiny:0", "--prompts", str(prompts), "--temperatures", "0.1",
             "--samples", "12", "--max-new-tokens", "6", "--seed", "9", "--out", str(sut), "--threads", "1", "-q")
    assert r.exit_code == 0, r.output
    r = _cli("tbg", "estimate", "--reference", str(ref), "--target", str(sut), "--json", "--resamples", "200")
    assert r.exit_code == 0, r.output
    est = json.loads(r.output)
    assert est["k"] == 8 and est["prompts"] == 8
    (one,) = est["references"]
    assert one["name"] == "tiny:0" and one["t_hat"] in manifest["settings"]["temperatures"]
    assert one["interval"][0] <= one["t_hat"] <= one["interval"][1]
    assert est["t_bg"] == one["t_hat"]
    r = _cli("tbg", "estimate", "--reference", str(ref), "--target", str(sut))
    assert r.exit_code == 0 and "tiny:0: T_hat =" in r.output
    # an answers file in text form gives an estimate too (compared by decoded text)
    lines = []
    for shard in (sut / "shards").glob("*.jsonl"):
        for line in shard.read_text().splitlines()[:-1]:
            obj = json.loads(line)
            lines += [json.dumps({"prompt": obj["prompt"], "repeat": i, "answer": a}) for i, a in enumerate(obj["text"])]
    (tmp_path / "sut.jsonl").write_text("\n".join(lines) + "\n")
    r = _cli("tbg", "estimate", "--reference", str(ref), "--target", str(tmp_path / "sut.jsonl"), "--json",
             "--resamples", "200")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["units"] == "text"


def test_bad_inputs_are_located(tmp_path, torch_cpu):
    bad = tmp_path / "prompts.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    r = CliRunner().invoke(cli, ["tbg", "sample", "--model", "tiny", "--prompts", str(bad), "--out",
                                 str(tmp_path / "o")])
    assert r.exit_code == 2 and f"{bad}:2: id: 'a' already used at line 1" in r.output
    good = _write_prompts(tmp_path / "good.jsonl", 2)
    r = CliRunner().invoke(cli, ["tbg", "sample", "--model", "tiny", "--prompts", str(good), "--temperatures", "0,-1",
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "every temperature must be >= 0" in r.output
    r = CliRunner().invoke(cli, ["tbg", "sample", "--model", str(tmp_path / "nomodel"), "--prompts", str(good),
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no such file or directory" in r.output
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"prompt": "p0", "repeat": 0, "answer": "x"}\n{"prompt": "p0", "answer": "y"}\n')
    ref = tmp_path / "ref"
    assert _cli("tbg", "sample", "--model", "tiny", "--prompts", str(good), "--temperatures", "0", "--samples", "2",
                "--max-new-tokens", "2", "--out", str(ref), "-q").exit_code == 0
    r = CliRunner().invoke(cli, ["tbg", "estimate", "--reference", str(ref), "--target", str(answers)])
    assert r.exit_code == 2 and f"{answers}:2: repeat: missing" in r.output


def test_resume_after_kill_gives_the_same_outputs(tmp_path, torch_cpu):
    prompts = _write_prompts(tmp_path / "prompts.jsonl", 12)
    args = ["--model", "tiny:0", "--prompts", str(prompts), "--temperatures", "0,0.05,0.2,0.5,1.0", "--samples", "16",
            "--max-new-tokens", "16", "--prompt-chunk", "1", "--temperature-block", "5", "--threads", "1", "-q"]
    full, killed = tmp_path / "full", tmp_path / "killed"
    assert _cli("tbg", "sample", *args, "--out", str(full)).exit_code == 0
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "evalspec", "tbg", "sample", *args, "--out", str(killed)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        done = list((killed / "shards").glob("*.jsonl")) if (killed / "shards").is_dir() else []
        if len(done) >= 2:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    partial = len(list((killed / "shards").glob("*.jsonl")))
    assert 2 <= partial < 12, f"{partial} shards when killed: not midway"
    r = _cli("tbg", "sample", *args, "--out", str(killed))
    assert r.exit_code == 0
    assert f"({partial} already done, 12 in all)" in r.output
    assert _shard_bodies(killed) == _shard_bodies(full)
    assert len(_shard_bodies(full)) == 12
    # a rerun with other settings into the same folder is refused, not mixed in
    r = CliRunner().invoke(cli, ["tbg", "sample", *args[:-1], "--samples", "8", "--out", str(killed)])
    assert r.exit_code == 2 and "settings" in r.output and "use a new --out folder" in r.output


def test_saved_tiny_model_folder_loads_and_samples_the_same(tmp_path, torch_cpu):
    from evalspec.tbg.models import load_model, save_tiny_model

    folder = save_tiny_model(tmp_path / "tiny-model", seed=0)
    a = load_model(str(folder))
    b = load_model("tiny:0")
    pid, text = _prompts(1)[0]
    _, _, ra = _sample(a.model, a.tokenizer, pid, text, [0.0, 0.3], 4, 8)
    _, _, rb = _sample(b.model, b.tokenizer, pid, text, [0.0, 0.3], 4, 8)
    assert ra.tokens == rb.tokens
