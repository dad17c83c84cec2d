"""What a student's attention weights say next to the correct ones, without giving them away.

Used for the heatmap feedback after each graded attempt of a weights or output part:

- ``weights_implied_by_output``: the weights an output row o stands for, solving o = w V
  (unique when the rows of V are independent, or else when adding Σ w = 1 pins them down);
- ``weights_behind_output``: what the heatmap of an output answer may show, always read
  from the answer itself, whatever its grade (a person may have set it): the correct
  weights or the diagnosed slip's when they give the answer, else the implied weights or,
  when none are unique, a sentence about the answer itself (never about the method: that
  the weights cannot be recovered from an output is our limitation, not the student's
  mistake);
- ``compare_weights``: which cells are off, and whether the student's distribution is
  sharper or flatter than the correct one, judged by its entropy, but only when the
  student's weights rank the keys as the correct ones do (a wrong scaling changes how
  sharp the weights are, never their order: weights on the wrong key are not "unscaled");
  and, when the student's largest weight is on another key than the highest score's,
  which keys those are (``top_key_message``). These can be shown before the correct
  values may be revealed: they point at the slip (a missing 1/sqrt(d_k) gives sharper
  weights) without printing a single correct number.

Pure NumPy; shapes follow grading.core.attention's legend (m keys, d_v value width).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grading.core.misconceptions import attention_quantity, ordinal_word

# Entropies closer than this (in nats, per row on average) count as "as sharp as expected".
ENTROPY_TOLERANCE = 0.02
# Rows of weights may miss summing to 1 by this much (rounded answers) and still be read.
SUM_TOLERANCE = 0.02
# Weights recovered from an output row are off when further than this from the correct ones.
IMPLIED_WEIGHTS_TOLERANCE = 0.005
# Weights pinned down only by Σ w = 1 are used when the smallest singular value of
# [V | 1] is at least this: a typed output's rounding (5e-5 per entry) then moves them by
# at most ~0.002, well inside IMPLIED_WEIGHTS_TOLERANCE.
MIN_SINGULAR_VALUE = 0.05
# An output entry this close to what some weighting of V's rows gives counts as reached
# (answers are typed rounded, and students round their weights on the way).
OUTPUT_TOLERANCE = 0.005
# Slips made in the product, not in the weights: no heatmap of weights can show them.
PRODUCT_SLIPS = frozenset({"values_on_left"})


# Correct weights closer than this are tied (keys with equal scores): either may come first.
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class TopKeyMiss:
    """A row whose largest student weight is on none of the keys with the highest score."""

    row: int
    student_keys: tuple[int, ...]  # where the student's largest weight is (ties: all of them)
    expected_keys: tuple[int, ...]  # the keys with the highest score (the largest correct weight)


@dataclass(frozen=True)
class WeightsComparison:
    off: list[list[bool]]  # (n, m): True where the student's weight is off
    student_entropy: float | None  # mean row entropy in nats; None when rows are not distributions
    expected_entropy: float
    # "sharper", "flatter", or None (as expected / not comparable / keys ranked otherwise)
    sharpness: str | None
    row_sums: list[float]
    top_key_misses: tuple[TopKeyMiss, ...] = ()  # rows whose largest weight is on a wrong key

    @property
    def are_distributions(self) -> bool:
        return self.student_entropy is not None

    @property
    def sums_are_one(self) -> bool:
        """Every row adds up to 1 within SUM_TOLERANCE (entries may still be negative)."""
        return all(abs(total - 1.0) <= SUM_TOLERANCE for total in self.row_sums)


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
        # Sharper or flatter is said only of weights in the right order: then a scaling
        # (none, or too much) is a slip that gives them; weights on the wrong keys are not.
        if off_cells.any() and ranks_keys_alike(student, expected):
            if student_entropy < expected_entropy - ENTROPY_TOLERANCE:
                sharpness = "sharper"
            elif student_entropy > expected_entropy + ENTROPY_TOLERANCE:
                sharpness = "flatter"
    misses = top_key_misses(student, expected) if off_cells.any() else ()
    return WeightsComparison(
        off=off_cells.tolist(),
        student_entropy=student_entropy,
        expected_entropy=expected_entropy,
        sharpness=sharpness,
        row_sums=student.sum(axis=-1).round(4).tolist(),
        top_key_misses=misses,
    )


def ranks_keys_alike(student, expected) -> bool:
    """Whether no row of ``student`` puts a key strictly above one that the correct weights
    put strictly above it (ties on either side are no disagreement: rounding makes small
    weights equal, equal scores make equal weights). Scaling the scores, by any positive
    factor, keeps this order; weights on the wrong keys, or from V used as the keys, do not.

    student, expected: (n, m)"""
    student = np.atleast_2d(np.asarray(student, dtype=float))
    expected = np.atleast_2d(np.asarray(expected, dtype=float))
    # above[r, a, b]: key a strictly above key b in row r.  (n, m, 1) - (n, 1, m) -> (n, m, m)
    expected_above = expected[:, :, None] - expected[:, None, :] > TIE_TOLERANCE
    student_above = student[:, :, None] - student[:, None, :] > TIE_TOLERANCE
    return not bool(np.any(expected_above & student_above.transpose(0, 2, 1)))


def top_key_misses(student, expected) -> tuple[TopKeyMiss, ...]:
    """The rows whose largest student weight is on none of the highest-scoring keys (the
    keys of the largest correct weight: softmax keeps the order of the scores).

    student, expected: (n, m)"""
    student = np.atleast_2d(np.asarray(student, dtype=float))
    expected = np.atleast_2d(np.asarray(expected, dtype=float))
    misses = []
    for row, (mine, right) in enumerate(zip(student, expected)):
        if not np.all(np.isfinite(mine)):
            continue
        student_keys = _largest(mine)
        expected_keys = _largest(right)
        if not set(student_keys) & set(expected_keys):
            misses.append(TopKeyMiss(row=row, student_keys=student_keys, expected_keys=expected_keys))
    return tuple(misses)


def _largest(row: np.ndarray) -> tuple[int, ...]:
    """The keys whose entry ties for the largest of ``row``.  (m,) -> keys"""
    return tuple(int(key) for key in np.flatnonzero(row >= row.max() - TIE_TOLERANCE))


def _keys_words(keys: tuple[int, ...]) -> str:
    """(3,) -> "key 3"; (1, 3) -> "keys 1 and 3"; (0, 1, 3) -> "keys 0, 1 and 3"."""
    if len(keys) == 1:
        return f"key {keys[0]}"
    return "keys " + ", ".join(str(key) for key in keys[:-1]) + f" and {keys[-1]}"


def top_key_message(comparison: WeightsComparison, *, implied: bool = False,
                    row_labels: list[str] | None = None) -> str | None:
    """One sentence per row whose largest weight is on a wrong key, or None, e.g.
    "Your largest weight is on key 1; the highest score is key 0's, and softmax gives the
    highest score the largest weight." ``implied``: the weights were read back from an
    output ("the weights your output implies"). ``row_labels`` name the rows (the heatmap's
    "query 2"); a row is named only when there are several."""
    sentences = []
    several = len(comparison.off) > 1
    for miss in comparison.top_key_misses:
        tied = len(miss.student_keys) > 1
        if implied:
            lead = (f"The largest of the weights your output implies {'are' if tied else 'is'} "
                    f"on {_keys_words(miss.student_keys)}")
        else:
            lead = f"Your largest weight{'s are' if tied else ' is'} on {_keys_words(miss.student_keys)}"
        highest = (f"the highest score is {_keys_words(miss.expected_keys)}'s" if len(miss.expected_keys) == 1
                   else f"the highest scores are those of {_keys_words(miss.expected_keys)}")
        sentence = f"{lead}; {highest}, and softmax gives the highest score the largest weight."
        if several:
            label = row_labels[miss.row] if row_labels and miss.row < len(row_labels) else f"row {miss.row}"
            sentence = f"For {label}: {sentence[0].lower()}{sentence[1:]}"
        sentences.append(sentence)
    return " ".join(sentences) or None


def weights_implied_by_output(output, V) -> np.ndarray | None:
    """The weights w with w V = output, or None when they are not unique.

    With independent rows of V the solution is unique. Otherwise (always when there are more
    keys than value columns) the weights that also add up to 1, as every softmax row does,
    are used when that pins them down, reproduces the output and is stable under the
    rounding of a typed answer (see MIN_SINGULAR_VALUE).

    output: (n, d_v) or (d_v,);  V: (m, d_v)  ->  (n, m)
    """
    output = np.atleast_2d(np.asarray(output, dtype=float))
    V = np.asarray(V, dtype=float)
    if V.ndim != 2 or output.shape[-1] != V.shape[-1]:
        return None
    if np.linalg.matrix_rank(V) == V.shape[0]:
        return _weights_solving(V, output)
    return _weights_summing_to_one(V, output)


def _weights_solving(V: np.ndarray, output: np.ndarray) -> np.ndarray:
    # w V = o  <=>  V^T w^T = o^T: (d_v, m) x (m, n) -> (d_v, n)
    solution, *_ = np.linalg.lstsq(V.T, output.T, rcond=None)
    return solution.T  # (n, m)


def _with_sum_column(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` with a column of ones: for V, its last product with w is Σ w; for an
    output, the 1 that sum must reach.  (r, c) -> (r, c + 1)"""
    return np.hstack([matrix, np.ones((matrix.shape[0], 1))])


