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
    """An expression is outside the whitelist, or failed while being evaluated."""


class VariantError(RuntimeError):
    """No acceptable variant could be drawn within the redraw cap."""

    def __init__(self, message: str, rejections: list[str]):
        self.rejections = rejections
        super().__init__(message)
