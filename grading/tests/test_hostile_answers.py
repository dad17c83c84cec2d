"""Answers a student or an attacker might send, against the bank's own parts, graded the way
the worker grades them (grading.core.answers.check with the part's reference and options):
each gets the right verdict and a specific message, quickly, and nothing escapes."""

import time
from pathlib import Path

import pytest

from exercises.engine import draw_variant, load_spec, part_options, reference_answers
from grading.core.answers import check

BANK = Path(__file__).resolve().parents[2] / "exercises" / "bank"
SECONDS = 1.0


def bank_part(slug: str, part_key: str) -> tuple[str, object, dict]:
    spec = load_spec((BANK / f"{slug}.yaml").read_text())
    params = draw_variant(spec, 0).params
    return spec.part(part_key).type, reference_answers(spec, params)[part_key], part_options(spec, params, part_key)


def timed_check(answer_type, expected, answer, options):
    started = time.monotonic()
    grade = check(answer_type, expected, answer, options)
    return grade, time.monotonic() - started


NUMBER = {"decimals": 4}


@pytest.mark.parametrize(
    "answer, error",
    [
        # an exponent of any length is a number out of range, not "letters"
        ("1e99999999", "'1e99999999' is outside the range of accepted numbers (about 1e-400 to 1e308)"),
        ("1e-99999999", "'1e-99999999' is outside the range of accepted numbers (about 1e-400 to 1e308)"),
        ("1×10^999999999", "'1×10^999999999' is outside the range of accepted numbers (about 1e-400 to 1e308)"),
        ("1_000", "could not read '1_000': write the number without _ between the digits (1000)"),
        ("1 000", "could not read '1 000': write the number without spaces between the digits (1000)"),
        ("1.5e+", "could not read '1.5e+': the exponent after 'e' is missing (write it like 1.5e3)"),
        ("0x10", "could not read '0x10': write the number in decimal digits (0x, 0b and 0o numbers are not read)"),
        ("2^1000000", "could not read '2^1000000': type the value as a decimal number; a power is read only as a "
                      "power of ten, like 2.5×10^-3 or 2.5e-3"),
        ("10**10**10", "could not read '10**10**10': type the value as a decimal number; a power is read only as a "
                       "power of ten, like 2.5×10^-3 or 2.5e-3"),
        ("x" * 100_000, "the answer is too long for a number (100000 characters)"),
        ("((0.5)", "could not read '((0.5)' as a number; write it like 0.25, 1/4 or 2.5e-3"),
        # unchanged: already specific
        ("1e309", "'1e309' is outside the range of accepted numbers (about 1e-400 to 1e308)"),
        ("nan", "NaN (not a number) is not an accepted answer: type a finite number"),
        ("-inf", "infinity is not an accepted answer: type a finite number"),
        ("1/0", "'1/0' divides by zero"),
        ("0,5", "could not read '0,5': use a dot as the decimal point (e.g. 0.5)"),
        ("50%", "could not read '50%': write the value as a plain number, without %"),
    ],
)
def test_numbers_that_cannot_be_read_say_why(answer, error):
    grade, seconds = timed_check("numeric", "0.5", answer, NUMBER)
    assert (grade.correct, grade.error, grade.feedback) == (False, error, error)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer",
    ["(((((0.5)))))", "(" * 60 + "0.5" + ")" * 60, "٠٫٥", "۰٫۵", "０．５", "+(0.5)", "(1/2)", "½"],
)
def test_numbers_in_brackets_and_in_other_scripts_are_read(answer):
    grade, seconds = timed_check("numeric", "0.5", answer, NUMBER)
    assert (grade.correct, grade.error, grade.feedback) == (True, None, "Correct.")
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, error",
    [
        ("[[1,,2], [3, 4]]", "an entry is missing in '1,,2': a comma has no entry before it"),
        ("[[, 1], [3, 4]]", "an entry is missing in ', 1': a comma has no entry before it"),
        ("[[0,5, 1], [3, 4]]", "'0,5, 1' separates entries with ', ' but also has '0,5': write decimals with a "
                               "point (0.5), and put a space after every comma between entries"),
        ("[[1,2],[3]]", "the second row has 1 entry but the first has 2: every row needs the same number of entries"),
        ("[[1,2],[3,4]]]", "unbalanced brackets: every [ needs a matching ]"),
        ("[[1,2];[3,4]]", "found ';' outside the rows: write rows like [[1, 2], [3, 4]]"),
    ],
)
def test_matrices_with_a_missing_entry_or_a_decimal_comma_are_refused(answer, error):
    grade, seconds = timed_check("matrix", [[1, 2], [3, 4]], answer, NUMBER)
    assert (grade.correct, grade.error) == (False, error)
    assert seconds < SECONDS


@pytest.mark.parametrize("answer", ["[[1,2,],[3,4,]]", "[[1, 2], [3, 4]]", "1,2\n3,4", "[1, 2; 3, 4]", "[[١,٢],[٣,٤]]"])
def test_matrices_with_a_trailing_comma_or_rows_as_lines_are_still_read(answer):
    grade, _ = timed_check("matrix", [[1, 2], [3, 4]], answer, NUMBER)
    assert (grade.correct, grade.error) == (True, None)


TOWERS = ["exp(exp(exp(exp(exp(d_k)))))", "exp(" * 39 + "sigma_q" + ")" * 39, "sin(exp(exp(exp(d_k))))",
          "2^exp(exp(exp(d_k)))", "log(exp(exp(exp(exp(d_k)))))"]


