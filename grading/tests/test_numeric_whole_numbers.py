"""Whole-number answers (``decimals: 0`` and an integer correct value: counts, indices,
sizes) accept only that integer; the half-unit boundary of ``decimals`` and ``sigfigs``;
powers of ten written in LaTeX."""

from fractions import Fraction

import numpy as np
import pytest

from grading.core.grades import AnswerFormatError
from grading.core.matrix import check as matrix_check
from grading.core.numeric import (
    CLOSE_NOT_PRECISE,
    NOT_CORRECT,
    check,
    is_close,
    numbers_match,
    parse_number,
    self_test,
    tolerance_for,
    whole_number_part,
)

WHOLE = {"decimals": 0}
FACTOR_10 = "Not quite: your value is off by a factor of 10; check the units or the decimal point."


@pytest.mark.parametrize(
    "expected, answer, correct, feedback",
    [
        # right: the integer however it is written
        (64, "64", True, "Correct."),
        (64, "64.0", True, "Correct."),
        (64, "64.000", True, "Correct."),
        (64, "6.4e1", True, "Correct."),
        (64, "128/2", True, "Correct."),
        (64.0, "64", True, "Correct."),  # a reference computed as d_model / h is a float
        ("64", "64", True, "Correct."),
        (0, "0", True, "Correct."),
        (0, "-0", True, "Correct."),
        (786432, "786432", True, "Correct."),
        (-3, "-3", True, "Correct."),
        # wrong: near misses are not the integer, and a whole number is never "close"
        (64, "63.6", False, NOT_CORRECT),
        (64, "64.4", False, NOT_CORRECT),
        (64, "64.5", False, NOT_CORRECT),
        (64, "63.5", False, NOT_CORRECT),
        (64, "64.0001", False, NOT_CORRECT),
        (1, "1.5", False, NOT_CORRECT),  # "which key (0 to 3)": 1.5 is neither 1 nor 2
        (2, "1.5", False, NOT_CORRECT),
        (786432, "786432.5", False, NOT_CORRECT),
        (786432, "786432.9", False, NOT_CORRECT),  # no "keep more digits" for a count
        (786432, "786431", False, NOT_CORRECT),
        (0, "0.4", False, NOT_CORRECT),
        (2, "3", False, NOT_CORRECT),
        # the other wrong-answer rules still speak
        (64, "-64", False, "Not quite: the size is right but the sign is wrong."),
        (64, "6.4", False, FACTOR_10),
        (64, "640", False, FACTOR_10),
    ],
)
def test_a_whole_number_part_accepts_only_its_integer(expected, answer, correct, feedback):
    grade = check(expected, answer, WHOLE)
    assert (grade.correct, grade.feedback, grade.error) == (correct, feedback, None)


@pytest.mark.parametrize("answer", ["", "abc", "64,0", "1/0", "nan", "inf", "6 4"])
def test_a_whole_number_part_still_reports_unreadable_answers(answer):
    grade = check(64, answer, WHOLE)
    assert grade.error is not None and grade.correct is False


@pytest.mark.parametrize(
    "expected, answer, correct, feedback",
    [
        # A non-integer quantity asked to no decimals (a ratio of 2.6) keeps the rounding rule:
        (2.6, "3", True, "Correct."),
        (2.6, "3.0", True, "Correct."),
        (2.6, "2.6", True, "Correct."),
        (2.6, "2.11", True, "Correct."),
        (2.6, "3.09", True, "Correct."),
        # exactly half a unit away: the boundary is included, as for every tolerance
        (2.6, "2.1", True, "Correct."),
        (2.6, "3.1", True, "Correct."),
        (2.6, "3.11", False, CLOSE_NOT_PRECISE),
        (2.6, "2", False, CLOSE_NOT_PRECISE),  # truncated, not rounded
        (2.6, "5", False, NOT_CORRECT),
        # a correct value exactly halfway between two integers: either rounding is right
        (2.5, "2", True, "Correct."),
        (2.5, "3", True, "Correct."),
        (2.5, "3.01", False, CLOSE_NOT_PRECISE),
    ],
)
def test_a_non_integer_value_at_no_decimals_keeps_the_half_unit_rule(expected, answer, correct, feedback):
    grade = check(expected, answer, WHOLE)
    assert (grade.correct, grade.feedback, grade.error) == (correct, feedback, None)


