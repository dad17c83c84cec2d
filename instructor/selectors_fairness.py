"""Variant fairness of an assignment, from its students' first tries (reads only).

The statistics are in ``exercises.engine.fairness``; this module gathers the answers.
Per exercise, an observation is one student's variant and whether every auto-graded part
they answered was right at their first attempt (free-text parts, graded by hand, are
left out). Each exercise's observations are tested across bins of every drawn scalar
parameter and every variant feature; each pool's across its items. All tests of one
assignment are one Holm family.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.cache import cache

from courses import pools
from courses.models import Assignment, Course
from exercises import engine
from exercises.engine import fairness
from exercises.models import Variant
from exercises.specs import version_spec
from grading.models import Submission, SubmissionStatus

from .selectors import ItemInfo, assignment_items_info, items_draws

MANUAL_TYPES = ("free_text",)
# Features need each variant's reference answers (about 1–2 ms a variant). A variant never
# changes, so they are cached; and past this many students an exercise's feature tests use
# the first ones (by student id), which keeps a large course's page to seconds. The drawn
# parameters are read for every student.
MAX_FEATURE_OBSERVATIONS = 400
FEATURE_CACHE_SECONDS = 7 * 24 * 3600


@dataclass
class ExerciseFairness:
    info: ItemInfo
    observations: int
    tests: list[fairness.FactorTest]

    @property
    def flagged(self) -> bool:
        return any(test.flagged for test in self.tests)

    @property
    def flags(self) -> list[fairness.FactorTest]:
        return [test for test in self.tests if test.flagged]


@dataclass
class PoolFairness:
    name: str
    items: list[ItemInfo]
    observations: int
    test: fairness.FactorTest

    @property
    def flagged(self) -> bool:
        return self.test.flagged


@dataclass
class FairnessReport:
    assignment: Assignment
    exercises: list[ExerciseFairness] = field(default_factory=list)
    pools: list[PoolFairness] = field(default_factory=list)
    alpha: float = fairness.ALPHA
    min_per_bin: int = fairness.MIN_PER_BIN

    @property
    def tests_run(self) -> int:
        return sum(test.tested for e in self.exercises for test in e.tests) + sum(p.test.tested for p in self.pools)

    @property
    def flagged_count(self) -> int:
        return sum(e.flagged for e in self.exercises) + sum(p.flagged for p in self.pools)


def assignment_fairness(*, assignment: Assignment) -> FairnessReport:
    infos = assignment_items_info(assignment=assignment)
    specs = {info.item.pk: version_spec(info.item.exercise_version) for info in infos}
    outcomes = _first_try_outcomes(assignment=assignment, infos=infos)  # item -> {(student, variant): correct}
    draws = items_draws(infos=infos, assignment=assignment)
    variant_ids = {variant for per_item in outcomes.values() for _, variant in per_item}
    params = dict(Variant.objects.filter(pk__in=variant_ids).values_list("pk", "params"))

    report = FairnessReport(assignment=assignment)
    by_student: dict[int, dict[int, bool]] = defaultdict(dict)  # student -> item -> correct
    for info in infos:
        spec = specs[info.item.pk]
        given = [
            (student, variant, correct)
            for (student, variant), correct in sorted(outcomes.get(info.item.pk, {}).items())
            if pools.item_given(item=info.item, draws=draws.get(student, {}))
        ]
        features = _features(
            spec, info.item.exercise_version_id,
            [(variant, params.get(variant)) for _, variant, _ in given[:MAX_FEATURE_OBSERVATIONS]],
        )
        observations = []
        for student, variant, correct in given:
            by_student[student][info.item.pk] = correct
            factors = {**_scalar_factors(spec, params.get(variant)), **features.get(variant, {})}
            observations.append(fairness.Observation(correct=correct, factors=factors))
        report.exercises.append(
            ExerciseFairness(info=info, observations=len(observations),
                             tests=fairness.exercise_tests(info.slug, observations))
        )
    report.pools = _pool_tests(infos=infos, by_student=by_student)
    fairness.adjust_family(
        [test for exercise in report.exercises for test in exercise.tests] + [pool.test for pool in report.pools]
    )
    return report


def course_fairness(*, course: Course) -> list[FairnessReport]:
    return [assignment_fairness(assignment=assignment) for assignment in course.assignments.order_by("slug")]


def _first_try_outcomes(*, assignment: Assignment, infos: list[ItemInfo]) -> dict[int, dict[tuple[int, int], bool]]:
    auto_parts = {
        info.item.pk: {part.key for part in info.parts if part.type not in MANUAL_TYPES} for info in infos
    }
    rows = Submission.objects.filter(
        variant__assignment_item__assignment=assignment, attempt=1, status=SubmissionStatus.GRADED
    ).values_list("student_id", "variant_id", "variant__assignment_item_id", "part", "correct")
    outcomes: dict[int, dict[tuple[int, int], bool]] = defaultdict(dict)
    for student, variant, item, part, correct in rows:
        if part not in auto_parts.get(item, ()):
            continue
        key = (student, variant)
        outcomes[item][key] = outcomes[item].get(key, True) and bool(correct)
    return outcomes


def _feature_key(version_id: int, variant_id: int, params) -> str:
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"variant-features:1:{version_id}:{variant_id}:{digest}"


def _scalar_factors(spec: engine.ExerciseSpec, params: dict | None) -> dict:
    if not isinstance(params, dict):
        return {}
    return {
        name: params[name] for name in fairness.scalar_parameters(spec)
        if isinstance(params.get(name), (int, float, str)) and not isinstance(params.get(name), bool)
    }


def _features(spec: engine.ExerciseSpec, version_id: int, variants: list[tuple[int, dict | None]]) -> dict[int, dict]:
    """Variant id -> its features, from the cache where they are. The key holds the version
    and a digest of the parameters, so a reused id (a restored database) never reads
    another variant's features."""
    keys = {variant: _feature_key(version_id, variant, params) for variant, params in variants}
    cached = cache.get_many(list(keys.values()))
    found, fresh = {}, {}
    for variant, params in variants:
        if keys[variant] in cached:
            found[variant] = cached[keys[variant]]
            continue
        try:
            features = fairness.variant_features(spec, params) if isinstance(params, dict) else {}
        except (engine.ExpressionError, ValueError, KeyError, TypeError):
            features = {}  # a variant stored under older code: its parameters still bin it
        found[variant] = fresh[keys[variant]] = features
    if fresh:
        cache.set_many(fresh, FEATURE_CACHE_SECONDS)
    return found


def _pool_tests(*, infos: list[ItemInfo], by_student: dict[int, dict[int, bool]]) -> list[PoolFairness]:
    members: dict[str, list[ItemInfo]] = defaultdict(list)
    for info in infos:
        if info.item.pool:
            members[info.item.pool].append(info)
    results = []
    for name, pool_infos in sorted(members.items()):
        labels, correct = [], []
        for student, answered in sorted(by_student.items()):
            for info in pool_infos:
                if info.item.pk in answered:
                    labels.append(info.slug)
                    correct.append(answered[info.item.pk])
        results.append(
            PoolFairness(name=name, items=pool_infos, observations=len(labels),
                         test=fairness.factor_test(f"pool {name}", "exercise", labels, correct))
        )
    return results
