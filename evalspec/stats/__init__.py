"""evalspec.stats: pure numeric kernels (numpy/scipy) behind every interval and test.

No plan objects, no I/O: functions of numbers and arrays returning small frozen result
objects (``estimate``, ``low``, ``high``, ``interval``, ``method``, ``confidence_level``,
``n``, ... and ``to_dict()`` for the claim record). Invalid arguments raise
:class:`InvalidArgument` (a ``ValueError``) naming the argument and the value.

This package imports scipy at import time; it is never imported by ``evalspec validate``.
"""

from __future__ import annotations

from evalspec.stats._results import (
    BootstrapResult,
    ClusteredMeanResult,
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
from evalspec.stats.bootstrap import BOOTSTRAP_INTERVALS, cluster_totals, paired_cluster_bootstrap
from evalspec.stats.clustered import CORRECTIONS, clustered_mean_interval, clustered_standard_error
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
from evalspec.stats.proportion import ALTERNATIVES, PROPORTION_METHODS, proportion_interval

__all__ = [
    "ALTERNATIVES",
    "BOOTSTRAP_INTERVALS",
    "CORRECTIONS",
    "MCNEMAR_METHODS",
    "PAIRED_METHODS",
    "PROPORTION_METHODS",
    "BootstrapResult",
    "ClusteredMeanResult",
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
    "beta_hdi",
    "cluster_totals",
    "clustered_mean_interval",
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
]
