"""Matrix expressions: non-commutative products, transposes, shape explanations."""

import pytest

from grading.core.answers import check, parse

OPTIONS = {"matrices": {"Q": [4, 3], "K": [4, 3], "V": [4, 2]}}
ATTENTION = "softmax(Q K^T / sqrt(d_k)) V"


def test_shape_mismatch_is_explained_with_a_transpose_hint():
    grade = check("matrix_expression", ATTENTION, "softmax(Q K / sqrt(d_k)) V", OPTIONS)
    assert grade.feedback == "Not quite: Q K has shapes 4×3 and 4×3: the inner sizes do not match; did you mean K^T?"
    assert (grade.misconception, grade.error) == ("k_not_transposed", None)


def test_products_do_not_commute():
    square = {"matrices": {"A": [3, 3], "B": [3, 3]}}
    assert check("matrix_expression", "A B", "B A", square).correct is False
    assert check("matrix_expression", "A B", "(B^T A^T)^T", square).correct is True


def test_d_k_defaults_to_the_key_width_but_a_number_for_it_is_wrong():
    assert check("matrix_expression", ATTENTION, "softmax(Q K^T / sqrt(d_k)) V", OPTIONS).correct is True
    grade = check("matrix_expression", ATTENTION, "softmax(Q K^T / sqrt(3)) V", OPTIONS)
    assert (grade.correct, grade.misconception) == (False, "dimension_as_number")
    assert grade.feedback == ("Not quite: your expression only gives the right result when d_k = 3. "
                              "Write it in terms of d_k, not as a number.")
    assert check("matrix_expression", ATTENTION, "softmax(Q K^T / sqrt(4)) V", OPTIONS).correct is False


def test_wrong_result_shape_is_named():
    grade = check("matrix_expression", ATTENTION, "softmax(Q K^T / sqrt(d_k))", OPTIONS)
    assert grade.feedback == "Not quite: your expression gives 4×4, but the answer is 4×2."


def test_unknown_name_is_invalid():
    assert check("matrix_expression", ATTENTION, "softmax(Q W^T) V", OPTIONS).error.startswith("unknown name 'W'")


def test_preview():
    assert parse("matrix_expression", "Q K^T", OPTIONS).preview_latex == r"Q \, {K}^\top"


SLIP_OPTIONS = {"matrices": {"Q": [4, 16], "K": [4, 16], "V": [4, 24]}, "scalars": {"d_k": 16}}
ATTENTION_OUTPUT = "softmax(Q K^T / sqrt(d_k)) V"


@pytest.mark.parametrize(
    ("answer", "misconception"),
    [
        ("softmax(Q K^T) V", "no_scaling"),
        ("softmax(Q K^T / d_k) V", "divided_by_d_k"),
        ("transpose(softmax(K Q^T / sqrt(d_k))) V", "softmax_wrong_axis"),  # columns sum to 1
        ("softmax(Q K / sqrt(d_k)) V", "k_not_transposed"),
        ("softmax(Q K^T / 2) V", None),
        (ATTENTION_OUTPUT, None),
    ],
)
def test_matrix_expression_slips_are_named(answer, misconception):
    grade = check("matrix_expression", ATTENTION_OUTPUT, answer, SLIP_OPTIONS)
    assert grade.misconception == misconception
    assert grade.error is None
    assert grade.correct is (answer == ATTENTION_OUTPUT)
