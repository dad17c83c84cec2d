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
