"""Exam-start spike on the production stack: ``make load`` (N=2000) runs this.

Builds a course of ``--students`` students (an assignment with the worked example's
weights and the symbolic variance part; each student's variants drawn before the start,
passwords on the load stack's fast hasher, see ``attnquiz.load_settings``), starts the
production stack on 127.0.0.1 (gunicorn 3 × 8 threads, a grading worker of concurrency 2,
the practice worker, beat, a private redis-server, this PostgreSQL database), and runs
locust (``loadtest/locustfile.py``, from its own virtualenv) headless: every student
signs in within ``--login-seconds``, opens the assignment and its two exercises, then
answers both parts with ``--think`` seconds between answers. 1 % of answers are hostile
(nested-exponential towers too large to compare: could-not-grade), 10 % wrong.

Meanwhile the Redis queues' length is sampled every second. Afterwards it reports page,
submit and submit→graded percentiles (locust's, and graded_at − created_at from the
database), errors and the queue depth over time, and checks: no error, every answer
stored and finished (right and wrong ones graded with the right verdict, hostile ones
could-not-grade), the queue drained within a minute of the last answer, and the submit
p95 under 1 s: the answer's acknowledgement, with its grade when that comes within
``GRADING_SUBMIT_WAIT_SECONDS``; a later grade comes by the result poll, and
submit→graded is the whole wait as the student saw it. Exits 1
when a check fails. Traffic goes to 127.0.0.1 only; every wait is bounded.

``--profile exam-start`` is the exam hour as it really happens: the assignment is an exam,
every student is already signed in (a session made before the run, as after an LMS
launch or an earlier sign-in), and all of them press Start within ``--start-seconds``:
the assignment page, Start, the assignment page again, each exercise, then the answers
with think time. Its checks are the exam hour's targets: page and Start p95 under 1 s,
submit p95 under 300 ms. Before the spike, ``--login-sample`` other students sign in with
the production password hasher (PBKDF2) and the run reports sign-ins per second and per
second of web CPU, apart: a sign-in costs what the hasher costs, which is why big exams
should sign in before the start (docs/exams.md). Clients retry a 503 after its Retry-After.
"""

from __future__ import annotations

import csv
import json
import math
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone
from django.utils.crypto import get_random_string
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.models import Count
from django.urls import reverse

from courses.models import Assignment, AssignmentItem, AssignmentKind, Course, Enrolment, Role
from courses.services import latest_published_versions
from exercises.models import Variant
from exercises.services import assignment_variant_draw, variant_draws_prepare, variant_get_or_create_for_item
from exercises.services_bank import bank_load
from grading.harness import (
    CeleryBeat, CeleryWorker, Gunicorn, RedisServer, children_cpu_seconds, database_url, grade_queues,
    machine_busy_seconds, queue_worker_start, reference_loop_ms, sessions_cpu_seconds, stack_cpu_meter, stack_env,
    statistics_refresh, wait_until,
)
from grading.management.commands.bench_pipeline import FINISHED, right_weights
from grading.models import Submission, SubmissionStatus
from loadtest.exam_student import MAX_RETRY_SECONDS, answer_kinds

LOAD_COURSE = "load-exam"
WEIGHTS = ("attention-weights-one-query", "weights")
SYMBOLIC = ("score-variance", "general_variance")
SYMBOLIC_ANSWERS = {
    "right": "d_k*sigma_q^2*sigma_k^2",
    "wrong": "d_k*sigma_q*sigma_k",
    # Two towers of nested exponentials: their values are too large to compare at any point
    # and nothing cancels them, so the checker answers at once "too complex" (could-not-grade).
    "hostile": "exp(" * 39 + "sigma_q" + ")" * 39 + " - " + "exp(" * 39 + "sigma_k" + ")" * 39 + " + 1",
}
DRAIN_SECONDS = 60
SUBMIT_P95_MS = 1000
PAGES = ("login page", "log in", "dashboard", "assignment page", "start", "exercise page", "result poll",
         "deadline poll")
