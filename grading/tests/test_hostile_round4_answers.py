"""Hostile round 4 (answers): LaTeX and spreadsheet forms of numbers and matrices.

Before: MathLive's decimal comma 0{,}25 and thin space 1\\,000 were "could not read '0(,)25'"
with no hint; a matrix pasted from SymPy's latex() (\\left[\\begin{matrix}…\\end{matrix}\\right])
or inside $…$ was "unbalanced brackets" or five unreadable entries; a spreadsheet row from a
decimal-comma locale (0,25<tab>0,75, or 0,25;0,75 per line) was "expected 2×2, got 2×4", and
the decimal-comma message named '0,2' for 0,25. Rows marked "guard" were already right."""

import time

import pytest

from grading.core.answers import check, parse

WEIGHTS = "[[0.25, 0.75], [0.5, 0.5]]"
DECIMAL_POINT = "write decimals with a point (0.25)"

NUMERIC_ROWS = [
    # (answer, correct, error fragment or None)
    ("0.25", True, None),  # guard
    (r"\,0.25", True, None),  # MathLive spacing before the number
    (r"0.25\,", True, None),
    ("0{,}25", False, "use a dot as the decimal point (e.g. 0.25)"),
    ("0,25", False, "use a dot as the decimal point (e.g. 0.25)"),  # guard
    (r"\frac{1}{4}", True, None),  # guard
    ("25%", False, "without %"),  # guard
]


@pytest.mark.parametrize("answer, correct, error", NUMERIC_ROWS)
def test_numeric_latex_spacing_and_decimal_comma(answer, correct, error):
    grade = check("numeric", "0.25", answer, {})
    assert grade.correct is correct
    if error is None:
        assert grade.error is None and grade.score == 1.0
    else:
        assert error in grade.error


@pytest.mark.parametrize("answer, error", [
    (r"1\,000", "write the number without spaces between the digits (1000)"),
    ("1{,}000", "write a decimal with a dot (1.000) and a whole number without separators (1000)"),
    (r"1\ 000", "write the number without spaces between the digits (1000)"),
])
def test_numeric_latex_thousands_are_named(answer, error):
    assert error in check("numeric", "1000", answer, {}).error


MATRIX_ROWS = [
    # (answer, correct, error fragment or None)
    (WEIGHTS, True, None),  # guard
    (r"\left[\begin{matrix}0.25 & 0.75\\0.5 & 0.5\end{matrix}\right]", True, None),  # SymPy's latex()
    (r"\left(\begin{matrix}0.25 & 0.75\\0.5 & 0.5\end{matrix}\right)", True, None),
    (r"$\begin{bmatrix} 0.25 & 0.75 \\ 0.5 & 0.5 \end{bmatrix}$", True, None),
    (r"\[\begin{pmatrix} 1/4 & 3/4 \\ 1/2 & 1/2 \end{pmatrix}\]", True, None),
    (r"\begin{bmatrix} 0{,}25 & 0{,}75 \\ 0{,}5 & 0{,}5 \end{bmatrix}", False, "use a dot as the decimal point (e.g. 0.25)"),
    ("0.25\t0.75\n0.5\t0.5\n", True, None),  # guard: a spreadsheet paste
    ("0,25\t0,75\n0,5\t0,5", False, f"a row separates entries with tabs but has '0,25': {DECIMAL_POINT}"),
    ("0,25 0,75\n0,5 0,5", False, f"expected 2×2, got 2×4: a comma separates entries, so '0,25' is two of them; {DECIMAL_POINT}"),
    ("0,25;0,75\n0,5;0,5", False, f"expected 2×2, got 4×2: a comma separates entries, so '0,25' is two of them; {DECIMAL_POINT}"),
    ("[[0,25, 0,75], [0,5, 0,5]]", False, "but also has '0,25'"),
    ("[[1,2,3],[4,5,6]]", False, "expected 2×2, got 2×3"),  # guard: no decimal-comma hint
    ("[[1,2],[3,4]]", False, None),  # guard: compact commas are separators, a wrong answer
    ("[[1/4, 3/4], [1/2, 1/2]]", True, None),  # guard
    ("2.5e-1 7.5e-1; 5e-1 5e-1", True, None),  # guard
]


@pytest.mark.parametrize("answer, correct, error", MATRIX_ROWS)
def test_matrix_latex_wrappers_and_decimal_commas(answer, correct, error):
    grade = check("matrix", WEIGHTS, answer, {"decimals": 2})
    assert grade.correct is correct
    if correct:
        assert grade.score == 1.0 and grade.error is None
    elif error is None:
        assert grade.error is None and grade.score == 0.0
    else:
        assert error in grade.error


def test_compact_wrong_shape_gets_no_decimal_comma_hint():
    assert check("matrix", WEIGHTS, "[[1,2,3],[4,5,6]]", {}).error == "expected 2×2, got 2×3"


def test_latex_matrix_preview_reads_sympy_output():
    parsed = parse("matrix", r"\left[\begin{matrix}0.25 & 0.75\\0.5 & 0.5\end{matrix}\right]", {})
    assert parsed.error is None and parsed.value == [[0.25, 0.75], [0.5, 0.5]]


def test_long_decimal_comma_spreadsheet_is_refused_quickly():
    rows = "\n".join(";".join("0,25" for _ in range(50)) for _ in range(20))  # 1000 entries, wrong shape
    began = time.perf_counter()
    grade = check("matrix", WEIGHTS, rows, {})
    assert grade.error is not None
    assert time.perf_counter() - began < 1.0
