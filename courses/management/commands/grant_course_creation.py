"""Give people the site-level "may create courses" permission (or take it away)."""

from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import user_by_username_or_trusted_email
from courses.services import course_creation_grant


class Command(BaseCommand):
    help = (
        "Let these accounts (usernames, or e-mails they have confirmed) create courses; "
        "--revoke takes it away."
    )

    def add_arguments(self, parser):
        parser.add_argument("people", nargs="+", help="usernames or e-mail addresses")
        parser.add_argument("--revoke", action="store_true")

    def handle(self, *args, people, revoke, **options):
        missing = [name for name in people if user_by_username_or_trusted_email(identifier=name) is None]
        if missing:
            raise CommandError(
                f"No account for: {', '.join(missing)} (an e-mail counts once its account has confirmed it)"
            )
        for name in people:
            user = user_by_username_or_trusted_email(identifier=name)
            course_creation_grant(user=user, granted=not revoke)
            verb = "may no longer" if revoke else "may now"
            self.stdout.write(f"{user.get_username()} {verb} create courses.")
