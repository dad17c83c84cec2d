"""What a CSV import did (or, in a dry run, would do) line by line: the roster's and the
accommodations' imports report the same way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

UNCHANGED = ("skip", "error")


@dataclass(frozen=True)
class ImportLine:
    line: int
    who: str
    action: str  # one of the report's ACTIONS
    detail: str


@dataclass
class LineReport:
    """Lines of one import; a subclass names its ``ACTIONS`` (ending in skip and error)."""

    ACTIONS: ClassVar[tuple[str, ...]] = UNCHANGED
    dry_run: bool
    lines: list[ImportLine] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(self.ACTIONS, 0)
        for line in self.lines:
            counts[line.action] += 1
        return counts

    @property
    def errors(self) -> list[ImportLine]:
        return [line for line in self.lines if line.action == "error"]

    @property
    def changes(self) -> int:
        return sum(1 for line in self.lines if line.action not in UNCHANGED)
