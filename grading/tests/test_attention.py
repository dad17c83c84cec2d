"""The NumPy attention core against the chapter's numbers, exact arithmetic and properties."""

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grading.core import attention as att

CHAPTER_Q = [[2, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 2, 1]]
CHAPTER_K = [[1, 1, 2, 0], [1, 1, 0, 2], [1, 1, 1, 1], [1, 1, 1, 1]]
CHAPTER_V = [[2, 0, 3, 1], [1, 1, 0, 1], [2, 1, 0, 1], [1, 0, 3, 1]]
IT, LATE = 3, 2


@pytest.fixture
def chapter_qkv():
    return att.qkv_projections(
        att.WORKED_EXAMPLE_X, att.WORKED_EXAMPLE_W_Q, att.WORKED_EXAMPLE_W_K, att.WORKED_EXAMPLE_W_V
    )


def test_projections_reproduce_the_chapter_matrices(chapter_qkv):
    Q, K, V = chapter_qkv
    assert Q.tolist() == CHAPTER_Q
    assert K.tolist() == CHAPTER_K
    assert V.tolist() == CHAPTER_V
    assert Q.dtype == np.float64


def test_worked_example_for_it_raw_and_scaled(chapter_qkv):
    comparison = att.raw_vs_scaled(*chapter_qkv, query_index=IT)
    assert comparison.raw_scores.tolist() == [5, 3, 4, 4]
    assert comparison.scaled_scores.tolist() == [2.5, 1.5, 2.0, 2.0]
    assert np.round(comparison.raw_weights, 4).tolist() == [0.5344, 0.0723, 0.1966, 0.1966]
    assert np.round(comparison.scaled_weights, 4).tolist() == [0.3875, 0.1425, 0.2350, 0.2350]
    assert np.round(comparison.raw_output, 4).tolist() == [1.7311, 0.2689, 2.1932, 1.0]
    assert np.round(comparison.scaled_output, 4).tolist() == [1.6225, 0.3775, 1.8674, 1.0]


def test_worked_example_for_late(chapter_qkv):
    comparison = att.raw_vs_scaled(*chapter_qkv, query_index=LATE)
    assert comparison.raw_scores.tolist() == [2, 4, 3, 3]
    assert comparison.scaled_scores.tolist() == [1.0, 2.0, 1.5, 1.5]
    assert np.round(comparison.raw_weights, 4).tolist() == [0.0723, 0.5344, 0.1966, 0.1966]
    assert np.round(comparison.scaled_weights, 4).tolist() == [0.1425, 0.3875, 0.2350, 0.2350]
    assert np.round(comparison.scaled_output, 4).tolist() == [1.3775, 0.6225, 1.1326, 1.0]


def exact_attention_row(Q, K, V, row: int, scale_squared: sympy.Rational):
    """softmax(q K^T * scale) V for one row, exactly, with SymPy (scale = sqrt of a rational)."""
    Qm, Km, Vm = sympy.Matrix(Q), sympy.Matrix(K), sympy.Matrix(V)
    scores = (Qm[row, :] * Km.T) * sympy.sqrt(scale_squared)
    exponentials = [sympy.exp(s) for s in scores]
    total = sum(exponentials)
    weights = [e / total for e in exponentials]
    output = sympy.Matrix([weights]) * Vm
    return [sympy.N(w, 30) for w in weights], [sympy.N(o, 30) for o in output]


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    d_k=st.sampled_from([1, 2, 4, 9]),
    d_v=st.integers(1, 3),
    data=st.data(),
)
def test_matches_exact_sympy_computation_on_random_integers(n, d_k, d_v, data):
    ints = st.integers(-3, 3)
    Q = data.draw(arrays(np.int64, (n, d_k), elements=ints))
    K = data.draw(arrays(np.int64, (n, d_k), elements=ints))
    V = data.draw(arrays(np.int64, (n, d_v), elements=ints))
    result = att.attention(Q, K, V)
    for row in range(n):
        weights, output = exact_attention_row(
            Q.tolist(), K.tolist(), V.tolist(), row, sympy.Rational(1, d_k)
        )
        assert result.weights[row] == pytest.approx([float(w) for w in weights], abs=1e-12)
        assert result.output[row] == pytest.approx([float(o) for o in output], abs=1e-12)


finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(scores=arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6)), elements=finite))
def test_softmax_rows_sum_to_one_and_are_shift_invariant(scores):
    weights = att.softmax(scores)
    assert np.allclose(weights.sum(axis=-1), 1.0, atol=1e-12)
    assert np.all(weights >= 0)
    shifted = att.softmax(scores + 123.456)
    assert np.allclose(weights, shifted, atol=1e-12)