@pytest.mark.parametrize(
    "expected, answer, options, correct",
    [
        # decimals: d: half a unit either side, the boundary included
        (0.3875, "0.3925", {"decimals": 2}, True),
        (0.3875, "0.3825", {"decimals": 2}, True),
        (0.3875, "0.39251", {"decimals": 2}, False),
        (0.3875, "0.3924", {"decimals": 2}, True),
        (0.3875, "0.39", {"decimals": 2}, True),
        (0.25, "0.2", {"decimals": 1}, True),  # 0.25 to one decimal: 0.2 or 0.3
        (0.25, "0.3", {"decimals": 1}, True),
        (0.25, "0.35", {"decimals": 1}, False),
        (-0.25, "-0.3", {"decimals": 1}, True),
        (64, "64.05", {"decimals": 1}, True),  # only at decimals: 0 is 64 a whole number
        (64, "64.051", {"decimals": 1}, False),
        (64, "64.04", {"decimals": 1}, True),
        (64, "63.96", {"decimals": 1}, True),
        # sigfigs the same way, by the unit of the last significant digit
        (0.3875, "0.3870", {"sigfigs": 3}, True),  # 0.3875 is a tie at 3 significant digits
        (0.3875, "0.3880", {"sigfigs": 3}, True),
        (0.3871, "0.3866", {"sigfigs": 3}, True),  # exactly half a unit of the third figure
        (0.3871, "0.38659", {"sigfigs": 3}, False),
        (0.3871, "0.3867", {"sigfigs": 3}, True),
        # a declared tolerance includes its boundary (0.31 against 0.3 ± 0.01)
        (0.3, "0.31", {"atol": 0.01, "rtol": 0}, True),
        (0.3, "0.29", {"atol": 0.01, "rtol": 0}, True),
        (0.3, "0.3101", {"atol": 0.01, "rtol": 0}, False),
    ],
)
def test_the_half_unit_boundary(expected, answer, options, correct):
    assert check(expected, answer, options).correct is correct


@pytest.mark.parametrize(
    "expected, options, whole",
    [
        (64, {"decimals": 0}, True),
        (64.0, {"decimals": 0}, True),
        (3.0000000000000004, {"decimals": 0}, True),  # 3 * 0.1 * 10: an integer in floating point
        (2.6, {"decimals": 0}, False),
        (64, {"decimals": 1}, False),
        (64, {"decimals": 0, "sigfigs": 2}, False),
        (64, {}, False),
        (64, {"atol": 0.5}, False),
    ],
)
def test_which_parts_are_whole_number_parts(expected, options, whole):
    assert whole_number_part(expected, options) is whole


def test_an_integer_reference_with_float_noise_is_its_integer():
    noisy = 0.1 * 3 * 10  # 3.0000000000000004
    assert check(noisy, "3", WHOLE).correct is True
    assert check(noisy, "3.4", WHOLE).correct is False
    assert check(noisy, "2.6", WHOLE).correct is False


def test_the_float_tolerance_of_matrix_entries_agrees():
    assert tolerance_for(64, WHOLE) == 0.0
    assert tolerance_for(0.26, {"decimals": 1}) > 0.05  # the boundary included, in binary too
    assert tolerance_for(2.6, WHOLE) > 0.5
    assert numbers_match(64, 64.0, WHOLE) and not numbers_match(64, 64.4, WHOLE)


