"""Answers written to fool or stall the checkers, a second round: right answers in notations
a student pastes (LaTeX, full-width punctuation, invisible characters, Windows line ends),
wrong answers built to agree with the correct one only at the checker's test points, and
previews that would show another number than the one typed."""

import random
import time
from fractions import Fraction

import pytest
import sympy

from grading.core import symbolic
from grading.core.answers import check, parse

SECONDS = 0.5  # each decision takes milliseconds; the bound leaves room for a loaded machine
CORRECT = (True, None, "Correct.")
MATRIX_CORRECT = (True, None, "Correct: every entry matches.")
TRANSPOSED_FEEDBACK = ("Not quite. Your answer is the transpose of the expected one: rows and columns are swapped "
                       "(entry [j, i] where [i, j] is asked, or for one query its column where its row is asked). "
                       "In attention, row i belongs to query i and holds one entry per key j.")
NOT_EQUIVALENT = "Not equivalent to the correct expression."
VARIANCE_SYMBOLS = {"symbols": {"d_k": "positive", "sigma_q": "positive", "sigma_k": "positive"}}
ATTENTION = {"matrices": {"Q": ["n", "d_k"], "K": ["n", "d_k"], "V": ["n", "d_v"]},
             "scalars": {"n": 5, "d_k": 64, "d_v": 12}}


def timed_check(answer_type, expected, answer, options):
    started = time.monotonic()
    grade = check(answer_type, expected, answer, options)
    return grade, time.monotonic() - started


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "answer",
    [
        r"\frac{1}{4}", r"\frac14", r"\dfrac{1}{4}", r"\tfrac{1}{4}", r"\left(0.25\right)", "{0.25}", "$0.25$",
        "$$0.25$$", r"\(0.25\)", r"\left(\frac{1}{4}\right)", "(1)/(4)", "1/(4)", "(1)/4", "1÷4", "0.25\u200b",
        "\ufeff0.25", "\u20600.25\u200d", "0.2\u00ad5", r"2.5 \times 10^{-1}", r"\frac{-1}{-4}",
    ],
)
def test_a_quarter_in_latex_or_with_invisible_characters_is_right(answer):
    # Direction controls (U+202E) are not invisible in this sense: they stay refused.
    grade, seconds = timed_check("numeric", 0.25, answer, {"decimals": 4})
    assert (grade.correct, grade.error, grade.feedback) == CORRECT
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, feedback",
    [
        (r"-\frac{1}{4}", "Not quite: the size is right but the sign is wrong."),
        (r"\frac{1}{2}", "Not correct."),
        (r"\frac{25}{10}", "Not quite: your value is off by a factor of 10; check the units or the decimal point."),
        ("(1)/(40)", "Not quite: your value is off by a factor of 10; check the units or the decimal point."),
    ],
)
def test_wrong_numbers_in_latex_are_wrong(answer, feedback):
    grade, _ = timed_check("numeric", 0.25, answer, {"decimals": 4})
    assert (grade.correct, grade.error, grade.feedback) == (False, None, feedback)


@pytest.mark.parametrize(
    "answer, error",
    [
        (r"\frac{a}{4}", "could not read 'a' as a number: it contains letters; type a number such as 0.25 or 1/4"),
        (r"\frac{1}{0}", "'(1)/(0)' divides by zero"),
        ("$$", "the answer is empty: type a number"),
        (r"1.27 \times 10^{-14)", "could not read '1.27 \\\\times 10^{-14)': type the value as a decimal number; a power "
                                  "is read only as a power of ten, like 2.5×10^-3 or 2.5e-3"),
        ("\u200b", "the answer is empty: type a number"),
        ("0.25\u202e", "could not read '0.25\\u202e' as a number; write it like 0.25, 1/4 or 2.5e-3"),
        (r"0.25\%", "could not read '0.25\\\\%': write the value as a plain number, without %"),
    ],
)
def test_unreadable_latex_numbers_say_why(answer, error):
    grade, seconds = timed_check("numeric", 0.25, answer, {"decimals": 4})
    assert (grade.correct, grade.error) == (False, error)
    assert seconds < SECONDS


# --------------------------------------------------------------------------- matrices

