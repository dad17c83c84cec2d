"""Where the time goes: py-spy profiles of the exercise page and of submit, under load.

Starts the same stack as ``bench_http`` (a private Redis, one worker per queue a grade
uses, gunicorn 3 × 8 on production settings), then records with py-spy (sampling, every
process of the session) while ``--clients`` students (1) load the exercise page for
``--seconds`` and (2) post right answers, long-polling for grades as ``bench_http`` does. The raw
collapsed stacks are kept in ``--out``; the summary prints, per phase and process group,
the 15 functions with the most samples of their own ("own") and in their call tree
("total"), as ``py-spy top`` sorts them. Benchmarks only; needs ptrace rights.
"""

from __future__ import annotations

import collections
import subprocess
import sys
import threading
import time
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection
from django.urls import reverse

from grading.harness import CeleryBeat, CeleryWorker, Gunicorn, RedisServer, database_url, grade_queues, queue_worker_start, stack_env

from .bench_http import Command as BenchHttp

PY_SPY = str(Path(sys.executable).with_name("py-spy"))


def collapsed_top(path: Path, *, count: int = 15, within: str | None = None) -> tuple[int, list[tuple[str, int, int]]]:
    """(samples, [(function, own samples, total samples)]) of a py-spy raw file; with
    ``within`` (a function's name), only the samples whose stack passes through it."""
    own: collections.Counter = collections.Counter()
    total: collections.Counter = collections.Counter()
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, number = line.rpartition(" ")
        if not stack or not number.isdigit():
            continue
        weight = int(number)
        frames = [frame for frame in stack.split(";") if frame and not frame.startswith("process ")
                  and not frame.startswith("thread ")]
        if not frames or (within and not any(frame.startswith(within + " (") for frame in frames)):
            continue
        samples += weight
        own[_short(frames[-1])] += weight
        for frame in {_short(frame) for frame in frames}:
            total[frame] += weight
    ranked = sorted(total, key=lambda name: (-own[name], -total[name]))[:count]
    return samples, [(name, own[name], total[name]) for name in ranked]


def _short(frame: str) -> str:
    """"func (/long/path/site-packages/pkg/mod.py:12)" -> "func (pkg/mod.py)"."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "/i24/", "/python3.", "lib/python"):
        if marker in where:
            where = where.split(marker, 1)[1]
    return f"{name} ({where})"


class Command(BenchHttp):
    help = "py-spy top-15 of gunicorn and the workers under the exercise page and under submit."

    def add_arguments(self, parser):
        parser.add_argument("--seconds", type=float, default=15.0)
        parser.add_argument("--clients", type=int, default=16)
        parser.add_argument("--answers", type=int, default=400)
        parser.add_argument("--rate", type=int, default=100, help="py-spy samples per second")
        parser.add_argument("--out", default="var/profile")
        parser.add_argument("--gil", action="store_true", help="only samples holding the GIL: Python's CPU, no waits")

    def handle(self, *args, seconds, clients, answers, rate, out, gil, **options):
        self.gil = gil
        from attnquiz.celery import app

        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        broker = RedisServer()
        broker.start()
        app.conf.broker_url = broker.url
        settings.GRADING_MODE = "celery"
        db_url = database_url(connection.settings_dict, vendor=connection.vendor)
        env = stack_env(
            database_url=db_url, redis_url=broker.url, secret_key=settings.SECRET_KEY,
            variant_seed_secret=settings.VARIANT_SEED_SECRET,
        )
        self.queues = grade_queues()
        self.workers = {queue: CeleryWorker(broker_url=broker.url, database_url=db_url) for queue in self.queues}
        for worker in self.workers.values():
            worker.env.update(env)
        self.beat = CeleryBeat(env=env)  # as bench_http: every process a grade needs
        web = Gunicorn(env=env)
        try:
            for queue, worker in self.workers.items():
                queue_worker_start(worker, queue)
            self.beat.start()
            web.start()
            self.web, self.broker_server, self.cpu_rounds, self.polls_per_answer = web, broker, [], []
            self.broker = redis.Redis.from_url(broker.url)
            item = self.bench_item()
            page_students = self.prepared(item, clients)
            self.request_rate(web, reverse("exercise", args=[item.pk]), page_students, 2.0)  # warm up
            targets = {"gunicorn": web.process.pid}
            with self.recording(folder, "page", {"gunicorn": web.process.pid}, seconds, rate):
                pages = self.request_rate(web, reverse("exercise", args=[item.pk]), page_students, seconds)
            students = self.prepared(item, answers)
            targets.update({f"worker-{queue}": worker.process.pid for queue, worker in self.workers.items()})
            with self.recording(folder, "submit", targets, seconds, rate):
                until_empty, to_last_grade = self.http_graded(web, students, clients)
        finally:
            web.stop()
            self.beat.cleanup()
            for worker in self.workers.values():
                worker.stop()
            broker.cleanup()
        self.stdout.write(f"exercise page under profile: {pages:.0f} req/s; answers: {to_last_grade:.1f} graded/s "
                          f"to the last grade, {until_empty:.1f}/s until every queue is empty")
        for path in sorted(folder.glob("*.txt")):
            samples, rows = collapsed_top(path)
            self.stdout.write(f"\n{path.stem}: {samples} samples (own % / total %)")
            for name, own, total in rows:
                self.stdout.write(f"  {100 * own / max(samples, 1):5.1f} {100 * total / max(samples, 1):5.1f}  {name}")

    def recording(self, folder: Path, phase: str, targets: dict[str, int], seconds: float, rate: int):
        command = self

        class Recording:
            def __enter__(self):
                self.processes = [
                    subprocess.Popen(
                        [PY_SPY, "record", "--pid", str(pid), "--subprocesses", "--format", "raw",
                         "--rate", str(rate), "--duration", str(int(seconds) + 30), "--nonblocking",
                         "--output", str(folder / f"{phase}-{name}.txt"), *(["--gil"] if command.gil else [])],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )
                    for name, pid in targets.items()
                ]
                time.sleep(1.0)  # py-spy attaches
                return self

            def __exit__(self, *exc):
                for process in self.processes:
                    process.send_signal(2)  # SIGINT: py-spy writes what it has and exits
                for process in self.processes:
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        process.kill()
                command.stdout.write(f"{phase}: recorded {', '.join(targets)}")
                return False

        return Recording()
