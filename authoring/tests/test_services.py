"""The review workflow's state machine, versioning of published exercises, and history."""

import itertools

import pytest

from authoring import services
from authoring.models import EventKind, ExerciseEvent, ExerciseOwner
from exercises import engine
from exercises.models import ExerciseVersion, VersionStatus

from .factories import product_yaml

S = VersionStatus
ALLOWED = {
    (S.DRAFT, S.IN_REVIEW),
    (S.IN_REVIEW, S.DRAFT),
    (S.IN_REVIEW, S.PUBLISHED),
    (S.PUBLISHED, S.RETIRED),
}
# Draft -> published is the author's own publishing, allowed only where the course needs no
# second reviewer (test_review_setting.py); this course has two instructors.
REFUSED = sorted(set(itertools.product(S.values, S.values)) - ALLOWED - {(S.DRAFT, S.PUBLISHED)})


def version_in(status, people) -> ExerciseVersion:
    """A version of a new exercise brought to ``status`` through the workflow itself."""
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    path = {
        S.DRAFT: [],
        S.IN_REVIEW: [S.IN_REVIEW],
        S.PUBLISHED: [S.IN_REVIEW, S.PUBLISHED],
        S.RETIRED: [S.IN_REVIEW, S.PUBLISHED, S.RETIRED],
    }[status]
    for step in path:
        version = services.version_transition(version=version, actor=people.reviewer, to_status=step)
    assert version.status == status
    return version


@pytest.mark.parametrize("from_status,to_status", sorted(ALLOWED))
def test_every_allowed_transition(people, from_status, to_status):
    version = version_in(from_status, people)
    moved = services.version_transition(version=version, actor=people.reviewer, to_status=to_status)
    assert moved.status == to_status
    assert ExerciseVersion.objects.get(pk=version.pk).status == to_status
    event = ExerciseEvent.objects.filter(version=version).first()
    assert (event.from_status, event.to_status, event.actor) == (from_status, to_status, people.reviewer)
    assert event.kind == services.TRANSITIONS[(from_status, to_status)]


@pytest.mark.parametrize("from_status,to_status", REFUSED)
def test_every_other_transition_is_refused_and_changes_nothing(people, from_status, to_status):
    version = version_in(from_status, people)
    events_before = ExerciseEvent.objects.count()
    with pytest.raises(services.AuthoringRefused) as refused:
        services.version_transition(version=version, actor=people.reviewer, to_status=to_status)
    assert "cannot become" in refused.value.message
    assert ExerciseVersion.objects.get(pk=version.pk).status == from_status
    assert ExerciseEvent.objects.count() == events_before


def test_author_cannot_approve_their_own_version(people):
    version = version_in(S.IN_REVIEW, people)
    with pytest.raises(services.AuthoringRefused, match="cannot approve it"):
        services.version_transition(version=version, actor=people.instructor, to_status=S.PUBLISHED)
    assert ExerciseVersion.objects.get(pk=version.pk).status == S.IN_REVIEW
    published = services.version_transition(version=version, actor=people.reviewer, to_status=S.PUBLISHED)
    assert published.status == S.PUBLISHED
    assert published.published_at is not None


def test_editing_a_published_version_creates_the_next_draft_and_leaves_it_untouched(people):
    v1 = version_in(S.PUBLISHED, people)
    edited = product_yaml(answer="a * b + 0")
    v2 = services.version_save(version=v1, actor=people.reviewer, source=edited)
    assert (v2.number, v2.status, v2.source, v2.created_by) == (2, S.DRAFT, edited, people.reviewer)
    v1.refresh_from_db()
    assert (v1.status, v1.source) == (S.PUBLISHED, product_yaml())
    event = ExerciseEvent.objects.filter(version=v2).get()
    assert event.kind == EventKind.NEW_VERSION
    assert '-    answer: "a * b"\n+    answer: "a * b + 0"' in event.diff
    # A second edit of v1 while v2 is open is refused; editing v2 changes it in place.
    with pytest.raises(services.AuthoringRefused, match="Version 2 is already open"):
        services.version_save(version=v1, actor=people.reviewer, source=product_yaml(answer="b * a"))
    v2_again = services.version_save(version=v2, actor=people.instructor, source=product_yaml(answer="b * a"))
    assert (v2_again.pk, v2_again.number) == (v2.pk, 2)
    assert engine.spec_from_json(v2_again.spec).part("product").answer_expression.text == "b * a"
    assert v1.exercise.versions.count() == 2


