"""Numbers, matrices and choices as a careless student or an attacker types them, a fourth
round: signs pasted as hyphens or typed apart from the number, a mixed number after a letter,
text after a matrix's closing bracket, a pasted wall of numbers of the wrong shape, every
box of a multiple choice ticked, and a grid cell posted twice."""

import time

import pytest
from django.http import QueryDict

from grading.answer_input import raw_answer_from_post
from grading.core.answers import check

# Measured: under 10 ms each on a quiet machine, 80 ms for the 3,000-row matrix in a busy CI run;
# the bound catches what these inputs cost before (20,000 Arabic-Indic digits: 266 ms, several
# seconds for the longest numbers) without failing on a slower machine.
CPU_SECONDS = 0.25
CORRECT = (True, None, "Correct.")
SIGN = "Not quite: the size is right but the sign is wrong."
FACTOR_10 = "Not quite: your value is off by a factor of 10; check the units or the decimal point."
CLOSE = ("Not quite: your value is close to the correct answer but not within the required precision; "
         "keep more digits in the intermediate steps and round only at the end.")


def verdict(grade):
    return grade.correct, grade.error, grade.feedback if grade.error is None else None


# ------------------------------------------------------------------------------------ numeric: right


@pytest.mark.parametrize("answer", [
    "‐0.5",  # U+2010 hyphen, as a PDF pastes a minus
    "‑0.5",  # U+2011 non-breaking hyphen
    "‒0.5",  # U+2012 figure dash
    "−0.5", "–0.5", "－0.5",
    "- 0.5", "-  1/2", "− 0.5", "- .5", "- (1/2)",  # a sign typed apart from its number
    "-5X10^-1", "-5×10⁻¹", "-5*10**-1", "-5e−1", "-5E-1",
    "-1/2", "1/-2", "(-1)/(2)", "-٠٫٥", "-０.５", "-0.50000", "-.5",
])
def test_a_right_number_typed_carelessly_is_right(answer):
    assert verdict(check("numeric", "-0.5", answer, {})) == CORRECT


# ------------------------------------------------------------------------------------ numeric: wrong


@pytest.mark.parametrize("expected, answer, options, feedback", [
    ("0.5", "- 0.5", {}, SIGN),
    ("0.5", "‐1/2", {}, SIGN),
    ("0.5", "5.", {}, FACTOR_10),
    ("0.5", "٣", {}, "Not correct."),  # an Arabic-Indic three is 3
    ("0.5", "10⁻¹", {}, "Not correct."),  # a power of ten: 0.1
    ("0.3875", "0.3865", {"decimals": 3}, CLOSE),  # one unit of the last decimal off
    ("-0.3875", "-0.38851", {"decimals": 3}, CLOSE),
    ("-0.3875", "- 0.39", {"decimals": 3},
     "Not quite: that is the correct value rounded to 2 decimal places; give it to 3 decimal places."),
    ("0.012345", "0.0124", {"sigfigs": 3}, CLOSE),
    ("64", "64.4", {"decimals": 0}, "Not correct."),
])
def test_a_wrong_number_is_wrong_with_what_is_true_of_it(expected, answer, options, feedback):
    assert verdict(check("numeric", expected, answer, options)) == (False, None, feedback)


@pytest.mark.parametrize("expected, answer, options", [
    ("0.3875", "0.388", {"decimals": 3}), ("0.3875", "0.387", {"decimals": 3}),  # a tie rounded either way
    ("-0.3875", "-0.388", {"decimals": 3}), ("-0.3875", "-0.387", {"decimals": 3}),
    ("2.5", "2", {"decimals": 0}), ("-2.5", "-3", {"decimals": 0}),
    ("0.012345", "0.0123", {"sigfigs": 3}), ("-0.012345", "-0.0123", {"sigfigs": 3}), ("0.012345", "12.3e-3", {"sigfigs": 3}),
    ("1", "1.00105", {}), ("0", "-0.00005", {}),  # the default tolerance's boundary is included
    ("64", "6.4e1", {"decimals": 0}), ("64", "128/2", {"decimals": 0}),
])
def test_rounding_at_the_edge_of_the_tolerance_is_right(expected, answer, options):
    assert verdict(check("numeric", expected, answer, options)) == CORRECT


# ------------------------------------------------------------------------------------ numeric: invalid


