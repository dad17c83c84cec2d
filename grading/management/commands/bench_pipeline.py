"""Benchmark the grading pipeline through a real Celery worker and Redis server.

Measures (1) the submit → graded round trip, one submission at a time, and (2) the
throughput of a burst: N submissions stored at once, time until all are graded.
Starts its own redis-server and worker against the configured database, so run it
with a database the worker can reach (PostgreSQL, or the SQLite file of `make run`).
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection

from courses.models import AssignmentItem, Enrolment, Role
from courses.services import demo_course_ensure
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from exercises.services_bank import bank_load
from grading import services
from grading.harness import CeleryWorker, RedisServer, database_url, wait_until
from grading.models import Submission, SubmissionStatus

WORKED_EXAMPLE = "attention-weights-one-query"
FINISHED = (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE)


class Command(BaseCommand):
    help = "Median submit→graded latency and burst throughput through a real worker."

    def add_arguments(self, parser):
        parser.add_argument("--round-trips", type=int, default=100)
        parser.add_argument("--burst", type=int, default=200)
        parser.add_argument("--concurrency", type=int, default=2)

    def handle(self, *args, round_trips, burst, concurrency, **options):
        from attnquiz.celery import app
        from django.conf import settings

        redis = RedisServer()
        redis.start()
        app.conf.broker_url = redis.url
        settings.GRADING_MODE = "celery"
        worker = CeleryWorker(
            broker_url=redis.url,
            database_url=database_url(connection.settings_dict, vendor=connection.vendor),
        )
        try:
            worker.start(concurrency=concurrency)
            answers = self.prepared_answers(round_trips + burst)
            latencies = [self.round_trip(*answers.pop()) for _ in range(round_trips)]
            throughput = self.burst_throughput([answers.pop() for _ in range(burst)])
        finally:
            worker.stop()
            redis.cleanup()
        self.report(latencies, burst, throughput, concurrency)

    def prepared_answers(self, count: int) -> list[tuple]:
        return prepared_answers(count)

    def round_trip(self, variant, student, answer) -> float:
        started = time.perf_counter()
        submission = services.submission_create(
            variant=variant, student=student, part="weights", raw_answer=answer
        )
        wait_until(lambda: is_finished(submission.pk), timeout=30, interval=0.002, what="grade")
        return time.perf_counter() - started

    def burst_throughput(self, prepared: list[tuple]) -> float:
        started = time.perf_counter()
        ids = [
            services.submission_create(variant=v, student=s, part="weights", raw_answer=a).pk
            for v, s, a in prepared
        ]
        wait_until(
            lambda: Submission.objects.filter(pk__in=ids, status__in=FINISHED).count() == len(ids),
            timeout=300,
            interval=0.05,
            what="the burst to be graded",
        )
        return len(ids) / (time.perf_counter() - started)

    def report(self, latencies, burst, throughput, concurrency):
        latencies_ms = sorted(1000 * t for t in latencies)
        p90 = latencies_ms[int(0.9 * (len(latencies_ms) - 1))]
        self.stdout.write(
            f"round trip submit→graded over {len(latencies_ms)} submissions "
            f"(real worker, prefork concurrency {concurrency}, {connection.vendor}):\n"
            f"  median {statistics.median(latencies_ms):.1f} ms, p90 {p90:.1f} ms, "
            f"min {latencies_ms[0]:.1f} ms, max {latencies_ms[-1]:.1f} ms\n"
            f"burst of {burst}: {throughput:.1f} graded submissions per second"
        )


def is_finished(submission_id: int) -> bool:
    return Submission.objects.filter(pk=submission_id, status__in=FINISHED).exists()


def prepared_answers(count: int) -> list[tuple]:
    """One (variant, student, right answer) per submission, each on its own fresh student."""
    bank_load()
    demo = demo_course_ensure()
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )
    run = int(time.time())
    prepared = []
    for index in range(count):
        # No password: hashing one per bench student would dominate the set-up time.
        student = get_user_model().objects.create(username=f"bench-{run}-{index}")
        Enrolment.objects.get_or_create(course=demo.course, user=student, defaults={"role": Role.STUDENT})
        variant = variant_get_or_create_for_item(item=item, student=student)
        prepared.append((variant, student, right_weights(variant)))
    return prepared


def right_weights(variant, *, offset: float = 0.0) -> str:
    """The right attention weights as typed; a non-zero ``offset`` makes them wrong."""
    spec = engine.spec_from_json(variant.exercise_version.spec)
    weights = np.asarray(engine.reference_answers(spec, variant.params)["weights"], dtype=float)
    weights = weights + offset
    return "[" + ", ".join(f"{w:.4f}" for w in weights) + "]"
