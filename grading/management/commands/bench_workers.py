"""Graded answers per second against the grading worker's pool processes (docs/deploy.md).

For each pool size in ``--processes`` (interleaved, ``--rounds`` times): a private
redis-server, one prefork worker per queue a grade's work runs on (``grade_queues``; the
grading queue at the size measured, the others at 1, as ``queue_worker_start`` runs them),
a bare no-op drain, then ``--answers`` right answers stored at once. Reports, per size, the
medians of: graded/s until the last answer is graded, graded/s until every queue is empty
(the follow-ups' batch is due ``FOLLOWUP_BATCH_SECONDS`` after a grade: a wait, not work),
and the CPU per answer of every worker, PostgreSQL backend and Redis, from /proc. No web
server: ``bench_http`` measures answers over HTTP.
"""

from __future__ import annotations

import statistics

import redis
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection

from grading.harness import (
    FOLLOWUP_NICENESS, CeleryWorker, RedisServer, database_url, grade_queues, reference_loop_ms, stack_cpu_meter,
    stack_env,
)
from grading.management.commands.bench_http import Command as HttpBench


class Command(BaseCommand):
    help = "Graded/s and CPU per answer of the grading worker alone at several pool sizes."

    def add_arguments(self, parser):
        parser.add_argument("--processes", default="1,2,4", help="pool sizes of the grading worker, comma-separated")
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--answers", type=int, default=300)

    def handle(self, *args, processes, rounds, answers, **options):
        from attnquiz.celery import app

        sizes = [int(size) for size in processes.split(",")]
        speed = [reference_loop_ms()]
        broker = RedisServer()
        broker.start()
        app.conf.broker_url = broker.url
        settings.GRADING_MODE = "celery"
        self.db_url = database_url(connection.settings_dict, vendor=connection.vendor)
        self.env = stack_env(
            database_url=self.db_url, redis_url=broker.url, secret_key=settings.SECRET_KEY,
            variant_seed_secret=settings.VARIANT_SEED_SECRET,
        )
        bench = HttpBench(stdout=self.stdout)
        bench.queues = grade_queues()
        bench.broker = redis.Redis.from_url(broker.url)
        item = bench.bench_item()
        figures = {size: {"graded": [], "drained": [], "noop": [], "cpu": []} for size in sizes}
        try:
            for number in range(1, rounds + 1):
                for size in sizes:
                    self.measure(bench, broker, item, size, answers, figures[size])
                    row = figures[size]
                    self.stdout.write(
                        f"round {number}, {size} process(es): no-op drain {row['noop'][-1]:.0f}/s, graded "
                        f"{row['graded'][-1]:.1f}/s to the last grade, {row['drained'][-1]:.1f}/s until every "
                        f"queue is empty, {row['cpu'][-1]:.1f} ms CPU per answer"
                    )
        finally:
            broker.cleanup()
        speed.append(reference_loop_ms())
        self.report(figures, answers, speed)

    def measure(self, bench, broker, item, size: int, answers: int, row: dict) -> None:
        workers = {}
        try:
            for queue in bench.queues:
                worker = CeleryWorker(broker_url=broker.url, database_url=self.db_url)
                worker.env.update(self.env)
                worker.start(
                    concurrency=size if queue == settings.CELERY_TASK_DEFAULT_QUEUE else 1, queues=queue,
                    nice=FOLLOWUP_NICENESS if queue == settings.FOLLOWUP_QUEUE else 0,
                )
                workers[queue] = worker
            row["noop"].append(bench.noop_drain(2000))
            students = bench.prepared(item, answers)
            meter = stack_cpu_meter(
                connection=connection, web=None, workers=workers, beat=None, redis_pid=broker.process.pid
            )
            meter.start()
            drained, graded = bench.worker_alone(students)  # answers per second
            spent = meter.stop()
        finally:
            for worker in workers.values():
                worker.stop()
        row["graded"].append(graded)
        row["drained"].append(drained)
        row["cpu"].append(1000 * sum(spent.values()) / len(students))

    def report(self, figures: dict, answers: int, speed: list[float]) -> None:
        self.stdout.write(f"\nmedians, {answers} answers stored at once per round (no web server):")
        for size, row in figures.items():
            noop = statistics.median(row["noop"])
            graded, drained = statistics.median(row["graded"]), statistics.median(row["drained"])
            self.stdout.write(
                f"  {size} process(es): {graded:6.1f} graded/s to the last grade (ratio {graded / noop:.3f}), "
                f"{drained:6.1f}/s until every queue is empty (ratio {drained / noop:.3f}); no-op drain "
                f"{noop:.0f}/s; {statistics.median(row['cpu']):.1f} ms CPU per answer"
            )
        self.stdout.write(f"machine speed: reference loop {speed[0]:.0f} ms CPU before, {speed[-1]:.0f} after")