SQUARE = [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    "answer",
    [
        "[[1, 2],\r\n [3, 4]]",  # a text area sends its line ends as \r\n
        "[[1, 2],\r\n[3, 4]]\r\n",
        "［［1，2］，［3，4］］",
        "[[1，2]，[3，4]]",
        "[[1、2]、[3、4]]",
        "1，2\n3，4",
        "[[1,2],[3,4]]\u200b",
        "\ufeff[[1,2],[3,4]]",
        "[[\u200b1, 2], [3, 4]]",
        r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}",
        r"\begin{pmatrix}1&2\\3&4\end{pmatrix}",
        r"\begin{bmatrix} \frac{2}{2} & 2 \\ 3 & 4 \\ \end{bmatrix}",
        "((1, 2), (3, 4))",
        "{{1, 2}, {3, 4}}",
    ],
)
def test_a_matrix_pasted_in_another_notation_is_right(answer):
    grade, seconds = timed_check("matrix", SQUARE, answer, {"decimals": 0})
    assert (grade.correct, grade.error, grade.feedback) == MATRIX_CORRECT
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer",
    [
        "(0.25, 0.75)", "{0.25, 0.75}", "⟨0.25, 0.75⟩", "[2.5 × 10^-1, 7.5 × 10^-1]", r"[2.5 \times 10^{-1}, 7.5 \cdot 10^{-1}]",
        r"[\frac{1}{4}, \frac{3}{4}]", "[1 / 4, 3 / 4]", "(1/4, 3/4)",
    ],
)
def test_a_vector_in_round_brackets_or_with_spaced_powers_of_ten_is_right(answer):
    grade, seconds = timed_check("matrix", [0.25, 0.75], answer, {"decimals": 4})
    assert (grade.correct, grade.error, grade.feedback) == MATRIX_CORRECT
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "answer, feedback",
    [
        (r"\begin{bmatrix} 1 & 3 \\ 2 & 4 \end{bmatrix}",
         TRANSPOSED_FEEDBACK),
        ("((1, 3), (2, 4))", TRANSPOSED_FEEDBACK),
        ("［［1，2］，［3，5］］", "Not quite: 1 of the 4 entries is outside the accepted tolerance (see the highlighted cells)."),
    ],
)
def test_wrong_matrices_in_other_notations_are_wrong(answer, feedback):
    grade, _ = timed_check("matrix", SQUARE, answer, {"decimals": 0})
    assert (grade.correct, grade.error, grade.feedback) == (False, None, feedback)


@pytest.mark.parametrize(
    "answer, error",
    [
        (r"\begin{bmatrix} 1 & 2 \\ 3 \end{bmatrix}",
         "the second row has 1 entry but the first has 2: every row needs the same number of entries"),
        (r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
         "could not read the LaTeX matrix: write it as \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}"),
        (r"\begin{bmatrix} 1 & & 2 \\ 3 & 4 \end{bmatrix}",
         "the second row has 2 entries but the first has 3: every row needs the same number of entries"),
        ("(1, 2", "the first entry: could not read '(1' as a number; write it like 0.25, 1/4 or 2.5e-3"),
        ("[(1,2),(3,4)]", "4 entries cannot be read: the first entry ('(1'), the second entry ('2)'), the third entry "
                          "('(3') and the fourth entry ('4)'). The first entry: could not read '(1' as a number; write "
                          "it like 0.25, 1/4 or 2.5e-3"),
        ("\u200b", "the answer is empty: type the entries, e.g. [[1, 2], [3, 4]]"),
    ],
)
def test_malformed_pasted_matrices_are_refused_with_a_reason(answer, error):
    grade, seconds = timed_check("matrix", SQUARE, answer, {"decimals": 0})
    assert (grade.correct, grade.error) == (False, error)
    assert seconds < SECONDS


def test_a_shape_in_round_brackets_is_read_as_a_shape():
    grade, _ = timed_check("matrix", [19, 64], "(19, 64)", {"decimals": 0, "shape": True})
    assert (grade.correct, grade.error) == (True, None)
    grade, _ = timed_check("matrix", [19, 64], "(64, 19)", {"decimals": 0, "shape": True})
    assert (grade.correct, grade.feedback) == (
        False, "Not quite: your shape 64×19 has the rows and columns the wrong way round: a shape is written "
               "[rows, columns], and the transposed shape is not the same matrix.")