@pytest.mark.parametrize("answer, error", [
    # a mixed number's sign was a character range: every letter and digit passed as a "sign"
    ("x1½", "could not read 'x(1+1' as a number: it contains letters; type a number such as 0.25 or 1/4"),
    ("a1¼", "could not read 'a(1+1' as a number: it contains letters; type a number such as 0.25 or 1/4"),
    ("~1½", "could not read '~(1+1': type the number alone, without '~' before it"),
    ("≈0.5", "could not read '≈0.5': type the number alone, without '≈' before it"),
    ("= 0.5", "could not read '= 0.5': type the number alone, without '=' before it"),
    ("0,5e0", "could not read '0,5e0': use a dot as the decimal point (e.g. 0.5e0)"),
    ("0,5", "could not read '0,5': use a dot as the decimal point (e.g. 0.5)"),
    ("1,000.5", "could not read '1,000.5': write the number without thousands separators"),
    ("1 000", "could not read '1 000': write the number without spaces between the digits (1000)"),
    ("50%", "could not read '50%': write the value as a plain number, without %"),
    ("1_000", "could not read '1_000': write the number without _ between the digits (1000)"),
    ("0x10", "could not read '0x10': write the number in decimal digits (0x, 0b and 0o numbers are not read)"),
    ("1/0", "'1/0' divides by zero"),
    ("nan", "NaN (not a number) is not an accepted answer: type a finite number"),
    ("-inf", "infinity is not an accepted answer: type a finite number"),
    ("1e999", "'1e999' is outside the range of accepted numbers (about 1e-400 to 1e308)"),
    ("0.5 approx", "could not read '0.5 approx' as a number: it contains letters; type a number such as 0.25 or 1/4"),
    ("-", "could not read '-' as a number; write it like 0.25, 1/4 or 2.5e-3"),
    ("--0.5", "could not read '--0.5' as a number; write it like 0.25, 1/4 or 2.5e-3"),
    (" \t\n", "the answer is empty: type a number"),
    ("1" + "0" * 5000 + "/3", "the answer is too long for a number (5003 characters)"),
    ("٣" * 20000, "the answer is too long for a number (20000 characters)"),  # refused before normalising
    ("1" * 50000, "the answer is too long for a number (50000 characters)"),  # never given to Fraction
])
def test_an_unreadable_number_is_refused_saying_why(answer, error):
    started = time.process_time()
    grade = check("numeric", "0.5", answer, {})
    assert time.process_time() - started < CPU_SECONDS
    assert (grade.correct, grade.error) == (False, error)


# ------------------------------------------------------------------------------------ matrix

GRID = [[1, 2], [3, 4]]
ALL_RIGHT = (True, None, "Correct: every entry matches.")


@pytest.mark.parametrize("answer", [
    "[[+ 1, 2], [3, 4]]", "[[1, + 2], [3, 4]]", "[1 2; 3 4]", "1\t2\r\n3\t4\r\n",
    "[[1e0, 2E0], [3×10^0, 4*10**0]]", "[[1, 2/1], [3, 8/2]]", "((1, 2), (3, 4))", "[[１,２],[３,４]]",
])
def test_a_right_matrix_pasted_in_any_layout_is_right(answer):
    assert verdict(check("matrix", GRID, answer, {})) == ALL_RIGHT


def test_a_sign_typed_apart_from_its_entry_belongs_to_it():
    assert verdict(check("matrix", [[-1, 2], [3, -4]], "[[- 1, 2], [3, − 4]]", {})) == ALL_RIGHT
    assert verdict(check("matrix", [-1, 2], "- 1, 2", {})) == ALL_RIGHT


@pytest.mark.parametrize("answer, error", [
    ("[[1,2],[3,4]];", "found ';' after the closing ]: end the matrix with ]"),
    ("[[1,2],[3,4]] x", "found 'x' after the closing ]: end the matrix with ]"),
    ("[[1,2],[3,4]", "unbalanced brackets: every [ needs a matching ]"),
    ("[[1,2],[3,4,5]]", "the second row has 3 entries but the first has 2: every row needs the same number of entries"),
    ("[[0,5, 2], [3, 4]]", "'0,5, 2' separates entries with ', ' but also has '0,5': write decimals with a point (0.5), "
                           "and put a space after every comma between entries"),
    ("[[1,2,3,4]]", "expected 2×2, got 1×4"),
    ("[5]", "expected 2×2, got 1 entry"),
    ([["1", "2"], ["3", "4"], ["", ""]], "2 entries are empty: the third row's first entry and the third row's second entry"),
    ("1 " * 10000, "expected 2×2, got 10000 entries"),  # refused by its shape, its entries unread
    ("[" + ",".join(["[1,2]"] * 3000) + "]", "expected 2×2, got 3000×2"),
])
def test_a_malformed_matrix_is_refused_saying_why(answer, error):
    started = time.process_time()
    grade = check("matrix", GRID, answer, {})
    assert time.process_time() - started < CPU_SECONDS
    assert (grade.correct, grade.error) == (False, error)


