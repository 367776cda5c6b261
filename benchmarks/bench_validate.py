"""Wall time of `evalspec validate` over the example plans, side by side with bare interpreter starts.

Run:  .venv/bin/python benchmarks/bench_validate.py [--repeat N]

Each command runs N times in a fresh process; the minimum and median wall times are
printed with their ratio to the baselines:

* ``python -c "import yaml"``: the floor of any Python YAML tool;
* ``python -c "import pydantic, yaml, click"``: the libraries validate cannot avoid;
* ``check-jsonschema``-style alternative: ``python -c "import jsonschema, yaml; ..."``
  validating the examples against schemas/plan.schema.json (what an editor or a
  generic CI step would do; it checks fields, not cross-field rules, and gives no lines).

Target (issue 2): `evalspec validate` on the examples under 0.5 s on a 2-core machine.
The minimum is the figure to compare: the median shows noise from other work on the machine.
Bytecode caching is switched on for the measured processes (an installed package has its
``.pyc`` files; ``PYTHONDONTWRITEBYTECODE`` would make every run recompile evalspec from
source): caches go to a temporary ``PYTHONPYCACHEPREFIX``, and one warm-up run fills them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
PLANS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("plan.yaml"))
JSONSCHEMA = (
    "import json, sys, yaml, jsonschema; "
    "s = json.load(open('schemas/plan.schema.json')); v = jsonschema.Draft202012Validator(s); "
    "[list(v.iter_errors(json.loads(json.dumps(yaml.safe_load(open(p)), default=str)))) for p in sys.argv[1:]]"
)


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="evalspec-bench-pycache-")


def _time(cmd: list[str], repeat: int) -> list[float]:
    subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False, env=_ENV)  # warm-up: fills the caches
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False, env=_ENV)
        out.append(time.perf_counter() - t0)
        if proc.returncode not in (0,):
            raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    evalspec = str(Path(PY).with_name("evalspec"))
    rows = [
        ("python -c 'import yaml'", [PY, "-c", "import yaml"]),
        ("python -c 'import pydantic, yaml, click'", [PY, "-c", "import pydantic, yaml, click"]),
        ("jsonschema over the examples (fields only)", [PY, "-c", JSONSCHEMA, *PLANS]),
        (f"evalspec validate ({len(PLANS)} examples)", [evalspec, "validate", "-q", *PLANS]),
        ("evalspec validate (1 example)", [evalspec, "validate", "-q", PLANS[0]]),
    ]
    results = [(name, _time(cmd, args.repeat)) for name, cmd in rows]
    base = min(results[0][1])
    print(f"{'command':<46} {'min s':>7} {'median s':>9} {'min / import yaml':>18}")
    for name, times in results:
        print(f"{name:<46} {min(times):7.3f} {statistics.median(times):9.3f} {min(times) / base:18.1f}")
    ours = min(results[3][1])
    print(f"\nevalspec validate over the examples: {ours:.3f} s (target < 0.5 s): {'OK' if ours < 0.5 else 'OVER'}")
    print(f"ratio to the jsonschema alternative: {ours / min(results[2][1]):.2f}")


if __name__ == "__main__":
    main()
