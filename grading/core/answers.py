"""The one entry point for grading an answer of any type.

``check`` never raises for a bad *answer* (that is an invalid Grade with ``error`` set,
which costs the student no attempt); it raises ``ValueError`` (InvalidRequest) for a bad
*request*: unknown answer type, unreadable expected value or options.
Each answer type lives in its own module with the phases parse / grade (``check``) / test.
"""

from __future__ import annotations

from importlib import import_module

from grading.core.grades import (  # noqa: F401  (re-exported: the public interface)
    AnswerFormatError,
    Grade,
    InvalidRequest,
    Parsed,
    require_options_dict,
)

ANSWER_TYPES = ("numeric", "matrix", "symbolic", "matrix_expression", "derivation", "choice", "free_text")
SANDBOXED_TYPES = ("symbolic", "derivation")


def checker_module(answer_type: str):
    if answer_type not in ANSWER_TYPES:
        raise InvalidRequest(f"unknown answer type {answer_type!r}; use one of {', '.join(ANSWER_TYPES)}")
    return import_module(f"grading.core.{answer_type}")


def check(answer_type: str, expected, answer, options: dict | None = None) -> Grade:
    """Grade one answer. See the module docstring for what raises and what does not."""
    module = checker_module(answer_type)
    return module.check(expected, answer, require_options_dict(options))


def parse(answer_type: str, answer, options: dict | None = None) -> Parsed:
    """Read an answer for a live preview: Parsed(value, error, preview_latex)."""
    module = checker_module(answer_type)
    return module.parse_answer(answer, require_options_dict(options))


def self_test_answers(answer_type: str, expected, options: dict | None = None) -> dict[str, list]:
    """Raw right / wrong / invalid answers for an exercise self-test to feed back through check()."""
    module = checker_module(answer_type)
    return module.self_test(expected, require_options_dict(options))
