"""Causal-mask slips named from the variant's own numbers: the mask left out, on the wrong
side, off by one either way, masked scores set to 0 instead of −∞, masked after the softmax,
and the √d_k left out of a masked row. Named only when the answer matches the slip and not
the right answer, and never on a row where the slip changes nothing."""

import numpy as np
import pytest

from grading.core.answers import check
from grading.core.grades import InvalidRequest
from grading.core.misconceptions import (
    _CANDIDATES,
    MASK_MISTAKES,
    MISCONCEPTION_LABELS,
    MISCONCEPTIONS,
    REPEATED_SLIPS,
    attention_quantity,
    diagnose_attention,
    diagnose_from_spec,
)

# The causal-mask exercises' construction: Q = I and K = Sᵀ make the scores exactly S (d_k = 4).
S = np.array([[1, 0, 2, -1], [2, 0, 3, 1], [0, 1, 4, 2], [1, 3, -2, 0]], dtype=float)
Q, K = np.eye(4), S.T
V = np.array([[1, 0], [0, 3], [2, 1], [4, 2]], dtype=float)
TOL = {"rtol": 1e-3, "atol": 5e-5}
ROW = 1  # row 1 sees keys 0 and 1: scaled scores [1, 0] -> [0.7311, 0.2689, 0, 0]
RIGHT_WEIGHTS = [0.7311, 0.2689, 0.0, 0.0]
RIGHT_OUTPUT = [0.7311, 0.8068]


def spec(quantity: str, row: int = ROW, mask: str | None = "causal") -> dict:
    diagnose = {"kind": "attention", "Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(), "query_index": row,
                "quantity": quantity}
    if mask is not None:
        diagnose["mask"] = mask
    return diagnose


MESSAGES = {
    "no_scaling": "It looks as if the scores were not divided by √d_k before the softmax.",
    "raw_weights_used": (
        "It looks as if the output was built from the unscaled attention weights; "
        "divide the scores by √d_k before the softmax, then weight the values."
    ),
    "no_mask": (
        "It looks as if the causal mask was left out: token i may attend only to keys 0 to i, "
        "so every later key must get weight 0 and the visible keys share all of the weight."
    ),
    "mask_transposed": (
        "It looks as if the mask hid the wrong side: token i keeps the keys j ≤ i (the lower triangle, "
        "its own key included) and loses the keys after it, not the keys before it."
    ),
    "mask_hides_self": (
        "It looks as if the diagonal was masked too: token i may attend to itself, "
        "so keys 0 to i take part (i + 1 of them), not only keys 0 to i − 1."
    ),
    "mask_one_extra": (
        "It looks as if the mask let one key too many through: token i sees keys 0 to i only, "
        "so key i + 1 must be masked as well."
    ),
    "masked_scores_zeroed": (
        "It looks as if the masked scores were set to 0 instead of −∞: a score of 0 still gets the weight "
        "e⁰ = 1 before normalising, so the masked keys keep some weight; only −∞ gives them exactly 0."
    ),
    "mask_after_softmax": (
        "It looks as if the masked weights were zeroed after a softmax over all the keys: the mask comes "
        "before the softmax, so the visible keys' weights are renormalised and add up to 1."
    ),
}


@pytest.mark.parametrize(
    ("answer", "code", "off"),
    [
        ("[0.8808, 0.1192, 0, 0]", "no_scaling", 2),  # masked, but softmax([2, 0]) unscaled
        ("[0.276, 0.1015, 0.4551, 0.1674]", "no_mask", 4),  # softmax of the whole scaled row
        ("[0, 0.1402, 0.6285, 0.2312]", "mask_transposed", 4),  # keys 1..3 kept: the upper triangle
        ("[1, 0, 0, 0]", "mask_hides_self", 2),  # the diagonal masked too: key 0 alone
        ("[0.3315, 0.122, 0.5465, 0]", "mask_one_extra", 3),  # keys 0..2: key 2 let through
        ("[0.4754, 0.1749, 0.1749, 0.1749]", "masked_scores_zeroed", 4),  # masked scaled scores 0, not −∞
        ("[0.276, 0.1015, 0, 0]", "mask_after_softmax", 2),  # the unmasked weights, zeroed, not renormalised
    ],
)
def test_each_mask_slip_on_a_masked_weights_row_is_named_with_its_message(answer, code, off):
    grade = check("matrix", RIGHT_WEIGHTS, answer, {"diagnose": spec("weights"), "decimals": 4})
    assert (grade.correct, grade.misconception) == (False, code)
    assert grade.feedback == (
        f"Not quite: {off} of the 4 entries are outside the accepted tolerance (see the highlighted cells). "
        f"{MESSAGES[code]}"
    )


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("[0.8808, 0.3576]", "raw_weights_used"),
        ("[1.8557, 1.0945]", "no_mask"),
        ("[2.182, 1.5117]", "mask_transposed"),
        ("[1, 0]", "mask_hides_self"),
        ("[1.4246, 0.9124]", "mask_one_extra"),
        ("[1.5246, 1.0493]", "masked_scores_zeroed"),
        ("[0.276, 0.3046]", "mask_after_softmax"),
    ],
)
def test_each_mask_slip_on_a_masked_output_row_is_named_with_its_message(answer, code):
    grade = check("matrix", RIGHT_OUTPUT, answer, {"diagnose": spec("output"), "decimals": 4})
    assert (grade.correct, grade.misconception) == (False, code)
    assert grade.feedback == (
        "Not quite: 2 of the 2 entries are outside the accepted tolerance (see the highlighted cells). "
        f"{MESSAGES[code]}"
    )


