"""Print the median cost of one spaced-review schedule update, end to end, and its parts.

Everything is written inside one transaction that is rolled back at the end, so the
command leaves the database as it found it (it loads the bank and the demo course into
that transaction if they are missing).
"""

from __future__ import annotations

import statistics
import time

from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


class Command(BaseCommand):
    help = "Measure one review schedule update (review_record) end to end, fsrs alone, and a targeted draw."

    def add_arguments(self, parser):
        parser.add_argument("--updates", type=int, default=300, help="schedule updates to time (default 300)")

    def handle(self, *args, **options):
        updates = max(3, options["updates"])
        with transaction.atomic():
            rows = self._measure(updates)
            transaction.set_rollback(True)
        self.stdout.write(f"{'measure':<58}{'n':>6}{'median ms':>11}")
        for name, count, value in rows:
            self.stdout.write(f"{name:<58}{count:>6}{value:>11.3f}")

    def _measure(self, updates: int) -> list[tuple[str, int, float]]:
        import fsrs
        from django.contrib.auth import get_user_model

        from courses.models import AssignmentItem
        from courses.services import demo_course_ensure
        from exercises import engine
        from exercises.engine.targeting import draw_targeted_variant
        from exercises.services import variant_create_practice
        from exercises.services_bank import bank_load
        from exercises.specs import version_spec
        from grading.models import Submission, SubmissionStatus
        from review.scheduling import review_scheduler
        from review.services import review_record

        bank_load()
        demo = demo_course_ensure()
        item = AssignmentItem.objects.filter(
            assignment=demo.assignment, exercise_version__exercise__slug="attention-weights-one-query"
        ).first()
        student = get_user_model().objects.create(username="bench-review-student")
        submissions = []
        for index in range(updates):
            variant = variant_create_practice(item=item, student=student)
            submissions.append(
                Submission.objects.create(
                    variant=variant, student=student, part="weights", raw_answer="[]",
                    status=SubmissionStatus.GRADED, correct=index % 3 != 0, score=1.0,
                )
            )
        first, rest = submissions[0], submissions[1:]
        started = time.perf_counter()
        review_record(submission_id=first.pk)
        new_card = [time.perf_counter() - started]
        update, queries = [], []
        for submission in rest:
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                review_record(submission_id=submission.pk)
                update.append(time.perf_counter() - started)
            queries.append(len([q for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]))
        again = []
        for submission in rest[: min(100, len(rest))]:  # a redelivered task: a no-op
            started = time.perf_counter()
            review_record(submission_id=submission.pk)
            again.append(time.perf_counter() - started)
        scheduler = review_scheduler(0.9)
        card, library = fsrs.Card(card_id=1), []
        for index in range(updates):
            started = time.perf_counter()
            card, _ = scheduler.review_card(card, fsrs.Rating.Good if index % 3 else fsrs.Rating.Again)
            library.append(time.perf_counter() - started)
        spec = version_spec(item.exercise_version)
        plain, targeted = [], []
        for seed in range(min(updates, 200)):
            started = time.perf_counter()
            engine.draw_variant(spec, seed)
            plain.append(time.perf_counter() - started)
            started = time.perf_counter()
            draw_targeted_variant(spec, seed, part_key="weights", misconception="no_scaling")
            targeted.append(time.perf_counter() - started)
        return [
            ("review_record, first review (creates the card)", 1, median_ms(new_card)),
            ("review_record, one more review of a card (end to end)", len(update), median_ms(update)),
            ("  queries per update (median)", len(queries), float(statistics.median(queries))),
            ("review_record, same submission again (idempotent no-op)", len(again), median_ms(again)),
            ("fsrs Scheduler.review_card alone", len(library), median_ms(library)),
            ("draw_variant, plain", len(plain), median_ms(plain)),
            ("draw_targeted_variant, no_scaling on weights", len(targeted), median_ms(targeted)),
        ]
