"""Time and peak memory of the two CSV downloads as the roster grows.

Builds, with ``bulk_create`` inside one transaction that is rolled back at the end (the
database is left as it was), a course whose assignment holds the exercise bank, then
for each size in ``--students`` (ascending; 250 and 1,000 by default) enrols students
up to that size, gives each a variant of every exercise and one graded answer to every
part, and streams ``submissions.csv`` and the gradebook CSV through their views, as a
download reads them. Time is the median of ``--repeat`` runs; peak memory is what
Python allocated above the start of one more run (``tracemalloc``), which stays flat
when the rows stream.
"""

from __future__ import annotations

import secrets
import statistics
import time
import tracemalloc

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from courses.models import Assignment, AssignmentItem, Course, Enrolment, Role
from courses.services import latest_published_versions
from exercises import engine
from exercises.models import Variant
from exercises.services_bank import bank_load
from grading.models import Submission, SubmissionStatus
from instructor import views


class Rollback(Exception):
    """Leaves the transaction that holds the benchmark's data."""


class Command(BaseCommand):
    help = "submissions.csv and gradebook CSV: time and peak memory at growing roster sizes."

    def add_arguments(self, parser):
        parser.add_argument("--students", default="250,1000", help="comma-separated roster sizes")
        parser.add_argument("--repeat", type=int, default=3)

    def handle(self, *args, students, repeat, **options):
        sizes = sorted({int(size) for size in students.split(",") if size.strip()})
        if not sizes or sizes[0] < 1 or sizes[-1] > 20000:
            raise CommandError("--students takes sizes between 1 and 20000")
        results = []
        try:
            with transaction.atomic():
                self.course_build()
                for size in sizes:
                    started = time.perf_counter()
                    rows = self.students_add(up_to=size)
                    self.stdout.write(
                        f"{size} students: {rows} submissions built in {time.perf_counter() - started:.1f} s"
                    )
                    for name in ("submissions_csv", "gradebook_csv"):
                        results.append((size, name, *self.measure(name, repeat)))
                raise Rollback
        except Rollback:
            pass
        self.report(results, repeat)

    # --- data --------------------------------------------------------------------------

    def course_build(self) -> None:
        bank_load()
        run = secrets.token_hex(3)
        self.run = run
        self.course = Course.objects.create(slug=f"bench-csv-{run}", title="CSV benchmark")
        self.assignment = Assignment.objects.create(course=self.course, slug="exam", title="Exam")
        self.items = AssignmentItem.objects.bulk_create(
            AssignmentItem(assignment=self.assignment, exercise_version=version, position=position)
            for position, version in enumerate(latest_published_versions())
        )
        self.parts = {
            item.pk: [part.key for part in engine.spec_from_json(item.exercise_version.spec).parts]
            for item in self.items
        }
        users = get_user_model().objects
        self.instructor = users.create(username=f"bench-csv-{run}-instructor")
        Enrolment.objects.create(course=self.course, user=self.instructor, role=Role.INSTRUCTOR)
        self.enrolled = 0

    def students_add(self, *, up_to: int) -> int:
        """Enrol students up to ``up_to``: a variant of every item, one graded answer per part."""
        now = timezone.now()
        users = get_user_model().objects.bulk_create(
            get_user_model()(username=f"bench-csv-{self.run}-{index:05d}", first_name="Student",
                             last_name=str(index))
            for index in range(self.enrolled, up_to)
        )
        Enrolment.objects.bulk_create(
            Enrolment(course=self.course, user=user, role=Role.STUDENT) for user in users
        )
        variants = Variant.objects.bulk_create(
            (
                Variant(exercise_version=item.exercise_version, student=user, assignment_item=item,
                        context=f"assignment:{item.pk}", seed=index, params={})
                for index, user in enumerate(users)
                for item in self.items
            ),
            batch_size=2000,
        )
        Submission.objects.bulk_create(
            (
                Submission(
                    variant=variant, student_id=variant.student_id, part=part,
                    raw_answer="[0.2, 0.3, 0.5]", status=SubmissionStatus.GRADED,
                    score=1.0 if variant.seed % 10 else 0.0, awarded=1.0 if variant.seed % 10 else 0.0,
                    correct=bool(variant.seed % 10), feedback={"message": "Right."}, graded_at=now,
                )
                for variant in variants
                for part in self.parts[variant.assignment_item_id]
            ),
            batch_size=2000,
        )
        self.enrolled = up_to
        if connection.vendor == "postgresql":  # planner statistics, as autovacuum keeps them
            with connection.cursor() as cursor:
                for model in (get_user_model(), Enrolment, Variant, Submission):
                    cursor.execute(f'ANALYZE "{model._meta.db_table}"')
        return Submission.objects.filter(variant__assignment_item__assignment=self.assignment).count()

    # --- measuring ---------------------------------------------------------------------

    def download(self, name: str) -> int:
        """Stream one CSV through its view as a client would read it; its size in bytes."""
        url = reverse(f"instructor:{name}", args=[self.course.slug, self.assignment.slug])
        request = RequestFactory().get(url)
        request.user = self.instructor
        response = getattr(views, name)(request, self.course.slug, self.assignment.slug)
        return sum(len(chunk) for chunk in response.streaming_content)

    def measure(self, name: str, repeat: int) -> tuple[float, float, int]:
        self.download(name)  # warm: first queries, imports
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            size = self.download(name)
            times.append(time.perf_counter() - started)
        tracemalloc.start()
        try:
            self.download(name)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return statistics.median(times), peak / 2**20, size

    def report(self, results, repeat: int) -> None:
        self.stdout.write(
            f"\n{len(self.items)} exercises; median of {repeat} runs; peak = Python allocations while streaming\n"
            f"{'students':>9}  {'export':<16} {'seconds':>8} {'peak MB':>8} {'size MB':>8}"
        )
        for size, name, seconds, peak, length in results:
            self.stdout.write(
                f"{size:>9}  {name.replace('_csv', '.csv'):<16} {seconds:>8.3f} {peak:>8.2f} {length / 2**20:>8.2f}"
            )
