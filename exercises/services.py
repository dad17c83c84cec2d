"""Writes for exercises: handing out variants.

A variant is drawn once, from a seed that is a keyed hash of where it is used, and
its parameters are stored. Later code or engine changes never alter what a student saw.
"""

from __future__ import annotations

import logging
import secrets
from contextlib import nullcontext

from django.conf import settings
from django.core.cache import cache
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
    seed = _assignment_seed(item=item, student_id=student.pk)
    return _variant_create(
        version=version, student=student, context=context, seed=seed, item=item
    )


def _assignment_seed(*, item: AssignmentItem, student_id: int) -> int:
    version = item.exercise_version
    return engine.variant_seed(
        secret=settings.VARIANT_SEED_SECRET,
        course=item.assignment.course.slug,
        assignment=item.assignment.slug,
        student=str(student_id),
        slug=version.exercise.slug,
        version=version.number,
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
    drawn = None
    if item is not None and named is None:
        drawn = cache.get(_prepared_draw_key(version=version, seed=seed, item=item))
    if drawn is None:
        drawn = _draw_rendered(version=version, seed=seed, item=item, named=named)
    drawn_seed, params, rendered = drawn
    try:
        with _one_statement_transaction():
            return Variant.objects.create(
                exercise_version=version,
                student=student,
                context=context,
                seed=drawn_seed,
                params=params,
                assignment_item=item,
                rendered=rendered,
            )
    except IntegrityError:
        # Two tabs opened the exercise at once: the first stored variant wins.
        return Variant.objects.get(exercise_version=version, student=student, context=context)


def _one_statement_transaction():
    """What a lone INSERT that may lose a race needs around it. Outside a transaction
    (a page, in autocommit) the statement is its own transaction: no BEGIN and COMMIT round
    trips, and a refused INSERT leaves the connection usable. Inside a caller's transaction
    a savepoint keeps the refusal from breaking it."""
    return transaction.atomic() if transaction.get_connection().in_atomic_block else nullcontext()


def _draw_rendered(*, version, seed: int, item=None, named=None) -> tuple[int, dict, dict]:
    """(seed drawn, parameters, rendered body) of a variant: rendered with the variant, so
    no page view renders it (exercises.bodies)."""
    spec = version_spec(version)
    draw = engine.draw_variant(spec, seed, name=named)
    rendered = bodies.body_render(
        spec=spec, params=draw.params, content_hash=version.content_hash,
        part_points=engine.part_points(spec, item.points) if item else None,
    )
    return draw.seed, draw.params, rendered


def _prepared_draw_key(*, version, seed: int, item: AssignmentItem) -> str:
    # The version's content and the item's points are in the key: a draw made for other
    # content or other part labels is never found.
    return f"attnquiz:variant-draw:{version.pk}:{version.content_hash}:{item.points!r}:{seed}"


def assignment_variant_draw(*, item: AssignmentItem, student_id: int) -> tuple[int, dict, dict]:
    """(seed, parameters, rendered body) of the variant the student is (or will be) given
    on the assignment item, drawn now and stored nowhere."""
    return _draw_rendered(
        version=item.exercise_version, seed=_assignment_seed(item=item, student_id=student_id), item=item
    )


def variant_draws_prepare(*, assignment, student_ids: list[int], timeout: float, into=None) -> int:
    """Draws and renders, ahead of time, the variants ``student_ids`` will be given on the
    assignment's fixed items (a pool's items are drawn per student at the start, and left
    to then), and keeps them in the cache for ``timeout`` seconds; the number kept.

    A variant is still made when its student first opens the item (its time is when the
    student opened it), from the kept draw when there is one: at an exam's start the pages
    do not draw and render at once what a thousand students open. The same seed gives the
    same draw, so a variant made from a kept draw is the one its student would have been
    given anyway. Students who already have the item's variant are skipped. ``into``: the
    cache to keep them in (the default one)."""
    into = into or cache
    items = AssignmentItem.objects.filter(assignment=assignment, pool="").select_related("exercise_version__exercise")
    kept = 0
    for item in items:
        item.assignment = assignment
        try:
            kept += _item_draws_prepare(item=item, student_ids=student_ids, timeout=timeout, into=into)
        except engine.VariantError:  # its first view says so to the student, as without this
            logger.warning("no draws kept for %s: its variants cannot be drawn", item, exc_info=True)
    return kept


def _item_draws_prepare(*, item: AssignmentItem, student_ids: list[int], timeout: float, into) -> int:
    version = item.exercise_version
    kept = 0
    have = set(
        Variant.objects.filter(
            exercise_version=version, context=assignment_variant_context(item), student_id__in=student_ids
        ).values_list("student_id", flat=True)
    )
    draws = {}
    for student_id in student_ids:
        if student_id in have:
            continue
        seed = _assignment_seed(item=item, student_id=student_id)
        draws[_prepared_draw_key(version=version, seed=seed, item=item)] = _draw_rendered(
            version=version, seed=seed, item=item
        )
        if len(draws) >= PREPARED_DRAWS_PER_WRITE:
            into.set_many(draws, timeout=timeout)
            kept += len(draws)
            draws = {}
    if draws:
        into.set_many(draws, timeout=timeout)
        kept += len(draws)
    return kept


PREPARED_DRAWS_PER_WRITE = 200
