from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("grading", "0001_initial")]

    operations = [
        migrations.AddIndex(
            model_name="submission",
            index=models.Index(
                condition=models.Q(("status", "graded")), fields=["graded_at"], name="submission_graded_recently"
            ),
        ),
    ]
