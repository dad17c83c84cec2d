"""Stored answers typeset for the staff pages: what the parser read, or nothing."""

import pytest

from grading.answer_input import answer_latex

SYMBOLS = {"symbols": ["d_k", "sigma_q", "sigma_k"]}
MOMENTS = {
    "symbols": {"d_k": "positive"},
    "random_variables": {"q": {"mean": 0, "variance": 1}, "k": {"mean": 0, "variance": 1}},
}


@pytest.mark.parametrize(
    "answer_type, raw_answer, options, latex",
    [
        ("matrix", [["0.1", "0.2"], ["0.3", "0.4"]], {}, [r"\begin{bmatrix} 0.1 & 0.2 \\ 0.3 & 0.4 \end{bmatrix}"]),
        ("matrix", "[0.25, 0.75]", {}, [r"\begin{bmatrix} 0.25 & 0.75 \end{bmatrix}"]),
        ("numeric", "-8", {}, ["-8"]),
        ("symbolic", "d_k sigma_q^2 sigma_k^2", SYMBOLS, [r"d_{k} \sigma_{q}^{2} \sigma_{k}^{2}"]),
        ("derivation", "Var(dot(q, k))\n\nd_k", MOMENTS, [r"\operatorname{Var}\left[q \cdot k\right]", "d_{k}"]),
        ("derivation", "Var(dot(q, k))\nd_k*(", MOMENTS, [r"\operatorname{Var}\left[q \cdot k\right]"]),
        # Nothing to typeset: not maths, or not readable (the page shows the text alone).
        ("choice", "a", {"choices": ["a", "b"]}, []),
        ("free_text", "Because $x$ grows.", {}, []),
        ("matrix", "[[1, 2], [3]]", {}, []),
        ("symbolic", "d_k sigma^", SYMBOLS, []),
        ("derivation", ["not", "text"], {}, []),
    ],
)
def test_answer_latex(answer_type, raw_answer, options, latex):
    assert answer_latex(answer_type=answer_type, raw_answer=raw_answer, options=options) == latex
