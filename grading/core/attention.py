"""Reference implementation of scaled dot-product attention, in NumPy.

Every reference answer the platform grades against is computed here, so this module
favours exactness and clarity over speed: float64 by default, a max-shifted softmax,
and one shape legend used in every comment.

Shape legend:
    B...  any number of leading batch axes (possibly none)
    n     sequence length (queries);  m  number of keys (usually m == n)
    d_model  model width;  h  number of heads
    d_k   query/key width (per head);  d_v  value width (per head)

Masks follow the PyTorch SDPA convention for booleans: ``True`` means "may attend".
They are applied as an additive bias of ``-inf``. A row whose keys are all masked
has no defined softmax; we define its weights *and* its output as zeros (rather than
NaN), so a fully padded query contributes nothing downstream.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

DEFAULT_DTYPE = np.float64


@dataclass(frozen=True)
class AttentionResult:
    """All intermediate values of one attention computation."""

    scores: np.ndarray  # (B..., n, m) raw Q K^T
    scaled_scores: np.ndarray  # (B..., n, m) scores * scale (+ mask bias)
    weights: np.ndarray  # (B..., n, m) row-wise softmax, rows sum to 1 (or 0 if fully masked)
    output: np.ndarray  # (B..., n, d_v)
    scale: float


@dataclass(frozen=True)
class VarianceEstimate:
    """Monte Carlo estimate of the distribution of q·k for random q, k in R^d_k."""

    d_k: int
    samples: int
    mean: float
    variance: float
    std: float
    predicted_variance: float


def as_array(values, *, dtype=DEFAULT_DTYPE) -> np.ndarray:
    return np.asarray(values, dtype=dtype)


def project(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """One linear projection, X W."""
    X, W = as_array(X), as_array(W)
    if X.shape[-1] != W.shape[0]:
        raise ValueError(
            f"cannot project: X has width {X.shape[-1]} but W has {W.shape[0]} rows"
        )
    return X @ W  # (B..., n, d_model) x (d_model, d) -> (B..., n, d)


def qkv_projections(X, W_Q, W_K, W_V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q = X W_Q, K = X W_K, V = X W_V."""
    W_Q, W_K = as_array(W_Q), as_array(W_K)
    if W_Q.shape[-1] != W_K.shape[-1]:
        raise ValueError(
            f"W_Q and W_K must share d_k, got {W_Q.shape[-1]} and {W_K.shape[-1]}"
        )
    return project(X, W_Q), project(X, W_K), project(X, W_V)


def softmax(x: np.ndarray, axis: int = -1, *, out: np.ndarray | None = None) -> np.ndarray:
    """Numerically stable softmax; an all ``-inf`` slice gives zeros, not NaN.

    Computed in place in ``out`` (a new array when not given; it may be ``x`` itself),
    so a large batch makes one full-size array, not five.
    """
    x = as_array(x)
    row_max = np.max(x, axis=axis, keepdims=True)  # (B..., n, 1)
    fully_masked = np.isneginf(row_max)
    any_fully_masked = bool(fully_masked.any())
    if any_fully_masked:
        row_max[fully_masked] = 0.0  # exp(-inf - 0) = 0: the row's weights come out zero
    # Shifting by the maximum changes nothing mathematically and keeps exp() <= 1.
    out = np.subtract(x, row_max, out=out)
    np.exp(out, out=out)
    totals = np.sum(out, axis=axis, keepdims=True)
    if any_fully_masked:
        totals[totals == 0] = 1.0  # only a fully masked row sums to 0 (its max gave exp(0) = 1)
    return np.divide(out, totals, out=out)


def causal_mask(n: int, m: int | None = None) -> np.ndarray:
    """Boolean (n, m) mask: query i may attend to keys 0..i."""
    m = n if m is None else m
    return np.tril(np.ones((n, m), dtype=bool))