@pytest.mark.parametrize("slug, part_key", [("score-variance", "general_variance"), ("score-variance", "correct_scale")])
@pytest.mark.parametrize("answer", TOWERS)
def test_exponential_towers_are_not_equivalent_and_decided_at_once(slug, part_key, answer):
    # Before: a MemoryError inside mpmath (could not grade, "the checker failed"), or a 2 s time-out.
    answer_type, expected, options = bank_part(slug, part_key)
    grade, seconds = timed_check(answer_type, expected, answer, options)
    assert (grade.correct, grade.error, grade.feedback, grade.details) == (
        False, None, "Not equivalent to the correct expression.", {})
    assert seconds < SECONDS


def test_a_tower_against_the_shared_sigma_variance_is_not_equivalent():
    answer_type, expected, options = bank_part("variance-shared-sigma", "general_variance")
    grade, seconds = timed_check(answer_type, expected, "exp(exp(exp(exp(exp(d_k)))))", options)
    assert (grade.correct, grade.feedback, grade.details) == (False, "Not equivalent to the correct expression.", {})
    assert seconds < SECONDS


def test_an_overflowing_term_that_cancels_is_still_right():
    answer_type, expected, options = bank_part("score-variance", "general_variance")
    tower = "exp(exp(exp(exp(exp(d_k)))))"
    grade, _ = timed_check(answer_type, expected, f"{tower} - {tower} + d_k*sigma_q^2*sigma_k^2", options)
    assert (grade.correct, grade.feedback) == (True, "Correct.")


def test_digits_of_other_scripts_are_read_in_an_expression():
    answer_type, expected, options = bank_part("score-variance", "general_variance")
    grade, _ = timed_check(answer_type, expected, "١*d_k*sigma_q^2*sigma_k^2", options)
    assert (grade.correct, grade.error) == (True, None)
    grade, _ = timed_check(answer_type, expected, "٣*d_k", options)
    assert (grade.correct, grade.error, grade.feedback) == (False, None, "Not equivalent to the correct expression.")


@pytest.mark.parametrize(
    "answer, error",
    [
        ("x" * 100_000, "Line 1: the answer is too long (100000 characters; the limit is 2000)"),
        (["Var(q·k)", "q_m" * 20_000], "Line 2: the answer is too long (60000 characters; the limit is 2000)"),
        (["Var(q·k)"] * 50, "too many steps (50; the limit is 30)"),
        (["Var(q·k)", "by linearity and independence", "d_k"], "Line 2: 'and' is a reserved word and cannot be used in an answer"),
    ],
)
def test_long_and_stuffed_derivations_are_refused_quickly(answer, error):
    # Before: 12 to 16 s for the 100 000 letters (a pattern quadratic in a run of letters).
    answer_type, expected, options = bank_part("score-variance", "general_derivation")
    grade, seconds = timed_check(answer_type, expected, answer, options)
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, feedback",
    [
        (["d_k*sigma_q^2*sigma_k^2"], "This line only states the result: no step applies a rule. Show how the rules "
                                      "lead from the question to it, a few at a time."),
        (["Var(q·k)", "d_k*sigma_q^2*sigma_k^2"],
         "Line 1 only restates the question, and no step applies a rule to show an intermediate result: padding "
         "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result."),
        ("Var(q·k) = Var(q·k) = Var(q·k) = d_k*sigma_q^2*sigma_k^2",
         "'Var(q·k)' on line 1 only restates the question, and no step applies a rule to show an intermediate result: padding "
         "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result."),
        (["Var(q·k)", "Var(q·k) + sigma_q - sigma_q", "(Var(q·k))*1", "d_k*sigma_q^2*sigma_k^2"],
         "Line 1 only restates the question, and no step applies a rule to show an intermediate result: padding "
         "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result."),
        (["d_k*sigma_q^2*sigma_k^2"] * 30,
         "Line 2 only restates line 1, and no step applies a rule to show an intermediate result: padding "
         "(+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result."),
    ],
)
def test_hollow_derivations_earn_nothing(answer, feedback):
    answer_type, expected, options = bank_part("score-variance", "general_derivation")
    grade, seconds = timed_check(answer_type, expected, answer, options)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, None, feedback)
    assert seconds < SECONDS


HOSTILE = ["", "   ", None, [], {}, True, "1e309", "-0", "1_000", "٣", "３", "0x10", "1/0", "2^1000000", "10**10**10",
           "(" * 60 + "1" + ")" * 60, "x" * 100_000, "−0.5", "0,5", "50%", "nan", "[[1,2],[3]]", "[[[1]]]", ";;;",
           "factorial(10**6)", "d_k**(10**10)", "Integral(d_k, d_k)", "Piecewise((1, d_k > 0))", "lambda: 1",
           "__import__('os')", "().__class__", "eval", "exp(exp(exp(exp(exp(d_k)))))", "\x00", "(" * 1000 + ")" * 1000]


def bank_parts():
    for path in sorted(BANK.glob("*.yaml")):
        spec = load_spec(path.read_text())
        for part in spec.parts:
            yield path.stem, part.key


@pytest.mark.parametrize("slug, part_key", list(bank_parts()))
def test_every_bank_part_grades_hostile_answers_quickly_and_without_marks(slug, part_key):
    answer_type, expected, options = bank_part(slug, part_key)
    for answer in HOSTILE:
        grade, seconds = timed_check(answer_type, expected, answer, options)
        assert seconds < SECONDS, (answer if len(repr(answer)) < 80 else repr(answer)[:80], seconds)
        assert grade.details.get("could_not_grade") is None, (answer, grade.feedback)
        assert grade.feedback, answer
        if answer_type != "free_text" and grade.correct:
            # only a number that happens to be the right answer may be right
            assert answer_type in ("numeric", "matrix") and grade.error is None, (answer, grade.feedback)