EXAM_START_TARGETS_MS = {"pages": 1000, "start": 1000, "submit": 300}
PBKDF2 = "pbkdf2_sha256"


def load_course_build(*, students: int, password: str, run: str, exam: bool = False,
                      variants_stored: bool = True) -> tuple[Assignment, dict]:
    """A fresh assignment of the load course, ``students`` students, and the plan the
    virtual students follow (answers and their expected kind). With ``exam`` the assignment
    is an exam (Start opens it) and every student gets a session, signed in before the run.
    ``variants_stored``: the students' variants are made now, so no page of the run draws
    one; else each is drawn here only to know its answer, and made by its student's first
    view, as in a real exam."""
    bank_load()
    course, _ = Course.objects.get_or_create(slug=LOAD_COURSE, defaults={"title": "Load test"})
    assignment = Assignment.objects.create(
        course=course, slug=f"spike-{run}", title=f"Exam start {run}", attempts_per_part=3,
        **({"kind": AssignmentKind.EXAM, "time_limit_minutes": 90} if exam else {}),
    )
    versions = {version.exercise.slug: version for version in latest_published_versions()}
    items = {
        slug: AssignmentItem.objects.create(assignment=assignment, exercise_version=versions[slug], position=index)
        for index, (slug, _) in enumerate((WEIGHTS, SYMBOLIC))
    }
    encoded = make_password(password)  # one hash for all: the sign-ins check it, not this
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"load-{run}-{index:05d}", password=encoded) for index in range(students)
    )
    Enrolment.objects.bulk_create(Enrolment(course=course, user=user, role=Role.STUDENT) for user in users)
    plan_students = []
    for index, user in enumerate(users):
        weights_kind, symbolic_kind = answer_kinds(index)
        if variants_stored:
            weights_variant = variant_get_or_create_for_item(item=items[WEIGHTS[0]], student=user)
            variant_get_or_create_for_item(item=items[SYMBOLIC[0]], student=user)
        else:
            _, params, _ = assignment_variant_draw(item=items[WEIGHTS[0]], student_id=user.pk)
            weights_variant = Variant(exercise_version=items[WEIGHTS[0]].exercise_version, params=params)
        plan_students.append({
            "username": user.username,
            "answers": [
                {"item": items[WEIGHTS[0]].pk, "part": WEIGHTS[1], "kind": weights_kind,
                 "answer": right_weights(weights_variant, offset=0.05 if weights_kind == "wrong" else 0.0)},
                {"item": items[SYMBOLIC[0]].pk, "part": SYMBOLIC[1], "kind": symbolic_kind,
                 "answer": SYMBOLIC_ANSWERS[symbolic_kind]},
            ],
        })
    plan = {
        "password": password,
        "assignment_url": reverse("assignment", args=[course.slug, assignment.slug]),
        "students": plan_students,
    }
    if exam:
        plan["start_url"] = reverse("exams:start", args=[course.slug, assignment.slug])
        plan["session_cookie"] = settings.SESSION_COOKIE_NAME
        for student, key in zip(plan_students, sessions_signed_in(users)):
            student["session"] = key
    return assignment, plan


VARIANT_MODES = ("prepared", "first-view", "stored")


def draws_prepare_line(*, assignment: Assignment, plan: dict, redis_url: str) -> str:
    """Keeps the plan's students' draws in the stack's cache, as the beat does before an
    exam opens, and says what that cost (before the run: not counted in its figures)."""
    from django_redis.cache import RedisCache

    student_ids = list(get_user_model().objects.filter(
        username__in=[student["username"] for student in plan["students"]]
    ).values_list("pk", flat=True))
    started, cpu_started = time.perf_counter(), time.process_time()
    kept = variant_draws_prepare(
        assignment=assignment, student_ids=student_ids, timeout=3600, into=RedisCache(redis_url, {})
    )
    return (f"variants drawn ahead, as the beat does before an exam opens: {kept} in "
            f"{time.perf_counter() - started:.1f} s, {time.process_time() - cpu_started:.1f} s CPU "
            "(before the run, not counted below)")


