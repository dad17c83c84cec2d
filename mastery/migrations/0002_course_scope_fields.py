"""Mastery per course, step 1 of 3: nullable course columns (filled by 0003, required by
0004). Three migrations, so that no table is altered in the transaction that updates its
rows (PostgreSQL refuses that while deferred foreign-key checks are pending)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("courses", "0005_assignment_has_lti_link"),
        ("mastery", "0001_initial"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="skillmastery", name="one_mastery_per_student_skill"),
        migrations.AddField(
            model_name="observation",
            name="course",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE,
                related_name="mastery_observations", to="courses.course",
            ),
        ),
        migrations.AddField(
            model_name="skillmastery",
            name="course",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE,
                related_name="skill_masteries", to="courses.course",
            ),
        ),
    ]