@pytest.mark.parametrize(
    "answer, correct",
    [
        ("[4, 64]", True),
        ("[4.0, 6.4e1]", True),
        ("[4, 64.4]", False),
        ("[4.4, 64]", False),
        ("[3.6, 64]", False),
    ],
)
def test_whole_number_matrix_entries_accept_only_their_integers(answer, correct):
    assert matrix_check([4, 64], answer, WHOLE).correct is correct


def test_integer_matrix_entries_with_decimals_keep_the_half_unit():
    assert matrix_check([2.6, 0.25], "[3, 0]", {"decimals": 0}).details["entry_correct"] == [True, True]
    assert matrix_check([2.6, 3.0], "[2.1, 3.4]", {"decimals": 0}).details["entry_correct"] == [True, False]
    assert np.all(matrix_check([0.25, 0.25], "[0.2, 0.3]", {"decimals": 1}).details["entry_correct"])


def test_a_non_integer_answer_to_a_whole_number_part_is_never_close():
    assert is_close(786432, Fraction("786432.9"), WHOLE) is False
    assert is_close(786432, Fraction("786431"), WHOLE) is False
    assert is_close(2.6, Fraction(2), WHOLE) is True  # a rounding problem is still said


def test_the_self_test_of_a_whole_number_part_grades_near_misses_wrong():
    samples = self_test(64, WHOLE)
    assert "64.4" in samples["wrong"] and "63.5" in samples["wrong"]
    assert all(check(64, answer, WHOLE).correct for answer in samples["right"])
    assert not any(check(64, answer, WHOLE).correct for answer in samples["wrong"])
    assert len(self_test(2.6, WHOLE)["wrong"]) == 3  # far above, far below, the sign: no near misses


@pytest.mark.parametrize(
    "text, value",
    [
        (r"1.27 \times 10^{-14}", Fraction(127, 10**16)),
        (r"1.27\times10^{-14}", Fraction(127, 10**16)),
        (r"1.27 \cdot 10^{-14}", Fraction(127, 10**16)),
        (r"-1.27 \times 10^{3}", Fraction(-1270)),
        (r"1.27 \times 10^{+3}", Fraction(1270)),
        (r"1.27 \times 10^-14", Fraction(127, 10**16)),
        (r"1.27 \times 10^{ -14 }", Fraction(127, 10**16)),
        (r"10^{-14}", Fraction(1, 10**14)),
        (r"2 \cdot 10^(3)", Fraction(2000)),
        # the forms that worked before still do
        ("1.27×10^-14", Fraction(127, 10**16)),
        ("10⁻¹⁴", Fraction(1, 10**14)),
        ("1.27e-14", Fraction(127, 10**16)),
    ],
)
def test_powers_of_ten_in_latex_are_read(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text, message",
    [
        (r"1.27 \times 10^{999}", "outside the range of accepted numbers"),
        (r"1.27 \times 10^{-99999999999}", "outside the range of accepted numbers"),
        (r"1.27 \times 10^{-14)", "a power is read only as a power of ten"),
        (r"1.27 \times 10^(-14}", "a power is read only as a power of ten"),
        (r"1.27 \times 10^{1.5}", "a power is read only as a power of ten"),
        (r"1.27 \times 10^{x}", "contains letters"),
        (r"1.27 \timesx 10^{2}", "contains letters"),
        (r"\times 10^{2}", "a power is read only as a power of ten"),
        (r"1.27 \times 2^{3}", "a power is read only as a power of ten"),
        (r"1.27 \div 10^{3}", "contains letters"),
    ],
)
def test_malformed_latex_powers_are_refused_with_a_reason(text, message):
    with pytest.raises(AnswerFormatError, match=message):
        parse_number(text)


def test_a_latex_power_is_graded_like_any_number():
    assert check(1.27e-14, r"1.27 \times 10^{-14}", {"sigfigs": 3}).correct is True
    assert check(1.27e-14, r"1.27 \times 10^{-13}", {"sigfigs": 3}).feedback == FACTOR_10
