"""Read-only computations behind the explorations, all delegated to grading.core.attention.

Nothing here writes to the database. Monte Carlo tables are deterministic for a given
sample count (the seed is fixed), so they are cached without expiry; only the few
sample counts in ``SAMPLE_CHOICES`` are accepted, which bounds the cache and the work
one request can cause.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache

from grading.core import attention as attention_core

SCALING_MIN_D_K = 1
SCALING_MAX_D_K = 1024
SCALING_SLIDER_D_KS = tuple(2**exponent for exponent in range(2, 11))  # 4 .. 1024
SCALING_DEFAULT_D_K = 64
SCALING_NUM_KEYS = 8

VARIANCE_DIMS = (4, 16, 64, 256, 1024)
VARIANCE_SEED = 0
SAMPLE_CHOICES = (2_000, 20_000, 50_000, 200_000)
DEFAULT_SAMPLES = 20_000
CHAPTER_SAMPLES = 200_000
_VARIANCE_CACHE_VERSION = 1


@dataclass(frozen=True)
class ScalingDemo:
    """One query against ``num_keys`` random keys, with and without the 1/sqrt(d_k) scale."""

    d_k: int
    seed: int
    raw_scores: list[float]
    scaled_scores: list[float]
    raw_weights: list[float]
    scaled_weights: list[float]
    predicted_score_std: float
    raw_max_weight: float
    scaled_max_weight: float
    raw_effective_keys: float
    scaled_effective_keys: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class VarianceRow:
    d_k: int
    samples: int
    mean: float
    variance: float
    std: float
    predicted_variance: float
    predicted_std: float
    variance_ratio: float  # empirical / predicted

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def effective_number_of_keys(weights: np.ndarray) -> float:
    """exp(entropy): 1 for a one-hot row, m for a uniform row over m keys."""
    positive = weights[weights > 0]
    return float(math.exp(-np.sum(positive * np.log(positive))))


def scaling_demo_get(*, d_k: int, seed: int = 0, num_keys: int = SCALING_NUM_KEYS) -> ScalingDemo:
    """Raw vs scaled softmax for one random query; entries of q and k are N(0, 1).

    The vectors are drawn once at the largest width and truncated to ``d_k``, so moving
    the slider widens the same vectors instead of drawing unrelated ones.
    """
    if not SCALING_MIN_D_K <= d_k <= SCALING_MAX_D_K:
        raise ValueError(f"d_k must be between {SCALING_MIN_D_K} and {SCALING_MAX_D_K}")
    rng = np.random.default_rng(seed)
    query = rng.standard_normal((1, SCALING_MAX_D_K))[:, :d_k]  # (1, d_k)
    keys = rng.standard_normal((num_keys, SCALING_MAX_D_K))[:, :d_k]  # (m, d_k)
    values = np.eye(num_keys)  # (m, m): the output row is the weight row itself
    comparison = attention_core.raw_vs_scaled(query, keys, values, query_index=0)
    return ScalingDemo(
        d_k=d_k,
        seed=seed,
        raw_scores=comparison.raw_scores.tolist(),
        scaled_scores=comparison.scaled_scores.tolist(),
        raw_weights=comparison.raw_weights.tolist(),
        scaled_weights=comparison.scaled_weights.tolist(),
        predicted_score_std=math.sqrt(d_k),
        raw_max_weight=float(comparison.raw_weights.max()),
        scaled_max_weight=float(comparison.scaled_weights.max()),
        raw_effective_keys=effective_number_of_keys(comparison.raw_weights),
        scaled_effective_keys=effective_number_of_keys(comparison.scaled_weights),
    )


@dataclass(frozen=True)
class WorkedExample:
    tokens: tuple[str, ...]
    raw_weights: list[list[float]]
    scaled_weights: list[list[float]]


def worked_example_get() -> WorkedExample:
    """All four rows of the chapter's "Order was late it" example, raw and scaled."""
    Q, K, V = attention_core.qkv_projections(
        attention_core.WORKED_EXAMPLE_X,
        attention_core.WORKED_EXAMPLE_W_Q,
        attention_core.WORKED_EXAMPLE_W_K,
        attention_core.WORKED_EXAMPLE_W_V,
    )
    raw = attention_core.attention(Q, K, V, scale=1.0)
    scaled = attention_core.attention(Q, K, V)
    return WorkedExample(
        tokens=attention_core.WORKED_EXAMPLE_TOKENS,
        raw_weights=raw.weights.tolist(),
        scaled_weights=scaled.weights.tolist(),
    )


def variance_rows_get(*, samples: int = DEFAULT_SAMPLES) -> list[VarianceRow]:
    """The Monte Carlo table for ``VARIANCE_DIMS``, cached per sample count."""
    if samples not in SAMPLE_CHOICES:
        raise ValueError(f"samples must be one of {', '.join(map(str, SAMPLE_CHOICES))}")
    key = f"explorations:variance:v{_VARIANCE_CACHE_VERSION}:{samples}:{VARIANCE_SEED}"
    rows = cache.get(key)
    if rows is None:
        rows = _compute_variance_rows(samples)
        cache.set(key, rows, timeout=None)
    return rows


def _compute_variance_rows(samples: int) -> list[VarianceRow]:
    estimates = attention_core.variance_table(VARIANCE_DIMS, samples, seed=VARIANCE_SEED)
    return [
        VarianceRow(
            d_k=estimate.d_k,
            samples=estimate.samples,
            mean=estimate.mean,
            variance=estimate.variance,
            std=estimate.std,
            predicted_variance=estimate.predicted_variance,
            predicted_std=math.sqrt(estimate.predicted_variance),
            variance_ratio=estimate.variance / estimate.predicted_variance,
        )
        for estimate in estimates
    ]
