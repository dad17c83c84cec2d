"""Numbers behind the explorations, checked against independent NumPy and the chapter."""

import uuid

import numpy as np
import pytest
from django.core.cache import cache

from explorations import selectors
from grading.core.attention import variance_table


@pytest.fixture(autouse=True)
def empty_cache(settings):
    """An empty cache of this test's own. Clearing the shared Redis instead would wipe what
    tests running beside it keep there (a rate limit's bucket, pending follow-ups)."""
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": f"explorations-{uuid.uuid4().hex}",
    }}
    yield
    cache.clear()


def reference_softmax(row):
    exponentials = np.exp(row - row.max())
    return exponentials / exponentials.sum()


@pytest.mark.parametrize("d_k", [4, 64, 1024])
def test_scaling_demo_matches_an_independent_computation(d_k):
    rng = np.random.default_rng(7)
    query = rng.standard_normal((1, 1024))[0, :d_k]
    keys = rng.standard_normal((8, 1024))[:, :d_k]
    scores = keys @ query

    demo = selectors.scaling_demo_get(d_k=d_k, seed=7)

    assert demo.raw_scores == pytest.approx(scores.tolist(), abs=1e-12)
    assert demo.raw_weights == pytest.approx(reference_softmax(scores).tolist(), abs=1e-12)
    assert demo.scaled_weights == pytest.approx(
        reference_softmax(scores / np.sqrt(d_k)).tolist(), abs=1e-12
    )
    assert sum(demo.raw_weights) == pytest.approx(1.0, abs=1e-12)
    assert demo.predicted_score_std == np.sqrt(d_k)


def test_unscaled_softmax_collapses_at_wide_keys_and_scaled_does_not():
    demo = selectors.scaling_demo_get(d_k=1024, seed=0)
    assert demo.raw_max_weight > 0.999
    assert demo.raw_effective_keys < 1.01
    assert demo.scaled_max_weight < 0.6
    assert demo.scaled_effective_keys > 3


def test_scaling_demo_refuses_widths_outside_the_slider():
    with pytest.raises(ValueError):
        selectors.scaling_demo_get(d_k=0)
    with pytest.raises(ValueError):
        selectors.scaling_demo_get(d_k=2048)


def test_effective_number_of_keys_is_one_for_one_hot_and_m_for_uniform():
    assert selectors.effective_number_of_keys(np.array([0.0, 1.0, 0.0])) == 1.0
    assert selectors.effective_number_of_keys(np.full(8, 1 / 8)) == pytest.approx(8.0, abs=1e-12)


def test_worked_example_reproduces_the_chapter_weights_for_it():
    example = selectors.worked_example_get()
    assert example.tokens == ("Order", "was", "late", "it")
    assert np.round(example.raw_weights[3], 4).tolist() == [0.5344, 0.0723, 0.1966, 0.1966]
    assert np.round(example.scaled_weights[3], 4).tolist() == [0.3875, 0.1425, 0.235, 0.235]


def test_variance_rows_are_the_core_table_with_predictions():
    rows = selectors.variance_rows_get(samples=2_000)
    expected = variance_table((4, 16, 64, 256, 1024), 2_000, seed=0)
    assert [row.d_k for row in rows] == [4, 16, 64, 256, 1024]
    assert [row.variance for row in rows] == [estimate.variance for estimate in expected]
    assert [row.mean for row in rows] == [estimate.mean for estimate in expected]
    assert [row.std for row in rows] == [estimate.std for estimate in expected]
    assert [row.predicted_variance for row in rows] == [4.0, 16.0, 64.0, 256.0, 1024.0]
    assert [row.predicted_std for row in rows] == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert rows[2].variance_ratio == expected[2].variance / 64.0


def test_variance_rows_are_computed_once_per_sample_count(monkeypatch):
    calls = []
    real = selectors._compute_variance_rows

    def counting(samples):
        calls.append(samples)
        return real(samples)

    monkeypatch.setattr(selectors, "_compute_variance_rows", counting)
    first = selectors.variance_rows_get(samples=2_000)
    second = selectors.variance_rows_get(samples=2_000)
    assert calls == [2_000]
    assert first == second


def test_variance_rows_refuse_unlisted_sample_counts(monkeypatch):
    monkeypatch.setattr(selectors, "_compute_variance_rows", pytest.fail)
    with pytest.raises(ValueError):
        selectors.variance_rows_get(samples=10_000_000)