def _weights_summing_to_one(V: np.ndarray, output: np.ndarray) -> np.ndarray | None:
    with_sums = _with_sum_column(V)  # (m, d_v + 1)
    if with_sums.shape[0] > with_sums.shape[1]:
        return None  # more keys than d_v + 1: still not unique
    if np.linalg.svd(with_sums, compute_uv=False).min() < MIN_SINGULAR_VALUE:
        return None
    targets = _with_sum_column(output)  # (n, d_v + 1)
    weights = _weights_solving(with_sums, targets)
    if not _reached(weights @ V, output):  # (n, m) x (m, d_v) -> (n, d_v)
        return None
    return weights


def _reached(reached: np.ndarray, output: np.ndarray) -> bool:
    """Whether a least-squares fit ``reached`` counts as giving ``output``, row by row.

    False only when the fit misses by more than OUTPUT_TOLERANCE · √d in Euclidean norm: then
    no weights at all come within OUTPUT_TOLERANCE of every entry (their miss would be at
    most that, and the fit's no larger), so a note saying "no weighting gives it" is true."""
    limit = OUTPUT_TOLERANCE * np.sqrt(output.shape[-1])
    return bool(np.all(np.linalg.norm(reached - output, axis=-1) <= limit))


@dataclass(frozen=True)
class OutputWeights:
    """What the heatmap of one output answer shows: ``weights`` to draw, or a ``note`` about
    the answer, or neither (the grade's own feedback says it all)."""

    weights: np.ndarray | None  # (n, m)
    note: str | None