def test_softmax_does_not_overflow_on_huge_scores():
    weights = att.softmax(np.array([1000.0, 999.0, -1000.0]))
    assert np.isfinite(weights).all()
    assert weights[0] == pytest.approx(1 / (1 + math.exp(-1)), abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(2, 5), d_k=st.integers(1, 6))
def test_equal_keys_get_equal_weight_for_any_query(data, n, d_k):
    Q = data.draw(arrays(np.float64, (n, d_k), elements=st.floats(-5, 5)))
    K = data.draw(arrays(np.float64, (n, d_k), elements=st.floats(-5, 5)))
    K[n - 1] = K[0]
    weights = att.attention(Q, K, np.eye(n)).weights
    assert np.array_equal(weights[:, 0], weights[:, n - 1])


def test_scaling_changes_weights_but_shifting_does_not(chapter_qkv):
    Q, K, V = chapter_qkv
    scaled = att.attention(Q, K, V).weights
    raw = att.attention(Q, K, V, scale=1.0).weights
    assert not np.allclose(scaled, raw)
    assert np.allclose(att.softmax(raw + 7.0), att.softmax(raw))


def test_batched_leading_axes_match_one_by_one():
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(2, 3, 5, 4)), rng.normal(size=(2, 3, 6, 4)), rng.normal(size=(2, 3, 6, 2))
    batched = att.attention(Q, K, V)
    assert batched.weights.shape == (2, 3, 5, 6)
    assert batched.output.shape == (2, 3, 5, 2)
    single = att.attention(Q[1, 2], K[1, 2], V[1, 2])
    assert np.allclose(batched.output[1, 2], single.output, atol=1e-14)


def test_causal_mask_hides_future_keys():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    result = att.attention(Q, K, V, causal=True)
    assert np.all(np.triu(result.weights, k=1) == 0)
    assert result.weights[0].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert np.allclose(result.output[0], V[0])


def test_fully_masked_row_gives_zero_weights_and_zero_output():
    Q = K = V = np.ones((3, 2))
    mask = np.array([[True, True, True], [False, False, False], [True, False, True]])
    result = att.attention(Q, K, V, mask=mask)
    assert result.weights[1].tolist() == [0.0, 0.0, 0.0]
    assert result.output[1].tolist() == [0.0, 0.0]
    assert result.weights[2].tolist() == [0.5, 0.0, 0.5]
    assert not np.isnan(result.weights).any()


def test_non_boolean_mask_is_refused():
    with pytest.raises(TypeError, match="mask must be boolean"):
        att.attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=np.ones((2, 2)))


def test_shape_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="Q and K must share d_k, got 3 and 4"):
        att.attention(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="X has width 4 but W has 3 rows"):
        att.project(np.ones((2, 4)), np.ones((3, 3)))


def test_head_dim_divides_or_explains():
    assert att.head_dim(512, 8) == 64
    with pytest.raises(ValueError, match="d_model = 10 is not divisible by h = 3"):
        att.head_dim(10, 3)
    with pytest.raises(ValueError, match="number of heads must be positive"):
        att.head_dim(8, 0)


def test_split_and_merge_heads_round_trip():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    heads = att.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    assert heads[0, 1, 0].tolist() == [2.0, 3.0]
    assert np.array_equal(att.merge_heads(heads), x)


def test_multi_head_scales_by_the_per_head_d_k():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 8))
    W_Q, W_K, W_V = (rng.normal(size=(8, 8)) for _ in range(3))
    result = att.multi_head_attention(X, W_Q, W_K, W_V, num_heads=2)
    assert result.scale == pytest.approx(1 / math.sqrt(4))
    assert result.weights.shape == (2, 5, 5)
    assert result.output.shape == (5, 8)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    head_1 = att.attention(Q[:, 4:], K[:, 4:], V[:, 4:])
    assert np.allclose(result.output[:, 4:], head_1.output, atol=1e-12)


@pytest.mark.parametrize("d_k", [4, 16, 64, 256, 1024])
def test_monte_carlo_variance_is_within_three_percent_of_d_k(d_k):
    estimate = att.monte_carlo_score_variance(d_k, 200_000, seed=d_k)
    assert estimate.predicted_variance == d_k
    assert abs(estimate.variance - d_k) / d_k < 0.03
    assert abs(estimate.std - math.sqrt(d_k)) / math.sqrt(d_k) < 0.015
    assert abs(estimate.mean) < 4 * math.sqrt(d_k / 200_000)


def test_monte_carlo_with_sigmas_predicts_d_k_sigma_q_squared_sigma_k_squared():
    estimate = att.monte_carlo_score_variance(16, 100_000, seed=5, sigma_q=2.0, sigma_k=0.5)
    assert estimate.predicted_variance == 16.0
    assert abs(estimate.variance - 16.0) / 16.0 < 0.03


