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
    ("1,000", "write a decimal with a dot (1.000) and a whole number without separators (1000)"),
    ("-12,500", "write a decimal with a dot (-12.500) and a whole number without separators (-12500)"),
    ("1,0000", "use a dot as the decimal point (e.g. 1.0000)"),
    ("1,000,000", "write the number without thousands separators"),
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


CLOSE = ("Not quite: your value is close to the correct answer but not within the required precision; "
         "keep more digits in the intermediate steps and round only at the end.")
CLOSE_TOLERANCE = ("Not quite: your value is close to the correct answer but outside the accepted tolerance; "
                   "keep more digits in the intermediate steps and round only at the end.")


@pytest.mark.parametrize(
    "expected, answer, options, feedback",
    [
        # far: plain "Not correct.", nothing about precision
        ("9", "81", {"decimals": 4}, "Not correct."),  # the square of the answer
        ("48", "2304", {"decimals": 4}, "Not correct."),
        ("2", "3", {"decimals": 0}, "Not correct."),  # a key index
        ("0.3875", "0.4", {"decimals": 4}, "Not correct."),  # 3% off, one significant digit
        ("1.25", "1", {"decimals": 2}, "Not correct."),  # a whole number is never "rounded"
        ("2", "2.1", {}, "Not correct."),
        # integers: no rounding turns one whole number into another, however near
        ("1050624", "1048576", {"decimals": 0}, "Not correct."),
        ("1000", "1001", {"decimals": 4}, "Not correct."),
        # close: within 3 tolerances or 1 % of the correct value
        ("0.3875", "0.3873", {"decimals": 4}, CLOSE),  # 4 tolerances, 0.05 %
        ("16", "16.0010", {"decimals": 4}, CLOSE),
        ("0.0498", "0.05", {"decimals": 4}, CLOSE),  # 0.4 %, one significant digit
        ("0", "0.0001", {"decimals": 4}, CLOSE),  # 2 tolerances
        ("2.6", "2", {"decimals": 0}, CLOSE),  # truncated, not rounded: 0.6, under 3 × 0.5
        ("2", "2.01", {}, CLOSE_TOLERANCE),  # rtol 1e-3: 0.5 %
        ("100", "100.9", {"rtol": 0.001, "atol": 0}, CLOSE_TOLERANCE),
        ("100", "101.1", {"rtol": 0.001, "atol": 0}, "Not correct."),  # 1.1 %: over 3 × 0.1 and 1 %
        # rounded to fewer decimals than asked
        ("0.3875", "0.39", {"decimals": 4},
         "Not quite: that is the correct value rounded to 2 decimal places; give it to 4 decimal places."),
        ("0.3875", "0.388", {"decimals": 4},
         "Not quite: that is the correct value rounded to 3 decimal places; give it to 4 decimal places."),
        ("1.25", "1.3", {"decimals": 2},
         "Not quite: that is the correct value rounded to 1 decimal place; give it to 2 decimal places."),
        ("-0.1249", "−0.12", {"decimals": 4},
         "Not quite: that is the correct value rounded to 2 decimal places; give it to 4 decimal places."),
        # the earlier rules still come first
        ("0.3875", "-0.3875", {"decimals": 4}, "Not quite: the size is right but the sign is wrong."),
        ("0.3875", "3.875", {"decimals": 4},
         "Not quite: your value is off by a factor of 10; check the units or the decimal point."),
        ("9", "81", {"decimals": 4, "value_feedback": [{"value": 81, "feedback": "that is the variance."}]},
         "Not quite: that is the variance."),
    ],
)
def test_a_wrong_value_is_called_close_only_when_it_is(expected, answer, options, feedback):
    grade = check(expected, answer, options)
    assert (grade.correct, grade.feedback) == (False, feedback)
