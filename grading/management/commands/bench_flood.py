"""Fair grading under a flood: one student floods practice answers, others answer graded ones.

One student posts ``--flood`` practice answers as fast as ``--flood-threads`` parallel
connections can; meanwhile other
students (each on their own variant, so the per-student rate limit does not slow them)
post one graded answer every ``--interval`` seconds. Reports the median and max
submit→graded time of the graded answers, and what happened to the flood.

Runs its own redis-server and real workers against the configured database (PostgreSQL):
by default a grading worker (``-Q grading``) and a practice worker (``-Q practice``);
``--single-queue`` instead sends practice answers to the grading queue of one worker with
both processes, which is how the flood was handled before. ``--no-rate-limit`` switches
the per-student limit off, to see the queues alone.
"""

from __future__ import annotations

import statistics
import threading
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection, connections

from exercises.services import variant_create_practice
from grading import services
from grading.harness import CeleryWorker, RedisServer, database_url, wait_until
from grading.management.commands.bench_pipeline import (
    FINISHED,
    is_finished,
    prepared_answers,
    right_weights,
)
from grading.models import Submission


class Command(BaseCommand):
    help = "Graded answers' submit→graded time while another student floods practice answers."

    def add_arguments(self, parser):
        parser.add_argument("--flood", type=int, default=300, help="practice answers posted")
        parser.add_argument("--flood-threads", type=int, default=8, help="parallel connections of the flooding student")
        parser.add_argument("--graded", type=int, default=30, help="graded answers timed")
        parser.add_argument("--interval", type=float, default=0.5, help="seconds between graded answers")
        parser.add_argument("--single-queue", action="store_true")
        parser.add_argument("--no-rate-limit", action="store_true")

    def handle(self, *args, flood, flood_threads, graded, interval, single_queue, no_rate_limit, **options):
        from attnquiz.celery import app

        if no_rate_limit:
            settings.SUBMIT_RATE_BURST = 0
        if single_queue:
            settings.PRACTICE_QUEUE = settings.CELERY_TASK_DEFAULT_QUEUE
        redis = RedisServer()
        redis.start()
        app.conf.broker_url = redis.url
        settings.GRADING_MODE = "celery"
        url = database_url(connection.settings_dict, vendor=connection.vendor)
        layout = [("grading", 2)] if single_queue else [("grading", 1), ("practice", 1)]
        layout.append((settings.FOLLOWUP_QUEUE, 1))  # the grades' follow-ups, never on practice
        workers = [CeleryWorker(broker_url=redis.url, database_url=url) for _ in layout]
        try:
            for worker, (queues, concurrency) in zip(workers, layout):
                worker.start(concurrency=concurrency, queues=queues)
            graded_answers = prepared_answers(graded + 1)
            flooder_variant, flooder, _ = graded_answers.pop()
            practice = variant_create_practice(
                item=flooder_variant.assignment_item, student=flooder, named=None
            )
            # Wrong (never "solved") and each different: the server refuses an answer the
            # same as the part's latest ("unchanged") without grading it.
            flood_answers = [right_weights(practice, offset=0.05 + index / 10_000) for index in range(flood)]
            outcome = self.run(practice, flooder, flood_answers, flood_threads, graded_answers, interval)
        finally:
            for worker in workers:
                worker.stop()
            redis.cleanup()
        self.report(outcome, single_queue=single_queue, no_rate_limit=no_rate_limit)

    def run(self, practice, flooder, flood_answers, flood_threads, graded_answers, interval) -> dict:
        outcome = {"stored": [], "refused": 0, "latencies": [], "graded_ids": [], "flood_seconds": 0.0}
        flood_started = time.perf_counter()

        def post_flood(answers: list[str]):
            for answer in answers:
                try:
                    submission = services.submission_create(
                        variant=practice, student=flooder, part="weights", raw_answer=answer
                    )
                    outcome["stored"].append(submission.pk)
                except services.SubmissionRefused:
                    outcome["refused"] += 1
            outcome["flood_seconds"] = time.perf_counter() - flood_started
            connections.close_all()

        def post_graded(variant, student, answer):
            started = time.perf_counter()
            submission = services.submission_create(
                variant=variant, student=student, part="weights", raw_answer=answer
            )
            wait_until(lambda: is_finished(submission.pk), timeout=120, interval=0.005, what="grade")
            outcome["latencies"].append(time.perf_counter() - started)
            outcome["graded_ids"].append(submission.pk)
            connections.close_all()

        shares = [flood_answers[index::flood_threads] for index in range(flood_threads)]
        flooder_threads = [threading.Thread(target=post_flood, args=(share,)) for share in shares]
        for thread in flooder_threads:
            thread.start()
        graded_threads = []
        for prepared in graded_answers:
            thread = threading.Thread(target=post_graded, args=prepared)
            thread.start()
            graded_threads.append(thread)
            time.sleep(interval)
        for thread in [*flooder_threads, *graded_threads]:
            thread.join()
        stored = outcome["stored"]
        wait_until(
            lambda: Submission.objects.filter(pk__in=stored, status__in=FINISHED).count() == len(stored),
            timeout=600,
            interval=0.1,
            what="the flood to be graded",
        )
        # Stored -> graded, from the database's own timestamps: the queue wait and the
        # grading, without this process's threads competing with the poster for the GIL.
        outcome["server_latencies"] = [
            (graded_at - created_at).total_seconds()
            for created_at, graded_at in Submission.objects.filter(
                pk__in=outcome["graded_ids"]
            ).values_list("created_at", "graded_at")
        ]
        return outcome

    def report(self, outcome, *, single_queue: bool, no_rate_limit: bool):
        latencies_ms = sorted(1000 * t for t in outcome["latencies"])
        server_ms = sorted(1000 * t for t in outcome["server_latencies"])
        queues = "one shared queue" if single_queue else "grading and practice queues"
        limit = (
            "off"
            if no_rate_limit
            else f"burst {settings.SUBMIT_RATE_BURST}, {settings.SUBMIT_RATE_PER_SECOND:g}/s"
        )
        self.stdout.write(
            f"flood: {len(outcome['stored'])} practice answers stored, {outcome['refused']} refused "
            f"(429) in {outcome['flood_seconds']:.1f} s; {queues}; rate limit {limit}; {connection.vendor}\n"
            f"graded answers ({len(latencies_ms)}), stored→graded: "
            f"median {statistics.median(server_ms):.0f} ms, max {server_ms[-1]:.0f} ms; "
            f"submit call→seen graded: median {statistics.median(latencies_ms):.0f} ms, "
            f"max {latencies_ms[-1]:.0f} ms"
        )
