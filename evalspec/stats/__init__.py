"""evalspec.stats: pure numeric kernels (numpy/scipy) behind every interval and test.

No plan objects, no I/O: functions of numbers and arrays returning small frozen result
objects (``estimate``, ``low``, ``high``, ``interval``, ``method``, ``confidence_level``,
``n``, ... and ``to_dict()`` for the claim record). Invalid arguments raise
:class:`InvalidArgument` (a ``ValueError``) naming the argument and the value.

Only ``numpy`` and ``scipy.special`` are imported at import time (``scipy.stats`` and
``scipy.optimize`` cost about 0.4 s and are not needed); it is never imported by
``evalspec validate``.
"""

from __future__ import annotations

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
from evalspec.stats._validation import InvalidArgument
from evalspec.stats.beta_binomial import beta_binomial_posterior, beta_binomial_profile
from evalspec.stats.bootstrap import BOOTSTRAP_INTERVALS, cluster_totals, paired_cluster_bootstrap
from evalspec.stats.clustered import (
    CORRECTIONS,
    bell_mccaffrey_df,
    clustered_mean_interval,
    clustered_standard_error,
)
from evalspec.stats.clustered_mcnemar import clustered_mcnemar
from evalspec.stats.clustered_proportion import (
    CLUSTERED_PROPORTION_METHODS,
    DF_RULES,
    clustered_failure_upper_bound,
    clustered_proportion_interval,
)
from evalspec.stats.distance import ks_distance
from evalspec.stats.hdi import beta_hdi, distribution_hdi, hdi
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
    "cluster_totals",
    "clustered_failure_upper_bound",
    "clustered_mcnemar",
    "clustered_mean_interval",
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