@pytest.mark.parametrize("quantity, right", [("weights", RIGHT_WEIGHTS), ("output", RIGHT_OUTPUT)])
def test_the_right_masked_answer_is_never_diagnosed(quantity, right):
    grade = check("matrix", right, str(right), {"diagnose": spec(quantity), "decimals": 4})
    assert (grade.correct, grade.misconception) == (True, None)
    for row in range(4):
        exact = attention_quantity(Q, K, V, quantity, mask="causal")[row]
        assert diagnose_attention(Q=Q, K=K, V=V, query_index=row, quantity=quantity, answer=np.round(exact, 4),
                                  mask="causal", **TOL) is None


@pytest.mark.parametrize(
    ("quantity", "answer", "right"),
    [
        ("weights", "[0.25, 0.25, 0.25, 0.25]", RIGHT_WEIGHTS),
        ("weights", "[0.6, 0.4, 0, 0]", RIGHT_WEIGHTS),  # masked right, weights of no slip
        ("output", "[1, 1]", RIGHT_OUTPUT),
        ("output", "[0.7311, 0.9]", RIGHT_OUTPUT),  # a near miss in one entry
    ],
)
def test_an_unrelated_wrong_answer_is_not_diagnosed(quantity, answer, right):
    grade = check("matrix", right, answer, {"diagnose": spec(quantity), "decimals": 4})
    assert grade.correct is False
    assert grade.misconception is None
    assert "It looks as if" not in grade.feedback


def test_on_the_last_row_the_mask_changes_nothing_so_its_slips_are_never_named():
    # Row 3 sees every key: no mask, one key more, 0 for −∞ and masking after the softmax all
    # give the right row, which is right, not a slip.
    right = np.round(attention_quantity(Q, K, V, "weights", mask="causal")[3], 4)
    assert right.tolist() == [0.2199, 0.5977, 0.0491, 0.1334]
    for mistake in ("no_mask", "mask_one_extra", "masked_scores_zeroed", "mask_after_softmax"):
        assert np.round(attention_quantity(Q, K, V, "weights", mistake, mask="causal")[3], 4).tolist() == right.tolist()
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=3, quantity="weights", answer=right, mask="causal", **TOL) is None
    # The wrong side still shows there: key 3 alone.
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=3, quantity="weights", answer=[0, 0, 0, 1],
                              mask="causal", **TOL) == "mask_transposed"


def test_on_row_0_a_missing_scale_changes_nothing_and_is_not_named():
    # One visible key gets weight 1 at any scale: [1, 0, 0, 0] is right, not "no √d_k".
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=0, quantity="weights", answer=[1, 0, 0, 0],
                              mask="causal", **TOL) is None
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=0, quantity="weights", answer=[0.276, 0.1674, 0.4551, 0.1015],
                              mask="causal", **TOL) == "no_mask"


def test_where_two_slips_give_the_same_row_the_first_listed_is_named():
    # Row 2 of 4: one key too many is every key, the same row as no mask at all.
    answer = [0.0784, 0.1293, 0.5793, 0.2131]
    assert np.round(attention_quantity(Q, K, V, "weights", "mask_one_extra", mask="causal")[2], 4).tolist() == answer
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=2, quantity="weights", answer=answer,
                              mask="causal", **TOL) == "no_mask"


def test_without_a_mask_the_mask_slips_cannot_be_made_or_named():
    for mistake in MASK_MISTAKES:
        assert attention_quantity(Q, K, V, "weights", mistake) is None
        assert attention_quantity(Q, K, V, "scores", mistake, mask="causal") is None  # a mask changes no raw score
    # The causal row, typed on an unmasked part, is a wrong answer but no slip of that part.
    unmasked_right = np.round(attention_quantity(Q, K, V, "weights")[ROW], 4)
    assert unmasked_right.tolist() == [0.276, 0.1015, 0.4551, 0.1674]
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=ROW, quantity="weights", answer=RIGHT_WEIGHTS, **TOL) is None
    assert diagnose_from_spec(spec("weights", mask=None), np.array(RIGHT_WEIGHTS), {}) is None


def test_the_part_tolerance_decides_the_match():
    near = [0.8808 + 0.004, 0.1192 - 0.004, 0, 0]  # 4e-3 off the unmasked-scale slip
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=ROW, quantity="weights", answer=near, mask="causal", **TOL) is None
    assert diagnose_attention(Q=Q, K=K, V=V, query_index=ROW, quantity="weights", answer=near, mask="causal",
                              rtol=0, atol=0.005) == "no_scaling"


@pytest.mark.parametrize("mask", ["sideways", "", 1, ["causal"]])
def test_an_unknown_mask_is_the_exercise_s_error_not_a_crash(mask):
    with pytest.raises(InvalidRequest, match="option 'diagnose' is not usable: mask must be one of"):
        diagnose_from_spec(spec("weights", mask=mask), np.array(RIGHT_WEIGHTS), {})


def test_every_mask_slip_is_a_candidate_of_weights_and_output_and_has_words():
    for quantity in ("weights", "output"):
        assert set(MASK_MISTAKES) <= set(_CANDIDATES[quantity])
    for code in MASK_MISTAKES:
        assert MISCONCEPTIONS[code] == MESSAGES[code]
        assert MISCONCEPTION_LABELS[code] and len(MISCONCEPTION_LABELS[code]) <= 40
        assert REPEATED_SLIPS[code]
