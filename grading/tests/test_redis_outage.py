"""Redis stopped while students browse and submit: nothing 500s, nothing is lost.

The production stack in miniature: a private redis-server, gunicorn with production
settings, a real Celery worker, PostgreSQL. Students browse and post answers before,
during and after an outage. During it every page answers 200 (or a styled 503), every
submit is either stored (200) or refused with a 503 and Retry-After; once Redis is back,
the sweeper sends what was left queued and each stored answer is graded exactly once.

``ATTNQUIZ_OUTAGE_SECONDS=30`` (and ``ATTNQUIZ_OUTAGE_STUDENTS``) stretch it (docs/deploy.md quotes that run);
the default keeps the test to a few seconds of outage.
"""

from __future__ import annotations

import http.client
import os
import threading
import time
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from courses.models import AssignmentItem, Enrolment, Role
from exercises import engine
from exercises.services import variant_get_or_create_for_item
from grading import services
from grading.harness import CeleryWorker, Gunicorn, stack_env, wait_until
from grading.models import Submission, SubmissionStatus

from .conftest import WORKED_EXAMPLE, worker_database_url

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("pipeline")]

OUTAGE_SECONDS = float(os.environ.get("ATTNQUIZ_OUTAGE_SECONDS", "4"))
STUDENTS = int(os.environ.get("ATTNQUIZ_OUTAGE_STUDENTS", "4"))
CSRF = "outagecsrf" + "0" * 22  # any 32-character secret: cookie and header must agree
FINISHED = (SubmissionStatus.GRADED, SubmissionStatus.COULD_NOT_GRADE)


def wrong_answer(variant, part: str, offset: float = 0.5) -> str:
    """The right shape, wrong values: graded (not a format error), never solves the part."""
    spec = engine.spec_from_json(variant.exercise_version.spec)
    values = np.asarray(engine.reference_answers(spec, variant.params)[part], dtype=float) + offset
    return "[" + ", ".join(f"{v:.4f}" for v in np.ravel(values)) + "]"


class StudentClient:
    """One student's browser: pages, posts and result polls over one keep-alive connection."""

    def __init__(self, *, port: int, session: str, item_id: int, variant):
        self.port, self.session, self.item_id, self.variant = port, session, item_id, variant
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.posts_left = {"weights": 5, "output": 5}  # the demo assignment's attempts per part

    def request(self, method: str, path: str, body: str | None = None) -> tuple[int, dict, str]:
        headers = {
            "Cookie": f"{settings.SESSION_COOKIE_NAME}={self.session}; {settings.CSRF_COOKIE_NAME}={CSRF}",
            "X-CSRFToken": CSRF,
            "HX-Request": "true",
            "Referer": f"http://127.0.0.1:{self.port}/",
        }
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
        except (http.client.HTTPException, OSError):  # a dropped keep-alive: reconnect once
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()

    def next_part(self) -> str | None:
        return next((part for part, left in self.posts_left.items() if left), None)

    def post_answer(self, part: str):
        self.posts_left[part] -= 1
        # A new answer each time: the same one again would be refused as unchanged.
        answer = wrong_answer(self.variant, part, offset=0.5 + self.posts_left[part] / 10_000)
        body = "answer=" + answer.replace(" ", "+").replace(",", "%2C")
        return self.request("POST", reverse("submit", args=[self.variant.pk, part]), body)


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts: Counter = Counter()
        self.problems: list[str] = []
        self.seconds: dict[tuple[str, str], list[float]] = {}

    def timed(self, phase: str, kind: str, seconds: float) -> None:
        with self.lock:
            self.seconds.setdefault((phase, kind), []).append(seconds)

    def timings(self) -> str:
        parts = []
        for (phase, kind), values in sorted(self.seconds.items()):
            values = sorted(values)
            parts.append(f"{phase} {kind} p50 {values[len(values) // 2] * 1000:.0f} ms, "
                         f"max {values[-1] * 1000:.0f} ms")
        return "; ".join(parts)

    def page(self, phase: str, path: str, status: int, body: str) -> None:
        with self.lock:
            self.counts[(phase, "page", status)] += 1
            if status == 503 and "temporarily unavailable" not in body:
                self.problems.append(f"{phase} {path}: an unstyled 503")
            elif status not in (200, 503):
                self.problems.append(f"{phase} {path}: {status} {body[:200]}")

    def submit(self, phase: str, status: int, headers: dict, body: str) -> None:
        with self.lock:
            self.counts[(phase, "submit", status)] += 1
            if status == 503 and "Retry-After" not in headers:
                self.problems.append(f"{phase} submit: 503 without Retry-After")
            elif status not in (200, 503):
                self.problems.append(f"{phase} submit: {status} {body[:200]}")

    def count(self, phase: str, kind: str, status: int) -> int:
        return self.counts[(phase, kind, status)]


def browse_and_submit(student: StudentClient, tally: Tally, phase: str, until: float) -> None:
    """Dashboard, exercise page, an answer and a poll of its result, until ``until``."""
    try:
        _browse_and_submit(student, tally, phase, until)
    except Exception as error:  # a dropped connection or a timeout is a failure too
        with tally.lock:
            tally.problems.append(f"{phase}: {error!r}")
    finally:
        connection.close()  # this thread's own database connection


KEPT_FOR_LATER = {"before": 6, "outage": 1}  # of the 10 attempts: at least 4 before, 5 in the outage, 1 after