# --------------------------------------------------------------------------- expressions equal only at the test points


def rational_text(value: float) -> str:
    exact = Fraction(value)  # the float's exact binary value, so the factor vanishes there exactly
    return f"{exact.numerator}/{exact.denominator}"


def vanishing_at_the_seeded_points() -> str:
    """A product of (d_k - c) over every d_k the seeded test points use: 0 at each of them."""
    table = symbolic.symbol_table(symbolic.symbols_key(VARIANCE_SYMBOLS))
    symbols = set(table.values())
    points = symbolic.sample_points(symbols) + symbolic.wide_points(symbols)
    values = sorted({point[table["d_k"]].real for point in points})
    return "*".join(f"(d_k - {rational_text(value)})" for value in values)


def vanishing_at_the_seeded_residues() -> str:
    """A product of (d_k - r) over the residues a fixed seed of 20240613 would draw for d_k."""
    rng = random.Random(20240613)
    residues = []
    for _ in range(symbolic.RATIONAL_POINTS):
        point = [rng.randrange(2, symbolic.PRIME - 1) for _ in ("d_k", "sigma_k", "sigma_q")]
        residues.append(point[0])
    return "*".join(f"(d_k - {residue})" for residue in residues)


@pytest.mark.parametrize(
    "expected, answer",
    [
        ("sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k)*sigma_q*sigma_k + " + vanishing_at_the_seeded_points()),
        ("d_k*sigma_q^2*sigma_k^2", "d_k*sigma_q^2*sigma_k^2 + " + vanishing_at_the_seeded_residues()),
        ("d_k*sigma_q^2*sigma_k^2", "d_k*sigma_q^2*sigma_k^2 + sigma_q*" + vanishing_at_the_seeded_points()),
    ],
)
def test_an_answer_built_to_vanish_at_the_test_points_is_not_equivalent(expected, answer):
    symbolic.decide_equivalent.cache_clear()
    grade, seconds = timed_check("symbolic", expected, answer, VARIANCE_SYMBOLS)
    assert (grade.correct, grade.score, grade.error, grade.feedback) == (False, 0.0, None, NOT_EQUIVALENT)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "expected, answer",
    [
        ("sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k*sigma_q^2*sigma_k^2)"),
        ("sqrt(d_k)*sigma_q*sigma_k", "|sigma_q| sqrt(d_k) sigma_k"),
        ("sqrt(d_k)*sigma_q*sigma_k", "exp(log(sigma_q*sigma_k) + log(d_k)/2)"),
        ("d_k*sigma_q^2*sigma_k^2", "(d_k + 1)^2*sigma_q^2*sigma_k^2/(d_k + 1) - sigma_q^2*sigma_k^2"),
        ("d_k*sigma_q^2*sigma_k^2", "d_k (sigma_q sigma_k)^2 + sin(d_k)^2 + cos(d_k)^2 - 1"),
    ],
)
def test_true_identities_stay_right_whatever_the_key_of_the_points(expected, answer, points_key):
    for key in range(5):  # other keys, other points: the verdict on an identity never changes
        points_key(bytes([key]) * 32)
        symbolic.decide_equivalent.cache_clear()
        grade, _ = timed_check("symbolic", expected, answer, VARIANCE_SYMBOLS)
        assert (grade.correct, grade.error, grade.feedback) == CORRECT




def test_the_unpredictable_points_follow_the_key_and_the_two_expressions_only(points_key):
    d_k, sigma = sympy.symbols("d_k sigma", positive=True)
    expected, answer = d_k * sigma**2, d_k * sigma**2 + (d_k - 3)
    points_key(b"k" * 32)
    first = symbolic.unpredictable_points(expected, answer, {d_k, sigma})
    assert symbolic.unpredictable_points(expected, answer, {d_k, sigma}) == first  # a regrade: the same points
    assert symbolic.unpredictable_points(expected, answer + 1, {d_k, sigma}) != first
    points_key(b"j" * 32)
    assert symbolic.unpredictable_points(expected, answer, {d_k, sigma}) != first
    assert all(value.real > 0 and value.imag == 0 for point in first for value in point.values())


