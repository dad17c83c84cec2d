"""Throughput of the production stack against bare references, interleaved in one run.

Starts a private redis-server, beat, one prefork worker per queue a grade's work runs on (read
from the settings by ``grading.harness.grade_queues``: the grading queue at concurrency 2,
practice, review and any follow-up queue at 1, as docker-compose runs them), gunicorn
(3 workers × 8 threads) with production settings over plain HTTP
(``attnquiz.load_settings``) against the configured PostgreSQL database, and a second
gunicorn of the same shape with no middleware at all (``attnquiz.bare_settings``); then,
in each round:

- a bare Celery no-op drain: N no-op tasks through the same broker and worker;
- the worker alone: submissions stored at once, time until all are graded and every
  queue is empty (the follow-ups a grade queues are part of its cost), and, beside it,
  until the last is graded: the follow-ups' batch is due ``FOLLOWUP_BATCH_SECONDS`` after
  a grade, a wait rather than work, which a burst of a few seconds pays once at its end;
- graded answers over HTTP: students POST right answers and, when the reply is the pending
  marker (the grade took longer than ``GRADING_SUBMIT_WAIT_SECONDS``), long-poll the result as
  the page does, time until all are graded and every queue is empty; meanwhile the CPU time of
  every process (gunicorn, each worker, this database's PostgreSQL backends, Redis) is
  read from /proc, per graded answer;
- the exercise page as a student, and two bare views, req/s: ``/healthz/live/`` behind
  the full middleware stack, and the same view on the gunicorn with none.

Then submit→graded latency at half the median HTTP rate (open loop). Rounds alternate
the figures, so a noisy machine slows them alike; the summary gives medians and ratios.
"""

from __future__ import annotations

import http.client
import itertools
import re
import secrets
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse

from courses.models import AssignmentItem, Enrolment, Role
from courses.services import demo_course_ensure
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from exercises.services_bank import bank_load
from grading import services, tasks
from grading.harness import (
    CeleryBeat, CeleryWorker, CpuMeter, Gunicorn, RedisServer, database_url, grade_queues, queue_worker_start, reference_loop_ms,
    stack_cpu_meter, stack_env, statistics_refresh, wait_until,
)
from grading.models import Submission, SubmissionStatus

WORKED_EXAMPLE = "attention-weights-one-query"
FINISHED = (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE)
# The pending marker's long poll, which the page's htmx follows at once.
PENDING_RESULT = re.compile(r'hx-get="(/grading/submissions/\d+/\?wait=1)"')


