"""Numeric answers: exact reading, tolerance rules and the wording of format errors."""

from fractions import Fraction

import pytest

from grading.core.grades import AnswerFormatError, InvalidRequest
from grading.core.numeric import check, parse_number, tolerance_for


@pytest.mark.parametrize("text, value", [("5/2", Fraction(5, 2)), ("-0.3875", Fraction(-31, 80)), (".5", Fraction(1, 2)),
                                         ("1.2e-3", Fraction(3, 2500)), ("3.875×10^-1", Fraction(31, 80)), ("−2", Fraction(-2))])
def test_numbers_are_read_exactly(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text, message", [
    ("0,5", "use a dot as the decimal point (e.g. 0.5)"),
    ("nan", "NaN (not a number) is not an accepted answer"),
    ("-inf", "infinity is not an accepted answer"),
    ("1e999", "outside the range of accepted numbers"),
    ("1/0", "divides by zero"),
    ("", "the answer is empty"),
    ("12%", "without %"),
])
def test_format_errors_say_what_to_fix(text, message):
    with pytest.raises(AnswerFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_number(text)


def test_default_tolerance_is_rtol_1e_3_plus_atol_5e_5():
    assert tolerance_for(2.0, {}) == pytest.approx(2e-3 + 5e-5)
    assert check(2.0, "2.0020", {}).correct is True
    assert check(2.0, "2.0021", {}).correct is False


def test_sigfigs_and_decimals_tolerances():
    assert tolerance_for(0.38753, {"sigfigs": 3}) == pytest.approx(0.0005, rel=1e-6)
    assert tolerance_for(123.0, {"decimals": 1}) == pytest.approx(0.05, rel=1e-6)


def test_feedback_spots_sign_and_factor_of_ten():
    assert check("0.3875", "-0.3875", {}).feedback == "Not quite: the size is right but the sign is wrong."
    assert "factor of 10" in check("0.3875", "3.875", {}).feedback


def test_bad_expected_or_options_are_request_errors():
    with pytest.raises(InvalidRequest):
        check("abc", "1", {})
    with pytest.raises(InvalidRequest):
        check("1", "1", {"rtol": "lots"})
