"""What a rubric grade was given with: its rubric, the items ticked as they read and counted
then, the rubric's positive points then, and why a grade was recorded when nobody graded the
answer anew (a change of the rubric's items that scored it again).

Grades given before keep what can be read for sure: the rubric of the items they ticked,
and those items as they stand (an item a grade ticked could not be given other points or
removed until now, so its points are the ones it was graded with). The rubric's positive
points then are not known (items may have been added since), so they stay empty; a grade
that ticked no item cannot be told from a typed score and keeps no rubric.
"""

from django.db import migrations, models
import django.db.models.deletion


def rubric_record_recover(apps, schema_editor):
    ManualGrade = apps.get_model("instructor", "ManualGrade")
    RubricItem = apps.get_model("instructor", "RubricItem")
    Through = ManualGrade.rubric_items.through
    ticked: dict[int, list[int]] = {}
    for grade_id, item_id in Through.objects.order_by("manualgrade_id").values_list("manualgrade_id", "rubricitem_id"):
        ticked.setdefault(grade_id, []).append(item_id)
    if not ticked:
        return
    items = {
        item.pk: item
        for item in RubricItem.objects.filter(pk__in={pk for pks in ticked.values() for pk in pks})
    }
    for grade_id, item_ids in ticked.items():
        chosen = sorted((items[pk] for pk in item_ids), key=lambda item: (item.position, item.pk))
        ManualGrade.objects.filter(pk=grade_id).update(
            rubric_id=chosen[0].rubric_id,
            rubric_ticked=[{"id": item.pk, "text": item.text, "points": item.points} for item in chosen],
        )


class Migration(migrations.Migration):

    dependencies = [
        ("instructor", "0006_rubric_ticked_of_earlier_grades"),
    ]

    operations = [
        migrations.AddField(
            model_name="manualgrade",
            name="rubric",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="grades",
                to="instructor.rubric",
                help_text="The course rubric the grade was given with (none for a typed score): a change of its "
                "items scores the answer again.",
            ),
        ),
        migrations.AddField(
            model_name="manualgrade",
            name="rubric_ticked",
            field=models.JSONField(
                blank=True, default=list,
                help_text="The rubric's items ticked as they read and counted then: [{text, points}], in the "
                "rubric's order (the items may be reworded, given other points or removed later).",
            ),
        ),
        migrations.AddField(
            model_name="manualgrade",
            name="rubric_maximum",
            field=models.FloatField(
                blank=True, null=True,
                help_text="The rubric's positive points then: the score is the ticked points over these "
                "(none for a typed score, and for rubric grades given before it was recorded).",
            ),
        ),
        migrations.AddField(
            model_name="manualgrade",
            name="reason",
            field=models.CharField(
                blank=True, max_length=500,
                help_text="Why the grade was recorded when nobody graded the answer anew: the change of its "
                "rubric's items that scored it again, in words. Empty for a person's grade.",
            ),
        ),
        migrations.RunPython(rubric_record_recover, migrations.RunPython.noop),
    ]
