"""Addresses known before TrustedEmail existed: an account a course's staff made for an
address (roster import, add by e-mail) that has never been signed in to still has the
address staff gave it (its holder could not have changed it), so that address keeps
finding it. Every other address waits for its holder to confirm it."""

from django.db import migrations
from django.db.models import Count
from django.db.models.functions import Lower


def trust_unused_staff_made_accounts(apps, schema_editor):
    User = apps.get_model("auth", "User")
    TrustedEmail = apps.get_model("accounts", "TrustedEmail")
    shared = set(
        User.objects.exclude(email="").annotate(address=Lower("email")).values("address")
        .annotate(holders=Count("pk")).filter(holders__gt=1).values_list("address", flat=True)
    )
    candidates = (
        User.objects.filter(is_active=True, last_login__isnull=True, enrolments__source__in=["roster", "manual"])
        .exclude(email="").distinct().values_list("pk", "email")
    )
    TrustedEmail.objects.bulk_create(
        [TrustedEmail(user_id=pk, email=email.lower(), trust="staff") for pk, email in candidates
         if email.lower() not in shared],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("courses", "0008_grades_release_schedule"),
    ]

    operations = [migrations.RunPython(trust_unused_staff_made_accounts, migrations.RunPython.noop)]
