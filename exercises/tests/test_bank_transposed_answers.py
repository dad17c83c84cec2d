"""Rows and columns swapped, on the bank's own exercises: a score matrix typed as its
transpose, one query's weights read down its column (weights indexed [j, i]), its scores
from K Qᵀ and its output from the transposed weights are each named; the transpose of a
symmetric matrix stays right, and a wrong answer of another kind is not called transposed.
The expected numbers are the reference ones, from grading.core.attention."""

from pathlib import Path

import numpy as np
import pytest

from exercises.engine import draw_variant, grade_part, load_spec
from exercises.engine.grading import part_options
from exercises.engine.reference import part_reference
from grading.core import attention
from grading.core.misconceptions import MISCONCEPTIONS

BANK = Path(__file__).resolve().parents[1] / "bank"
SEEDS = range(4)
SWAPPED = f"Not quite. {MISCONCEPTIONS['matrix_transposed']}"


def variant(slug: str, seed: int):
    spec = load_spec((BANK / f"{slug}.yaml").read_text())
    return spec, draw_variant(spec, seed).params


def reference(spec, params, part_key: str) -> np.ndarray:
    return np.array(part_reference(spec.part(part_key), params), dtype=float)


def attention_of(spec, params, part_key: str):
    """The part's attention (reference numbers) and the query it asks about."""
    diagnose = part_options(spec, params, part_key)["diagnose"]
    result = attention.attention(diagnose["Q"], diagnose["K"], diagnose["V"], causal=diagnose.get("mask") == "causal")
    return result, diagnose["query_index"], np.asarray(attention.as_array(diagnose["V"]))


def typed(values: np.ndarray, decimals: int = 4):
    return np.round(values, decimals).tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_score_matrix_typed_transposed_is_named(seed):
    spec, params = variant("score-matrix-entries", seed)
    scores = reference(spec, params, "full_matrix")
    assert not np.array_equal(scores, scores.T)  # the gates keep S unsymmetric
    grade = grade_part(spec, params, "full_matrix", scores.T.tolist())
    assert (grade.correct, grade.score, grade.misconception, grade.feedback) == (False, 0.0, "matrix_transposed", SWAPPED)
    assert grade_part(spec, params, "full_matrix", scores.tolist()).correct is True


@pytest.mark.parametrize("seed", SEEDS)
def test_a_score_matrix_wrong_in_one_entry_is_not_called_transposed(seed):
    spec, params = variant("score-matrix-entries", seed)
    slipped = reference(spec, params, "full_matrix")
    slipped[0, 0] += 1
    grade = grade_part(spec, params, "full_matrix", slipped.tolist())
    assert (grade.correct, grade.misconception) == (False, None)
    assert grade.feedback == "Not quite: 1 of the 9 entries is outside the accepted tolerance (see the highlighted cells)."


@pytest.mark.parametrize("seed", SEEDS)
def test_the_transpose_of_the_symmetric_jacobian_is_right(seed):
    spec, params = variant("softmax-gradient-saturation", seed)
    jacobian = reference(spec, params, "jacobian")
    assert np.allclose(jacobian, jacobian.T)
    grade = grade_part(spec, params, "jacobian", typed(jacobian.T))
    assert (grade.correct, grade.score, grade.misconception) == (True, 1.0, None)


@pytest.mark.parametrize("slug, part_key", [
    ("attention-weights-one-query", "weights"), ("equal-keys", "weights"), ("late-query-scaled-weights", "scaled_weights"),
    ("causal-mask-weights", "masked_weights"),
])
@pytest.mark.parametrize("seed", SEEDS)
def test_one_querys_weights_read_down_its_column_are_named(slug, part_key, seed):
    spec, params = variant(slug, seed)
    result, query, _ = attention_of(spec, params, part_key)
    column = result.weights[:, query]
    if np.allclose(np.round(column, 4), np.round(result.weights[query], 4)):
        pytest.skip("on this variant the query's column is its row")
    grade = grade_part(spec, params, part_key, typed(column))
    assert (grade.correct, grade.misconception) == (False, "matrix_transposed")
    assert grade.feedback.endswith(MISCONCEPTIONS["matrix_transposed"])
    assert grade_part(spec, params, part_key, typed(result.weights[query])).correct is True


@pytest.mark.parametrize("slug, part_key", [("late-query-raw-scores", "raw_scores"),
                                             ("late-query-scaled-weights", "scaled_scores")])
@pytest.mark.parametrize("seed", SEEDS)
def test_one_querys_scores_from_k_q_transposed_are_named(slug, part_key, seed):
    spec, params = variant(slug, seed)
    result, query, _ = attention_of(spec, params, part_key)
    scores = result.scores if part_key == "raw_scores" else result.scaled_scores
    if np.allclose(scores[:, query], scores[query]):
        pytest.skip("on this variant the query's column is its row")
    grade = grade_part(spec, params, part_key, typed(scores[:, query]))
    assert (grade.correct, grade.misconception) == (False, "keys_queries_swapped")


@pytest.mark.parametrize("slug", ["attention-weights-one-query", "late-query-output", "equal-keys"])
@pytest.mark.parametrize("seed", SEEDS)
def test_an_output_from_the_transposed_weights_is_named(slug, seed):
    spec, params = variant(slug, seed)
    result, query, values = attention_of(spec, params, "output")
    from_transposed = (result.weights.T @ values)[query]  # Σ_j W[j, i] V_j instead of Σ_j W[i, j] V_j
    if np.allclose(np.round(from_transposed, 4), np.round(result.output[query], 4)):
        pytest.skip("on this variant the transposed weights give the same output")
    grade = grade_part(spec, params, "output", typed(from_transposed))
    assert (grade.correct, grade.misconception) == (False, "weights_transposed")
    assert grade.feedback.endswith(MISCONCEPTIONS["weights_transposed"])


def test_the_chapter_variant_names_each_index_slip_exactly():
    spec, params = variant("attention-weights-one-query", 0)
    chapter = draw_variant(spec, 0, name="chapter").params
    assert [grade_part(spec, chapter, "weights", answer).misconception for answer in (
        [0.25, 0.25, 0.235, 0.235],  # the column of "it": weights indexed [j, i]
        [0.3875, 0.1425, 0.2350, 0.2350],  # right
        [0.25, 0.25, 0.25, 0.25],  # another slip, not named
    )] == ["matrix_transposed", None, None]
    assert grade_part(spec, chapter, "output", [1.455, 0.485, 1.455, 0.97]).misconception == "weights_transposed"
