"""Browser tests: an open exam page learns from its deadline poll that the course was
archived (it stops polling and reloads into the read-only page, without a clock), and that
its attempt was removed (a JSON 404: it reloads once, to the assignment page's Start
button, and polls no more)."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.urls import reverse
from playwright.sync_api import expect

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
    settings.EXAM_DEADLINE_POLL_SECONDS = 1  # each page asks every 1-1.2 s
    keys = [f"token-bucket:exam-deadline:{student.pk}",
            f"token-bucket:exam-deadline:{student.pk}:{exam.course.slug}:{exam.slug}"]
    caches["default"].delete_many(keys)
    yield exam, student
    caches["default"].delete_many(keys)


def _open_exercise(page, exam):
    """The exam's exercise page, open and polling: (its path, the deadline polls' statuses)."""
    url = reverse("exams:deadline", args=[exam.course.slug, exam.slug])
    polls = []
    page.on("response", lambda response: url in response.url and polls.append(response.status))
    log_in(page, "student1")
    item = exam.items.get(exercise_version__exercise__slug=WORKED_EXAMPLE)
    path = reverse("exercise", args=[item.pk])
    page.goto(path)
    expect(page.locator("#clock[data-deadline-url]")).to_have_count(1)
    page.evaluate("window.aqSamePage = true")  # gone once the page reloads
    return path, polls


def _wait_for_reload(page):
    page.wait_for_function("() => window.aqSamePage === undefined", timeout=15_000)
    page.wait_for_load_state("load")


def test_an_open_exam_page_reloads_read_only_once_the_course_is_archived(page, watch, open_exam):
    from courses.services import course_archive

    exam, _ = open_exam
    path, polls = _open_exercise(page, exam)
    expect(page.locator("form.answer-form").first).to_be_visible()
    page.wait_for_timeout(1500)
    assert polls and set(polls) == {200}, polls  # it polls, and nothing changed yet

    course_archive(course=exam.course, confirmed=True)
    _wait_for_reload(page)
    assert page.url.endswith(path)  # the same page, reloaded, not sent elsewhere
    expect(page.locator("#archived-notice")).to_contain_text(
        "This course was archived by its instructors; it takes no more answers."
    )
    expect(page.locator("form.answer-form")).to_have_count(0)
    expect(page.locator("#clock")).to_have_count(0)
    asked = len(polls)
    page.wait_for_timeout(2500)  # two poll intervals and more
    assert len(polls) == asked, "the read-only page polls no more"
    assert polls[-1] == 200  # the poll that told it was answered, not refused


def test_an_open_exam_page_whose_attempt_was_removed_reloads_once_to_start(page, watch, open_exam):
    from exams.models import AssignmentAttempt

    watch.expect_console_error(r"status of 404")  # Chromium logs every 4xx reply
    exam, student = open_exam
    _, polls = _open_exercise(page, exam)
    AssignmentAttempt.objects.filter(assignment=exam, student=student).delete()
    _wait_for_reload(page)
    # The exercise page without an attempt sends the student to the exam's Start.
    assert page.url.endswith(reverse("assignment", args=[exam.course.slug, exam.slug]))
    expect(page.get_by_role("button", name="Start the exam")).to_be_visible()
    page.wait_for_timeout(2500)
    assert polls.count(404) == 1, polls  # one 404, one reload, then no poll at all
    assert polls[-1] == 404
