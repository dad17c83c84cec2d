"""Load the exercise bank and the demo course with its accounts. Safe to run again."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

from courses.services import demo_course_ensure


class Command(BaseCommand):
    help = "Load the exercise bank and a demo course with instructor and student accounts."

    def handle(self, *args, **options):
        call_command("load_bank", verbosity=0)
        demo = demo_course_ensure()
        items = demo.assignment.items.count()
        self.stdout.write(
            f"Demo course '{demo.course.title}' ({demo.course.slug}): "
            f"assignment '{demo.assignment.title}' with {items} exercises."
        )
        self.stdout.write("Demo logins (username / password / role):")
        for username, password, role in demo.logins:
            self.stdout.write(f"  {username:<10} {password}  {role}")
