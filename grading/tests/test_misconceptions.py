"""Misconception diagnosis on the chapter's worked example and on random variants."""

import numpy as np
import pytest

from grading.core import attention, misconceptions
from grading.core.answers import check
from grading.core.misconceptions import MISCONCEPTIONS, attention_quantity, diagnose_attention

X = np.array(attention.WORKED_EXAMPLE_X, dtype=float)
Q, K, V = attention.qkv_projections(X, attention.WORKED_EXAMPLE_W_Q, attention.WORKED_EXAMPLE_W_K, attention.WORKED_EXAMPLE_W_V)
IT = 3
TOL = {"rtol": 1e-3, "atol": 5e-5}


def test_every_code_has_a_message():
    assert set(MISCONCEPTIONS) >= {"no_scaling", "divided_by_d_k", "softmax_wrong_axis", "k_not_transposed",
                                   "d_model_scale", "raw_weights_used", "forgot_sigma"}
    assert all(message.strip() for message in MISCONCEPTIONS.values())


@pytest.mark.parametrize(
    "answer, quantity, code",
    [
        ([0.5344, 0.0723, 0.1966, 0.1966], "weights", "no_scaling"),  # the chapter's softmax(raw)
        ([1.7311, 0.2689, 2.1932, 1.0000], "output", "raw_weights_used"),  # the chapter's output(raw weights)
        ([5, 3, 4, 4], "scaled_scores", "no_scaling"),
        ([1.25, 0.75, 1.0, 1.0], "scaled_scores", "divided_by_d_k"),
        ([4, 4, 5, 3], "scores", "k_not_transposed"),  # Q[3] K instead of Q[3] K^T
        ([1.7149, 0.7650, 1.1525, 1.3275], "output", "values_on_left"),  # w V^T (= V w) instead of w V
    ],
)
def test_worked_example_numbers(answer, quantity, code):
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=IT, quantity=quantity, answer=answer, **TOL) == code


@pytest.mark.parametrize(
    "answer, quantity",
    [
        ([0.3875, 0.1425, 0.2350, 0.2350], "weights"),
        ([1.6225, 0.3775, 1.8674, 1.0000], "output"),
        ([2.5, 1.5, 2.0, 2.0], "scaled_scores"),
        ([5, 3, 4, 4], "scores"),
    ],
)
def test_worked_example_correct_answers_are_never_labelled(answer, quantity):
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=IT, quantity=quantity, answer=answer, **TOL) is None


def test_unrelated_wrong_answer_gets_no_label():
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=IT, quantity="weights", answer=[0.25] * 4, **TOL) is None


def test_d_model_scale_is_not_reported_when_it_equals_the_right_scale():
    right = attention_quantity(Q, K, V, "weights")[IT]
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=IT, quantity="weights", answer=right, d_model=4, **TOL) is None


def _variant(seed: int, n: int = 4, d_k: int = 4, d_v: int = 3):
    rng = np.random.default_rng(seed)
    return (rng.integers(-2, 3, (n, d_k)).astype(float), rng.integers(-2, 3, (n, d_k)).astype(float),
            rng.integers(-2, 3, (n, d_v)).astype(float))


MISTAKES_BY_QUANTITY = [(quantity, mistake) for quantity, mistakes in misconceptions._CANDIDATES.items() for mistake in mistakes]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("quantity, mistake", MISTAKES_BY_QUANTITY)
def test_each_mistake_is_detected_on_random_variants(seed, quantity, mistake):
    q, k, v = _variant(seed)
    d_model = 8  # two heads of d_k = 4
    mistaken = attention_quantity(q, k, v, quantity, mistake, d_model)
    right = attention_quantity(q, k, v, quantity)
    if mistaken is None:
        pytest.skip("the mistake cannot be made on these shapes (V on the left needs a square V)")
    if np.allclose(mistaken, right, rtol=1e-3, atol=5e-5):
        pytest.skip("this variant cannot tell the mistake from the right method")
    full = diagnose_attention(Q=q, K=k, V=v, query_index=None, quantity=quantity, answer=mistaken, d_model=d_model, **TOL)
    assert full == mistake
    assert diagnose_attention(Q=q, K=k, V=v, query_index=None, quantity=quantity, answer=right, d_model=d_model, **TOL) is None


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("quantity", misconceptions.QUANTITIES)
def test_correct_rows_on_random_variants_are_never_labelled(seed, quantity):
    q, k, v = _variant(seed)
    right = attention_quantity(q, k, v, quantity)
    for row in range(right.shape[0]):
        assert diagnose_attention(Q=q, K=k, V=v, query_index=row, quantity=quantity, answer=np.round(right[row], 4),
                                  d_model=8, **TOL) is None


