"""Errors raised while reading or using an exercise spec.

A spec author must be told *where* a problem is, so every issue carries the YAML line
(when known) and the dotted path of the offending field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SpecIssue:
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.path}: {self.message}" if self.path else f"{where}{self.message}"


class SpecError(Exception):
    """The spec is invalid; ``errors`` lists every problem found, in file order, each once
    (the same issue found again, e.g. on every variant drawn, is not repeated)."""

    def __init__(self, errors: list[SpecIssue]):
        unique = list(dict.fromkeys(errors))
        self.errors = sorted(unique, key=lambda issue: (issue.line or 0, issue.path))
        super().__init__("\n".join(str(issue) for issue in self.errors))


class ExpressionError(ValueError):
    """An expression is outside the whitelist, or failed while being evaluated.

    ``detail`` is what went wrong without the expression's text in front (for a message
    that names the expression itself)."""

    def __init__(self, message: str, *, detail: str | None = None):
        super().__init__(message)
        self.detail = detail if detail is not None else message


@dataclass(frozen=True)
class DrawProblem:
    """Why one draw of a variant was refused, and what in the exercise file caused it.

    ``reason`` is the one-line form kept in a draw's rejections ("require: never");
    ``subject`` names the parameter, part or gate ("parameter `K`"), ``field`` its
    dotted path in the file and ``line`` its line (None when the source is not known);
    ``action`` says what failed ("expression `X @ W_K` failed") and ``detail`` why.
    """

    kind: str
    reason: str
    subject: str
    field: str
    line: int | None
    action: str
    detail: str

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.subject}{where}: {self.action}: {self.detail}"


# Numbers in a detail (a weight, an index, a shape; nan and inf too): two details that differ
# only in these are one reason ("index 4 is out of bounds", "index -4 is out of bounds").
_NUMBER = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b)")


def detail_reason(detail: str) -> str:
    """The reason a detail gives, without its numbers (the key its draws are counted by)."""
    return _NUMBER.sub("#", detail)


@dataclass(frozen=True)
class CountedReason:
    """One more reason the same field failed, with the draws it alone refused."""

    problem: DrawProblem  # its first draw, shown as the example
    count: int
    other_details: int = 0  # details of this reason besides the one shown (other numbers)

    def counted(self) -> str:
        return f"for {self.count} more: {_with_others(self.problem.detail, self.other_details)}"


@dataclass(frozen=True)
class CountedDrawProblem:
    """One problem of many draws, told once: how many of ``draws`` it refused.

    A field can fail for more than one reason (a gate's expression divides by zero on some
    draws and indexes past a row on others): ``count`` is the draws of the reason shown
    (``problem``'s), and each other reason is in ``more`` with its own count, so no count
    covers draws refused for a reason it does not name."""

    problem: DrawProblem
    count: int
    draws: int
    other_details: int = 0  # how many different details of the reason shown besides the one shown
    more: tuple[CountedReason, ...] = ()  # the field's other reasons, most draws first

    @property
    def line(self) -> int | None:
        return self.problem.line

    @property
    def field(self) -> str:
        return self.problem.field

    @property
    def message(self) -> str:
        """The sentence without its line (pages show the line and field beside it)."""
        return f"{self.problem.subject}: {self._counted()}"

    def _counted(self) -> str:
        first = (f"{self.problem.action} for {self.count} of {self.draws} draw{'s' if self.draws != 1 else ''}: "
                 f"{_with_others(self.problem.detail, self.other_details)}")
        return "; ".join([first] + [reason.counted() for reason in self.more])

    def as_issue(self) -> SpecIssue:
        return SpecIssue(self.line, self.field, self.message)

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.problem.subject}{where}: {self._counted()}"


def _with_others(detail: str, others: int) -> str:
    return f"e.g. {detail} (and {others} more like it)" if others else detail


def count_draw_problems(problems, draws: int) -> list[CountedDrawProblem]:
    """Each distinct problem once, in file order, with the number of draws it refused for
    each of its reasons, most draws first.

    Problems are the same when they concern the same field and fail the same way; their
    details may differ from draw to draw. Details that differ only in their numbers (a
    weight of 0.97, then 0.99) are one reason, the first shown as an example; details that
    say something else (division by zero, then an index out of range) are counted apart.
    ``problems`` holds one problem per refused draw."""
    groups: dict[tuple, dict[str, list[DrawProblem]]] = {}
    for problem in problems:
        reasons = groups.setdefault((problem.field, problem.kind, problem.action), {})
        reasons.setdefault(detail_reason(problem.detail), []).append(problem)
    counted = []
    for reasons in groups.values():
        # Most draws first; a tie keeps the order the reasons were first met in.
        first, *others = sorted(reasons.values(), key=len, reverse=True)
        counted.append(CountedDrawProblem(
            problem=first[0],
            count=len(first),
            draws=draws,
            other_details=_other_details(first),
            more=tuple(CountedReason(group[0], len(group), _other_details(group)) for group in others),
        ))
    return sorted(counted, key=lambda c: (c.line is None, c.line or 0, c.field))


def once_per_draw(problems) -> list[DrawProblem]:
    """One draw's problems with each field's failure once: a placeholder written twice in a
    prompt fails twice on the same draw, but refuses that one draw (it counted as two)."""
    first_of_each: dict[tuple, DrawProblem] = {}
    for problem in problems:
        first_of_each.setdefault((problem.field, problem.kind, problem.action), problem)
    return list(first_of_each.values())


def _other_details(group: list[DrawProblem]) -> int:
    return len({problem.detail for problem in group}) - 1


class DrawFailed(ExpressionError):
    """One draw failed on a field of the file; ``problem`` says which and why."""

    def __init__(self, message: str, problem: DrawProblem):
        super().__init__(message, detail=problem.detail)
        self.problem = problem


class VariantError(RuntimeError):
    """No acceptable variant could be drawn within the redraw cap."""

    def __init__(self, message: str, rejections: list[str], problems: list[DrawProblem] | None = None):
        self.rejections = rejections
        self.problems = problems or []  # one per refused draw, as ``rejections``
        super().__init__(message)