def mask_bias(mask: np.ndarray) -> np.ndarray:
    """Turn a boolean "may attend" mask into an additive bias of 0 / -inf."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise TypeError("mask must be boolean (True = may attend)")
    return np.where(mask, 0.0, -np.inf)


def attention(
    Q,
    K,
    V,
    *,
    scale: float | None = None,
    mask=None,
    causal: bool = False,
) -> AttentionResult:
    """softmax(Q K^T * scale + bias) V with scale = 1/sqrt(d_k) unless given.

    ``scale=1.0`` gives the unscaled ("raw") attention used to show why scaling matters.
    """
    Q, K, V = as_array(Q), as_array(K), as_array(V)
    d_k = Q.shape[-1]
    if K.shape[-1] != d_k:
        raise ValueError(f"Q and K must share d_k, got {d_k} and {K.shape[-1]}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have the same number of rows, got {K.shape[-2]} and {V.shape[-2]}"
        )
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    scores = Q @ np.swapaxes(K, -1, -2)  # (B..., n, d_k) x (B..., d_k, m) -> (B..., n, m)
    scaled_scores = np.multiply(scores, scale)
    bias = _combined_bias(mask, causal, scores.shape[-2], scores.shape[-1])
    if bias is not None:  # no mask: no bias array, no where()
        np.add(scaled_scores, bias, out=scaled_scores)  # (B..., n, m) + (n, m) broadcasts
    weights = softmax(scaled_scores, axis=-1, out=np.empty_like(scaled_scores))
    output = weights @ V  # (B..., n, m) x (B..., m, d_v) -> (B..., n, d_v)
    return AttentionResult(scores, scaled_scores, weights, output, float(scale))


SCRATCH_ELEMENTS = 1 << 15  # 256 KiB of float64 scores per block: stays in cache


def attention_output(
    Q, K, V, *, scale: float | None = None, mask=None, causal: bool = False, workers: int = 1
) -> np.ndarray:
    """``attention(Q, K, V, ...).output`` alone, computed block by block over the batch.

    The same float64 operations in the same order as ``attention`` (so the same numbers,
    bit for bit), but the (B..., n, m) scores are never held for the whole batch: a few
    heads at a time go through a reused scratch block, and each block's output is written
    straight into the result. (Holding all scores, scaled scores and weights made three
    batch-sized arrays per call; fresh memory that size costs a page fault per 4 KiB,
    about half the time of a B8·H8·n128·d64 call.)

    ``workers`` > 1 shares the blocks among that many threads (NumPy releases the GIL in
    matmul and ufuncs), as torch shares heads among its threads; run BLAS single-threaded
    then (``OPENBLAS_NUM_THREADS=1``): BLAS threads on each small per-head product cost
    more in hand-offs than they save, and far more on a busy machine.
    """
    Q, K, V = as_array(Q), as_array(K), as_array(V)
    d_k, n, m = Q.shape[-1], Q.shape[-2], K.shape[-2]
    if K.shape[-1] != d_k:
        raise ValueError(f"Q and K must share d_k, got {d_k} and {K.shape[-1]}")
    if m != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of rows, got {m} and {V.shape[-2]}")
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    flat = [np.broadcast_to(X, batch + X.shape[-2:]).reshape((-1,) + X.shape[-2:]) for X in (Q, K, V)]
    Q, K, V = flat  # (b, n, d_k), (b, m, d_k), (b, m, d_v) with b = prod(B...)
    bias = _combined_bias(mask, causal, n, m)
    if bias is not None and bias.ndim > 2:  # one per batch entry (a mask never adds batch axes)
        bias = np.broadcast_to(bias, batch + (n, m)).reshape(-1, n, m)  # (b, n, m)
    output = np.empty((Q.shape[0], n, V.shape[-1]), dtype=np.result_type(Q, K, V))  # (b, n, d_v)
    per_block = max(1, SCRATCH_ELEMENTS // max(n * m, 1))
    blocks = [(start, min(start + per_block, Q.shape[0])) for start in range(0, Q.shape[0], per_block)]

    def compute(share: list[tuple[int, int]]) -> None:
        scratch = np.empty((per_block, n, m), dtype=output.dtype)
        for start, stop in share:
            scores = scratch[: stop - start]
            np.matmul(Q[start:stop], np.swapaxes(K[start:stop], -1, -2), out=scores)  # (block, n, d_k) x (block, d_k, m) -> (block, n, m)
            np.multiply(scores, scale, out=scores)
            if bias is not None:
                np.add(scores, bias if bias.ndim == 2 else bias[start:stop], out=scores)
            softmax(scores, axis=-1, out=scores)
            np.matmul(scores, V[start:stop], out=output[start:stop])  # (block, n, m) x (block, m, d_v) -> (block, n, d_v)

    workers = max(1, min(workers, len(blocks)))
    if workers == 1:
        compute(blocks)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(compute, [blocks[index::workers] for index in range(workers)]))
    return output.reshape(batch + output.shape[-2:])  # (B..., n, d_v)


def _combined_bias(mask, causal: bool, n: int, m: int) -> np.ndarray | None:
    allowed = None
    if mask is not None:
        allowed = np.asarray(mask)
        if allowed.dtype != bool:
            raise TypeError("mask must be boolean (True = may attend)")
    if causal:
        lower = causal_mask(n, m)
        allowed = lower if allowed is None else (allowed & lower)
    return None if allowed is None else mask_bias(allowed)


def head_dim(d_model: int, num_heads: int) -> int:
    """Per-head width d_k = d_model / h; refuses a split that does not divide."""
    if num_heads <= 0:
        raise ValueError(f"number of heads must be positive, got {num_heads}")
    if d_model % num_heads:
        raise ValueError(
            f"d_model = {d_model} is not divisible by h = {num_heads}: "
            f"each head needs a whole d_k = d_model / h"
        )
    return d_model // num_heads


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(B..., n, d) -> (B..., h, n, d / h)."""
    x = as_array(x)
    *batch, n, width = x.shape
    per_head = head_dim(width, num_heads)
    x = x.reshape(*batch, n, num_heads, per_head)  # (B..., n, d) -> (B..., n, h, d/h)
    return np.swapaxes(x, -2, -3)  # (B..., n, h, d/h) -> (B..., h, n, d/h)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B..., h, n, d_h) -> (B..., n, h * d_h); the inverse of split_heads."""
    x = np.swapaxes(as_array(x), -2, -3)  # (B..., h, n, d_h) -> (B..., n, h, d_h)
    *batch, n, num_heads, per_head = x.shape
    return x.reshape(*batch, n, num_heads * per_head)