def sign_in_sample_build(*, count: int, run: str) -> tuple[list[str], str]:
    """``count`` students whose password is hashed with the production hasher (PBKDF2),
    for the sign-in figure measured apart; their usernames and the password."""
    password = secrets.token_urlsafe(12)
    encoded = make_password(password, hasher=PBKDF2)
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"login-{run}-{index:04d}", password=encoded) for index in range(count)
    )
    return [user.username for user in users], password


def sign_ins_measure(*, web, usernames: list[str], password: str, clients: int = 8) -> dict:
    """Sign each username in (the login page, then its POST) on ``clients`` threads; the
    wall time and the web processes' CPU time (from /proc) it took."""
    import requests

    from loadtest.exam_student import CSRF_FIELD

    def sign_in(username: str) -> None:
        with requests.Session() as http:
            page = http.get(web.url + "/login/", timeout=60)
            token = CSRF_FIELD.search(page.text).group(1)
            answer = http.post(web.url + "/login/", data={"username": username, "password": password,
                               "csrfmiddlewaretoken": token}, allow_redirects=False, timeout=60)
            if answer.status_code != 302:
                raise CommandError(f"sign-in of {username} answered {answer.status_code}")

    cpu_before = sessions_cpu_seconds({web.process.pid})
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(sign_in, usernames))
    seconds = time.perf_counter() - started
    cpu = sessions_cpu_seconds({web.process.pid}) - cpu_before
    return {"count": len(usernames), "seconds": seconds, "cpu_seconds": cpu}


def sessions_signed_in(users) -> list[str]:
    """A stored session per user, as a sign-in leaves it (one bulk insert); their keys."""
    backend = settings.AUTHENTICATION_BACKENDS[-1]
    expires = timezone.now() + timedelta(seconds=settings.SESSION_COOKIE_AGE)
    store = SessionStore()
    rows = [
        Session(
            session_key=get_random_string(32, "abcdefghijklmnopqrstuvwxyz0123456789"),
            session_data=store.encode({
                "_auth_user_id": str(user.pk), "_auth_user_backend": backend,
                "_auth_user_hash": user.get_session_auth_hash(),
            }),
            expire_date=expires,
        )
        for user in users
    ]
    Session.objects.bulk_create(rows)
    return [row.session_key for row in rows]


def outcome_problems(*, assignment: Assignment, plan: dict) -> list[str]:
    """Every planned answer stored once and finished as its kind requires; what is not."""
    expected = {
        (student["username"], answer["part"]): answer["kind"]
        for student in plan["students"] for answer in student["answers"]
    }
    stored = {}
    for username, part, status, correct in Submission.objects.filter(
        variant__assignment_item__assignment=assignment
    ).values_list("student__username", "part", "status", "correct"):
        if (username, part) in stored:
            return [f"{username} answered {part} twice"]
        stored[(username, part)] = (status, correct)
    problems = []
    if missing := len(expected.keys() - stored.keys()):
        problems.append(f"{missing} planned answers were never stored")
    wanted = {
        "right": (SubmissionStatus.GRADED, True),
        "wrong": (SubmissionStatus.GRADED, False),
        "hostile": (SubmissionStatus.COULD_NOT_GRADE, None),
    }
    wrong_outcomes = [
        f"{key[0]} {key[1]} ({kind}): {stored[key]}"
        for key, kind in expected.items() if key in stored and stored[key] != wanted[kind]
    ]
    if wrong_outcomes:
        problems.append(f"{len(wrong_outcomes)} answers finished wrongly, e.g. " + "; ".join(wrong_outcomes[:3]))
    return problems


def client_counts(folder: Path) -> dict:
    """What the virtual students counted (written by the locustfile when it quits)."""
    try:
        return json.loads((folder / "counts.json").read_text())
    except (OSError, ValueError):
        return {}


