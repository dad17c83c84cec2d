"""Create, rotate or unpublish attnquiz's LTI signing keys."""

from django.core.management.base import BaseCommand, CommandError

from lti import services
from lti.models import ToolKey


class Command(BaseCommand):
    help = (
        "Show the LTI signing key, creating one if none exists. --rotate makes a new signing "
        "key (older keys stay published until --unpublish KID)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--rotate", action="store_true", help="Create a new signing key.")
        parser.add_argument(
            "--unpublish", metavar="KID", help="Stop publishing and using this key."
        )

    def handle(self, *args, rotate=False, unpublish=None, **options):
        if unpublish:
            changed = ToolKey.objects.filter(kid=unpublish).update(
                is_active=False, is_published=False
            )
            if not changed:
                raise CommandError(f"No key with kid '{unpublish}'.")
            self.stdout.write(f"Key {unpublish} is no longer published or used.")
        if rotate:
            new_key = services.tool_key_create()
            ToolKey.objects.exclude(pk=new_key.pk).update(is_active=False)
            self.stdout.write(f"New signing key {new_key.kid}; older keys stay published.")
        key = services.tool_key_ensure()
        self.stdout.write(f"Signing key: {key.kid}")
        for other in ToolKey.objects.filter(is_published=True).exclude(pk=key.pk):
            self.stdout.write(f"Also published (retired): {other.kid}")
