"""manage.py bench_mastery: the cost of one mastery update and of one refit.

(1) One update, end to end: the ``grade_changed`` event published for a graded answer,
    every receiver (mastery's and the other apps'), the commit, and the update that follows
    (run in this process, as the worker runs it), for a student who already has
    ``--history`` graded answers; the median over ``--updates`` answers, with the queries
    each one ran (BEGIN/COMMIT included); then the mastery task's body alone.
(2) One refit of one skill over ``--attempts`` stored attempts (``--attempts-per-student``
    each): read them, EM, store the parameters, recompute every student's mastery; the
    median over ``--fits`` runs.

Runs against the configured database and removes every row it made. Not part of the test
run.
"""

from __future__ import annotations

import statistics
import time
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from courses.models import AssignmentItem
from courses.services import demo_course_ensure
from exercises.services import variant_get_or_create_for_item
from exercises.services_bank import bank_load
from grading.models import Submission, SubmissionStatus
from grading.events import GradeChange, grade_changed_publish
from mastery import bkt, services
from mastery.models import Observation, SkillParameters

PREFIX = "bench-mastery-"
WORKED_EXAMPLE = "attention-weights-one-query"
FIT_SKILL = "softmax-saturation"


class Command(BaseCommand):
    help = "Median cost of one mastery update (signal to stored mastery) and of one BKT refit."

    def add_arguments(self, parser):
        parser.add_argument("--updates", type=int, default=200)
        parser.add_argument("--history", type=int, default=50, help="graded answers the student already has")
        parser.add_argument("--attempts", type=int, default=20000, help="stored attempts the refit reads")
        parser.add_argument("--attempts-per-student", type=int, default=10)
        parser.add_argument("--fits", type=int, default=3)

    def handle(self, *args, updates, history, attempts, attempts_per_student, fits, **options):
        self.last_update_queries: list[str] = []
        self.task_cost: tuple[list[float], list[int]] = ([], [])
        if min(updates, fits, attempts_per_student) < 1 or history < 0 or attempts < attempts_per_student:
            raise CommandError("counts must be positive, and --attempts at least --attempts-per-student")
        bank_load()
        item = AssignmentItem.objects.get(
            assignment=demo_course_ensure().assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
        )
        kept_parameters = list(SkillParameters.objects.filter(skill=FIT_SKILL))
        try:
            update_seconds, update_queries = self.bench_updates(item, updates=updates, history=history)
            fit_seconds, fit = self.bench_fits(item, attempts=attempts, per_student=attempts_per_student, fits=fits)
        finally:
            self.clean_up()
            SkillParameters.objects.filter(skill=FIT_SKILL).delete()
            SkillParameters.objects.bulk_create(kept_parameters)
        self.stdout.write(
            f"mastery update (signal -> receiver -> commit -> update), {updates} answers, history {history}: "
            f"median {statistics.median(update_seconds) * 1000:.2f} ms, "
            f"p90 {np.percentile(update_seconds, 90) * 1000:.2f} ms, "
            f"queries {min(update_queries)}–{max(update_queries)} ({connection.vendor})"
        )
        task_seconds, task_queries = self.task_cost
        self.stdout.write(
            f"  of which the mastery task alone: median {statistics.median(task_seconds) * 1000:.2f} ms, "
            f"queries {min(task_queries)}–{max(task_queries)}"
        )
        if options["verbosity"] >= 2:
            self.stdout.write("queries of one update:\n  " + "\n  ".join(sql[:160] for sql in self.last_update_queries))
        self.stdout.write(
            f"refit of one skill over {fit.observations} attempts ({fit.students} students): "
            f"median {statistics.median(fit_seconds):.3f} s over {fits} runs, {fit.iterations} EM iterations"
        )

    @staticmethod
    def clean_up() -> None:
        from exercises.models import Variant

        bench_users = get_user_model().objects.filter(username__startswith=PREFIX)
        Submission.objects.filter(variant__student__in=bench_users).delete()  # and their evidence
        Variant.objects.filter(student__in=bench_users).delete()
        bench_users.delete()

    def bench_updates(self, item, *, updates: int, history: int):
        student = get_user_model().objects.create(username=f"{PREFIX}student")
        variant = variant_get_or_create_for_item(item=item, student=student)
        start = timezone.now() - timedelta(days=1)
        rng = np.random.default_rng(0)
        outcomes = rng.random(history + updates) < 0.6
        submissions = Submission.objects.bulk_create([
            Submission(
                variant=variant, student=student, part="weights", raw_answer="[0, 0, 0, 0]", attempt=index + 1,
                status=SubmissionStatus.GRADED, score=float(correct), awarded=float(correct), correct=bool(correct),
                misconception="" if correct or index % 2 else "no_scaling", graded_at=start,
            )
            for index, correct in enumerate(outcomes)
        ])
        previous_mode, settings.GRADING_MODE = settings.GRADING_MODE, "inline"  # the update runs here
        try:
            for submission in submissions[:history]:
                services.mastery_record_submission(submission_id=submission.pk)
            seconds, queries, task_seconds, task_queries = [], [], [], []
            for submission in submissions[history:]:
                with CaptureQueriesContext(connection) as captured:
                    started = time.perf_counter()
                    with transaction.atomic():
                        grade_changed_publish(submission=submission, change=GradeChange.GRADED)
                    seconds.append(time.perf_counter() - started)
                queries.append(len(captured.captured_queries))
                # the update alone, as the worker's task runs it (idempotent: same work again)
                with CaptureQueriesContext(connection) as own:
                    started = time.perf_counter()
                    services.mastery_record_submission(submission_id=submission.pk)
                    task_seconds.append(time.perf_counter() - started)
                task_queries.append(len(own.captured_queries))
            self.last_update_queries = [query["sql"] for query in captured.captured_queries]
            self.task_cost = (task_seconds, task_queries)
        finally:
            settings.GRADING_MODE = previous_mode
        if Observation.objects.filter(student=student).count() < history:
            raise CommandError("the updates stored no evidence: is the mastery receiver connected?")
        return seconds, queries

    def bench_fits(self, item, *, attempts: int, per_student: int, fits: int):
        truth = bkt.BKTParams(prior=0.35, learn=0.2, guess=0.15, slip=0.1)
        rng = np.random.default_rng(1)
        students = attempts // per_student
        users = get_user_model().objects.bulk_create(
            [get_user_model()(username=f"{PREFIX}fit-{index}") for index in range(students)]
        )
        if users[0].pk is None:  # a database without RETURNING
            users = list(get_user_model().objects.filter(username__startswith=f"{PREFIX}fit-").order_by("pk"))
        # The fit reads the evidence only; the submissions behind it share one variant.
        variant = variant_get_or_create_for_item(item=item, student=users[0])
        start = timezone.now() - timedelta(days=1)
        for chunk in range(0, students, 500):
            group = users[chunk:chunk + 500]
            submissions, evidence = [], []
            for user in group:
                known = rng.random() < truth.prior
                for attempt in range(per_student):
                    correct = bool(rng.random() < (1 - truth.slip if known else truth.guess))
                    known = known or rng.random() < truth.learn
                    submissions.append(Submission(
                        variant=variant, student=user, part="weights", raw_answer="[0]",
                        attempt=len(evidence) + chunk * per_student + 1,
                        status=SubmissionStatus.GRADED, correct=correct, score=float(correct), graded_at=start,
                    ))
                    evidence.append((user, correct, start + timedelta(seconds=attempt)))
            stored = Submission.objects.bulk_create(submissions, batch_size=2000)
            if stored[0].pk is None:
                stored = list(Submission.objects.filter(variant=variant, student__in=group).order_by("attempt"))
            Observation.objects.bulk_create([
                Observation(submission=submission, student=user, course_id=item.assignment.course_id, skill=FIT_SKILL,
                            correct=correct, observed_at=when)
                for submission, (user, correct, when) in zip(stored, evidence)
            ], batch_size=2000)
        seconds, fit = [], None
        for _ in range(fits):
            started = time.perf_counter()
            fit = services.skill_parameters_fit(skill=FIT_SKILL)
            seconds.append(time.perf_counter() - started)
        return seconds, fit
