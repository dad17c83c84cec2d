"""What a student's attention weights say next to the correct ones, without giving them away.

Used for the heatmap feedback after each graded attempt of a weights or output part:

- ``weights_implied_by_output``: the weights an output row o stands for, solving o = w V
  (unique only when the rows of V are independent);
- ``compare_weights``: which cells are off, and whether the student's distribution is
  sharper or flatter than the correct one, judged by its entropy. Both can be shown
  before the correct values may be revealed: they point at the slip (a missing
  1/sqrt(d_k) gives sharper weights) without printing a single correct number.

Pure NumPy; shapes follow grading.core.attention's legend (m keys, d_v value width).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Entropies closer than this (in nats, per row on average) count as "as sharp as expected".
ENTROPY_TOLERANCE = 0.02
# Rows of weights may miss summing to 1 by this much (rounded answers) and still be read.
SUM_TOLERANCE = 0.02
# Weights recovered from an output row are off when further than this from the correct ones.
IMPLIED_WEIGHTS_TOLERANCE = 0.005


@dataclass(frozen=True)
class WeightsComparison:
    off: list[list[bool]]  # (n, m): True where the student's weight is off
    student_entropy: float | None  # mean row entropy in nats; None when rows are not distributions
    expected_entropy: float
    sharpness: str | None  # "sharper", "flatter", or None (as expected / not comparable)
    row_sums: list[float]

    @property
    def are_distributions(self) -> bool:
        return self.student_entropy is not None


def row_entropy(weights: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of a (n, m) array of probabilities; 0·log 0 = 0."""
    weights = np.asarray(weights, dtype=float)
    safe = np.where(weights > 0, weights, 1.0)
    return -(weights * np.log(safe)).sum(axis=-1)  # (n, m) -> (n,)


def is_distribution(weights: np.ndarray, tolerance: float = SUM_TOLERANCE) -> bool:
    """Every entry in [0, 1] (within rounding) and every row summing to 1 within ``tolerance``."""
    weights = np.asarray(weights, dtype=float)
    return bool(
        np.all(np.isfinite(weights))
        and np.all(weights >= -tolerance)
        and np.all(weights <= 1 + tolerance)
        and np.allclose(weights.sum(axis=-1), 1.0, atol=tolerance)
    )


def compare_weights(
    student, expected, *, atol: float, off: list[list[bool]] | None = None
) -> WeightsComparison:
    """Compare two (n, m) weight arrays of the same shape.

    ``off`` may pass the grader's own per-entry verdicts (then ``atol`` is not used for cells).
    """
    student = np.atleast_2d(np.asarray(student, dtype=float))
    expected = np.atleast_2d(np.asarray(expected, dtype=float))
    if student.shape != expected.shape:
        raise ValueError(f"shapes differ: {student.shape} and {expected.shape}")
    if off is None or np.asarray(off).size != student.size:
        off_cells = ~np.isclose(student, expected, rtol=0.0, atol=atol)
    else:
        off_cells = ~np.asarray(off, dtype=bool).reshape(student.shape)
    expected_entropy = float(row_entropy(expected).mean())
    student_entropy = None
    sharpness = None
    if is_distribution(student):
        clipped = np.clip(student, 0.0, 1.0)
        student_entropy = float(row_entropy(clipped).mean())
        if off_cells.any():
            if student_entropy < expected_entropy - ENTROPY_TOLERANCE:
                sharpness = "sharper"
            elif student_entropy > expected_entropy + ENTROPY_TOLERANCE:
                sharpness = "flatter"
    return WeightsComparison(
        off=off_cells.tolist(),
        student_entropy=student_entropy,
        expected_entropy=expected_entropy,
        sharpness=sharpness,
        row_sums=student.sum(axis=-1).round(4).tolist(),
    )


def weights_implied_by_output(output, V) -> np.ndarray | None:
    """The weights w with w V = output, or None when V's rows are dependent (no unique w).

    output: (n, d_v) or (d_v,);  V: (m, d_v)  ->  (n, m)
    """
    output = np.atleast_2d(np.asarray(output, dtype=float))
    V = np.asarray(V, dtype=float)
    if V.ndim != 2 or output.shape[-1] != V.shape[-1]:
        return None
    if np.linalg.matrix_rank(V) < V.shape[0]:
        return None
    # w V = o  <=>  V^T w^T = o^T: (d_v, m) x (m, n) -> (d_v, n)
    solution, *_ = np.linalg.lstsq(V.T, output.T, rcond=None)
    return solution.T  # (n, m)
