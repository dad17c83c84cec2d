"""What each periodic sweeper of the beat schedule costs as the history grows.

Adds ``--scale`` × 20,000 graded answers to the configured database (a course of its own,
2,000 × scale students, ten attempts each, graded evenly over the last 30 days, so about
one in 720 falls in each hour), then runs every sweeper of ``CELERY_BEAT_SCHEDULE`` that
reads the grades (``--runs`` times each) and prints, per sweeper, the median wall and CPU
time of this process and of its PostgreSQL backend, and the number of queries. Run it at
``--scale 1`` and again at ``--scale 10`` on the same database (the rows accumulate) to
see whether a sweeper's cost follows the history or stays flat. Benchmarks only: point it
at a database of its own.
"""

from __future__ import annotations

import statistics
import time
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from courses.models import Assignment, AssignmentItem, Course, Enrolment, Role
from courses.services import latest_published_versions
from exercises.models import Variant
from exercises.services_bank import bank_load
from grading.harness import process_cpu_seconds
from grading.models import Submission, SubmissionStatus

ANSWERS_PER_SCALE = 20_000
ATTEMPTS = 10
HISTORY_DAYS = 30


def _sweepers() -> dict:
    from exams.services import attempts_close_expired, grades_visible_sweep
    from grading.services import submissions_requeue_stale
    from lti.passback import passbacks_send_due
    from review.services import reviews_record_missing

    return {
        "review.record_missing_reviews": reviews_record_missing,
        "grading.requeue_stale_submissions": submissions_requeue_stale,
        "lti.send_due_passbacks": passbacks_send_due,
        "exams.close_expired_attempts": attempts_close_expired,
        "exams.announce_visible_grades": lambda: grades_visible_sweep(window_seconds=600),
    }


class Command(BaseCommand):
    help = "Median cost of each grade-reading sweeper after adding --scale × 20,000 graded answers."

    def add_arguments(self, parser):
        parser.add_argument("--scale", type=int, default=1)
        parser.add_argument("--runs", type=int, default=5)

    def handle(self, *args, scale, runs, **options):
        started = time.perf_counter()
        added = self.history_add(answers=scale * ANSWERS_PER_SCALE)
        total = Submission.objects.count()
        self.stdout.write(
            f"added {added} graded answers in {time.perf_counter() - started:.0f} s; {total} in the database, "
            f"{Submission.objects.filter(graded_at__gte=timezone.now() - timedelta(hours=1)).count()} of them "
            "graded in the last hour"
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE grading_submission")
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        self.stdout.write(f"{'sweeper':<36}{'wall ms':>9}{'cpu ms':>8}{'db cpu ms':>10}{'queries':>9}")
        for name, sweep in _sweepers().items():
            walls, cpus, db_cpus, counts = [], [], [], []
            for _ in range(runs):
                db_before, cpu_before, wall_before = process_cpu_seconds(backend), time.process_time(), time.perf_counter()
                with CaptureQueriesContext(connection) as captured:
                    sweep()
                walls.append(1000 * (time.perf_counter() - wall_before))
                cpus.append(1000 * (time.process_time() - cpu_before))
                db_cpus.append(1000 * (process_cpu_seconds(backend) - db_before))
                counts.append(len(captured.captured_queries))
            self.stdout.write(
                f"{name:<36}{statistics.median(walls):>9.1f}{statistics.median(cpus):>8.1f}"
                f"{statistics.median(db_cpus):>10.1f}{statistics.median(counts):>9.0f}"
            )

    def history_add(self, *, answers: int) -> int:
        """``answers`` graded answers of fresh students to the worked example, spread over
        the last ``HISTORY_DAYS`` days (an assignment that does not feed review)."""
        if answers <= 0:
            return 0
        bank_load()
        course, _ = Course.objects.get_or_create(slug="sweep-history", defaults={"title": "Sweep history"})
        run = Assignment.objects.filter(course=course).count()
        assignment = Assignment.objects.create(course=course, slug=f"history-{run}", title=f"History {run}")
        version = next(v for v in latest_published_versions() if v.exercise.slug == "attention-weights-one-query")
        item = AssignmentItem.objects.create(assignment=assignment, exercise_version=version, position=0)
        params = Variant.objects.filter(exercise_version=version).values_list("params", flat=True).first() or {}
        students = answers // ATTEMPTS
        users = get_user_model().objects.bulk_create(
            get_user_model()(username=f"sweep-{run}-{index:06d}") for index in range(students)
        )
        Enrolment.objects.bulk_create(Enrolment(course=course, user=user, role=Role.STUDENT) for user in users)
        variants = Variant.objects.bulk_create(
            Variant(exercise_version=version, student=user, assignment_item=item, context=f"assignment:{item.pk}",
                    seed=index, params=params)
            for index, user in enumerate(users)
        )
        now = timezone.now()
        step = timedelta(days=HISTORY_DAYS) / answers
        batch = []
        for index in range(answers):
            variant = variants[index // ATTEMPTS]
            moment = now - index * step
            batch.append(Submission(
                variant=variant, student_id=variant.student_id, part="weights", raw_answer="[0.25, 0.25]",
                attempt=index % ATTEMPTS + 1, status=SubmissionStatus.GRADED, score=0.0, awarded=0.0,
                correct=False, feedback={}, graded_at=moment, queued_at=moment,
            ))
            if len(batch) == 5000:
                Submission.objects.bulk_create(batch)
                batch = []
        Submission.objects.bulk_create(batch)
        return answers
