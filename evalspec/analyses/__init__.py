"""Analysis kinds: one module per kind, registered in :mod:`evalspec.analyses.registry`.

* :mod:`evalspec.analyses.contract` - what a kind declares (params, typed result,
  ``compute -> Outcome`` with caveats, seeds and offers to the decision).
* :mod:`evalspec.analyses.registry` - ``KIND_MODULES``: one line per kind.
* :mod:`evalspec.analyses.context` - what ``compute`` receives.

Importing this package is light (pydantic only): ``evalspec validate`` builds the plan's
``analyses`` union from the kinds' parameter models.
"""

from evalspec.analyses.params import PARAMS, known_kinds

__all__ = ["PARAMS", "known_kinds"]
