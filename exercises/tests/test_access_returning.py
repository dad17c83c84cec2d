"""A student coming back to an exercise is let in by one query, under the same rules as a
first visit: enrolled and active, the assignment published, the slot theirs."""

import pytest
from django.urls import reverse

from courses.models import AssignmentItem, Enrolment, EnrolmentStatus, PoolDraw
from exercises.services import variant_get_or_create_for_item

WORKED_EXAMPLE = "attention-weights-one-query"


@pytest.fixture
def item(demo):
    return AssignmentItem.objects.get(assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE)


@pytest.fixture
def student(django_user_model, demo):
    return django_user_model.objects.get(username="student1")


def drop(item, student):
    Enrolment.objects.filter(course=item.assignment.course, user=student).update(status=EnrolmentStatus.DROPPED)


def unpublish(item, student):
    item.assignment.is_published = False
    item.assignment.save(update_fields=["is_published"])


def pool_with_another_drawn(item, student):
    other = AssignmentItem.objects.filter(assignment=item.assignment).exclude(pk=item.pk).first()
    AssignmentItem.objects.filter(pk__in=[item.pk, other.pk]).update(pool="pick")
    PoolDraw.objects.create(assignment=item.assignment, student=student, pool="pick", item=other)


def untouched(item, student):
    pass


@pytest.mark.parametrize(
    ("change", "status"),
    [(untouched, 200), (drop, 404), (unpublish, 404), (pool_with_another_drawn, 404)],
)
@pytest.mark.parametrize("returning", [True, False], ids=["returning", "first visit"])
def test_the_rules_hold_whether_the_variant_exists_or_not(client, item, student, change, status, returning):
    if returning:
        variant_get_or_create_for_item(item=item, student=student)
    change(item, student)
    client.force_login(student)
    assert client.get(reverse("exercise", args=[item.pk])).status_code == status


def test_a_variant_of_an_older_version_is_not_the_slots(client, item, student):
    """The slot moved to another version: the page hands out a variant of the new one."""
    from exercises.models import ExerciseVersion, Variant

    old = variant_get_or_create_for_item(item=item, student=student)
    newer = ExerciseVersion.objects.create(
        exercise=item.exercise_version.exercise, number=item.exercise_version.number + 1,
        source=item.exercise_version.source, spec=item.exercise_version.spec,
        **{field: getattr(item.exercise_version, field) for field in ("status",) if hasattr(item.exercise_version, field)},
    )
    AssignmentItem.objects.filter(pk=item.pk).update(exercise_version=newer)
    client.force_login(student)
    assert client.get(reverse("exercise", args=[item.pk])).status_code == 200
    mine = Variant.objects.filter(student=student, context=f"assignment:{item.pk}")
    assert sorted(mine.values_list("exercise_version_id", flat=True)) == sorted([old.exercise_version_id, newer.pk])
