"""Pools by skill: which published exercises could form a pool of N for skill S (reads only).

Interchangeable means what ``exercises.engine.pools`` says: the same pool skill, the same
total part weight and nearly the same number of parts. The latest published version of
each exercise is offered; exercises already in the assignment are not.
"""

from __future__ import annotations

from dataclasses import dataclass

from courses.models import Assignment
from exercises.engine.pools import PoolProfile, pool_profile, pool_suggestion
from exercises.engine.skills import SKILLS
from exercises.models import ExerciseVersion, VersionStatus
from exercises.specs import version_spec


@dataclass(frozen=True)
class PoolCandidate:
    version: ExerciseVersion
    profile: PoolProfile


def latest_published_by_exercise() -> list[ExerciseVersion]:
    latest: dict[int, ExerciseVersion] = {}
    for version in ExerciseVersion.objects.filter(status=VersionStatus.PUBLISHED).select_related(
        "exercise"
    ).order_by("exercise__slug", "-number"):
        latest.setdefault(version.exercise_id, version)
    return list(latest.values())


def skill_pool_candidates(*, assignment: Assignment, skill: str, count: int) -> list[PoolCandidate]:
    """Up to ``count`` interchangeable exercises of ``skill`` not yet in ``assignment``."""
    if skill not in SKILLS or count < 1:
        return []
    present = set(assignment.items.values_list("exercise_version__exercise_id", flat=True))
    versions = {
        version.exercise.slug: version for version in latest_published_by_exercise()
        if version.exercise_id not in present
    }
    profiles = [pool_profile(version_spec(version)) for version in versions.values()]
    return [PoolCandidate(version=versions[p.slug], profile=p) for p in pool_suggestion(profiles, skill, count)
            if p.slug in versions]


def skill_pool_sizes(*, assignment: Assignment) -> dict[str, int]:
    """Per skill, how many interchangeable exercises a pool could draw on (for the picker)."""
    present = set(assignment.items.values_list("exercise_version__exercise_id", flat=True))
    profiles = [
        pool_profile(version_spec(version)) for version in latest_published_by_exercise()
        if version.exercise_id not in present
    ]
    return {slug: len(pool_suggestion(profiles, slug, 100)) for slug in SKILLS}
