"""evalspec: preregistered evaluation plans, honest uncertainty, auditable decisions.

The package is layered in one direction, bottom to top (``docs/ARCHITECTURE.md``,
"Layers"; ``tests/test_layers.py`` fails on an upward import or a cycle)::

    leaves (stats, contract) < kinds < plan < data < runtime < decision < claim < pipeline
    < outputs (report, audit) < entry (cli, commands)

Importing :mod:`evalspec` is cheap on purpose: heavy modules (scipy, statsmodels,
weasyprint, pymc, torch) are imported only by the step that needs them, so that
``evalspec validate`` stays fast in a pre-commit hook.
"""

from evalspec._version import __version__

__all__ = ["__version__"]