def weights_behind_output(output, *, diagnose: dict, misconception: str | None) -> OutputWeights:
    """The weights behind an output answer, read from the answer alone.

    ``diagnose`` is the part's resolved diagnosis (Q, K, V, query_index, optional d_model, as
    ``exercises.engine.part_options`` gives it); ``misconception`` is the checker's diagnosis
    of this very answer (None when there is none or it may not be shown). The grade's
    verdict is not an input: a person may set any score, and the weights drawn must still
    be the answer's. A diagnosed slip's weights give the answer (the checker matched its
    output), and the correct weights are drawn only when they give it too (``_gives``);
    otherwise the weights the answer implies, or, when those are not unique, a note on the
    answer. A slip made in the product (V on the left) gets nothing: its weights are the
    right ones, and another weighting would tell a wrong story.

    output: (n, d_v) or (d_v,)  ->  weights (n, m), n = 1 for one query's row
    """
    output = np.atleast_2d(np.asarray(output, dtype=float))
    V = np.asarray(diagnose["V"], dtype=float)
    if misconception is not None:
        slip = None if misconception in PRODUCT_SLIPS else _query_weights(diagnose, misconception)
        return OutputWeights(weights=slip, note=None)
    if not _fits_value_columns(output, V):
        return OutputWeights(weights=None, note=None)  # the grade already says its shape is wrong
    correct = _query_weights(diagnose, None)
    if correct is not None and _gives(correct, V, output):
        return OutputWeights(weights=correct, note=None)
    implied = weights_implied_by_output(output, V)
    if implied is not None:
        return OutputWeights(weights=implied, note=None)
    return OutputWeights(weights=None, note=output_note(output, V))


# How close w V must be to a typed output for w to count as the weights behind it: the
# checker's default tolerance, tight enough that a near miss never draws the correct weights.
GIVES_RTOL, GIVES_ATOL = 1e-3, 5e-5


def _gives(weights: np.ndarray, V: np.ndarray, output: np.ndarray) -> bool:
    """Whether (n, m) ``weights`` give the (n, d_v) ``output``, up to a typed answer's rounding."""
    if weights.shape[0] != output.shape[0]:
        return False
    product = weights @ V  # (n, m) x (m, d_v) -> (n, d_v)
    return bool(np.allclose(product, output, rtol=GIVES_RTOL, atol=GIVES_ATOL))