@pytest.mark.parametrize("seed", range(20))
def test_v_on_the_left_is_named_on_square_random_variants_and_impossible_on_wide_ones(seed):
    q, k, v = _variant(seed, d_v=4)
    weights = attention_quantity(q, k, v, "weights")
    transposed = weights @ v.T  # (n, m) x (d_v, m) -> (n, d_v): each weight row against V's rows
    np.testing.assert_allclose(attention_quantity(q, k, v, "output", "values_on_left"), transposed)
    for row in range(4):
        if np.allclose(transposed[row], attention_quantity(q, k, v, "output")[row], rtol=1e-3, atol=5e-5):
            continue  # this row cannot tell V from Vᵀ
        code = diagnose_attention(Q=q, K=k, V=v, query_index=row, quantity="output",
                                  answer=np.round(transposed[row], 4), **TOL)
        assert code == "values_on_left"
    wide = _variant(seed)[2]  # (4, 3): there is no V on the left of a row of 4 weights
    assert attention_quantity(q, k, wide, "output", "values_on_left") is None
    assert attention_quantity(q, k, v, "weights", "values_on_left") is None  # only an output shows it


def test_softmax_wrong_axis_detected_on_worked_example_matrix():
    column_normalised = attention_quantity(Q, K, V, "weights", "softmax_wrong_axis")
    code = diagnose_attention(Q=Q, K=K, V=V, query_index=None, quantity="weights", answer=np.round(column_normalised, 4), **TOL)
    assert code == "softmax_wrong_axis"


def test_matrix_check_reports_the_misconception():
    spec = {"kind": "attention", "Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(), "query_index": IT, "quantity": "weights"}
    grade = check("matrix", [0.3875, 0.1425, 0.2350, 0.2350], "[0.5344, 0.0723, 0.1966, 0.1966]", {"diagnose": spec})
    assert (grade.correct, grade.misconception) == (False, "no_scaling")
    assert MISCONCEPTIONS["no_scaling"] in grade.feedback
    right = check("matrix", [0.3875, 0.1425, 0.2350, 0.2350], "[0.3875, 0.1425, 0.2350, 0.2350]", {"diagnose": spec})
    assert (right.correct, right.misconception) == (True, None)


@pytest.mark.parametrize(
    "number,word",
    [(1, "first"), (2, "second"), (3, "third"), (10, "tenth"), (11, "11th"), (12, "12th"),
     (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (101, "101st"), (111, "111th")],
)
def test_ordinal_words(number, word):
    from grading.core.misconceptions import ordinal_word

    assert ordinal_word(number) == word


@pytest.mark.parametrize(
    "code,times,note",
    [
        ("no_scaling", 1, ""),
        ("no_scaling", 2, "This is the second time the √d_k was left out."),
        ("no_scaling", 3, "This is the third time the √d_k was left out."),
        ("forgot_sigma", 12, "This is the 12th time the σ factors were left out."),
        ("sigmas_added", 2, "This is the second time the σ factors were added instead of multiplied."),
        ("some_new_code", 2, "This is the second time this same slip came up."),
        ("", 5, ""),
    ],
)
def test_repeat_note(code, times, note):
    from grading.core.misconceptions import repeat_note

    assert repeat_note(code, times) == note
