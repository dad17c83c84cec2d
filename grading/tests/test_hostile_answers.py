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
        ("0,147", "could not read '0,147': use a dot as the decimal point (e.g. 0.147)"),
        ("-0,147", "could not read '-0,147': use a dot as the decimal point (e.g. -0.147)"),
        ("1,147", "could not read '1,147': write a decimal with a dot (1.147) and a whole number without "
                  "separators (1147)"),
        ("50%", "could not read '50%': write the value as a plain number, without %"),
    ],
)
def test_numbers_that_cannot_be_read_say_why(answer, error):
    grade, seconds = timed_check("numeric", "0.5", answer, NUMBER)
    assert (grade.correct, grade.error, grade.feedback) == (False, error, error)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer",
    ["(((((0.5)))))", "(" * 60 + "0.5" + ")" * 60, "٠٫٥", "۰٫۵", "０．５", "+(0.5)", "(1/2)", "½",
     "-(-0.5)", "−(−0.5)", "+(+0.5)", "-(-(1/2))", "-(-1)/2", "-(-(-(-0.5)))"],
)
def test_numbers_in_brackets_and_in_other_scripts_are_read(answer):
    grade, seconds = timed_check("numeric", "0.5", answer, NUMBER)
    assert (grade.correct, grade.error, grade.feedback) == (True, None, "Correct.")
    assert seconds < SECONDS


@pytest.mark.parametrize("answer", ["-(+0.5)", "+(-0.5)", "-(-(-0.5))", "−(0.5)", "-(-(-1))/2"])
def test_a_sign_before_brackets_and_one_inside_are_multiplied(answer):
    assert timed_check("numeric", "-0.5", answer, NUMBER)[0].correct is True
    assert timed_check("numeric", "0.5", answer, NUMBER)[0].correct is False


@pytest.mark.parametrize("answer", ["--0.5", "-(+-0.5)", "-(-(1/2))*-1"])
def test_signs_typed_twice_outside_brackets_are_refused_not_guessed(answer):
    grade, _ = timed_check("numeric", "0.5", answer, NUMBER)
    assert grade.correct is False and grade.error.startswith("could not read")


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
        ("[[1,2],,[3,4]]", "a row is missing after the first row: two commas have no row between them"),
        ("[[1,2], , [3,4]]", "a row is missing after the first row: two commas have no row between them"),
        ("[[1,2],[3,4],,]", "a row is missing after the second row: two commas have no row between them"),
        ("[,[1,2],[3,4]]", "a row is missing: a comma stands before the first row"),
        ("[ , [1,2],[3,4]]", "a row is missing: a comma stands before the first row"),
    ],
)
def test_matrices_with_a_missing_entry_or_a_decimal_comma_are_refused(answer, error):
    grade, seconds = timed_check("matrix", [[1, 2], [3, 4]], answer, NUMBER)
    assert (grade.correct, grade.error) == (False, error)
    assert seconds < SECONDS


@pytest.mark.parametrize("answer", ["[[1,2,],[3,4,]]", "[[1,2],[3,4],]", "[[1, 2] [3, 4]]", "[[1, 2], [3, 4]]", "1,2\n3,4", "[1, 2; 3, 4]", "[[١,٢],[٣,٤]]"])
def test_matrices_with_a_trailing_comma_or_rows_as_lines_are_still_read(answer):
    grade, _ = timed_check("matrix", [[1, 2], [3, 4]], answer, NUMBER)
    assert (grade.correct, grade.error) == (True, None)


LETTERS = "could not read {!r} as a number: it contains letters; type a number such as 0.25 or 1/4"


@pytest.mark.parametrize(
    "answer, error",
    [
        # one unreadable entry: where and why, as before
        ("[[1, 2, 3], [4, 5, q]]", "the second row's third entry: " + LETTERS.format("q")),
        # several: every one named where the student sees it (ordinal words, counted from 1)
        ("[[a, 2, 3], [4, b, 6]]", "2 entries cannot be read: the first row's first entry ('a') and the second row's "
                                   "second entry ('b'). The first row's first entry: " + LETTERS.format("a")),
        ([["1", "", "3"], ["x", "5", "1e999"]],
         "3 entries cannot be read: the first row's second entry (empty), the second row's first entry ('x') and the "
         "second row's third entry ('1e999'). The second row's first entry: " + LETTERS.format("x")),
        ([["", "", "3"], ["4", "5", " "]], "3 entries are empty: the first row's first entry, the first row's second "
                                           "entry and the second row's third entry"),
        # more than five: the first five, then how many more
        ("[[a, b, c], [d, e, f]]", "6 entries cannot be read: the first row's first entry ('a'), the first row's second "
                                   "entry ('b'), the first row's third entry ('c'), the second row's first entry ('d'), "
                                   "the second row's second entry ('e') and 1 more. The first row's first entry: "
                                   + LETTERS.format("a")),
        ([["?" * 30, None, "3"], ["4", "5", "6"]],
         "2 entries cannot be read: the first row's first entry ('" + "?" * 19 + "…') and the first row's second entry "
         "(None). The first row's first entry: could not read '" + "?" * 30 + "' as a number; write it like 0.25, 1/4 "
         "or 2.5e-3"),
        # a row of the wrong length is said first: the entries cannot be placed
        ("[[a, 2, 3], [4, b]]", "the second row has 2 entries but the first has 3: every row needs the same number of "
                                "entries"),
    ],
)
def test_every_unreadable_matrix_entry_is_named(answer, error):
    grade, seconds = timed_check("matrix", [[1, 2, 3], [4, 5, 6]], answer, NUMBER)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, error, error)
    assert seconds < SECONDS


