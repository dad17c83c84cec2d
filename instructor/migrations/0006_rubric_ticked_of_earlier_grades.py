"""The rubric items that applied, for grades given before a grade's feedback kept them.

Such a grade's feedback has no "rubric" list, so its student saw no items. What was
stored with it says which applied: the course rubric's items its ManualGrade ticked (an
item a grade ticked keeps its points and cannot be removed; its wording is today's), or
the indexes of the author's criteria it ticked (``criteria_met``, read against the
answered version, which never changes). Those become the feedback's "rubric" list, as
the grading service writes it now. A rubric grade whose ticked criteria cannot be read
any more is marked ``rubric_unrecorded``: the pages then say so instead of listing
nothing. Grades that ticked nothing are left as they are; nothing is guessed from scores.
"""

from django.db import migrations

UNREADABLE = object()


def author_criteria_ticked(submission, criteria_met: list) -> list | object:
    """(text, points) of the author's criteria at ``criteria_met``, in their order; UNREADABLE
    when the answered version no longer yields them all."""
    variant = submission.variant
    try:
        # Today's code, read inside the guard: a later rename makes old grades unreadable,
        # never this migration fail.
        from exercises import engine
        from instructor.selectors import rubric_of_reference

        spec = engine.spec_from_json(variant.exercise_version.spec)
        answer = engine.reference_answers(spec, variant.params)[submission.part]
        criteria = rubric_of_reference(answer).criteria
    except Exception:  # an old spec the engine no longer reads: the items are not readable
        return UNREADABLE
    readable = all(
        isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(criteria) for index in criteria_met
    )
    if not readable:
        return UNREADABLE
    return [criteria[index] for index in sorted(set(criteria_met))]


def rubric_ticked_recover(apps, schema_editor):
    Submission = apps.get_model("grading", "Submission")
    ManualGrade = apps.get_model("instructor", "ManualGrade")
    earlier = (
        Submission.objects.filter(status="graded", feedback__details__manual=True)
        .exclude(feedback__has_key="rubric")
        .select_related("variant__exercise_version")
        .order_by("pk")
    )
    for submission in earlier.iterator(chunk_size=500):
        grade = ManualGrade.objects.filter(submission_id=submission.pk).order_by("-created_at", "-id").first()
        if grade is None:
            continue
        ticked = [(item.text, item.points) for item in grade.rubric_items.order_by("position", "id")]
        if not ticked and grade.criteria_met:
            ticked = author_criteria_ticked(submission, grade.criteria_met)
        if not ticked:
            continue
        feedback = dict(submission.feedback)
        if ticked is UNREADABLE:
            feedback["rubric_unrecorded"] = True
        else:
            feedback["rubric"] = [{"text": text, "points": points} for text, points in ticked]
        Submission.objects.filter(pk=submission.pk).update(feedback=feedback)


class Migration(migrations.Migration):

    dependencies = [
        ("instructor", "0005_hand_grades_returned_to_checker"),
        ("grading", "0004_submission_client_key"),
        ("exercises", "0002_variant_rendered_body"),
    ]

    operations = [
        migrations.RunPython(rubric_ticked_recover, migrations.RunPython.noop),
    ]
