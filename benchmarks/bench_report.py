"""Wall time and peak memory of rendering reports: HTML, PDF, and PDF without plots, side by side.

Each measurement runs in a fresh subprocess so its peak resident memory (``ru_maxrss``, which
includes WeasyPrint's C libraries, unlike ``tracemalloc``) belongs to that render alone. The
imports (jinja2, matplotlib, WeasyPrint) are timed separately; the render times are *after*
imports, the quantity the issue's target (PDF under 3 s) is about. Cases: every example's
claim (made in memory with ``evalspec.run.run_plan``), the hand-made fixtures of the report
tests, and a claim with 100,000 paired cases (20,000 disagreeing cases listed; the PDF caps its
appendix at 500 per list).

The whole ``evalspec report`` command (interpreter, imports, the PDF worker) is timed side by
side for HTML and PDF by ``benchmarks/bench_report_cli.py`` (the issue's pdf/html target).

Usage: ``python benchmarks/bench_report.py [--repeat N] [--quick]``. Prints one row per case
and the ratios PDF/HTML, PDF/PDF-without-plots and PDF/target, with the PDF's CPU time beside its
wall time (a shared machine inflates wall time; CPU time shows whether the renderer itself is
slow).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_PDF_S = 3.0

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import jinja2, matplotlib, weasyprint  # noqa: F401
from matplotlib.figure import Figure  # noqa: F401
from evalspec.report.render import render_html, render_pdf_bytes
t_imp = time.perf_counter() - t0
claim = json.load(open(sys.argv[1], encoding="utf-8"))
mode, repeat = sys.argv[2], int(sys.argv[3])
best = cpu_best = float("inf")
size = 0
for _ in range(repeat):
    t, c = time.perf_counter(), time.process_time()
    if mode == "html":
        out = render_html(claim, "screen").encode()
    elif mode == "pdf":
        out = render_pdf_bytes(render_html(claim, "print"))
    else:
        out = render_pdf_bytes(render_html(claim, "print", with_plots=False))
    best = min(best, time.perf_counter() - t)
    cpu_best = min(cpu_best, time.process_time() - c)
    size = len(out)
print(json.dumps({"imports": t_imp, "seconds": best, "cpu": cpu_best, "bytes": size,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _claims(quick: bool) -> dict[str, dict]:
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    from report_claims import load_fixture, long_claim

    out: dict[str, dict] = {}
    try:
        from evalspec.run import run_plan

        for plan in sorted((ROOT / "examples").glob("*/plan.yaml")):
            out[f"example:{plan.parent.name}"] = json.loads(json.dumps(run_plan(str(plan), command=["bench"])))
    except Exception as exc:  # noqa: BLE001 - the benchmark still measures the fixtures
        print(f"(examples skipped: {type(exc).__name__}: {exc})", file=sys.stderr)
    out["fixture:superiority"] = load_fixture("superiority")
    out["fixture:single_candidate"] = load_fixture("single_candidate")
    if not quick:
        out["long:100000 cases"] = long_claim(100_000, n_clusters=2_000)
    return out


def _measure(path: Path, mode: str, repeat: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), mode, str(repeat)], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="renders per measurement (best is kept)")
    parser.add_argument("--quick", action="store_true", help="skip the 100,000-case claim")
    args = parser.parse_args()
    claims = _claims(args.quick)
    print(f"{'case':26} {'imports':>8} {'html s':>7} {'pdf s':>7} {'pdf cpu':>7} {'pdf-noplot':>10} "
          f"{'pdf/html':>8} {'pdf/noplot':>10} {'pdf/3s':>7} {'html MiB':>9} {'pdf MiB':>8} {'html KB':>8} {'pdf KB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, claim in claims.items():
            path = Path(tmp) / "claim.json"
            path.write_text(json.dumps(claim), encoding="utf-8")
            rep = 1 if name.startswith("long") else args.repeat
            html, pdf, bare = (_measure(path, m, rep) for m in ("html", "pdf", "pdf-noplot"))
            print(f"{name:26} {pdf['imports']:8.2f} {html['seconds']:7.2f} {pdf['seconds']:7.2f} {pdf['cpu']:7.2f} "
                  f"{bare['seconds']:10.2f} {pdf['seconds'] / html['seconds']:8.1f} "
                  f"{pdf['seconds'] / bare['seconds']:10.2f} {pdf['seconds'] / TARGET_PDF_S:7.2f} "
                  f"{html['peak_mib']:9.0f} {pdf['peak_mib']:8.0f} {html['bytes'] / 1024:8.0f} "
                  f"{pdf['bytes'] / 1024:7.0f}", flush=True)
    print(f"\npdf/3s < 1 meets the target (PDF under {TARGET_PDF_S:g} s after imports). 'pdf cpu' is the\n"
          "process CPU time of the same render: on a shared machine it is the figure that does not depend\n"
          "on what else runs. Peak MiB is the child's maximum RSS and includes the imports (~200 MiB).")


if __name__ == "__main__":
    main()
