"""The one entry point for grading an answer of any type.

``check`` never raises for a bad *answer* (that is an invalid Grade with ``error`` set,
which costs the student no attempt); it raises ``ValueError`` (InvalidRequest) for a bad
*request*: unknown answer type, unreadable expected value or options. Any other failure
inside a checker becomes a could-not-grade Grade with the reason in ``details``.
Each answer type lives in its own module with the phases parse / grade (``check``) / test.
"""

from __future__ import annotations

from importlib import import_module

from grading.core.grades import (  # noqa: F401  (re-exported: the public interface)
    AnswerFormatError,
    Grade,
    InvalidRequest,
    Parsed,
    could_not_grade,
    invalid,
    require_options_dict,
)

ANSWER_TYPES = ("numeric", "matrix", "symbolic", "matrix_expression", "derivation", "choice", "free_text")
# Every checker that evaluates a student's expression runs under the same sandbox limits.
SANDBOXED_TYPES = ("symbolic", "derivation", "matrix_expression")


def checker_module(answer_type: str):
    if answer_type not in ANSWER_TYPES:
        raise InvalidRequest(f"unknown answer type {answer_type!r}; use one of {', '.join(ANSWER_TYPES)}")
    return import_module(f"grading.core.{answer_type}")


def check(answer_type: str, expected, answer, options: dict | None = None) -> Grade:
    """Grade one answer. See the module docstring for what raises and what does not."""
    module = checker_module(answer_type)
    options = require_options_dict(options)
    try:
        return module.check(expected, answer, options)
    except InvalidRequest:
        raise
    except AnswerFormatError as problem:  # a reader deep inside a checker refused the answer
        return invalid(str(problem))
    except (ArithmeticError, RecursionError, MemoryError, LookupError, TypeError, ValueError, AttributeError) as problem:
        # A checker bug or a numerical corner must not crash the stream or the worker:
        # the answer goes to a person, with the reason recorded.
        return could_not_grade(
            "Your answer could not be checked automatically (the checker failed on it); it has been passed on for review.",
            reason=f"{type(problem).__name__}: {str(problem)[:200]}",
        )


def parse(answer_type: str, answer, options: dict | None = None) -> Parsed:
    """Read an answer for a live preview: Parsed(value, error, preview_latex)."""
    module = checker_module(answer_type)
    return module.parse_answer(answer, require_options_dict(options))


def self_test_answers(answer_type: str, expected, options: dict | None = None) -> dict[str, list]:
    """Raw right / wrong / invalid answers for an exercise self-test to feed back through check()."""
    module = checker_module(answer_type)
    return module.self_test(expected, require_options_dict(options))


# One right answer of each sandboxed type, read and checked when a process starts
# (``warm_up``). A process's first reading of a derivation took 1.0–1.7 s (SymPy building
# what it keeps for later: the assumptions' rules, the printers, the parser's tables), every
# later one ~5 ms: without this, the first student of each web process and of each grading
# checker waited for it. Each case is a right answer, and a test holds it so.
_MOMENTS = {
    "symbols": {"d_k": "positive, integer", "sigma_q": "positive", "sigma_k": "positive"},
    "random_variables": {"q": {"mean": 0, "variance": "sigma_q**2"}, "k": {"mean": 0, "variance": "sigma_k**2"}},
    "start": "Var(Sum(q_m*k_m, m, 1, d_k))",
}
WARM_UP_CASES = (
    ("symbolic", "sqrt(d_k)*sigma_q*sigma_k", r"\sqrt{d_k}\,\sigma_q\sigma_k",
     {"symbols": _MOMENTS["symbols"]}),
    ("derivation", "d_k*sigma_q^2*sigma_k^2",
     "Var(Sum(q_m*k_m, m, 1, d_k))\n= d_k Var(q_m k_m)\n= d_k (E[q_m^2] E[k_m^2] - E[q_m]^2 E[k_m]^2)\n"
     "= d_k sigma_q^2 sigma_k^2", _MOMENTS),
    ("matrix_expression", "softmax(Q K^T / sqrt(d_k)) V", "softmax(Q @ K^T / sqrt(d_k)) @ V",
     {"matrices": {"Q": [4, 3], "K": [4, 3], "V": [4, 2]}}),
)


def warm_up() -> list[Grade]:
    """Read and check one right answer of each sandboxed type (``WARM_UP_CASES``), so that
    this process, and every process it forks afterwards, reads a student's first one warm."""
    grades = []
    for answer_type, expected, answer, options in WARM_UP_CASES:
        parse(answer_type, answer, options)
        grades.append(check(answer_type, expected, answer, options))
    return grades