def test_a_retired_version_is_edited_into_a_new_draft_too(people):
    v1 = version_in(S.RETIRED, people)
    v2 = services.version_save(version=v1, actor=people.instructor, source=product_yaml(points=3))
    assert (v2.number, v2.status) == (2, S.DRAFT)


def test_a_version_in_review_cannot_be_edited(people):
    version = version_in(S.IN_REVIEW, people)
    with pytest.raises(services.AuthoringRefused, match="in review"):
        services.version_save(version=version, actor=people.instructor, source=product_yaml(points=2))
    assert ExerciseVersion.objects.get(pk=version.pk).source == product_yaml()


def test_saving_a_draft_records_who_changed_what(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    services.version_save(version=version, actor=people.reviewer, source=product_yaml(points=2))
    services.version_comment(version=version, actor=people.ta, message="  Looks fine.  ")
    kinds = list(ExerciseEvent.objects.order_by("id").values_list("kind", "actor__username", "message"))
    assert kinds == [
        (EventKind.CREATED, "ines", ""),
        (EventKind.EDITED, "rita", ""),
        (EventKind.COMMENTED, "tariq", "Looks fine."),
    ]
    assert ExerciseOwner.objects.get(exercise=version.exercise).course == people.course


def test_an_empty_comment_is_refused(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    with pytest.raises(services.AuthoringRefused, match="cannot be empty"):
        services.version_comment(version=version, actor=people.ta, message="   ")


def test_invalid_source_is_refused_with_line_numbers(people):
    broken = product_yaml().replace('answer: "a + b"', 'answer: "a + c"')
    with pytest.raises(engine.SpecError) as error:
        services.exercise_create(course=people.course, actor=people.instructor, source=broken)
    assert [(i.line, i.path) for i in error.value.errors] == [(19, "parts[1].answer")]
    assert "'c'" in error.value.errors[0].message


def test_a_taken_slug_is_reported_on_the_slug_line(people):
    services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    with pytest.raises(engine.SpecError) as error:
        services.exercise_create(course=people.course, actor=people.reviewer, source="\n" + product_yaml())
    assert str(error.value.errors[0]) == (
        "line 2: slug: your course already has an exercise called 'product'; edit it, or choose another slug"
    )


def test_the_slug_of_an_existing_exercise_cannot_change(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    with pytest.raises(engine.SpecError, match="cannot change"):
        services.version_save(version=version, actor=people.instructor, source=product_yaml(slug="renamed"))


def test_import_is_stored_exactly_and_updates_only_owned_exercises(people):
    data = product_yaml().replace("\n", "\r\n").encode() + "# café  \r\n".encode()
    version = services.exercise_import(course=people.course, actor=people.instructor, data=data)
    assert version.source.encode() == data
    again = services.exercise_import(
        course=people.course, actor=people.instructor, data=product_yaml(points=2).encode()
    )
    assert (again.pk, again.number) == (version.pk, 1)
    with pytest.raises(engine.SpecError, match="the slug 'product' cannot be used"):
        services.exercise_import(course=people.other_course, actor=people.outsider, data=data)
    with pytest.raises(services.AuthoringRefused, match="not UTF-8"):
        services.exercise_import(course=people.course, actor=people.instructor, data=b"slug: \xff\xfe")