def test_every_unreadable_vector_entry_is_named_by_its_place_alone():
    grade, _ = timed_check("matrix", [1, 2, 3, 4, 5, 6, 7, 8, 9], "[a, 2, b, 4, c, d, e f g]", NUMBER)
    assert grade.error == ("7 entries cannot be read: the first entry ('a'), the third entry ('b'), the fifth entry "
                           "('c'), the sixth entry ('d'), the seventh entry ('e') and 2 more. The first entry: "
                           + LETTERS.format("a"))


@pytest.mark.parametrize(
    "answer, correct, feedback",
    [
        ("[[1, 2, 3], [4, 5, 6]]", True, "Correct: every entry matches."),
        ([["1", "2", "3"], ["4", "5", "6"]], True, "Correct: every entry matches."),
        ([["1", "2", "3"], ["4", "5", "7"]], False,
         "Not quite: 1 of the 6 entries is outside the accepted tolerance (see the highlighted cells)."),
        ("[[0, 2, 3], [4, 5, 0]]", False,
         "Not quite: 2 of the 6 entries are outside the accepted tolerance (see the highlighted cells)."),
    ],
)
def test_readable_matrices_are_graded_entry_by_entry(answer, correct, feedback):
    grade, _ = timed_check("matrix", [[1, 2, 3], [4, 5, 6]], answer, NUMBER)
    assert (grade.correct, grade.error, grade.feedback) == (correct, None, feedback)


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


def tower(name: str, height: int = 5) -> str:
    return "exp(" * height + name + ")" * height


VARIANCE = "d_k*sigma_q^2*sigma_k^2"
NOT_EQUIVALENT = "Not equivalent to the correct expression."
TOO_COMPLEX = ("Your answer is too complex to check automatically: its values are too large (or too small) to compare "
               "with the correct expression at any test point. Simplify it and submit it again.")
# The decision itself takes a few hundredths of a second (before: a 2 s time-out and "could not
# grade"); the bound leaves room for a loaded machine.
GROWTH_SECONDS = 0.5


@pytest.fixture(scope="module")
def warm_checkers():
    """The first check of a process pays for imports and caches; the timings below do not."""
    for slug, part_key, answer in (("score-variance", "general_variance", "d_k"),
                                   ("score-variance", "general_derivation", ["Var(q·k)", "d_k Var(q_m k_m)"])):
        answer_type, expected, options = bank_part(slug, part_key)
        check(answer_type, expected, answer, options)


