"""The course total of one student: weighted categories, drop-lowest, and what an
assignment the student never attempted counts for. Pure Python, no Django.

The rules (docs/gradebook.md says them in words):

- An assignment's share is its points earned / the points the student was given.
- Not attempted is not zero: an assignment the student never answered counts 0 once it
  is *over* (its close or due date has passed), and is left out of the total before that.
- In a category, the ``drop_lowest`` lowest shares are dropped (at least one counted
  assignment always stays); the category's percent is its kept points earned / kept points.
- The total is the weights x category percents, over the categories that count anything,
  rescaled to the weights of those categories (an empty category does not pull it down).
- Without categories every assignment sits in one category of weight 100.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AssignmentResult:
    """One student's result on one assignment: ``earned`` None when not attempted."""

    assignment_id: int
    earned: float | None
    out_of: float
    is_over: bool

    @property
    def counts(self) -> bool:
        return self.out_of > 0 and (self.earned is not None or self.is_over)

    @property
    def share(self) -> float:
        return (self.earned or 0.0) / self.out_of if self.out_of else 0.0


@dataclass(frozen=True)
class CategoryRule:
    key: int | None
    weight: float
    drop_lowest: int = 0


@dataclass(frozen=True)
class CategoryResult:
    key: int | None
    percent: float | None  # None: nothing in it counts yet
    dropped: tuple[int, ...]  # assignment ids dropped


def category_result(rule: CategoryRule, results: list[AssignmentResult]) -> CategoryResult:
    counted = [result for result in results if result.counts]
    drop = min(max(rule.drop_lowest, 0), max(len(counted) - 1, 0))
    # Lowest share first; ties drop the one worth fewer points, then the earlier id.
    ranked = sorted(counted, key=lambda r: (r.share, r.out_of, r.assignment_id))
    dropped, kept = ranked[:drop], ranked[drop:]
    out_of = sum(result.out_of for result in kept)
    percent = 100 * sum(result.earned or 0.0 for result in kept) / out_of if out_of else None
    return CategoryResult(rule.key, percent, tuple(sorted(result.assignment_id for result in dropped)))


def weighted_total(rules: list[CategoryRule], categories: list[CategoryResult]) -> float | None:
    """The course percent; None when no category counts anything yet."""
    weights = {rule.key: rule.weight for rule in rules}
    counted = [c for c in categories if c.percent is not None and weights.get(c.key, 0) > 0]
    weight_sum = sum(weights[c.key] for c in counted)
    if not weight_sum:
        return None
    return sum(weights[c.key] * c.percent for c in counted) / weight_sum