def multi_head_attention(
    X,
    W_Q,
    W_K,
    W_V,
    *,
    num_heads: int,
    W_O=None,
    mask=None,
    causal: bool = False,
) -> AttentionResult:
    """Multi-head attention with the scale keyed to the per-head d_k.

    W_Q, W_K: (d_model, d_model); W_V: (d_model, d_v_total). The projections are split
    into ``num_heads`` heads of width d_model / h, attended independently, concatenated
    and, if given, projected by W_O. The result's scores/weights have a head axis.
    """
    Q, K, V = qkv_projections(X, W_Q, W_K, W_V)
    Q_heads = split_heads(Q, num_heads)  # (B..., n, d_model) -> (B..., h, n, d_k)
    K_heads = split_heads(K, num_heads)  # (B..., m, d_model) -> (B..., h, m, d_k)
    V_heads = split_heads(V, num_heads)  # (B..., m, d_v_total) -> (B..., h, m, d_v)
    per_head = attention(Q_heads, K_heads, V_heads, mask=mask, causal=causal)
    output = merge_heads(per_head.output)  # (B..., h, n, d_v) -> (B..., n, h * d_v)
    if W_O is not None:
        output = project(output, W_O)  # (B..., n, h * d_v) x (h * d_v, d_out)
    return AttentionResult(
        per_head.scores, per_head.scaled_scores, per_head.weights, output, per_head.scale
    )