def answer_counts_line(*, assignment: Assignment, plan: dict, client: dict) -> str:
    """Answers planned, stored and graded (the database), and what the clients saw."""
    statuses = dict(
        Submission.objects.filter(variant__assignment_item__assignment=assignment)
        .values("status").annotate(count=Count("pk")).values_list("status", "count")
    )
    planned = sum(len(student["answers"]) for student in plan["students"])
    line = (
        f"answers: planned {planned}, stored {sum(statuses.values())}, "
        f"graded {statuses.get(SubmissionStatus.GRADED, 0)}, "
        f"could not grade {statuses.get(SubmissionStatus.COULD_NOT_GRADE, 0)}, "
        f"unfinished {sum(n for status, n in statuses.items() if status not in FINISHED)}"
    )
    if client:
        line += (
            f"; clients: acknowledged {client.get('acknowledged', 0)}, saw graded {client.get('graded', 0)}, "
            f"could not grade {client.get('could_not_grade', 0)}, retries {client.get('retries', 0)}, "
            f"students failed {client.get('students_failed', 0)}"
        )
    return line


@dataclass(frozen=True)
class MachineUse:
    """What a run cost the machine: CPU seconds per process group (``stack_cpu_meter``)
    over ``seconds`` of wall time, the reference loop's CPU ms before and after, and the
    load generator's own CPU seconds (it shares the machine; no student's browser does)."""

    spent: dict[str, float]
    seconds: float
    speed_ms: tuple[float, float]
    generator: float | None = None

def http_request_count(stats: dict) -> int:
    """The HTTP requests of a run in locust's statistics: its own records (type EXAM, such
    as submit→graded) and the total row left out."""
    return sum(
        int(row["Request Count"]) for name, row in stats.items() if name != "Aggregated" and row.get("Type") != "EXAM"
    )


def machine_use_lines(machine: MachineUse, *, requests: int, answers: int) -> list[str]:
    """Where the run's CPU went and how fast the machine was: latencies compare between
    runs only on a machine of the same speed, CPU per request on any."""
    total = sum(machine.spent.values())
    split = ", ".join(f"{name} {seconds:.1f}" for name, seconds in machine.spent.items())
    cores = os.cpu_count() or 1
    busy = total / max(machine.seconds, 1e-3)
    lines = [
        f"CPU during the run (s, /proc): {split} = {total:.1f} in {machine.seconds:.0f} s, "
        f"{busy:.2f} of {cores} cores on average; {1000 * total / max(requests, 1):.1f} ms per HTTP request "
        f"({requests}), {1000 * total / max(answers, 1):.1f} ms per answer ({answers})",
    ]
    if machine.generator is not None:
        lines.append(
            f"load generator (locust), not counted above: {machine.generator:.1f} s CPU, "
            f"{machine.generator / max(machine.seconds, 1e-3):.2f} cores on average, "
            f"{1000 * machine.generator / max(requests, 1):.1f} ms per HTTP request"
        )
    return lines + [
        f"machine speed: reference loop {machine.speed_ms[0]:.0f} ms CPU before the run, {machine.speed_ms[1]:.0f} after "
        "(grading.harness.reference_loop_ms; compare runs of similar speed)",
    ]


def cores_busy_line(cpu_samples: list[tuple[float, float, float]], *, every: float = 10.0) -> str:
    """Cores busy in each ``every`` seconds of the run, from (seconds, product CPU, machine
    busy CPU) samples: the product's processes but PostgreSQL, and the whole machine (the
    load generator and PostgreSQL included). A p95 set at the spike's peak shows here as
    the machine's cores all busy. A window in which the product's processes ended shows
    "–" for them."""
    windows = []
    start = cpu_samples[0]
    for sample in cpu_samples[1:]:
        if sample[0] - start[0] >= every - 0.5:
            elapsed = sample[0] - start[0]
            product = sample[1] - start[1]
            # Less than before: the product's processes ended within the window (the stack
            # stopping), their last share unread; the window says so instead of a negative.
            shown = f"{product / elapsed:.1f}" if product >= 0 else "–"
            windows.append(f"{shown}|{(sample[2] - start[2]) / elapsed:.1f}")
            start = sample
    return (
        f"cores busy every {every:g} s (product processes but PostgreSQL | whole machine, load generator "
        "included): " + " ".join(windows)
    )


