"""A number set in a LaTeX text style (\\mathrm{0.25}, \\text{…}, \\textbf{…}), as an editor pastes
it, is the number; a matrix pasted as code (np.array([[…]]), torch.tensor(…)) is told to drop
the call. Before: "contains letters", and "unbalanced brackets" for brackets that balance."""

from __future__ import annotations

import pytest

from grading.core.answers import check

WEIGHTS = [[0.1, 0.2], [0.3, 0.4]]


@pytest.mark.parametrize("answer, outcome", [
    (r"\mathrm{0.25}", (True, None)),
    (r"\text{0.25}", (True, None)),
    (r"$\mathbf{0.25}$", (True, None)),
    (r"\textbf{ 0.25 }", (True, None)),
    (r"\mathrm{0.3}", (False, None)),  # read, and wrong
    (r"\mathrm{e}^{-1}", (False, "could not read '(e)^(-1)' as a number: it contains letters; type a number such as "
                                 "0.25 or 1/4")),
])
def test_a_number_in_a_text_style_is_the_number(answer, outcome):
    grade = check("numeric", 0.25, answer, {"decimals": 2})
    assert (grade.correct, grade.error) == outcome


@pytest.mark.parametrize("answer, error", [
    ("np.array([[0.1, 0.2], [0.3, 0.4]])",
     "write only the matrix, without np.array( ): its entries in brackets, e.g. [[1, 2], [3, 4]]"),
    ("torch.tensor([[0.1, 0.2], [0.3, 0.4]])",
     "write only the matrix, without torch.tensor( ): its entries in brackets, e.g. [[1, 2], [3, 4]]"),
    ("Matrix([[0.1,0.2],[0.3,0.4]])",
     "write only the matrix, without Matrix( ): its entries in brackets, e.g. [[1, 2], [3, 4]]"),
    ("x [1, 2]", "unbalanced brackets: start the matrix with [ and end it with ]"),
])
def test_a_matrix_pasted_as_code_is_told_to_drop_the_call(answer, error):
    grade = check("matrix", WEIGHTS, answer, {"decimals": 2})
    assert (grade.correct, grade.score, grade.error) == (False, 0.0, error)


def test_the_matrix_itself_is_right():
    grade = check("matrix", WEIGHTS, "[[0.1, 0.2], [0.3, 0.4]]", {"decimals": 2})
    assert (grade.correct, grade.score, grade.error) == (True, 1.0, None)
