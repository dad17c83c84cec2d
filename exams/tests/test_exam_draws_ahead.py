"""An exam's variants are drawn and rendered before it opens and kept in the cache; each
student's first view makes their variant from the kept draw (still at that view, so the
time a student opened an item stays theirs) — the very variant they would have been
given anyway."""

from __future__ import annotations

from datetime import timedelta

import pytest

from courses.models import AssignmentItem, AssignmentKind, Enrolment, EnrolmentStatus, Role
from exams import services
from exercises import engine
from exercises import services as exercise_services
from exercises.models import Variant
from exercises.services import assignment_variant_draw, variant_get_or_create_for_item

from .conftest import START


@pytest.fixture(autouse=True)
def own_cache(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "exam-draws-ahead"}}
    settings.EXAM_DRAWS_AHEAD_SECONDS = 900.0
    settings.EXAM_DRAWS_KEEP_SECONDS = 7200.0
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def opening(exam, item, clock):
    """The demo exam, opening in ten minutes, with three of its exercises."""
    exam.opens_at = START + timedelta(minutes=10)
    exam.save()
    kept = [item.pk, *AssignmentItem.objects.filter(assignment=exam).exclude(pk=item.pk)
            .order_by("position", "pk").values_list("pk", flat=True)[:2]]
    AssignmentItem.objects.filter(assignment=exam).exclude(pk__in=kept).delete()
    return exam


def students_of(exam) -> list[int]:
    return sorted(Enrolment.objects.filter(
        course=exam.course, role=Role.STUDENT, status=EnrolmentStatus.ACTIVE
    ).values_list("user_id", flat=True))


def no_drawing(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("drew a variant the beat had kept")

    monkeypatch.setattr(engine, "draw_variant", refuse)


def test_every_student_and_item_is_drawn_once_before_the_exam_opens(opening):
    students = students_of(opening)
    items = AssignmentItem.objects.filter(assignment=opening)
    assert len(students) == 3 and items.count() == 3
    assert services.exam_variant_draws_prepare_due() == 9
    assert Variant.objects.filter(assignment_item__assignment=opening).count() == 0  # no one opened anything
    assert services.exam_variant_draws_prepare_due() == 0  # once per exam, opening time and items


def test_the_first_view_makes_the_variant_it_would_have_drawn_from_the_kept_draw(
    opening, student, item, monkeypatch
):
    expected_seed, expected_params, expected_body = assignment_variant_draw(item=item, student_id=student.pk)
    services.exam_variant_draws_prepare_due()
    no_drawing(monkeypatch)
    variant = variant_get_or_create_for_item(item=item, student=student)
    assert (variant.seed, variant.params, variant.rendered) == (expected_seed, expected_params, expected_body)
    assert Variant.objects.get(pk=variant.pk).params == expected_params


def test_a_kept_draw_for_other_points_or_another_version_is_not_used(opening, student, item, monkeypatch):
    services.exam_variant_draws_prepare_due()
    item.points = 4.0  # the part labels changed after the draws were kept
    item.save()
    drawn = []
    real_draw = engine.draw_variant
    monkeypatch.setattr(engine, "draw_variant", lambda *a, **k: drawn.append(1) or real_draw(*a, **k))
    variant = variant_get_or_create_for_item(item=item, student=student)
    assert drawn == [1]
    assert variant.rendered["points"] == repr(sorted(engine.part_points(
        engine.spec_from_json(item.exercise_version.spec), 4.0).items()))


def test_changed_items_or_opening_time_are_drawn_again(opening, item):
    assert services.exam_variant_draws_prepare_due() == 9
    item.points = 2.0
    item.save()
    assert services.exam_variant_draws_prepare_due() == 9
    opening.opens_at += timedelta(minutes=2)
    opening.save()
    assert services.exam_variant_draws_prepare_due() == 9


def test_students_with_their_variant_and_items_of_a_pool_are_left_out(opening, student, item):
    variant_get_or_create_for_item(item=item, student=student)
    other = AssignmentItem.objects.filter(assignment=opening).exclude(pk=item.pk).order_by("pk")
    AssignmentItem.objects.filter(pk__in=[row.pk for row in other]).update(pool="pair")
    assert services.exam_variant_draws_prepare_due() == 2  # the other two students, the one fixed item


@pytest.mark.parametrize("change", ["opens later", "already open", "homework", "unpublished", "archived"])
def test_only_published_exams_about_to_open_are_drawn(opening, change):
    if change == "opens later":
        opening.opens_at = START + timedelta(minutes=16)
    elif change == "already open":
        opening.opens_at = START - timedelta(minutes=1)
    elif change == "homework":
        opening.kind = AssignmentKind.HOMEWORK
    elif change == "unpublished":
        opening.is_published = False
    else:
        opening.course.archived_at = START
        opening.course.save()
    opening.save()
    assert services.exam_variant_draws_prepare_due() == 0


def test_a_cache_that_cannot_be_reached_keeps_nothing_and_pages_draw_as_before(
    opening, student, item, settings
):
    settings.CACHES = {"default": {  # production's cache, on a port where no Redis answers
        "BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:9/0",
        "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.2},
    }}
    assert services.exam_variant_draws_prepare_due() == 0
    variant = variant_get_or_create_for_item(item=item, student=student)
    assert variant.params == assignment_variant_draw(item=item, student_id=student.pk)[1]


def test_the_beat_sends_it_to_the_follow_ups_queue(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["prepare-exam-variant-draws"]
    assert entry["task"] == "exams.tasks.prepare_exam_variant_draws"
    assert entry["options"]["queue"] == settings.FOLLOWUP_QUEUE
    assert exercise_services.PREPARED_DRAWS_PER_WRITE == 200


def test_an_exercise_that_cannot_be_drawn_leaves_the_others_drawn(opening, item, monkeypatch):
    real_draw = engine.draw_variant
    broken = item.exercise_version.exercise.slug

    def draw(spec, seed, **kwargs):
        if spec.slug == broken:
            raise engine.VariantError("no variant passes its checks", [])
        return real_draw(spec, seed, **kwargs)

    monkeypatch.setattr(engine, "draw_variant", draw)
    assert services.exam_variant_draws_prepare_due() == 6  # three students, the two other items