def web_shape(text: str) -> tuple[int, int]:
    """``--web``'s "WORKERSxTHREADS" (e.g. "3x8", production's) as (workers, threads)."""
    workers, separator, threads = text.lower().partition("x")
    if not (separator and workers.isdigit() and threads.isdigit()):
        raise CommandError(f"--web takes WORKERSxTHREADS, e.g. 3x8 (got {text!r})")
    shape = int(workers), int(threads)
    if not (1 <= shape[0] <= 32 and 1 <= shape[1] <= 64):
        raise CommandError("--web takes 1 to 32 workers of 1 to 64 threads")
    return shape


def run_header_line(*, exam: bool, students: int, think, web: tuple[int, int], seconds: float, exit_code: int) -> str:
    """The report's first line: which spike, how many students, the think time, the web
    server's shape and how long locust ran."""
    spike = "exam start (signed in before, all press Start within the spawn time)" if exam else "sign-in spike"
    return (
        f"{spike}: {students} students, think {think[0]:g}–{think[1]:g} s, gunicorn {web[0]}x{web[1]}, "
        f"locust ran {seconds:.0f} s (exit {exit_code})"
    )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))] if ordered else float("nan")


# The requests of one student that may each spend MAX_RETRY_SECONDS retrying a refusal
# (Start, the two answers and an item page): the run must outlast them.
RETRIED_REQUESTS = 4


class QueueSampler(threading.Thread):
    """LLEN of the grading, practice and follow-up queues and of the pending follow-ups (and
    the unacked tasks) once a second."""

    def __init__(self, url: str, queues: tuple[str, ...], *, max_seconds: float):
        super().__init__(daemon=True)
        self.client = redis.Redis.from_url(url)
        self.queues = queues
        self.max_seconds = max_seconds
        self.samples: list[tuple[float, tuple[int, ...], int]] = []
        # (seconds, CPU seconds of the product's processes, busy CPU seconds of the machine)
        self.cpu_samples: list[tuple[float, float, float]] = []
        self.leaders: set[int] = set()  # the sessions of the product's processes, once started
        self.done = threading.Event()

    def sample_cpu(self, seconds: float) -> None:
        if self.leaders:
            self.cpu_samples.append((seconds, sessions_cpu_seconds(self.leaders), machine_busy_seconds()))

    def run(self):
        started = time.monotonic()
        while not self.done.is_set() and time.monotonic() - started < self.max_seconds:
            try:
                pipe = self.client.pipeline()
                for queue in self.queues:
                    pipe.llen(queue)
                pipe.hlen("unacked")
                *lengths, unacked = pipe.execute()
                self.samples.append((time.monotonic() - started, tuple(lengths), unacked))
            except redis.RedisError:
                pass
            self.sample_cpu(time.monotonic() - started)
            self.done.wait(1.0)


