"""Matrix expressions: transposed weights are named; a power of a matrix (Q^-1) is a format
error, refused before grading so it uses no attempt. Also the causal-mask slips through the
real submission pipeline."""

import numpy as np
import pytest

from courses.models import AssignmentItem
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from grading import services
from grading.core.answers import check, parse
from grading.core.misconceptions import MISCONCEPTIONS, attention_quantity
from grading.models import Submission, SubmissionStatus

ATTENTION = "softmax(Q K^T / sqrt(d_k)) V"
SHAPED = {"matrices": {"Q": ["n", "d_k"], "K": ["n", "d_k"], "V": ["n", "d_v"]}, "scalars": {"n": 5, "d_k": 32, "d_v": 12}}
CROSS = {"matrices": {"Q": ["n_q", "d_k"], "K": ["n_k", "d_k"], "V": ["n_k", "d_v"]},
         "scalars": {"n_q": 3, "n_k": 5, "d_k": 16, "d_v": 12}}
TRANSPOSED_WEIGHTS = (
    "Not quite. It looks as if the weights were transposed before they multiply V: softmax(Q Kᵀ / √d_k) already "
    "has one row per query, summing to 1; its transpose has one row per key, and its columns sum to 1."
)
POWER = ("is raised to a power: powers and inverses of matrices are not part of this answer. After a matrix, "
         "^ only marks a transpose (K^T); write products out, e.g. Q K^T, and divide only by numbers.")


@pytest.mark.parametrize("answer", [
    "softmax(Q K^T / sqrt(d_k))^T V",
    "softmax(QK^T/sqrt(d_k))^T V",
    "transpose(softmax(Q K^T / sqrt(d_k))) V",
    r"\mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d_k}}\right)^\top V",
])
def test_transposed_weights_are_named(answer):
    grade = check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.error, grade.misconception) == (False, None, "weights_transposed")
    assert grade.feedback == TRANSPOSED_WEIGHTS


def test_column_softmax_is_still_the_wrong_axis_and_transposed_weights_are_not():
    grade = check("matrix_expression", ATTENTION, "transpose(softmax(K Q^T / sqrt(d_k))) V", SHAPED)
    assert grade.misconception == "softmax_wrong_axis"
    # Two slips at once (no scale and transposed weights) are not named as one of them.
    assert check("matrix_expression", ATTENTION, "softmax(Q K^T)^T V", SHAPED).misconception is None
    assert check("matrix_expression", ATTENTION, ATTENTION, SHAPED).correct is True


def test_transposed_weights_of_unequal_lengths_are_a_shape_mismatch_not_a_slip():
    grade = check("matrix_expression", ATTENTION, "softmax(Q K^T / sqrt(d_k))^T V", CROSS)
    assert (grade.correct, grade.misconception) == (False, None)
    assert grade.feedback == "Not quite: softmax(...)^T V has shapes 5×3 and 5×12: the inner sizes do not match"


@pytest.mark.parametrize(("answer", "message"), [
    ("Q^-1", f"Q {POWER}"),
    ("Q^{-1} K^T", f"Q {POWER}"),
    ("softmax(Q K^T / sqrt(d_k)) V^(-1)", f"V {POWER}"),
    ("(Q K^T)^2 V", f"a matrix expression {POWER}"),
    ("softmax(Q K^T / sqrt(d_k))^2 V", f"softmax(...) {POWER}"),
    ("2^Q", "Q is used as an exponent: a matrix cannot be a power here. After a matrix, ^ only marks a transpose (K^T)."),
])
def test_a_power_of_a_matrix_is_a_format_error(answer, message):
    parsed = parse("matrix_expression", answer, SHAPED)
    assert (parsed.value, parsed.error) == (None, message)
    grade = check("matrix_expression", ATTENTION, answer, SHAPED)
    assert (grade.correct, grade.error, grade.misconception) == (False, message, None)


@pytest.mark.parametrize("answer", [
    "softmax(Q K^T d_k^(-1/2)) V", "softmax(Q K^T / d_k^0.5) V", "softmax(Q^T^T K^T / sqrt(d_k)) V",
])
def test_powers_of_numbers_and_transposes_are_still_read(answer):
    assert parse("matrix_expression", answer, SHAPED).error is None
    assert check("matrix_expression", ATTENTION, answer, SHAPED).correct is True


# ---------------------------------------------------------------- the pipeline


@pytest.fixture
def submit(django_capture_on_commit_callbacks):
    def create(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return services.submission_create(**kwargs)

    return create


def variant_of(demo, student, slug):
    item = AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=slug)
    return variant_get_or_create_for_item(item=item, student=student)


def test_an_inverse_is_refused_without_using_an_attempt_and_transposed_weights_are_named(submit, demo, student):
    variant = variant_of(demo, student, "attention-as-matrix-expression")
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(variant=variant, student=student, part="formula", raw_answer="Q^-1 K^T V")
    assert refused.value.code == "invalid"
    assert refused.value.message == f"Q {POWER}"
    assert Submission.objects.count() == 0
    submission = submit(variant=variant, student=student, part="formula", raw_answer="softmax(Q K^T / sqrt(d_k))^T V")
    submission.refresh_from_db()
    assert (submission.status, submission.attempt, submission.correct) == (SubmissionStatus.GRADED, 1, False)
    assert submission.misconception == "weights_transposed"
    assert submission.feedback["misconception_message"] == MISCONCEPTIONS["weights_transposed"]


@pytest.mark.parametrize(("slug", "part", "quantity"), [
    ("causal-mask-weights", "masked_weights", "weights"),
    ("causal-masked-output", "masked_output", "output"),
])
def test_a_forgotten_mask_is_named_on_the_student_s_own_variant(submit, demo, student, slug, part, quantity):
    variant = variant_of(demo, student, slug)
    params = variant.params
    row = params["r"]
    unmasked = attention_quantity(np.eye(4), np.array(params["S"]).T, params["V"], quantity)[row]
    spec = engine.spec_from_json(variant.exercise_version.spec)
    assert spec.part(part).diagnose["mask"] == "causal"
    submission = submit(variant=variant, student=student, part=part,
                        raw_answer="[" + ", ".join(f"{value:.4f}" for value in unmasked) + "]")
    submission.refresh_from_db()
    assert (submission.status, submission.correct, submission.misconception) == (SubmissionStatus.GRADED, False, "no_mask")
    assert submission.feedback["misconception_message"] == MISCONCEPTIONS["no_mask"]