# --------------------------------------------------------------------------- transposes typed as symbols


@pytest.mark.parametrize(
    "answer",
    ["softmax(Q K^⊤ / sqrt(d_k)) V", "softmax(Q K⊤ / sqrt(d_k)) V", "softmax(Q K^ᵀ / sqrt(d_k)) V",
     "softmax(Q Kᵀ / √d_k) V", "softmax(Q K^ ⊤ / sqrt(d_k)) V"],
)
def test_a_transpose_typed_as_a_symbol_is_read(answer):
    grade, seconds = timed_check("matrix_expression", "softmax(Q K^T / sqrt(d_k)) V", answer, ATTENTION)
    assert (grade.correct, grade.error, grade.feedback) == CORRECT
    assert seconds < SECONDS


def test_a_transposed_query_typed_as_a_symbol_is_still_wrong():
    grade, _ = timed_check("matrix_expression", "softmax(Q K^T / sqrt(d_k)) V", "softmax(Q⊤ K / sqrt(d_k)) V", ATTENTION)
    assert (grade.correct, grade.error) == (False, None)


# --------------------------------------------------------------------------- previews


@pytest.mark.parametrize(
    "answer, latex",
    [
        ("2*(1/2)", r"2 \cdot \frac{1}{2}"),  # not the mixed number 2½
        ("2*.5", r"2 \cdot .5"),  # not 2.5
        ("2*(1/d_k)", r"2 \cdot \frac{1}{d_{k}}"),
        ("d_k*(1/2)", r"d_{k} \frac{1}{2}"),
        ("(1/2)^2", r"\left(\frac{1}{2}\right)^{2}"),  # not 1 over 2 squared
        ("(d_k/2)^2*sigma_q", r"\left(\frac{d_{k}}{2}\right)^{2} \sigma_{q}"),
        ("2*d_k", r"2 d_{k}"),
        ("3*2*d_k", r"3 \cdot 2 d_{k}"),
    ],
)
def test_previews_never_show_another_number(answer, latex):
    parsed = parse("symbolic", answer, VARIANCE_SYMBOLS)
    assert (parsed.error, parsed.preview_latex) == (None, latex)


# --------------------------------------------------------------------------- nothing escapes, nothing stalls

HOSTILE = [
    "10**10**10", "9^9^9^9", "factorial(100000)", "100000!", "(" * 500 + "1" + ")" * 500, "[" * 500 + "1" + "]" * 500,
    "{" * 500 + "1" + "}" * 500, "1" * 50_000, "\\frac{" * 300 + "1" + "}{2}" * 300, "$" * 50_000, "\\left(" * 2000,
    "\\begin{bmatrix}" + " & ".join(["1"] * 20_000) + "\\end{bmatrix}", "\u200b" * 50_000, "［" * 20_000,
    "(" * 5000 + "1, 2" + ")" * 5000, "{" + ", ".join(["1"] * 10_001) + "}", "NaN", "oo", "zoo", "I", "1E999", "1,000", "50%",
    "[[1,2],[3]]", "[[],[]]", "[[1,2];[3,4]]", "－１", "𝟎.𝟓", "\\frac{1}{\\sqrt{2}}", "Q^⊤^⊤^⊤", "⊤" * 1000,
]
PARTS = [
    ("numeric", 0.25, {"decimals": 4}),
    ("matrix", SQUARE, {"decimals": 0}),
    ("matrix", [19, 64], {"decimals": 0, "shape": True}),
    ("symbolic", "sqrt(d_k)*sigma_q*sigma_k", VARIANCE_SYMBOLS),
    ("matrix_expression", "softmax(Q K^T / sqrt(d_k)) V", ATTENTION),
]


@pytest.mark.parametrize("answer_type, expected, options", PARTS)
def test_hostile_answers_are_refused_or_graded_quickly_and_never_marked_right(answer_type, expected, options):
    for answer in HOSTILE:
        grade, seconds = timed_check(answer_type, expected, answer, options)
        label = answer if len(answer) < 40 else answer[:40] + "…"
        assert seconds < SECONDS, (label, seconds)
        assert grade.details.get("could_not_grade") is None, (label, grade.feedback)
        assert (grade.correct, grade.score) == (False, 0.0), label
        assert grade.feedback, label