def _fits_value_columns(output: np.ndarray, V: np.ndarray) -> bool:
    """Whether an (n, d) output has V's d_v columns: no weights or note speak of another shape."""
    return V.ndim == 2 and output.ndim == 2 and output.shape[-1] == V.shape[-1]


def _query_weights(diagnose: dict, mistake: str | None) -> np.ndarray | None:
    """The (n, m) weights of the diagnosed query (all queries without a query_index) under
    ``mistake`` (None: the correct ones); None when the mistake is impossible here."""
    try:
        full = attention_quantity(
            diagnose["Q"], diagnose["K"], diagnose["V"], "weights", mistake, diagnose.get("d_model")
        )
    except ValueError:  # not an attention slip (e.g. a derivation's)
        return None
    if full is None:
        return None
    query_index = diagnose.get("query_index")
    if query_index is None:
        return np.atleast_2d(full)
    if not -full.shape[-2] <= query_index < full.shape[-2]:
        return None
    return np.atleast_2d(full[..., query_index, :])


NOTE_OUTSIDE_COLUMN = (
    "{where} of your output ({value}) is {side} than every entry in the {column} column of V. "
    "Attention weights are positive and add up to 1, so each entry of the output lies between "
    "the smallest and the largest entry of its column of V."
)
NOTE_NOT_FROM_V = (
    "No weighting of the rows of V gives your output: the output is a sum of the rows of V, "
    "each multiplied by its weight. Check the products and the sum entry by entry."
)
# The notes say what is true of the answer; the slip may be in the weights or in the
# weighted sum (one wrong entry of an output is as wrong as a wrong weight), so both are named.
NOTE_SUM_NOT_ONE = (
    "Your output can only be built from the rows of V with weights that do not add up to 1, "
    "and softmax weights always add up to 1. Check the weights (none missing, each exponential "
    "divided by the sum of all of them), then the weighted sum of the rows of V, entry by entry."
)
NOTE_OTHER_WEIGHTS = (
    "Weights that add up to 1 can give your output, but this query's attention weights do not. "
    "Check the weights (scores, scaling, softmax), then the weighted sum of the rows of V, entry by entry."
)


def output_note(output, V) -> str:
    """A sentence about a wrong output whose weights cannot be recovered, saying the most
    specific thing that is certainly true of it (first that holds):

    1. an entry outside the range of its column of V (no softmax weighting reaches it);
    2. no weighting of V's rows gives it at all;
    3. only weights that do not add up to 1 give it;
    4. weights adding up to 1 give it, but not this query's.

    output: (n, d_v) or (d_v,);  V: (m, d_v)
    """
    output = np.atleast_2d(np.asarray(output, dtype=float))
    V = np.asarray(V, dtype=float)
    if not _fits_value_columns(output, V):
        return NOTE_NOT_FROM_V
    outside = _entry_outside_column_range(output, V)
    if outside is not None:
        return outside
    if not _reached(_weights_solving(V, output) @ V, output):  # (n, m) x (m, d_v) -> (n, d_v)
        return NOTE_NOT_FROM_V
    with_sums, targets = _with_sum_column(V), _with_sum_column(output)  # (m, d_v + 1), (n, d_v + 1)
    if not _reached(_weights_solving(with_sums, targets) @ with_sums, targets):
        return NOTE_SUM_NOT_ONE
    return NOTE_OTHER_WEIGHTS


def _entry_outside_column_range(output: np.ndarray, V: np.ndarray) -> str | None:
    low, high = V.min(axis=0), V.max(axis=0)  # (d_v,) each
    for row, values in enumerate(output):
        for column, value in enumerate(values):
            if low[column] - OUTPUT_TOLERANCE <= value <= high[column] + OUTPUT_TOLERANCE:
                continue
            # Ordinal words, as the answer grid's labels: prompts number tokens from 0.
            entry = ordinal_word(column + 1)
            where = f"The {entry} entry" if output.shape[0] == 1 else f"The {entry} entry in the {ordinal_word(row + 1)} row"
            side = "larger" if value > high[column] else "smaller"
            return NOTE_OUTSIDE_COLUMN.format(where=where, value=f"{value:.6g}", side=side, column=entry)
    return None
