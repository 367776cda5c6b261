"""evalspec: preregistered evaluation plans, honest uncertainty, auditable decisions.

The package is layered in one direction (see ``docs/ARCHITECTURE.md``)::

    plan -> results -> attempts -> analyses -> decision -> claim -> report / audit

Importing :mod:`evalspec` is cheap on purpose: heavy modules (scipy, statsmodels,
weasyprint, pymc, torch) are imported only by the step that needs them, so that
``evalspec validate`` stays fast in a pre-commit hook.
"""

from evalspec._version import __version__

__all__ = ["__version__"]