def test_monte_carlo_chunking_does_not_change_the_estimate():
    whole = att.monte_carlo_score_variance(64, 10_000, seed=9, chunk_elements=10**9)
    chunked = att.monte_carlo_score_variance(64, 10_000, seed=9, chunk_elements=64 * 333)
    assert chunked.variance == pytest.approx(whole.variance, rel=1e-12)
    assert chunked.mean == pytest.approx(whole.mean, rel=1e-9, abs=1e-12)


def test_in_place_softmax_is_bit_for_bit_the_textbook_formula():
    scores = np.random.default_rng(3).normal(scale=4.0, size=(2, 3, 5, 7))  # (B, h, n, m)
    shifted = scores - scores.max(axis=-1, keepdims=True)
    textbook = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    untouched = scores.copy()
    assert np.array_equal(att.softmax(scores), textbook)
    assert np.array_equal(scores, untouched)  # no out=: the input is left alone
    in_place = att.softmax(scores, out=scores)
    assert in_place is scores and np.array_equal(scores, textbook)


def test_softmax_with_a_fully_masked_row_among_others():
    scores = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [2.0, 2.0, -np.inf]])
    weights = att.softmax(scores)
    e = np.exp(-1.0)
    assert weights.tolist() == [[e / (e + 1), 0.0, 1 / (e + 1)], [0.0, 0.0, 0.0], [0.5, 0.5, 0.0]]


def test_unmasked_batched_attention_equals_the_textbook_formula():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((2, 3, 6, 4)) for _ in range(3))  # (B, h, n, d_k)
    scores = Q @ np.swapaxes(K, -1, -2)
    scaled = scores * 0.5
    shifted = scaled - scaled.max(axis=-1, keepdims=True)
    weights = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    result = att.attention(Q, K, V)
    assert np.array_equal(result.scores, scores) and np.array_equal(result.scaled_scores, scaled)
    assert np.array_equal(result.weights, weights)
    assert np.array_equal(result.output, weights @ V)


def test_output_only_path_reproduces_the_chapter_and_sympy(chapter_qkv):
    Q, K, V = chapter_qkv
    output = att.attention_output(Q, K, V)
    for row in range(4):
        _, exact = exact_attention_row(Q.tolist(), K.tolist(), V.tolist(), row, sympy.Rational(1, 4))
        assert output[row] == pytest.approx([float(o) for o in exact], abs=1e-12)
    assert np.array_equal(output, att.attention(Q, K, V).output)


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("scratch", [1, 36, 100, 1 << 15])  # one head per block .. all at once
@pytest.mark.parametrize(
    "case",
    ["plain", "scale", "causal", "shared mask", "per-head mask", "fully masked row", "broadcast K, V", "2-D"],
)
def test_output_only_path_is_bit_for_bit_the_full_computation(monkeypatch, scratch, case, workers):
    """Blocks of 1, 1 (36 = one 6x6 head), 2 with a short last block (100), and all; in
    one thread or shared among several."""
    monkeypatch.setattr(att, "SCRATCH_ELEMENTS", scratch)
    rng = np.random.default_rng(7)
    Q, K, V = (rng.standard_normal((2, 3, 6, 4)) for _ in range(3))  # (B, h, n, d_k)
    options = {}
    if case == "scale":
        options["scale"] = 1.0
    elif case == "causal":
        options["causal"] = True
    elif case == "shared mask":
        options["mask"] = rng.random((6, 6)) > 0.4
    elif case == "per-head mask":
        options["mask"] = rng.random((2, 3, 6, 6)) > 0.4
    elif case == "fully masked row":
        mask = np.ones((6, 6), dtype=bool)
        mask[2] = False
        options["mask"] = mask
    elif case == "broadcast K, V":
        K, V = K[0, 0], V[0, 0]  # (m, d_k), (m, d_v): shared by every batch entry
    elif case == "2-D":
        Q, K, V = Q[0, 0], K[0, 0], V[0, 0]
    output = att.attention_output(Q, K, V, workers=workers, **options)
    expected = att.attention(Q, K, V, **options).output
    assert output.shape == expected.shape and np.array_equal(output, expected)
    if case == "fully masked row":
        assert output[..., 2, :].tolist() == [[[0.0] * 4] * 3] * 2


def test_output_only_path_refuses_what_attention_refuses():
    with pytest.raises(ValueError, match="Q and K must share d_k, got 3 and 4"):
        att.attention_output(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="K and V must have the same number of rows, got 2 and 3"):
        att.attention_output(np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(TypeError, match="mask must be boolean"):
        att.attention_output(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=np.ones((2, 2)))
    batched_mask = np.ones((3, 2, 2), dtype=bool)  # more batch axes than the inputs have
    for function in (att.attention, att.attention_output):
        with pytest.raises(ValueError):
            function(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=batched_mask)
