"""Errors raised while reading or using an exercise spec.

A spec author must be told *where* a problem is, so every issue carries the YAML line
(when known) and the dotted path of the offending field.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class CountedDrawProblem:
    """One problem of many draws, told once: how many of ``draws`` it refused."""

    problem: DrawProblem
    count: int
    draws: int
    other_details: int = 0  # how many different details besides the one shown

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
        detail = self.problem.detail
        if self.other_details:
            detail = f"e.g. {detail} (and {self.other_details} more like it)"
        return f"{self.problem.action} for {self.count} of {self.draws} draw{'s' if self.draws != 1 else ''}: {detail}"

    def as_issue(self) -> SpecIssue:
        return SpecIssue(self.line, self.field, self.message)

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.problem.subject}{where}: {self._counted()}"


def count_draw_problems(problems, draws: int) -> list[CountedDrawProblem]:
    """Each distinct problem once, with the number of draws it refused, in file order.

    Problems are the same when they concern the same field and fail the same way; their
    details may differ from draw to draw (a weight of 0.97, then 0.99), and the first is
    shown as an example."""
    groups: dict[tuple, list[DrawProblem]] = {}
    for problem in problems:
        groups.setdefault((problem.field, problem.kind, problem.action), []).append(problem)
    counted = [
        CountedDrawProblem(
            problem=group[0],
            count=len(group),
            draws=draws,
            other_details=len({problem.detail for problem in group}) - 1,
        )
        for group in groups.values()
    ]
    return sorted(counted, key=lambda c: (c.line is None, c.line or 0, c.field))


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
