"""In the browser: what is hard to take back asks first. Dropping a student, removing an
exercise from an assignment and archiving a course each name what they will do in a
confirmation; dismissing it sends nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from e2e.conftest import log_in

pytestmark = pytest.mark.browser

COURSE = "attention-101"


@pytest.fixture
def teaching_site(transactional_db, settings):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    return demo_course_ensure()


def _answer_next_dialog(page, *, accept: bool, seen: list[str]) -> None:
    def handle(dialog):
        seen.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()
    page.once("dialog", handle)


def test_dropping_a_student_asks_first_and_a_dismissal_keeps_them(page, teaching_site):
    from courses.models import Enrolment, EnrolmentStatus

    log_in(page, "instructor")
    page.goto(reverse("courses:people", args=[COURSE]))
    drop = page.get_by_role("button", name="Drop student2")
    seen: list[str] = []
    _answer_next_dialog(page, accept=False, seen=seen)
    drop.click()
    page.wait_for_timeout(300)
    assert seen == ["Drop student2 from the course? Their answers are kept and “Enrol again” brings them back."]
    enrolment = Enrolment.objects.get(course__slug=COURSE, user__username="student2")
    assert enrolment.status == EnrolmentStatus.ACTIVE
    _answer_next_dialog(page, accept=True, seen=seen)
    with page.expect_navigation():
        drop.click()
    enrolment.refresh_from_db()
    assert enrolment.status != EnrolmentStatus.ACTIVE


def test_archiving_a_course_asks_first(page, teaching_site):
    from courses.models import Course

    log_in(page, "instructor")
    page.goto(reverse("courses:settings", args=[COURSE]))
    seen: list[str] = []
    _answer_next_dialog(page, accept=False, seen=seen)
    page.get_by_role("button", name="Archive (read-only, still exportable)").click()
    page.wait_for_timeout(300)
    assert seen == [
        "Archive Attention, from scratch? It becomes read-only at once: no answers, no changes, "
        "running exams included. You can bring it back later."
    ]
    assert Course.objects.get(slug=COURSE).is_archived is False
