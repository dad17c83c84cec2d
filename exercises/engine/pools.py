"""Which exercises can stand in for each other in a pool: one skill, one size.

A pool gives each student one of its exercises, so its exercises must test the same
thing at the same cost. Here that is made checkable from the specs alone: an
exercise's *pool skill* (what it mainly tests) and its *size* (total part weight and
number of parts). Two exercises are interchangeable when both match. Pure Python:
no Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .skills import SKILL_SLUGS
from .spec import ExerciseSpec

# Exercises whose part counts differ by more than this are not the same length.
MAX_PART_COUNT_DIFFERENCE = 1


@dataclass(frozen=True)
class PoolProfile:
    slug: str
    title: str
    skill: str | None
    points: float  # sum of the parts' weights
    parts: int
    difficulty: str

    def fits(self, other: "PoolProfile") -> bool:
        """Same pool skill, same total weight, part counts within one of each other."""
        return (
            self.skill is not None
            and self.skill == other.skill
            and abs(self.points - other.points) < 1e-9
            and abs(self.parts - other.parts) <= MAX_PART_COUNT_DIFFERENCE
        )


def pool_skill(spec: ExerciseSpec) -> str | None:
    """What an exercise mainly tests: the first of its declared default ``skills``, else
    the skill that carries the most part weight (ties in vocabulary order)."""
    if spec.skills:
        return spec.skills[0]
    weight: dict[str, float] = {}
    for part in spec.parts:
        for skill in part.skills:
            weight[skill] = weight.get(skill, 0.0) + part.points
    if not weight:
        return None
    return max(weight, key=lambda skill: (weight[skill], -SKILL_SLUGS.index(skill)))


def pool_profile(spec: ExerciseSpec) -> PoolProfile:
    return PoolProfile(
        slug=spec.slug,
        title=spec.title,
        skill=pool_skill(spec),
        points=float(sum(part.points for part in spec.parts)),
        parts=len(spec.parts),
        difficulty=spec.difficulty,
    )


def interchangeable_groups(profiles: Iterable[PoolProfile], skill: str) -> list[list[PoolProfile]]:
    """The exercises of ``skill`` grouped by size, largest group first; within a group
    every exercise fits every other (same weight; part counts within one of the group's
    smallest)."""
    of_skill = sorted((p for p in profiles if p.skill == skill), key=lambda p: (p.points, p.parts, p.slug))
    groups: list[list[PoolProfile]] = []
    for profile in of_skill:
        for group in groups:
            if all(profile.fits(member) for member in group):
                group.append(profile)
                break
        else:
            groups.append([profile])
    return sorted(groups, key=lambda group: (-len(group), group[0].points, group[0].slug))


def pool_suggestion(profiles: Iterable[PoolProfile], skill: str, count: int) -> list[PoolProfile]:
    """Up to ``count`` interchangeable exercises of ``skill``: from its largest group of
    equal size, in slug order. Fewer (or none) when the bank has fewer."""
    groups = interchangeable_groups(profiles, skill)
    if not groups or count < 1:
        return []
    return sorted(groups[0], key=lambda p: p.slug)[:count]
