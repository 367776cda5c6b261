"""Analyses named as in YAML.

Two registries, kept apart so that validating a plan stays cheap:

* :mod:`evalspec.analyses.params` - the *parameter models* of every analysis kind
  (pydantic only). The plan model builds its ``analyses`` union from them.
* :mod:`evalspec.analyses.registry` - the *implementations*, registered with
  ``@analysis("paired_difference")`` in modules that import :mod:`evalspec.stats`.
  :func:`evalspec.analyses.registry.load_implementations` imports them at run time.
"""

from evalspec.analyses.params import PARAMS, known_kinds

__all__ = ["PARAMS", "known_kinds"]
