"""The checkers' option readers, given options no authoring check has seen (a version stored
before the exercise checks refused them, a hand-built request): an option the checker cannot
grade with is the request's fault (InvalidRequest, at once), never a hang, a could-not-grade
for every answer, or a crash of the live preview; an option written as null reads as its
default, as a missing one does."""

import pytest

from grading.core import answers
from grading.core.answers import InvalidRequest

DERIVATION_OPTIONS = {
    "symbols": {"d_k": "positive"},
    "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}},
    "start": "Var(dot(q, k))",
}
DERIVATION = ["Var(dot(q, k))", "Var(Σ_m q_m k_m)", "d_k Var(q_m k_m)", "d_k (E[q_m^2 k_m^2] - E[q_m k_m]^2)",
              "d_k (E[q_m^2] E[k_m^2] - E[q_m k_m]^2)", "d_k (E[q_m^2] E[k_m^2] - (E[q_m] E[k_m])^2)", "d_k"]
MATRICES = {"Q": ["n", "d_k"], "K": ["n", "d_k"], "V": ["n", "d_v"]}

REFUSED = [
    # (answer type, expected, answer, options, the request's error)
    ("numeric", "1/3", "0.3333", {"decimals": 10**6},
     "option 'decimals' must be a whole number from 0 to 400, got 1000000"),
    ("numeric", "1/3", "0.3333", {"sigfigs": 10**400},
     "option 'sigfigs' must be a whole number from 0 to 400, got a whole number of 401 digits"),
    ("matrix", [0.25, 0.75], [0.25, 0.75], {"decimals": 10**6},
     "option 'decimals' must be a whole number from 0 to 400, got 1000000"),
    ("numeric", "1/3", "0.3333", {"atol": 10**400},
     "option 'atol' must be a finite number >= 0, got a whole number of 401 digits"),
    ("symbolic", "sqrt(d_k)", "sqrt(d_k)", {"symbols": {"d_k": "positive"}, "forbid_symbols": 400},
     "option 'forbid_symbols' must be a list of symbol names"),
    ("matrix_expression", "Q K^T", "Q K^T", {"matrices": MATRICES, "scalars": {"n": 10**400, "d_k": 3, "d_v": 2}},
     "every value in option 'scalars' must be a number"),
    ("free_text", None, "Because.", {"max_chars": 0},
     "option 'max_chars' must be at least 1: no explanation fits in 0 characters"),
]


@pytest.mark.timeout(20)  # 10**6 decimals took minutes to turn into a tolerance
@pytest.mark.parametrize(("answer_type", "expected", "answer", "options", "message"), REFUSED,
                         ids=[f"{row[0]}-{list(row[3])[-1]}" for row in REFUSED])
def test_an_option_no_answer_can_be_graded_with_is_the_requests_fault(answer_type, expected, answer, options, message):
    with pytest.raises(InvalidRequest) as refused:
        answers.check(answer_type, expected, answer, options)
    assert str(refused.value) == message


def test_the_live_preview_names_an_unreadable_option_as_the_requests_fault():
    with pytest.raises(InvalidRequest, match="^option 'max_chars' must be a whole number >= 0, got 'abc'$"):
        answers.parse("free_text", "Because.", {"max_chars": "abc"})


NULL_IS_THE_DEFAULT = [
    # (answer type, expected, a right answer, options with a null)
    ("numeric", "1/3", "0.3333", {"rtol": None, "atol": None}),
    ("symbolic", "sqrt(d_k)", "sqrt(d_k) * (d_k^2 - 1) / ((d_k - 1) * (d_k + 1))",
     {"symbols": {"d_k": "positive"}, "time_limit": None}),
    ("derivation", "d_k", DERIVATION, {**DERIVATION_OPTIONS, "min_steps": None, "big_step_credit": None}),
]


@pytest.mark.parametrize(("answer_type", "expected", "answer", "options"), NULL_IS_THE_DEFAULT,
                         ids=[row[0] for row in NULL_IS_THE_DEFAULT])
def test_an_option_written_as_null_reads_as_its_default(answer_type, expected, answer, options):
    grade = answers.check(answer_type, expected, answer, options)
    assert (grade.correct, grade.details.get("could_not_grade")) == (True, None), grade.feedback


def test_a_free_text_limit_written_as_null_is_the_default_limit():
    assert answers.parse("free_text", "x" * 10_000, {"max_chars": None}).error is None
    assert answers.parse("free_text", "x" * 10_001, {"max_chars": None}).error == (
        "the answer is too long (10001 characters; the limit is 10000)")


def test_a_forbidden_symbol_written_as_one_name_forbids_that_name_not_its_letters():
    options = {"symbols": {"d_k": "positive", "d_model": "positive", "h": "positive"}, "forbid_symbols": "d_model"}
    grade = answers.check("symbolic", "d_k", "d_model / h", options)
    assert (grade.correct, grade.feedback) == (False, "Your answer must be written without d_model.")
