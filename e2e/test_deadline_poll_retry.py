"""Browser test: an open exam page whose deadline poll is refused (429, asked too often)
says nothing to the student, asks again after the reply's Retry-After rather than at its
regular interval, and still learns an extension."""

from __future__ import annotations

import time

import pytest
from django.core.cache import caches
from django.urls import reverse

from e2e.conftest import log_in

pytestmark = pytest.mark.browser

WORKED_EXAMPLE = "attention-weights-one-query"


@pytest.fixture
def open_exam(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exams import services
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    demo = demo_course_ensure()
    exam = demo.assignment
    exam.kind, exam.time_limit_minutes = "exam", 10
    exam.save()
    student = demo.course.enrolments.get(user__username="student1").user
    services.attempt_start(assignment=exam, student=student)
    # Each page asks every 1-1.2 s; the limit lets 2 through, then one every 4 s.
    settings.EXAM_DEADLINE_POLL_SECONDS = 1
    settings.EXAM_DEADLINE_POLL_BURST, settings.EXAM_DEADLINE_POLL_PER_SECOND = 2, 0.25
    settings.EXAM_DEADLINE_POLL_USER_BURST, settings.EXAM_DEADLINE_POLL_USER_PER_SECOND = 100, 10.0
    keys = [f"token-bucket:exam-deadline:{student.pk}",
            f"token-bucket:exam-deadline:{student.pk}:{exam.course.slug}:{exam.slug}"]
    caches["default"].delete_many(keys)
    yield exam, student
    caches["default"].delete_many(keys)


def test_a_refused_poll_is_asked_again_after_retry_after_and_shows_nothing(page, watch, open_exam):
    from exams.services_accommodations import accommodation_extend

    exam, student = open_exam
    watch.expect_console_error(r"status of 429")  # Chromium logs every 4xx reply
    url = reverse("exams:deadline", args=[exam.course.slug, exam.slug])
    replies = []
    page.on("response", lambda response: url in response.url and replies.append(
        (time.monotonic(), response.status, response.headers.get("retry-after"))
    ))
    log_in(page, "student1")
    item = exam.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    page.goto(reverse("exercise", args=[item.pk]))
    page.evaluate("window.aqSamePage = true")

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(
        status == 429 for _, status, _ in replies[:-1]
    ):
        page.wait_for_timeout(200)
    statuses = [status for _, status, _ in replies]
    assert statuses[:3] == [200, 200, 429], statuses
    refused_at, _, retry_after = replies[2]
    asked_again_at, again_status, _ = replies[3]
    # Not at the regular 1-1.2 s: after the Retry-After (at most a fifth more, as polls spread).
    assert int(retry_after) >= 2
    assert int(retry_after) <= asked_again_at - refused_at < int(retry_after) * 1.2 + 1
    assert again_status == 200

    clock = page.locator("#clock")
    assert clock.locator("[data-countdown-alert]").inner_text() == ""
    assert "is-up" not in clock.get_attribute("class") and "is-taken-over" not in clock.get_attribute("class")
    assert page.evaluate("window.aqSamePage") is True  # no reload

    # Refused every other time, the page still learns an extension within seconds.
    accommodation_extend(assignment=exam, student=student, minutes=5, actor=None)
    page.wait_for_function(
        "() => /^1[45]:/.test(document.querySelector('[data-countdown-text]').textContent)", timeout=15_000
    )
    assert clock.locator("[data-countdown-alert]").inner_text() == ""