class Command(BaseCommand):
    help = "Exam-start spike of N students on the production stack (locust); exits 1 on any unmet check."

    def add_arguments(self, parser):
        parser.add_argument("--students", type=int, default=2000)
        parser.add_argument("--think", default="30,90", help="min,max seconds between answers")
        parser.add_argument("--login-seconds", type=float, default=5.0, help="all students start within this")
        parser.add_argument("--locust", default="", help="the locust executable (default: .venv-load/bin/locust)")
        parser.add_argument("--keep", help="a folder to keep the plan, locust's CSV and the queue samples in")
        parser.add_argument("--profile", choices=("sign-in", "exam-start"), default="sign-in",
                            help="sign-in: everyone signs in, then answers; exam-start: signed in before, "
                                 "the exam opens and everyone presses Start within --start-seconds")
        parser.add_argument("--start-seconds", type=float, default=60.0)
        parser.add_argument(
            "--variants", choices=VARIANT_MODES, default="prepared",
            help="prepared: each student's first view makes their variant from a draw kept before the "
                 "run, as the beat keeps an exam's draws before it opens (production); first-view: "
                 "the first view draws it; stored: every variant made before the run (no page draws)",
        )
        parser.add_argument("--login-sample", type=int, default=40,
                            help="exam-start: sign-ins with the production hasher, measured apart")
        parser.add_argument("--web", default="3x8",
                            help="gunicorn's WORKERSxTHREADS (production runs 3x8, docs/deploy.md)")

    def handle(self, *args, students, think, login_seconds, locust, keep, profile, start_seconds, login_sample,
               web, variants, **options):
        exam = profile == "exam-start"
        web_workers, web_threads = web_shape(web)
        if exam:
            login_seconds = start_seconds
        if connection.vendor != "postgresql":
            raise CommandError("the load test needs PostgreSQL (set DATABASE_URL)")
        if not 1 <= students <= 5000:
            raise CommandError("--students takes 1 to 5000")
        think_range = tuple(float(value) for value in think.split(","))
        if len(think_range) != 2 or not 0 <= think_range[0] <= think_range[1] <= 600:
            raise CommandError("--think takes min,max seconds (0 to 600)")
        locust = locust or str(Path(settings.BASE_DIR) / ".venv-load" / "bin" / "locust")
        if not shutil.which(locust):
            raise CommandError(f"{locust} not found: `make load` installs requirements-load.txt into .venv-load")
        folder = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="attnquiz-load-"))
        folder.mkdir(parents=True, exist_ok=True)

        run = secrets.token_hex(3)
        started = time.perf_counter()
        assignment, plan = load_course_build(
            students=students, password=secrets.token_urlsafe(12), run=run, exam=exam,
            variants_stored=variants == "stored",
        )
        plan["think"] = think_range
        sign_in_sample = sign_in_sample_build(count=login_sample, run=run) if exam and login_sample else None
        (folder / "plan.json").write_text(json.dumps(plan))
        statistics_refresh()
        self.stdout.write(f"load course: {students} students, 2 answers each, built in {time.perf_counter() - started:.0f} s")

        speed_before = reference_loop_ms()  # before the stack runs: this machine's speed now
        broker = RedisServer()
        broker.start()
        if variants == "prepared":
            self.stdout.write(draws_prepare_line(assignment=assignment, plan=plan, redis_url=broker.url))
        env = stack_env(
            database_url=database_url(connection.settings_dict, vendor=connection.vendor),
            redis_url=broker.url, secret_key=settings.SECRET_KEY,
            variant_seed_secret=settings.VARIANT_SEED_SECRET,
        )
        # A worker per queue a grade's work runs on (the grading one at concurrency 2).
        queues = tuple(grade_queues())
        workers = [CeleryWorker(broker_url=broker.url, database_url=env["DATABASE_URL"]) for _ in queues]
        for worker in workers:
            worker.env.update(env)
        beat = CeleryBeat(env=env)
        web = Gunicorn(env=env, workers=web_workers, threads=web_threads)
        sign_ins = None
        # Users quit when done; this only bounds a run whose server stalls. Each refused
        # request of a student (Start and the answers) may be retried for MAX_RETRY_SECONDS.
        run_seconds = int(login_seconds + 2 * think_range[1] + 240 + RETRIED_REQUESTS * MAX_RETRY_SECONDS)
        # The grades' follow-ups wait in a Redis list between drains: sampled like a queue.
        sampled = (*queues, settings.FOLLOWUP_PENDING_KEY)
        sampler = QueueSampler(broker.url, sampled, max_seconds=run_seconds + DRAIN_SECONDS + 120)
        try:
            for worker, queue in zip(workers, queues):
                queue_worker_start(worker, queue)
            beat.start()
            web.start()
            if sign_in_sample:
                sign_ins = sign_ins_measure(web=web, usernames=sign_in_sample[0], password=sign_in_sample[1])
            sampler.leaders = {web.process.pid, beat.process.pid, broker.process.pid,
                               *(worker.process.pid for worker in workers)}
            sampler.start()
            meter = stack_cpu_meter(
                connection=connection, web=web, workers=dict(zip(queues, workers)), beat=beat,
                redis_pid=broker.process.pid,
            )
            meter.start()
            spike_started = time.monotonic()
            children_before = children_cpu_seconds()
            completed = subprocess.run(
                [locust, "-f", str(Path(settings.BASE_DIR) / "loadtest" / "locustfile.py"), "--headless",
                 "--host", web.url, "--users", str(students),
                 "--spawn-rate", str(max(1.0, students / max(login_seconds, 0.1))),
                 "--run-time", f"{run_seconds}s", "--stop-timeout", "10", "--csv", str(folder / "locust"),
                 "--only-summary", "--loglevel", "WARNING"],
                env=dict(os.environ, LOAD_PLAN=str(folder / "plan.json"), LOAD_COUNTS=str(folder / "counts.json")),
                cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=run_seconds + 120,
            )
            spike_seconds = time.monotonic() - spike_started
            generator_cpu = children_cpu_seconds() - children_before  # locust, waited for by run()
            spent = meter.stop()  # before the stop: a process that ended takes its CPU time along
            web.stop()  # no request still in flight may store an answer after the count
            drained = self.wait_drained(assignment)
            sampler.done.set()
            sampler.join(timeout=5)
        finally:
            web.stop()
            beat.cleanup()
            for worker in workers:
                worker.stop()
            broker.cleanup()
        (folder / "locust.out").write_text(completed.stdout + completed.stderr)
        (folder / "queue.csv").write_text(
            "seconds," + ",".join(sampled) + ",unacked\n"
            + "".join(f"{t:.0f},{','.join(map(str, lengths))},{unacked}\n" for t, lengths, unacked in sampler.samples)
        )
        failed = self.report(
            assignment=assignment, plan=plan, folder=folder, locust=completed, drained=drained,
            spike_seconds=spike_seconds, sampler=sampler, queues=sampled, exam=exam, sign_ins=sign_ins,
            web_shape_used=(web.workers, web.threads),
            machine=MachineUse(spent=spent, seconds=spike_seconds, speed_ms=(speed_before, reference_loop_ms()),
                                generator=generator_cpu),
        )
        self.stdout.write(f"plan, locust's CSV, its output and the queue samples: {folder}")
        if failed:
            raise SystemExit(1)

    def wait_drained(self, assignment) -> float | None:
        """Seconds from the last answer stored to every answer finished, if within the limit."""
        pending = Submission.objects.filter(variant__assignment_item__assignment=assignment)
        try:
            wait_until(
                lambda: not pending.exclude(status__in=FINISHED).exists(),
                timeout=DRAIN_SECONDS + 30, interval=0.5, what="the queue to drain",
            )
        except TimeoutError:
            return None
        last = pending.order_by("-created_at").values_list("created_at", flat=True).first()
        finished = pending.order_by("-graded_at").values_list("graded_at", flat=True).first()
        return (finished - last).total_seconds() if last and finished else 0.0

    def report(self, *, assignment, plan, folder, locust, drained, spike_seconds, sampler, queues, exam=False,
               sign_ins=None, machine: MachineUse | None = None, web_shape_used: tuple[int, int] = (3, 8)) -> bool:
        stats = {}
        stats_file = folder / "locust_stats.csv"
        if stats_file.exists():
            with stats_file.open() as handle:
                stats = {row["Name"]: row for row in csv.DictReader(handle)}
        failures = sum(int(row["Failure Count"]) for name, row in stats.items() if name != "Aggregated")
        server = list(
            Submission.objects.filter(variant__assignment_item__assignment=assignment)
            .exclude(graded_at=None).values_list("created_at", "graded_at", "status")
        )
        graded_ms = [1000 * (g - c).total_seconds() for c, g, status in server if status == SubmissionStatus.GRADED]
        hostile_ms = [1000 * (g - c).total_seconds() for c, g, status in server if status != SubmissionStatus.GRADED]

        lines = [
            "\n" + run_header_line(exam=exam, students=len(plan["students"]), think=plan["think"], web=web_shape_used,
                                   seconds=spike_seconds, exit_code=locust.returncode),
            f"{'request':<22}{'count':>7}{'fail':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}",
        ]
        if sign_ins:
            lines.insert(1, (
                f"sign-ins with the production hasher ({PBKDF2}), apart: {sign_ins['count']} in {sign_ins['seconds']:.1f} s "
                f"= {sign_ins['count'] / sign_ins['seconds']:.1f}/s; web CPU {sign_ins['cpu_seconds']:.1f} s = "
                f"{sign_ins['count'] / max(sign_ins['cpu_seconds'], 1e-3):.1f} sign-ins per CPU-second (per core)"
            ))
        retried = sorted(name for name in stats if name.startswith("retried: "))
        for name in (*PAGES, "submit", "submit→graded", *retried):
            row = stats.get(name)
            if row:
                lines.append(
                    f"{name:<22}{row['Request Count']:>7}{row['Failure Count']:>6}{row['50%']:>9}{row['95%']:>9}"
                    f"{row['99%']:>9}{float(row['Max Response Time']):>9.0f}"
                )
        for label, values in (("stored→graded (db)", graded_ms), ("hostile→could-not (db)", hostile_ms)):
            if values:
                lines.append(
                    f"{label:<22}{len(values):>7}{'':>6}{percentile(values, .5):>9.0f}{percentile(values, .95):>9.0f}"
                    f"{percentile(values, .99):>9.0f}{max(values):>9.0f}"
                )
        lines.append(answer_counts_line(assignment=assignment, plan=plan, client=client_counts(folder)))
        if machine is not None:
            lines += machine_use_lines(machine, requests=http_request_count(stats), answers=len(server))
        if sampler.cpu_samples:
            lines.append(cores_busy_line(sampler.cpu_samples))
        for position, queue in enumerate(queues):
            depth = [lengths[position] for _, lengths, _ in sampler.samples]
            lines.append(
                f"queue {queue!r} depth, sampled each second: max {max(depth, default=0)}; every 10 s: "
                + " ".join(str(value) for value in depth[::10])
            )
        problems = []
        if locust.returncode != 0:
            problems.append(f"locust exited {locust.returncode}: {(locust.stderr or locust.stdout)[-400:].strip()}")
        if failures:
            problems.append(f"{failures} failed requests (see {folder}/locust_failures.csv)")
        if not stats:
            problems.append("locust wrote no statistics")
        problems += outcome_problems(assignment=assignment, plan=plan)
        if drained is None:
            problems.append(f"answers still unfinished {DRAIN_SECONDS + 30} s after locust ended")
        elif drained > DRAIN_SECONDS:
            problems.append(f"the queue drained {drained:.0f} s after the last answer (limit {DRAIN_SECONDS} s)")
        submit = stats.get("submit")
        submit_limit = EXAM_START_TARGETS_MS["submit"] if exam else SUBMIT_P95_MS
        if submit and float(submit["95%"]) >= submit_limit:
            problems.append(f"submit p95 {submit['95%']} ms (limit {submit_limit} ms)")
        if exam:
            for name in ("assignment page", "exercise page", "start"):
                row = stats.get(name)
                limit = EXAM_START_TARGETS_MS["start" if name == "start" else "pages"]
                if row and float(row["95%"]) > limit:
                    problems.append(f"{name} p95 {row['95%']} ms (target {limit} ms)")
        lines.append(
            "drained " + (f"{drained:.1f} s after the last answer" if drained is not None else "NOT within the limit")
        )
        lines += [f"UNMET: {problem}" for problem in problems] or ["all checks met"]
        self.stdout.write("\n".join(lines))
        return bool(problems)
