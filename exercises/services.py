"""Writes for exercises: handing out variants.

A variant is drawn once, from a seed that is a keyed hash of where it is used, and
its parameters are stored. Later code or engine changes never alter what a student saw.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import IntegrityError, transaction

from courses.models import AssignmentItem

from . import engine
from .models import ExerciseVersion, Variant


def assignment_variant_context(item: AssignmentItem) -> str:
    return f"assignment:{item.pk}"


def variant_get_or_create_for_item(*, item: AssignmentItem, student) -> Variant:
    """The student's variant for an assignment slot; created on first view."""
    context = assignment_variant_context(item)
    version = item.exercise_version
    existing = Variant.objects.filter(
        exercise_version=version, student=student, context=context
    ).first()
    if existing:
        return existing
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


def variant_create_practice(*, version: ExerciseVersion, student) -> Variant:
    """A fresh variant on request, for practice outside any assignment."""
    seed = secrets.randbits(62)
    context = f"practice:{secrets.token_hex(8)}"
    return _variant_create(version=version, student=student, context=context, seed=seed)


def _variant_create(*, version, student, context, seed, item=None) -> Variant:
    spec = engine.spec_from_json(version.spec)
    draw = engine.draw_variant(spec, seed)
    try:
        with transaction.atomic():
            return Variant.objects.create(
                exercise_version=version,
                student=student,
                context=context,
                seed=draw.seed,
                params=draw.params,
                assignment_item=item,
            )
    except IntegrityError:
        # Two tabs opened the exercise at once: the first stored variant wins.
        return Variant.objects.get(exercise_version=version, student=student, context=context)