class Command(BaseCommand):
    help = "Graded/s over HTTP, worker alone and a bare no-op drain; page vs bare view req/s."

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--answers", type=int, default=300, help="answers per throughput figure")
        parser.add_argument("--noop", type=int, default=2000, help="no-op tasks per drain")
        parser.add_argument("--clients", type=int, default=16, help="concurrent HTTP clients")
        parser.add_argument("--page-seconds", type=float, default=5.0)
        parser.add_argument("--latency-answers", type=int, default=200)

    def handle(self, *args, rounds, answers, noop, clients, page_seconds, latency_answers, **options):
        from attnquiz.celery import app

        self.speed_ms = [reference_loop_ms()]  # this machine's speed, before and after
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
        self.workers = {}
        for queue in self.queues:
            worker = CeleryWorker(broker_url=broker.url, database_url=db_url)
            worker.env.update(env)
            self.workers[queue] = worker
        self.beat = CeleryBeat(env=env)  # the sweepers and heartbeats run as in production
        web = Gunicorn(env=env)
        bare_web = Gunicorn(env=dict(env, DJANGO_SETTINGS_MODULE="attnquiz.bare_settings"))
        figures = {name: [] for name in ("noop", "worker", "worker_graded", "http", "http_graded", "page", "bare",
                                         "bare_none")}
        self.cpu_rounds: list[dict[str, float]] = []
        self.polls_per_answer: list[float] = []  # result polls an answer needed over HTTP, per round
        try:
            for queue, worker in self.workers.items():
                queue_worker_start(worker, queue)
            self.beat.start()
            web.start()
            bare_web.start()
            self.broker_server = broker
            self.broker = redis.Redis.from_url(broker.url)
            self.web = web
            item = self.bench_item()
            page_students = self.prepared(item, clients)
            for number in range(1, rounds + 1):
                figures["noop"].append(self.noop_drain(noop))
                for name, (drained, graded) in (
                    ("worker", self.worker_alone(self.prepared(item, answers))),
                    ("http", self.http_graded(web, self.prepared(item, answers), clients)),
                ):
                    figures[name].append(drained)
                    figures[f"{name}_graded"].append(graded)
                figures["page"].append(
                    self.request_rate(web, reverse("exercise", args=[item.pk]), page_students, page_seconds)
                )
                figures["bare"].append(self.request_rate(web, reverse("liveness"), page_students, page_seconds))
                figures["bare_none"].append(
                    self.request_rate(bare_web, reverse("liveness"), page_students, page_seconds)
                )
                cpu = self.cpu_rounds[-1]
                self.stdout.write(
                    f"round {number}: no-op drain {figures['noop'][-1]:.0f}/s, worker alone "
                    f"{figures['worker'][-1]:.1f}/s, over HTTP {figures['http'][-1]:.1f}/s "
                    f"({cpu['total']:.1f} ms CPU/answer, {self.polls_per_answer[-1]:.2f} result polls/answer); exercise page "
                    f"{figures['page'][-1]:.0f} req/s, bare view {figures['bare'][-1]:.0f} req/s (full "
                    f"middleware), {figures['bare_none'][-1]:.0f} req/s (none)"
                )
            rate = statistics.median(figures["http"]) / 2
            latencies = self.paced_latencies(web, self.prepared(item, latency_answers), rate)
        finally:
            web.stop()
            bare_web.stop()
            self.beat.cleanup()
            for worker in self.workers.values():
                worker.stop()
            broker.cleanup()
        self.speed_ms.append(reference_loop_ms())
        self.report(figures, rate, latencies)

    def cpu_meter(self) -> CpuMeter:
        """Every process that works on an answer: web, each queue's worker, beat, Redis, and
        this database's PostgreSQL backends but the benchmark's own connection."""
        return stack_cpu_meter(
            connection=connection, web=self.web, workers=self.workers, beat=self.beat,
            redis_pid=self.broker_server.process.pid,
        )

    def queues_empty(self) -> bool:
        pipe = self.broker.pipeline()
        for queue in self.queues:
            pipe.llen(queue)
        pipe.llen(settings.FOLLOWUP_PENDING_KEY)  # grades whose follow-ups wait for the next drain
        pipe.hlen("unacked")
        return not any(pipe.execute())

    # --- set-up --------------------------------------------------------------------------

    def bench_item(self) -> AssignmentItem:
        bank_load()
        demo = demo_course_ensure()
        self.course = demo.course
        return AssignmentItem.objects.select_related("assignment").get(
            assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
        )

    def prepared(self, item, count: int) -> list[dict]:
        """Fresh students (no attempts used), each with a session, its variant and right answer."""
        run = secrets.token_hex(4)
        students = []
        for index in range(count):
            user = get_user_model().objects.create(username=f"bench-{run}-{index}")
            Enrolment.objects.create(course=self.course, user=user, role=Role.STUDENT)
            variant = variant_get_or_create_for_item(item=item, student=user)
            spec = engine.spec_from_json(variant.exercise_version.spec)
            weights = np.asarray(engine.reference_answers(spec, variant.params)["weights"], dtype=float)
            client = Client()
            client.force_login(user)
            students.append({
                "user": user,
                "variant": variant,
                "answer": "[" + ", ".join(f"{w:.4f}" for w in weights) + "]",
                "session": client.cookies[settings.SESSION_COOKIE_NAME].value,
            })
        statistics_refresh()
        return students

    # --- the figures ---------------------------------------------------------------------

    def noop_drain(self, count: int) -> float:
        from attnquiz.celery import task_publish

        queue = settings.CELERY_TASK_DEFAULT_QUEUE
        started = time.perf_counter()
        for _ in range(count):
            task_publish(tasks.bench_noop, args=[])
        wait_until(
            lambda: self.broker.llen(queue) == 0 and self.broker.hlen("unacked") == 0,
            timeout=300, interval=0.005, what="the no-op tasks to drain",
        )
        return count / (time.perf_counter() - started)

    def worker_alone(self, students: list[dict]) -> tuple[float, float]:
        """(answers per second until every queue is empty, until the last is graded)."""
        with transaction.atomic():  # every task is sent at the commit, at once
            ids = [
                services.submission_create(
                    variant=s["variant"], student=s["user"], part="weights", raw_answer=s["answer"]
                ).pk
                for s in students
            ]
            started = time.perf_counter()
        self.wait_graded(ids)
        graded = time.perf_counter()
        self.wait_queues_empty()
        return len(ids) / (time.perf_counter() - started), len(ids) / (graded - started)

    def http_graded(self, web, students: list[dict], clients: int) -> tuple[float, float]:
        """(answers per second until every queue is empty, until the last is graded); the CPU
        is metered until every queue is empty, so the follow-ups' work is counted either way."""
        self.pages_opened(web, students, clients)
        self.polls = itertools.count()  # next() on it is atomic: the client threads share it
        meter = self.cpu_meter()
        meter.start()
        started = time.perf_counter()
        self.each_student_once(web, students, clients, self.post_answer)
        self.wait_graded([s["variant"].pk for s in students], by_variant=True)
        graded = time.perf_counter() - started
        self.wait_queues_empty()
        elapsed = time.perf_counter() - started
        spent = meter.stop()
        per_answer = {name: 1000 * seconds / len(students) for name, seconds in spent.items()}
        per_answer["total"] = sum(per_answer.values())
        self.cpu_rounds.append(per_answer)
        self.polls_per_answer.append(next(self.polls) / len(students))
        return len(students) / elapsed, len(students) / graded

    def request_rate(self, web, path: str, students: list[dict], seconds: float) -> float:
        counts = []
        deadline = time.perf_counter() + seconds

        def client_loop(student):
            connection_ = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
            done = 0
            while time.perf_counter() < deadline:
                connection_.request("GET", path, headers={"Cookie": self.cookies(student)})
                response = connection_.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET {path} answered {response.status}")
                done += 1
            counts.append(done)
            connection_.close()

        started = time.perf_counter()
        with ThreadPoolExecutor(len(students)) as pool:
            list(pool.map(client_loop, students))
        return sum(counts) / (time.perf_counter() - started)

    def pages_opened(self, web, students: list[dict], clients: int) -> None:
        """Each student opens the exercise once before answering, as a student does; not timed
        and not metered. Their session then sits in the stack's cache, as a sign-in through
        the site leaves it: before, each benchmark student's first request read its session
        from PostgreSQL (signed in by this process, whose cache is not the stack's), which a
        student of a real exam does once in ``SESSION_CACHE_SECONDS``, not once per answer."""

        def open_exercise(connection_, student):
            path = reverse("exercise", args=[student["variant"].assignment_item_id])
            connection_.request("GET", path, headers={"Cookie": self.cookies(student)})
            response = connection_.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path} answered {response.status}")

        self.each_student_once(web, students, clients, open_exercise)

    @staticmethod
    def each_student_once(web, students: list[dict], clients: int, action) -> None:
        """``action(connection, student)`` for every student, by ``clients`` threads each on
        its own keep-alive connection, taking the next student as they finish one; a
        failed request fails the benchmark."""
        pending = list(students)
        lock = threading.Lock()

        def client_loop():
            connection_ = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
            while True:
                with lock:
                    if not pending:
                        break
                    student = pending.pop()
                action(connection_, student)
            connection_.close()

        with ThreadPoolExecutor(clients) as pool:
            for future in [pool.submit(client_loop) for _ in range(clients)]:
                future.result()

    def paced_latencies(self, web, students: list[dict], rate: float) -> list[float]:
        """Open loop at ``rate`` answers/s: each answer's submit→graded time in ms."""
        self.pages_opened(web, students, 8)
        latencies = []

        def one(student):
            connection_ = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
            started = time.perf_counter()
            graded = self.post_answer(connection_, student)
            if not graded:  # the long poll ended first: wait for the grade in the database
                self.wait_graded([student["variant"].pk], by_variant=True)
            latencies.append((time.perf_counter() - started) * 1000)
            connection_.close()

        interval = 1.0 / max(rate, 0.1)
        begin = time.perf_counter()
        futures = []
        with ThreadPoolExecutor(64) as pool:
            for index, student in enumerate(students):
                delay = begin + index * interval - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                futures.append(pool.submit(one, student))
        for future in futures:
            future.result()
        return latencies

    # --- helpers -------------------------------------------------------------------------

    polls = itertools.count()  # result polls sent; http_graded starts a new count per round
    MAX_RESULT_POLLS = 40  # each one a long poll of up to GRADING_LONG_POLL_SECONDS
    CSRF = "benchcsrf" + "0" * 23  # any 32-character secret: cookie and header must agree

    def cookies(self, student) -> str:
        return f"{settings.SESSION_COOKIE_NAME}={student['session']}; {settings.CSRF_COOKIE_NAME}={self.CSRF}"

    def post_answer(self, connection_, student) -> bool:
        """POST the student's answer as the page does and, while the reply is the pending
        marker, long-poll its result as the page does; True when the grade came."""
        html = self.post_submit(connection_, student)
        for _ in range(self.MAX_RESULT_POLLS):
            if 'data-result="graded"' in html:
                return True
            pending = PENDING_RESULT.search(html)
            if pending is None:
                raise RuntimeError(f"submit answered neither a grade nor a pending marker: {html[:300]}")
            next(self.polls)
            connection_.request("GET", pending.group(1), headers={"Cookie": self.cookies(student), "HX-Request": "true"})
            response = connection_.getresponse()
            html = response.read().decode()
            if response.status != 200:
                raise RuntimeError(f"result poll answered {response.status}: {html[:300]}")
        return False

    def post_submit(self, connection_, student) -> str:
        """POST the student's answer as the page does; the reply's HTML."""
        body = "answer=" + student["answer"].replace(" ", "+").replace(",", "%2C")
        connection_.request(
            "POST",
            reverse("submit", args=[student["variant"].pk, "weights"]),
            body=body,
            headers={
                "Cookie": self.cookies(student),
                "X-CSRFToken": self.CSRF,
                "HX-Request": "true",
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": f"http://127.0.0.1:{connection_.port}/",
            },
        )
        response = connection_.getresponse()
        html = response.read().decode()
        if response.status != 200:
            raise RuntimeError(f"submit answered {response.status}: {html[:300]}")
        return html

    def wait_graded(self, ids: list[int], *, by_variant: bool = False) -> None:
        field = "variant_id__in" if by_variant else "pk__in"
        wait_until(
            lambda: Submission.objects.filter(**{field: ids}, status__in=FINISHED).count() >= len(ids),
            timeout=120, interval=0.01, what="the answers to be graded",
        )

    def wait_queues_empty(self) -> None:
        wait_until(self.queues_empty, timeout=300, interval=0.01, what="every queue to drain")

    def report(self, figures: dict, rate: float, latencies: list[float]) -> None:
        median = {name: statistics.median(values) for name, values in figures.items()}
        latencies = sorted(latencies)

        def pct(p):
            return latencies[min(len(latencies) - 1, int(p * len(latencies)))]

        cpu = {name: statistics.median(r[name] for r in self.cpu_rounds) for name in self.cpu_rounds[0]}
        self.stdout.write(
            f"\nmedians of {len(figures['noop'])} interleaved rounds (gunicorn 3x8, prefork workers: "
            + ", ".join(f"{queue} x{2 if queue == settings.CELERY_TASK_DEFAULT_QUEUE else 1}" for queue in self.queues)
            + f"; beat; {connection.vendor}, Redis):\n"
            f"  bare Celery no-op drain      {median['noop']:8.1f} tasks/s\n"
            f"  worker alone                 {median['worker']:8.1f} graded/s   "
            f"ratio {median['worker'] / median['noop']:.3f}   (to the last grade: "
            f"{median['worker_graded']:.1f}/s, ratio {median['worker_graded'] / median['noop']:.3f})\n"
            f"  answers over HTTP            {median['http']:8.1f} graded/s   "
            f"ratio {median['http'] / median['noop']:.3f}   (to the last grade: "
            f"{median['http_graded']:.1f}/s, ratio {median['http_graded'] / median['noop']:.3f})\n"
            "  (graded/s until every queue is empty, the follow-ups' batch included, which is due "
            f"{settings.FOLLOWUP_BATCH_SECONDS:g} s after a grade; and until the last answer is graded)\n"
            f"  bare view, full middleware   {median['bare']:8.1f} req/s\n"
            f"  bare view, no middleware     {median['bare_none']:8.1f} req/s\n"
            f"  exercise page (student)      {median['page']:8.1f} req/s      "
            f"ratio {median['page'] / median['bare']:.3f} (full middleware), "
            f"{median['page'] / median['bare_none']:.3f} (none)\n"
            f"CPU per graded answer over HTTP (ms, all processes): {cpu['total']:.1f} = "
            + ", ".join(f"{name} {value:.1f}" for name, value in cpu.items() if name != "total")
            + f"; result polls per answer {statistics.median(self.polls_per_answer):.2f}"
            + f"\nsubmit→graded at {rate:.1f} answers/s (half the HTTP rate), {len(latencies)} answers: "
            f"p50 {pct(0.5):.0f} ms, p95 {pct(0.95):.0f} ms, p99 {pct(0.99):.0f} ms\n"
            f"machine speed: reference loop {self.speed_ms[0]:.0f} ms CPU before, {self.speed_ms[-1]:.0f} after "
            "(grading.harness.reference_loop_ms)"
        )
