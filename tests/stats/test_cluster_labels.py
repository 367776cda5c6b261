"""``cluster_labels``: integer cluster labels factorised once, read by every kernel, with the same results.

The kernels count a group's clusters several times per interval (their number, their sizes,
the residual totals); :class:`~evalspec.stats._validation.ClusterLabels` keeps the codes and
sizes made the first time. Each kernel is called twice on the same labels (the second call
reads what the first made) and compared, field by field and bit for bit, with the call on a
plain array. Labels with gaps (codes that must be renumbered), negative labels, one label
and labels too wide to count are drawn.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalspec.stats import (
    InvalidArgument,
    cluster_labels,
    cluster_sizes,
    clustered_mean_interval,
    clustered_proportion_interval,
    clustered_standard_error,
    clusters_among,
    paired_cluster_bootstrap,
)
from evalspec.stats._validation import ClusterLabels, _cluster_codes


def _fields(result: object) -> dict:
    out = dataclasses.asdict(result) if dataclasses.is_dataclass(result) else dict(vars(result))
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in out.items()}


def _same(a: object, b: object) -> None:
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        va, vb = fa[k], fb[k]
        if isinstance(va, float) and np.isnan(va):
            assert isinstance(vb, float) and np.isnan(vb), k
        else:
            assert va == vb, k


_LABELS = st.one_of(
    st.lists(st.integers(0, 6), min_size=2, max_size=40),  # dense codes, some clusters absent
    st.lists(st.sampled_from([-5, 0, 3, 17, 40]), min_size=2, max_size=40),  # gaps and a negative label
    st.lists(st.sampled_from([-(2**60), 0, 2**60]), min_size=2, max_size=12),  # too wide to count in bins
)


@st.composite
def _data(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    drawn = draw(_LABELS)
    wide = max(map(abs, drawn)) >= 2**31
    labels = np.array(drawn, dtype=np.int64 if wide else draw(st.sampled_from([np.int64, np.int32])))
    n = labels.size
    x = np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 0.75]), min_size=n, max_size=n)))
    return labels, x, y


def _run_twice(kernel, labelled: np.ndarray, plain: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    try:
        want = kernel(plain)
    except InvalidArgument as exc:
        for _ in range(2):
            with pytest.raises(InvalidArgument) as got:
                kernel(labelled)
            assert str(got.value) == str(exc)
        return
    for _ in range(2):  # (the first call makes the codes, the second reads them)
        got = kernel(labelled)
        if isinstance(want, np.ndarray):
            assert got.tolist() == want.tolist() and got.dtype == want.dtype
        elif isinstance(want, (int, float)):
            assert got == want
        else:
            _same(got, want)


@given(_data())
def test_every_kernel_gives_the_same_result_on_cluster_labels(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    labels, x, y = data
    diff = x - y
    kernels = [
        cluster_sizes,
        lambda c: clusters_among(c, diff != 0),
        lambda c: clusters_among(c, x > 0.3),
        lambda c: clustered_mean_interval(diff, c),
        lambda c: clustered_mean_interval(x, c, confidence_level=0.9, correction="CR3", skew_corrected=True),
        lambda c: clustered_standard_error(y, c, correction="CR1"),
        lambda c: clustered_proportion_interval(x, c, method="wilson"),
        lambda c: paired_cluster_bootstrap(x, y, c, resamples=50, seed=3),
    ]
    for kernel in kernels:
        labelled = cluster_labels(labels.copy())
        _run_twice(kernel, labelled, labels.copy())
    shared = cluster_labels(labels.copy())  # one set of labels read by every kernel in turn, as an analysis does
    for kernel in kernels:
        _run_twice(kernel, shared, labels.copy())


@given(_data())
def test_the_codes_kept_are_np_unique_inverse(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    labels = data[0]
    labelled = cluster_labels(labels.copy())
    uniq, inverse = np.unique(labels, return_inverse=True)
    for _ in range(2):
        codes, n = _cluster_codes(labelled, labels.size)
        assert n == uniq.size and codes.tolist() == inverse.reshape(-1).tolist()
    assert labelled._codes is not None and labelled._codes[2].tolist() == np.bincount(inverse.reshape(-1)).tolist()


def test_labels_are_read_only_and_what_is_derived_is_counted_afresh() -> None:
    labels = cluster_labels(np.array([4, 4, 9, 1, 9, 9]))
    assert type(labels) is ClusterLabels and cluster_labels(labels) is labels
    assert cluster_sizes(labels).tolist() == [1, 2, 3]
    with pytest.raises(ValueError):
        labels[0] = 1  # (the codes kept would go stale)
    codes, _ = _cluster_codes(labels, 6)
    with pytest.raises(ValueError):
        codes[0] = 2  # (nor may a kernel change the codes every other kernel reads)
    part = labels[:3]  # a slice holds other labels: nothing kept travels with it
    assert part._codes is None and part._bins is None
    assert cluster_sizes(part).tolist() == [2, 1]
    assert cluster_sizes(labels + 1).tolist() == [1, 2, 3]
    assert clusters_among(labels, np.array([True, False, True, False, False, False])) == 2


def test_other_labels_are_left_as_they_are() -> None:
    texts = np.array(["a", "b"])
    floats = np.array([1.0, 2.0])
    assert cluster_labels(texts) is texts and cluster_labels(floats) is floats
    listed = [1, 2]
    assert cluster_labels(listed) is listed  # type: ignore[arg-type]


@given(_data(), st.sampled_from(["CR2", "CR1", "CR0", "CR3"]), st.booleans(),
       st.lists(st.sampled_from([0.95, 0.5, 0.002, 0.999, 0.9]), min_size=1, max_size=4))
def test_the_parts_of_a_clustered_mean_give_its_interval_at_every_level(
        data: tuple[np.ndarray, np.ndarray, np.ndarray], correction: str, skew: bool, levels: list[float]) -> None:
    """``clustered_mean_parts(...).interval(level)`` is ``clustered_mean_interval(..., level)``, bit for bit (one
    set of parts read at several levels, as a paired difference's loss test reads them)."""
    from evalspec.stats import clustered_mean_parts

    labels, x, y = data
    try:
        parts = clustered_mean_parts(x - y, labels, correction=correction, skew_corrected=skew)
    except InvalidArgument as exc:
        with pytest.raises(InvalidArgument) as got:
            clustered_mean_interval(x - y, labels, correction=correction, skew_corrected=skew)
        assert str(got.value) == str(exc)
        return
    for level in levels:
        _same(parts.interval(level), clustered_mean_interval(x - y, labels, confidence_level=level,
                                                              correction=correction, skew_corrected=skew))
    with pytest.raises(InvalidArgument):
        parts.interval(1.5)


@pytest.mark.parametrize("level", [0.95, 0.5, 0.002, 0.999])
def test_the_parts_read_at_a_level_give_the_matrix_formulas_interval_there(level: float) -> None:
    """Against the CR2 matrix formula written independently (``test_clustered.cr2_by_matrices``), at each level."""
    from scipy import stats as sps

    from evalspec.stats import clustered_mean_parts
    from tests.stats.test_clustered import cr2_by_matrices

    rng = np.random.default_rng(11)
    labels = np.repeat(np.arange(9), [1, 2, 3, 4, 5, 2, 6, 1, 3])
    y = rng.random(labels.size)
    se, df = cr2_by_matrices(y, labels)
    t = sps.t.ppf(1 - (1 - level) / 2, df)
    got = clustered_mean_parts(y, cluster_labels(labels)).interval(level)
    assert got.confidence_level == level
    assert got.low == pytest.approx(y.mean() - t * se, rel=1e-9) and got.high == pytest.approx(y.mean() + t * se, rel=1e-9)