def _browse_and_submit(student: StudentClient, tally: Tally, phase: str, until: float) -> None:
    paths = [reverse("dashboard"), reverse("exercise", args=[student.item_id])]
    while True:  # at least one round each phase, however late this thread starts
        for path in paths:
            started = time.monotonic()
            status, _, body = student.request("GET", path)
            tally.timed(phase, "page", time.monotonic() - started)
            tally.page(phase, path, status, body)
        part = student.next_part()
        # Attempts kept for the later phases: on a fast machine the first 1.5 s used up all
        # but the last, and the outage had none left to show that answers are stored then.
        if sum(student.posts_left.values()) <= KEPT_FOR_LATER.get(phase, 0):
            part = None
        if part is None:
            time.sleep(0.2)
            if time.monotonic() >= until:
                return
            continue
        started = time.monotonic()
        status, headers, body = student.post_answer(part)
        tally.timed(phase, "submit", time.monotonic() - started)
        tally.submit(phase, status, headers, body)
        latest = Submission.objects.filter(student_id=student.variant.student_id).order_by("-pk").first()
        if latest is not None:
            path = reverse("submission", args=[latest.pk]) + "?wait=1"
            status, _, body = student.request("GET", path)
            tally.page(phase, path, status, body)
        if time.monotonic() >= until:
            return


def run_phase(students, tally: Tally, phase: str, seconds: float) -> None:
    until = time.monotonic() + seconds
    threads = [
        threading.Thread(target=browse_and_submit, args=(student, tally, phase, until))
        for student in students
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 60)


@pytest.fixture
def stack(broker, transactional_db, demo):
    """gunicorn (production settings) and a Celery worker on the private Redis."""
    database_url = worker_database_url()
    env = stack_env(
        database_url=database_url, redis_url=broker.url, secret_key=settings.SECRET_KEY,
        variant_seed_secret=settings.VARIANT_SEED_SECRET,
    )
    worker = CeleryWorker(broker_url=broker.url, database_url=database_url)
    worker.env.update(env, GRADING_STALE_AFTER_SECONDS="3600")  # the test runs the sweeper
    web = Gunicorn(env=env, workers=2, threads=4)
    try:
        starting = threading.Thread(target=web.start)  # both start-ups at once
        starting.start()
        worker.start(concurrency=1)
        starting.join()
        yield web, worker
    finally:
        web.stop()
        worker.stop()


def students_of(demo, web, count: int) -> list[StudentClient]:
    item = AssignmentItem.objects.get(
        assignment=demo.assignment, exercise_version__exercise__slug=WORKED_EXAMPLE
    )
    students = []
    for index in range(count):
        user = get_user_model().objects.create(username=f"outage-{index}")
        Enrolment.objects.create(course=demo.course, user=user, role=Role.STUDENT)
        client = Client()
        client.force_login(user)
        students.append(StudentClient(
            port=web.port, session=client.cookies[settings.SESSION_COOKIE_NAME].value,
            item_id=item.pk, variant=variant_get_or_create_for_item(item=item, student=user),
        ))
    return students


def test_redis_outage_while_students_browse_and_submit(stack, broker, demo, capsys):
    web, worker = stack
    students = students_of(demo, web, STUDENTS)
    tally = Tally()

    run_phase(students, tally, "before", 1.5)
    broker.stop()
    outage_started = time.monotonic()
    run_phase(students, tally, "outage", OUTAGE_SECONDS)
    outage_seconds = time.monotonic() - outage_started
    stored_during_outage = list(
        Submission.objects.filter(status=SubmissionStatus.QUEUED).values_list("pk", flat=True)
    )
    broker.start()  # the same port, empty: every task sent before the outage is gone
    run_phase(students, tally, "after", 1.5)

    # The sweeper (beat's requeue_stale_submissions) sends what the outage left queued.
    wait_until(lambda: worker.process.poll() is None, timeout=1, what="the worker to survive")
    services.submissions_requeue_stale(older_than=timedelta(0))
    student_ids = [student.variant.student_id for student in students]
    stored = Submission.objects.filter(student_id__in=student_ids)
    wait_until(
        lambda: not stored.exclude(status__in=FINISHED).exists(), timeout=30,
        what="every stored answer to be graded",
    )

    with capsys.disabled():
        print(f"\nRedis outage of {outage_seconds:.1f} s, {STUDENTS} students: "
              + ", ".join(f"{phase} {kind} {status}: {n}" for (phase, kind, status), n in sorted(tally.counts.items()))
              + f"; {len(stored_during_outage)} answers stored during the outage; "
              + tally.timings())
    assert tally.problems == []
    for phase in ("before", "outage", "after"):
        assert tally.count(phase, "page", 200) > 0, phase
        assert tally.count(phase, "submit", 200) > 0, phase  # answers are stored, not refused
    posted = sum(tally.count(phase, "submit", 200) for phase in ("before", "outage", "after"))
    assert stored.count() == posted
    assert set(stored.values_list("status", flat=True)) == {SubmissionStatus.GRADED}
    # Exactly once: one delivery each, including those the sweeper sent after the outage.
    assert set(stored.values_list("deliveries", flat=True)) == {1}
    assert set(stored_during_outage) <= set(stored.values_list("pk", flat=True))
    assert worker.process.poll() is None, "".join(worker.log[-40:])
