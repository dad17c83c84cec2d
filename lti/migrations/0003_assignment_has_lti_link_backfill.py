from django.db import migrations


def flag_linked_assignments(apps, schema_editor):
    Assignment = apps.get_model("courses", "Assignment")
    Assignment.objects.filter(lti_resource_links__isnull=False).update(has_lti_link=True)


class Migration(migrations.Migration):
    """Assignments that LMS links already open get the flag the passback receiver reads."""

    dependencies = [
        ("lti", "0002_passback_roster_lineitems"),
        ("courses", "0005_assignment_has_lti_link"),
    ]

    operations = [migrations.RunPython(flag_linked_assignments, migrations.RunPython.noop)]
