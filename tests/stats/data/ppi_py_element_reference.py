"""Writes ppi_py_element_reference.json with the authors' ppi_py (0.2.3, installed in a side venv):

    python -m venv /tmp/ppivenv && /tmp/ppivenv/bin/pip install ppi-python
    /tmp/ppivenv/bin/python tests/stats/data/ppi_py_element_reference.py > tests/stats/data/ppi_py_element_reference.json

Two candidates' pass rates as one two-dimensional mean: per-coordinate lambda (tuned,
``lam_optim_mode="element"``, and fixed at [0.3, 0.8]); and scalar PPI++ on the difference.
"""

import json

import numpy as np
import ppi_py

rng = np.random.default_rng(42)
n, N = 150, 1200
y = rng.binomial(1, [0.55, 0.7], (n + N, 2)).astype(float)
f = np.where(rng.random((n + N, 2)) < [0.85, 0.75], y, 1 - y)
lab = np.zeros(n + N, bool)
lab[:n] = True
out = {}
for lam in (None, [0.3, 0.8]):
    kw = {"lam": np.array(lam)} if lam is not None else {"lam_optim_mode": "element"}
    lo, hi = ppi_py.ppi_mean_ci(y[lab], f[lab], f[~lab], alpha=0.05, **kw)
    est = ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[~lab], **kw)
    out[str(lam)] = {"low": np.ravel(lo).tolist(), "high": np.ravel(hi).tolist(), "est": np.ravel(est).tolist()}
lo, hi = ppi_py.ppi_mean_ci(y[lab, 0] - y[lab, 1], f[lab, 0] - f[lab, 1], f[~lab, 0] - f[~lab, 1], alpha=0.05)
out["diff_tuned"] = {"low": float(np.ravel(lo)[0]), "high": float(np.ravel(hi)[0])}
print(json.dumps(out))
