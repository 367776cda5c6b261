"""evalspec.stats: pure numeric kernels (numpy/scipy) behind every interval and test.

No plan objects, no I/O: functions of numbers and arrays returning small frozen result
objects (``estimate``, ``low``, ``high``, ``interval``, ``method``, ``confidence_level``,
``n``, ... and ``to_dict()`` for the claim record). Invalid arguments raise
:class:`InvalidArgument` (a ``ValueError``) naming the argument and the value.

Submodules load when a name is first used (a module ``__getattr__``, as scipy does), so
``from evalspec.stats.power import zero_failure_cases`` or ``evalspec.stats.wilson_limits``
loads only what that kernel needs: :mod:`evalspec.stats.power` and
:mod:`evalspec.stats.sequential` need numpy only, the interval kernels ``scipy.special``;
nothing here imports ``scipy.stats`` or ``scipy.optimize`` (about 0.4 s). The plan layer
uses kernels without loading scipy (``tests/stats/test_stats_lazy.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the submodule that defines it.
_HOMES: dict[str, str] = {
    "BootstrapResult": "evalspec.stats._results",
    "ClusteredMcNemarResult": "evalspec.stats._results",
    "ClusteredMeanResult": "evalspec.stats._results",
    "ClusteredProportionResult": "evalspec.stats._results",
    "EquivalenceResult": "evalspec.stats._results",
    "HDIResult": "evalspec.stats._results",
    "Interval": "evalspec.stats._results",
    "IntervalResult": "evalspec.stats._results",
    "KSResult": "evalspec.stats._results",
    "McNemarResult": "evalspec.stats._results",
    "NonInferiorityResult": "evalspec.stats._results",
    "PairedDifferenceResult": "evalspec.stats._results",
    "ProportionResult": "evalspec.stats._results",
    "InvalidArgument": "evalspec.stats._validation",
    "cluster_labels": "evalspec.stats._validation",
    "beta_binomial_posterior": "evalspec.stats.beta_binomial",
    "beta_binomial_profile": "evalspec.stats.beta_binomial",
    "BOOTSTRAP_INTERVALS": "evalspec.stats.bootstrap",
    "cluster_totals": "evalspec.stats.bootstrap",
    "paired_cluster_bootstrap": "evalspec.stats.bootstrap",
    "bell_mccaffrey_df": "evalspec.stats.clustered",
    "cluster_sizes": "evalspec.stats.clustered",
    "clusters_among": "evalspec.stats.clustered",
    "clustered_mean_interval": "evalspec.stats.clustered",
    "clustered_mean_parts": "evalspec.stats.clustered",
    "clustered_standard_error": "evalspec.stats.clustered",
    "CORRECTIONS": "evalspec.stats.clustered",
    "clustered_mcnemar": "evalspec.stats.mcnemar_clustered",
    "clustered_failure_upper_bound": "evalspec.stats.clustered_proportion",
    "clustered_proportion_interval": "evalspec.stats.clustered_proportion",
    "CLUSTERED_PROPORTION_METHODS": "evalspec.stats.clustered_proportion",
    "DF_RULES": "evalspec.stats.clustered_proportion",
    "ks_distance": "evalspec.stats.distance",
    "beta_hdi": "evalspec.stats.highest_density",
    "distribution_hdi": "evalspec.stats.highest_density",
    "hdi": "evalspec.stats.highest_density",
    "mcnemar": "evalspec.stats.paired",
    "MCNEMAR_METHODS": "evalspec.stats.paired",
    "paired_difference_interval": "evalspec.stats.paired",
    "paired_equivalence_test": "evalspec.stats.paired",
    "PAIRED_METHODS": "evalspec.stats.paired",
    "paired_noninferiority_test": "evalspec.stats.paired",
    "tango_score_statistic": "evalspec.stats.paired",
    "ALTERNATIVES": "evalspec.stats.proportion",
    "clopper_pearson_limits": "evalspec.stats.proportion",
    "proportion_interval": "evalspec.stats.proportion",
    "PROPORTION_METHODS": "evalspec.stats.proportion",
    "wilson_limits": "evalspec.stats.proportion",
}

__all__ = [
    "ALTERNATIVES",
    "BOOTSTRAP_INTERVALS",
    "CLUSTERED_PROPORTION_METHODS",
    "CORRECTIONS",
    "DF_RULES",
    "MCNEMAR_METHODS",
    "PAIRED_METHODS",
    "PROPORTION_METHODS",
    "BootstrapResult",
    "ClusteredMcNemarResult",
    "ClusteredMeanResult",
    "ClusteredProportionResult",
    "EquivalenceResult",
    "HDIResult",
    "Interval",
    "IntervalResult",
    "InvalidArgument",
    "KSResult",
    "McNemarResult",
    "NonInferiorityResult",
    "PairedDifferenceResult",
    "ProportionResult",
    "bell_mccaffrey_df",
    "beta_binomial_posterior",
    "beta_binomial_profile",
    "beta_hdi",
    "clopper_pearson_limits",
    "cluster_labels",
    "cluster_sizes",
    "cluster_totals",
    "clusters_among",
    "clustered_failure_upper_bound",
    "clustered_mcnemar",
    "clustered_mean_interval",
    "clustered_mean_parts",
    "clustered_proportion_interval",
    "clustered_standard_error",
    "distribution_hdi",
    "hdi",
    "ks_distance",
    "mcnemar",
    "paired_cluster_bootstrap",
    "paired_difference_interval",
    "paired_equivalence_test",
    "paired_noninferiority_test",
    "proportion_interval",
    "tango_score_statistic",
    "wilson_limits",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


if TYPE_CHECKING:  # pragma: no cover - what the names are, for type checkers
    from evalspec.stats._results import (
        BootstrapResult,
        ClusteredMcNemarResult,
        ClusteredMeanResult,
        ClusteredProportionResult,
        EquivalenceResult,
        HDIResult,
        Interval,
        IntervalResult,
        KSResult,
        McNemarResult,
        NonInferiorityResult,
        PairedDifferenceResult,
        ProportionResult,
    )
    from evalspec.stats._validation import (
        InvalidArgument,
        cluster_labels,
    )
    from evalspec.stats.beta_binomial import (
        beta_binomial_posterior,
        beta_binomial_profile,
    )
    from evalspec.stats.bootstrap import (
        BOOTSTRAP_INTERVALS,
        cluster_totals,
        paired_cluster_bootstrap,
    )
    from evalspec.stats.clustered import (
        CORRECTIONS,
        bell_mccaffrey_df,
        cluster_sizes,
        clustered_mean_interval,
        clustered_mean_parts,
        clustered_standard_error,
        clusters_among,
    )
    from evalspec.stats.mcnemar_clustered import (
        clustered_mcnemar,
    )
    from evalspec.stats.clustered_proportion import (
        CLUSTERED_PROPORTION_METHODS,
        DF_RULES,
        clustered_failure_upper_bound,
        clustered_proportion_interval,
    )
    from evalspec.stats.distance import (
        ks_distance,
    )
    from evalspec.stats.highest_density import (
        beta_hdi,
        distribution_hdi,
        hdi,
    )
    from evalspec.stats.paired import (
        MCNEMAR_METHODS,
        PAIRED_METHODS,
        mcnemar,
        paired_difference_interval,
        paired_equivalence_test,
        paired_noninferiority_test,
        tango_score_statistic,
    )
    from evalspec.stats.proportion import (
        ALTERNATIVES,
        PROPORTION_METHODS,
        clopper_pearson_limits,
        proportion_interval,
        wilson_limits,
    )
