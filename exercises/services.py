"""Writes for exercises: handing out variants.

A variant is drawn once, from a seed that is a keyed hash of where it is used, and
its parameters are stored. Later code or engine changes never alter what a student saw.
"""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from django.db import IntegrityError, transaction

from courses.models import AssignmentItem
from exams.selectors_accommodations import with_own_accommodation

from . import bodies, engine
from .engine.targeting import draw_targeted_variant
from .models import Variant
from .selectors import recent_misconception
from .specs import version_spec

logger = logging.getLogger(__name__)


def assignment_variant_context(item: AssignmentItem) -> str:
    return f"assignment:{item.pk}"


def variant_get_or_create_for_item(*, item: AssignmentItem, student) -> Variant:
    """The student's variant for an assignment slot; created on first view."""
    context = assignment_variant_context(item)
    version = item.exercise_version
    # The student's accommodation on the assignment rides along: the page's clock and
    # attempts, and a submission's checks, read it from here.
    existing = with_own_accommodation(
        Variant.objects.filter(exercise_version=version, student=student, context=context),
        assignment_path="assignment_item__assignment",
        student=student,
    ).first()
    if existing:
        # The page goes on to read these: reuse the rows the caller already fetched.
        existing.exercise_version = version
        existing.student = student
        if existing.assignment_item_id == item.pk:
            existing.assignment_item = item
        return existing
    return variant_create_for_item(item=item, student=student)


def variant_create_for_item(*, item: AssignmentItem, student) -> Variant:
    """The student's variant for an assignment slot, made now: for a caller that found
    none (two made at once: the first stored wins)."""
    version = item.exercise_version
    context = assignment_variant_context(item)
    seed = engine.variant_seed(
        secret=settings.VARIANT_SEED_SECRET,
        course=item.assignment.course.slug,
        assignment=item.assignment.slug,
        student=str(student.pk),
        slug=version.exercise.slug,
        version=version.number,
    )
    return _variant_create(
        version=version, student=student, context=context, seed=seed, item=item
    )


def practice_context(item: AssignmentItem) -> str:
    """Practice variants remember the assignment slot they were started from."""
    return f"practice:{item.pk}:{secrets.token_hex(8)}"


def variant_create_practice(
    *, item: AssignmentItem, student, named: str | None = None
) -> Variant:
    """A fresh variant on request, outside the graded assignment.

    With ``named`` (e.g. "chapter") the exercise's fixed, hand-picked parameters are used.
    Raises ``engine.VariantError`` for an unknown name.
    """
    version = item.exercise_version
    if named is not None and named not in version_spec(version).variants:
        raise engine.VariantError(f"this exercise has no variant named '{named}'", [])
    seed = engine.practice_seed()
    if named is None:
        seed = _seed_probing_recent_slip(version=version, student=student, seed=seed)
    return _variant_create(
        version=version,
        student=student,
        context=practice_context(item),
        seed=seed,
        named=named,
    )


def _seed_probing_recent_slip(*, version, student, seed: int) -> int:
    """When the student's recent wrong answers to this exercise carry a misconception, a
    seed whose variant makes that slip's answer clearly wrong (engine.targeting); else
    ``seed``. Bounded: a fixed number of draws, then the plain variant."""
    recent = recent_misconception(student=student, exercise_id=version.exercise_id)
    if recent is None:
        return seed
    part_key, code = recent
    draw = draw_targeted_variant(version_spec(version), seed, part_key=part_key, misconception=code)
    if draw is None:
        logger.info(
            "no variant of %s separates %s on part %s; practice gets a plain variant",
            version, code, part_key,
        )
        return seed
    return draw.seed


def _variant_create(*, version, student, context, seed, item=None, named=None) -> Variant:
    spec = version_spec(version)
    draw = engine.draw_variant(spec, seed, name=named)
    # Rendered with the variant, so no page view renders it (exercises.bodies).
    rendered = bodies.body_render(
        spec=spec, params=draw.params, content_hash=version.content_hash,
        part_points=engine.part_points(spec, item.points) if item else None,
    )
    try:
        with transaction.atomic():
            return Variant.objects.create(
                exercise_version=version,
                student=student,
                context=context,
                seed=draw.seed,
                params=draw.params,
                assignment_item=item,
                rendered=rendered,
            )
    except IntegrityError:
        # Two tabs opened the exercise at once: the first stored variant wins.
        return Variant.objects.get(exercise_version=version, student=student, context=context)