def test_a_row_for_a_column_is_accepted_only_for_a_vector():
    assert verdict(check("matrix", [1, 2, 3], "1\n2\n3", {})) == ALL_RIGHT
    assert check("matrix", [[1, 2, 3]], "1\n2\n3", {}).error == "expected 1×3, got 3×1"


def test_matrix_decimals_keep_the_half_unit_rule_for_every_entry():
    expected = [[0.3875, 0.25], [0.125, 1]]
    assert check("matrix", expected, "[[0.387, 0.25], [0.125, 1]]", {"decimals": 3}).correct is True
    grade = check("matrix", expected, "[[0.3865, 0.25], [0.125, 1]]", {"decimals": 3})
    assert (grade.correct, grade.details["entry_correct"]) == (False, [[False, True], [True, True]])


# ------------------------------------------------------------------------------------ choice

CHOICES = {"choices": ["A", "B", "C", "D"], "multiple": True, "partial_credit": True}


@pytest.mark.parametrize("expected, picked, score", [
    (["A", "B", "C"], ["A", "B", "C", "D"], 0.0),  # ticking every box earned 0.67
    (["A", "B", "C"], ["A", "B", "D"], 0.0),  # was 0.33
    (["A"], ["A", "B", "C", "D"], 0.0),
    (["A", "B"], ["A", "B", "C", "D"], 0.0),
    (["A", "B"], ["A", "B", "C"], 0.5),  # as before when the wrong keys are as many as the right ones
    (["A", "B"], ["A"], 0.5),
    (["A", "B"], ["A", "C"], 0.0),
    (["A", "B", "C"], ["A", "B"], 2 / 3),
    (["A", "B", "C", "D"], ["A", "B", "C"], 0.75),
])
def test_partial_credit_never_rewards_ticking_everything(expected, picked, score):
    grade = check("choice", expected, picked, CHOICES)
    assert (grade.correct, grade.error, grade.score) == (False, None, score)


@pytest.mark.parametrize("answer, error", [
    (["A", "E"], "'E' is not one of the choices (A, B, C, D)"),
    ("A;B", "'A;B' is not one of the choices (A, B, C, D)"),
    ([], "no choice selected"),
    ([["A"]], "each choice must be a key such as 'A'"),
])
def test_an_unknown_choice_key_is_refused(answer, error):
    assert check("choice", ["A", "B"], answer, CHOICES).error == error


def test_repeated_and_differently_cased_keys_are_one_pick():
    assert check("choice", ["A", "B"], ["a", "A", "b"], CHOICES).correct is True


# ------------------------------------------------------------------------------------ the posted grid


@pytest.mark.parametrize("query, error", [
    ("cell-0-0=1&cell-0-0=2", "The grid's cell in row 1, column 1 was sent twice: send each cell once."),
    ("cell-0-1=1&cell-00-01=2", "The grid's cell in row 1, column 2 was sent twice: send each cell once."),
    ("cell-99-99=1", "A grid answer may have at most 64 rows and columns."),
    ("cell-%D9%A3-0=1", "No answer was entered."),  # an Arabic-Indic digit is not a cell number
    ("cell-0-0%0A=1", "No answer was entered."),
])
def test_a_grid_posted_wrongly_is_refused(query, error):
    assert raw_answer_from_post(QueryDict(query), max_bytes=20_000) == (None, error)


def test_a_grid_with_cells_outside_the_matrix_is_refused_naming_them():
    answer, error = raw_answer_from_post(QueryDict("cell-0-0=1&cell-0-1=2&cell-1-0=3&cell-1-1=4&cell-2-2=9"),
                                         max_bytes=20_000)
    assert error is None
    assert check("matrix", GRID, answer, {}).error == (
        "4 entries are empty: the first row's third entry, the second row's third entry, "
        "the third row's first entry and the third row's second entry")


@pytest.mark.parametrize("expected, picked, feedback", [
    (["A", "B"], ["A"], "Not quite: 1 of your 1 selection is right and 1 right choice is missing."),
    (["A", "B", "C"], ["A", "D"], "Not quite: 1 of your 2 selections is right and 2 right choices are missing."),
    (["A", "B"], ["A", "B", "C"], "Not quite: 2 of your 3 selections are right and 0 right choices are missing."),
    (["A", "B"], ["C"], "Not quite: 0 of your 1 selection are right and 2 right choices are missing."),
])
def test_the_counts_of_a_multiple_choice_read_as_english(expected, picked, feedback):
    grade = check("choice", expected, picked, {"choices": ["A", "B", "C", "D"], "multiple": True})
    assert (grade.correct, grade.error, grade.feedback) == (False, None, feedback)
