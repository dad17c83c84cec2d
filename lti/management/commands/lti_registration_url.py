"""Print the Dynamic Registration URL an LMS admin pastes into Moodle or Canvas."""

from django.core.management.base import BaseCommand, CommandError

from lti import registration


class Command(BaseCommand):
    help = (
        "Print attnquiz's LTI Dynamic Registration URL (valid 7 days, for one registration) for an LMS admin to "
        "paste as the tool URL / registration URL."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url", required=True, help="attnquiz's public address, e.g. https://quiz.example.edu"
        )
        parser.add_argument("--note", default="", help="Who the link is for (kept in the token).")

    def handle(self, *args, base_url, note, **options):
        if not base_url.startswith(("https://", "http://")):
            raise CommandError("--base-url must start with https:// (or http:// for testing).")
        token = registration.registration_token_create(note=note)
        self.stdout.write(registration.registration_url(base_url=base_url, token=token))
