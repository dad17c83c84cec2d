"""A student's variant stored in a published exercise's assignment exactly as given, as an
earlier draw could have stored it: for variants today's draws would never give."""

from __future__ import annotations


def variant_stored(*, source: str, params: dict, student, content_hash: str = "c" * 64):
    """The variant ``params`` of the exercise ``source``, given to ``student`` (enrolled in a
    new course) in a published homework; its ``assignment_item`` is the homework's item."""
    from courses.models import Assignment, AssignmentItem, Course, Enrolment
    from exercises import bodies
    from exercises.engine import load_spec, spec_to_json
    from exercises.models import Exercise, ExerciseVersion, Variant, VersionStatus
    from exercises.services import assignment_variant_context

    spec = load_spec(source)
    version = ExerciseVersion.objects.create(
        exercise=Exercise.objects.create(slug=spec.slug, title=spec.title), number=1, source=source,
        spec=spec_to_json(spec), content_hash=content_hash, status=VersionStatus.PUBLISHED,
    )
    course = Course.objects.create(slug="c1", title="Course")
    Enrolment.objects.create(course=course, user=student, role="student")
    assignment = Assignment.objects.create(course=course, slug="a1", title="Homework", is_published=True)
    item = AssignmentItem.objects.create(assignment=assignment, exercise_version=version, points=1)
    return Variant.objects.create(
        exercise_version=version, student=student, context=assignment_variant_context(item), seed=7,
        params=params, assignment_item=item,
        rendered=bodies.body_render(spec=spec, params=params, content_hash=version.content_hash, part_points=None),
    )