def monte_carlo_score_variance(
    d_k: int,
    samples: int = 200_000,
    *,
    seed: int = 0,
    sigma_q: float = 1.0,
    sigma_k: float = 1.0,
    chunk_elements: int = 4_000_000,
) -> VarianceEstimate:
    """Estimate mean and variance of q·k for independent N(0, σ²) entries.

    Sampled in chunks of at most ``chunk_elements`` floats per matrix so that 200,000
    samples at d_k = 1024 need ~64 MB at a time instead of ~3.3 GB.
    Running sums use Welford-style chunk merging so the estimate does not lose precision.
    """
    if d_k <= 0 or samples <= 1:
        raise ValueError("need d_k >= 1 and at least 2 samples")
    # Separate streams for q and k make the estimate independent of the chunk size.
    rng_q, rng_k = np.random.default_rng(seed).spawn(2)
    rows_per_chunk = max(1, chunk_elements // d_k)
    count, mean, sum_sq_dev = 0, 0.0, 0.0
    remaining = samples
    while remaining:
        rows = min(rows_per_chunk, remaining)
        q = rng_q.standard_normal((rows, d_k)) * sigma_q  # (rows, d_k)
        k = rng_k.standard_normal((rows, d_k)) * sigma_k  # (rows, d_k)
        dots = np.einsum("rd,rd->r", q, k)  # (rows, d_k) . (rows, d_k) -> (rows,)
        count, mean, sum_sq_dev = _merge_moments(count, mean, sum_sq_dev, dots)
        remaining -= rows
    variance = sum_sq_dev / (count - 1)
    return VarianceEstimate(
        d_k=d_k,
        samples=samples,
        mean=float(mean),
        variance=float(variance),
        std=float(math.sqrt(variance)),
        predicted_variance=float(d_k * sigma_q**2 * sigma_k**2),
    )


def _merge_moments(count, mean, sum_sq_dev, chunk: np.ndarray):
    """Chan et al. parallel update of (count, mean, M2) with one more chunk."""
    chunk_count = chunk.size
    chunk_mean = float(chunk.mean())
    chunk_m2 = float(((chunk - chunk_mean) ** 2).sum())
    total = count + chunk_count
    delta = chunk_mean - mean
    mean = mean + delta * chunk_count / total
    sum_sq_dev = sum_sq_dev + chunk_m2 + delta**2 * count * chunk_count / total
    return total, mean, sum_sq_dev


def variance_table(
    dims=(4, 16, 64, 256, 1024), samples: int = 200_000, *, seed: int = 0
) -> list[VarianceEstimate]:
    """The chapter's Monte Carlo table: one estimate per d_k."""
    return [monte_carlo_score_variance(d_k, samples, seed=seed + i) for i, d_k in enumerate(dims)]


@dataclass(frozen=True)
class ScalingComparison:
    """Raw vs scaled attention for one query row, as the chapter traces it."""

    raw_scores: np.ndarray  # (m,)
    scaled_scores: np.ndarray  # (m,)
    raw_weights: np.ndarray  # (m,)
    scaled_weights: np.ndarray  # (m,)
    raw_output: np.ndarray  # (d_v,)
    scaled_output: np.ndarray  # (d_v,)


def raw_vs_scaled(Q, K, V, query_index: int) -> ScalingComparison:
    """Attention of one query with and without the 1/sqrt(d_k) scale."""
    raw = attention(Q, K, V, scale=1.0)
    scaled = attention(Q, K, V)
    i = query_index
    return ScalingComparison(
        raw_scores=raw.scores[..., i, :],
        scaled_scores=scaled.scaled_scores[..., i, :],
        raw_weights=raw.weights[..., i, :],
        scaled_weights=scaled.weights[..., i, :],
        raw_output=raw.output[..., i, :],
        scaled_output=scaled.output[..., i, :],
    )


# The chapter's worked example: "Order was late it", d_model = d_k = d_v = 4.
WORKED_EXAMPLE_TOKENS = ("Order", "was", "late", "it")
WORKED_EXAMPLE_X = ((1, 0, 1, 0), (0, 1, 0, 1), (1, 1, 0, 0), (0, 0, 1, 1))
WORKED_EXAMPLE_W_Q = ((1, 0, 0, 1), (0, 1, 0, 0), (1, 0, 1, 0), (0, 0, 1, 1))
WORKED_EXAMPLE_W_K = ((1, 0, 1, 0), (0, 1, 0, 1), (0, 1, 1, 0), (1, 0, 0, 1))
WORKED_EXAMPLE_W_V = ((2, 0, 0, 1), (0, 1, 0, 0), (0, 0, 3, 0), (1, 0, 0, 1))
