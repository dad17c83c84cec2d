from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("exercises", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="variant",
            name="rendered",
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
    ]
