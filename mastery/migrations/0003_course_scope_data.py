"""Mastery per course, step 2 of 3: give every stored observation the course of its answer,
then rebuild every mastery from one course's observations only.

An observation's course: the course of its variant's assignment, or for practice the
course of the assignment item the practice was started from ("practice:<item>:<token>").
An observation whose course cannot be found (its practice's item was deleted) is removed:
no course's staff may see it. Masteries are derived data: they are all replaced by a replay
of each (student, course, skill) history, with the stored fitted parameters. Batched, and
reading the history in order with an iterator, so a large table is not held in memory."""

from collections import defaultdict

from django.db import migrations

BATCH = 1000
RECENT_MISCONCEPTIONS = 5  # as mastery.services


def _origin_item_id(context: str) -> int | None:
    try:
        return int(context.split(":")[1])
    except (IndexError, ValueError):
        return None


def observations_set_course(apps, schema_editor):
    Observation = apps.get_model("mastery", "Observation")
    AssignmentItem = apps.get_model("courses", "AssignmentItem")
    variants = (
        Observation.objects.filter(course__isnull=True)
        .values_list("submission__variant_id", "submission__variant__assignment_item__assignment__course_id",
                     "submission__variant__context")
        .distinct()
    )
    variants_of_course: dict[int | None, list[int]] = defaultdict(list)
    practice: dict[int, list[int]] = defaultdict(list)  # origin item -> variants
    for variant_id, course_id, context in variants.iterator(chunk_size=BATCH):
        if course_id is not None:
            variants_of_course[course_id].append(variant_id)
        elif context.startswith("practice:") and (item_id := _origin_item_id(context)) is not None:
            practice[item_id].append(variant_id)
        else:
            variants_of_course[None].append(variant_id)
    item_ids = list(practice)
    for start in range(0, len(item_ids), BATCH):
        found = dict(
            AssignmentItem.objects.filter(pk__in=item_ids[start:start + BATCH]).values_list("pk", "assignment__course_id")
        )
        for item_id in item_ids[start:start + BATCH]:
            variants_of_course[found.get(item_id)].extend(practice[item_id])
    for course_id, variant_ids in variants_of_course.items():
        for start in range(0, len(variant_ids), BATCH):
            chosen = Observation.objects.filter(course__isnull=True, submission__variant_id__in=variant_ids[start:start + BATCH])
            if course_id is None:
                chosen.delete()
            else:
                chosen.update(course_id=course_id)


def masteries_rebuild(apps, schema_editor):
    from mastery import bkt

    Observation = apps.get_model("mastery", "Observation")
    SkillMastery = apps.get_model("mastery", "SkillMastery")
    SkillParameters = apps.get_model("mastery", "SkillParameters")
    SkillMastery.objects.all().delete()
    params = {
        row.skill: bkt.BKTParams(prior=row.prior, learn=row.learn, guess=row.guess, slip=row.slip, forget=row.forget)
        for row in SkillParameters.objects.all()
    }
    rows = (
        Observation.objects.order_by("student_id", "course_id", "skill", "observed_at", "submission_id")
        .values_list("student_id", "course_id", "skill", "correct", "misconception")
    )
    pending, key, history = [], None, []

    def flush():
        if key is None:
            return
        student_id, course_id, skill = key
        pending.append(SkillMastery(
            student_id=student_id, course_id=course_id, skill=skill,
            p_known=bkt.replay((correct for correct, _ in history), params.get(skill, bkt.DEFAULT_PARAMS)),
            attempts=len(history),
            recent_misconceptions=[code for _, code in reversed(history[-RECENT_MISCONCEPTIONS:])],
        ))
        if len(pending) >= BATCH:
            SkillMastery.objects.bulk_create(pending)
            pending.clear()

    for student_id, course_id, skill, correct, misconception in rows.iterator(chunk_size=5000):
        if (student_id, course_id, skill) != key:
            flush()
            key, history = (student_id, course_id, skill), []
        history.append((correct, misconception))
    flush()
    if pending:
        SkillMastery.objects.bulk_create(pending)


class Migration(migrations.Migration):

    dependencies = [
        ("mastery", "0002_course_scope_fields"),
    ]

    operations = [
        migrations.RunPython(observations_set_course, migrations.RunPython.noop),
        migrations.RunPython(masteries_rebuild, migrations.RunPython.noop),
    ]
