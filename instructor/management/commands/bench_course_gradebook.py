"""Time and query count of the course gradebook's page, CSV, XLSX and API JSON as the roster
grows.

Builds, with ``bulk_create`` inside one transaction that is rolled back at the end (the
database is left as it was), a course with ``--assignments`` assignments of one two-part
exercise in two weighted categories, then for each size in ``--students`` (ascending; 300
and 3,000 by default) enrols students up to that size, each with a graded answer to most
assignments, and reads each view as a signed-in TA would (a streamed CSV read to its end).
Time is the median of ``--repeat`` runs.
"""

from __future__ import annotations

import secrets
import statistics
import time
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from courses.models import Assignment, AssignmentItem, Course, Enrolment, Role
from exercises import engine
from exercises.models import Exercise, ExerciseVersion, Variant, VersionStatus
from grading.models import Submission, SubmissionStatus
from instructor import services_gradebook

SOURCE = """\
slug: {slug}
title: Product of two numbers
version: 1
parameters:
  a: {{generator: int_range, min: 2, max: 9}}
  b: {{generator: int_range, min: 2, max: 9}}
prompt: |
  Multiply ${{{{a}}}}$ by ${{{{b}}}}$.
parts:
  - key: product
    type: numeric
    answer: "a * b"
    decimals: 0
    points: 2
    solution: |
      The product is {{{{a * b}}}}.
  - key: total
    type: numeric
    answer: "a + b"
    decimals: 0
    solution: |
      The sum is {{{{a + b}}}}.
"""

VIEWS = {
    "page": ("instructor:course_gradebook", ""),
    "page by total, page 2": ("instructor:course_gradebook", "?sort=total&order=desc&page=2"),
    "csv": ("instructor:course_gradebook_csv", ""),
    "xlsx": ("instructor:course_gradebook_xlsx", ""),
    "api json": ("api:course_gradebook", ""),
}


class Rollback(Exception):
    """Leaves the transaction that holds the benchmark's data."""


class Command(BaseCommand):
    help = "Course gradebook page, CSV, XLSX and API: seconds and queries at growing roster sizes."

    def add_arguments(self, parser):
        parser.add_argument("--students", default="300,3000", help="comma-separated roster sizes")
        parser.add_argument("--assignments", type=int, default=6)
        parser.add_argument("--repeat", type=int, default=3)

    def handle(self, *args, students, assignments, repeat, **options):
        sizes = sorted({int(size) for size in students.split(",") if size.strip()})
        if not sizes or sizes[0] < 1 or sizes[-1] > 20000 or not 1 <= assignments <= 50:
            raise CommandError("--students takes sizes between 1 and 20000, --assignments 1 to 50")
        results = []
        try:
            with transaction.atomic():
                self.course_build(assignments)
                for size in sizes:
                    started = time.perf_counter()
                    self.students_add(up_to=size)
                    self.stdout.write(f"{size} students built in {time.perf_counter() - started:.1f} s")
                    for name in VIEWS:
                        results.append((size, name, *self.measure(name, repeat)))
                raise Rollback
        except Rollback:
            pass
        self.stdout.write(f"\n{assignments} assignments; median of {repeat} runs")
        self.stdout.write(f"{'students':>9}  {'view':<22} {'seconds':>8} {'queries':>8} {'kB':>8}")
        for size, name, seconds, queries, length in results:
            self.stdout.write(f"{size:>9}  {name:<22} {seconds:>8.3f} {queries:>8} {length / 1000:>8.0f}")

    def course_build(self, assignments: int) -> None:
        run = secrets.token_hex(3)
        self.run = run
        self.course = Course.objects.create(slug=f"bench-book-{run}", title="Gradebook benchmark")
        slug = f"bench-book-{run}"
        spec = engine.load_spec(SOURCE.format(slug=slug))
        exercise = Exercise.objects.create(slug=slug, title=spec.title)
        version = ExerciseVersion.objects.create(
            exercise=exercise, number=1, source=SOURCE.format(slug=slug), spec=engine.spec_to_json(spec),
            content_hash=run, status=VersionStatus.PUBLISHED,
        )
        homework = services_gradebook.grade_category_create(course=self.course, name="Homework", weight=40, drop_lowest=1)
        exams = services_gradebook.grade_category_create(course=self.course, name="Exams", weight=60)
        now = timezone.now()
        self.items = []
        for index in range(assignments):
            assignment = Assignment.objects.create(
                course=self.course, slug=f"a{index}", title=f"Assignment {index}", due_at=now - timedelta(days=index)
            )
            services_gradebook.assignment_category_set(assignment=assignment, category=exams if index == 0 else homework)
            self.items.append(AssignmentItem.objects.create(assignment=assignment, exercise_version=version, points=10))
        self.ta = get_user_model().objects.create(username=f"bench-book-{run}-ta")
        Enrolment.objects.create(course=self.course, user=self.ta, role=Role.TEACHING_ASSISTANT)
        self.enrolled = 0

    def students_add(self, *, up_to: int) -> None:
        """Each new student answers every assignment but the last one in seven: the
        product part, right for most."""
        User = get_user_model()
        users = User.objects.bulk_create(
            User(username=f"bench-book-{self.run}-{n:05d}", first_name="Student", last_name=f"{n:05d}")
            for n in range(self.enrolled, up_to)
        )
        Enrolment.objects.bulk_create(
            Enrolment(course=self.course, user=user, role=Role.STUDENT, student_id=f"{n:07d}")
            for n, user in zip(range(self.enrolled, up_to), users)
        )
        variants = Variant.objects.bulk_create(
            (
                Variant(exercise_version=item.exercise_version, student=user, assignment_item=item,
                        context=f"assignment:{item.pk}", seed=n, params={"a": 3, "b": 4})
                for n, user in zip(range(self.enrolled, up_to), users)
                for index, item in enumerate(self.items) if (n + index) % 7
            ),
            batch_size=2000,
        )
        Submission.objects.bulk_create(
            (
                Submission(variant=variant, student_id=variant.student_id, part="product", raw_answer="12",
                           status=SubmissionStatus.GRADED, score=float(variant.seed % 5 > 0),
                           awarded=float(variant.seed % 5 > 0), correct=variant.seed % 5 > 0)
                for variant in variants
            ),
            batch_size=2000,
        )
        self.enrolled = up_to
        if connection.vendor == "postgresql":  # planner statistics, as autovacuum keeps them
            with connection.cursor() as cursor:
                for model in (User, Enrolment, Variant, Submission):
                    cursor.execute(f'ANALYZE "{model._meta.db_table}"')

    def read(self, name: str) -> tuple[int, int]:
        """(queries, bytes) of one read of the view, as a signed-in TA."""
        url_name, query = VIEWS[name]
        client = Client(HTTP_HOST="localhost")
        client.force_login(self.ta)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(reverse(url_name, args=[self.course.slug]) + query)
            body = b"".join(response.streaming_content) if response.streaming else response.content
        if response.status_code != 200:
            raise CommandError(f"{name}: {response.status_code}")
        return len(queries), len(body)

    def measure(self, name: str, repeat: int) -> tuple[float, int, int]:
        self.read(name)  # warm: first queries, templates, imports
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            queries, size = self.read(name)
            times.append(time.perf_counter() - started)
        return statistics.median(times), queries, size