@pytest.mark.parametrize(
    "slug, part_key, answer, verdict",
    [
        # wrong: at some test point one term's size outweighs all the others, so the sum is not 0
        ("score-variance", "general_variance", tower("d_k") + " + d_k", "wrong"),
        ("score-variance", "general_variance", "e^(e^(e^(e^(e^(d_k)))))*2 - sigma_k", "wrong"),
        ("score-variance", "general_variance", "sin(" + tower("d_k") + ") + 1", "wrong"),  # |sin| <= 1 < the variance
        ("score-variance", "correct_scale", tower("sigma_q", 39) + " + 1", "wrong"),
        ("score-variance", "correct_scale", "sqrt(d_k)*sigma_q*sigma_k + exp(-" + tower("d_k") + ")", "wrong"),
        ("score-variance", "correct_scale", "sqrt(d_k)*sigma_q*sigma_k + 1/(" + tower("d_k") + " + 1)", "wrong"),
        ("variance-shared-sigma", "general_variance", tower("d_k") + " + sigma", "wrong"),
        ("multi-head-dimensions", "scale_formula", tower("d_model") + " - h", "wrong"),
        # right: the huge terms cancel, on construction or on expansion
        ("score-variance", "general_variance", f"{tower('d_k')} - {tower('d_k')} + {VARIANCE}", "right"),
        ("score-variance", "general_variance",
         f"({tower('d_k')} + 1)^2 - {tower('d_k')}^2 - 2*{tower('d_k')} - 1 + {VARIANCE}", "right"),
        ("score-variance", "general_variance",
         f"2^{tower('d_k')} * 3^(-{tower('d_k')}) * (3/2)^{tower('d_k')} * {VARIANCE}", "right"),
        # too complex: no size bound separates the sides and no expansion cancels them
        ("score-variance", "general_variance", f"{tower('sigma_q', 39)} - {tower('sigma_k', 39)} + {VARIANCE}",
         "too complex"),
        ("score-variance", "general_variance", f"sin({tower('d_k')}) + {VARIANCE}", "too complex"),
        ("score-variance", "general_variance", f"sin({tower('d_k')})^2 + cos({tower('d_k')})^2 - 1 + {VARIANCE}",
         "too complex"),  # equal, but only a trigonometric identity shows it
        ("score-variance", "general_variance", f"{VARIANCE}*exp(1/{tower('d_k')})", "too complex"),
        ("score-variance", "correct_scale", f"tan({tower('d_k')}) + sqrt(d_k)*sigma_q*sigma_k", "too complex"),
        # an expansion into 5456 terms is not tried
        ("score-variance", "general_variance", f"(d_k + sigma_q + sigma_k + 1)^30*sin({tower('d_k')}) + {VARIANCE}",
         "too complex"),
    ],
)
def test_towers_beside_other_terms_get_a_truthful_verdict_quickly(warm_checkers, slug, part_key, answer, verdict):
    # Before: a 2 s time-out ending as "could not grade" for every sum with a tower in it.
    answer_type, expected, options = bank_part(slug, part_key)
    grade, seconds = timed_check(answer_type, expected, answer, options)
    outcome = {
        "right": (True, 1.0, None, "Correct.", {}),
        "wrong": (False, 0.0, None, NOT_EQUIVALENT, {}),
        "too complex": (False, 0.0, None, TOO_COMPLEX, {"could_not_grade": True, "reason": "too_complex"}),
    }[verdict]
    assert (grade.correct, grade.score, grade.error, grade.feedback, grade.details) == outcome
    assert seconds < GROWTH_SECONDS


@pytest.mark.parametrize(
    "answer, error",
    [
        ("exp(" * 41 + "d_k" + ")" * 41, "the expression is nested too deeply (more than 40 brackets)"),
        ("2^2^2^2^2^2^2^d_k + 1", "powers are nested too deeply (more than 6 levels)"),
        ("exp(1000) + d_k", "a number in the expression is too large"),
        ("d_k^(10^5) + 1", "the exponent 100000 is too large (the limit is 10000)"),
    ],
)
def test_growth_past_the_reading_limits_is_refused_before_any_check(answer, error):
    answer_type, expected, options = bank_part("score-variance", "general_variance")
    grade, seconds = timed_check(answer_type, expected, answer, options)
    assert (grade.correct, grade.error, grade.feedback, grade.details) == (False, error, error, {})
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, verdict, feedback",
    [
        (["Var(q·k)", "d_k Var(q_m k_m)", tower("d_k") + " + d_k"], "wrong",
         f"Line 3: '{tower('d_k')} + d_k' does not follow from line 2: under the exercise's assumptions the two are "
         "not equal."),
        ("Var(q·k) = d_k Var(q_m k_m) = " + tower("d_k") + " + 1", "wrong",
         f"Line 1: '{tower('d_k')} + 1' does not follow from 'd_k Var(q_m k_m)': under the exercise's assumptions "
         "the two are not equal."),
        (["Var(q·k)", "d_k Var(q_m k_m)", f"{tower('sigma_q', 39)} - {tower('sigma_k', 39)} + d_k"], "too complex",
         "Line 3 is too complex to check automatically: its values are too large (or too small) to compare with "
         "line 2 at any test point. Simplify it and submit it again."),
        (["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
          f"d_k σ_q² σ_k² + sin({tower('d_k')})"], "too complex",
         "Line 4 is too complex to check automatically: its values are too large (or too small) to compare with "
         "line 3 at any test point. Simplify it and submit it again."),
        (["Var(q·k)", "d_k Var(q_m k_m)", "d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)",
          f"({tower('d_k')} + 1)^2 - {tower('d_k')}^2 - 2*{tower('d_k')} - 1 + d_k σ_q² σ_k²"], "right", None),
    ],
)
def test_derivation_steps_with_towers_get_a_truthful_verdict_quickly(warm_checkers, answer, verdict, feedback):
    answer_type, expected, options = bank_part("score-variance", "general_derivation")
    grade, seconds = timed_check(answer_type, expected, answer, options)
    assert (grade.correct, grade.error, grade.details.get("reason")) == (
        verdict == "right", None, "too_complex" if verdict == "too complex" else None)
    assert grade.details.get("could_not_grade") is (True if verdict == "too complex" else None)
    if feedback is not None:
        assert grade.feedback == feedback
    assert seconds < GROWTH_SECONDS


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
        (["Var(q·k)", "by linearity and independence", "d_k"],
         "Line 2 reads as words, not maths: write the step as an equation (“so” or “hence” may lead it: hence a = b)."),
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
