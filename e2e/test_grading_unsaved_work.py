"""In the browser: a grader who ticked a rubric item or wrote a comment and then leaves the
answer's page without saving ("n" for next waiting, a link, back) is asked first, in the
browser's own words; staying keeps what they did. Before, "n" dropped it without a word.
Leaving an untouched page, or saving, asks nothing."""

from __future__ import annotations

import re

import pytest

from e2e.conftest import log_in

pytestmark = pytest.mark.browser

COURSE = "attention-101"


@pytest.fixture
def two_waiting_answers(transactional_db, settings):
    from authoring.tests.factories import submission_add, user_create, variant_for
    from courses.models import Enrolment, Role
    from courses.services import demo_course_ensure
    from exercises import engine
    from exercises.services_bank import bank_load
    from exercises.specs import version_spec
    from grading.models import SubmissionStatus
    from instructor import services_rubrics

    settings.GRADING_MODE = "inline"
    bank_load()
    site = demo_course_ensure()
    item = site.assignment.items.get(exercise_version__exercise__slug="equal-keys")
    services_rubrics.rubric_create(course=site.course, item=item, part="why_equal",
                                   criteria=[("Says equal keys give equal scores", 2)])
    answers = []
    for index, name in enumerate(("ada", "grace"), start=1):
        user = user_create(name)
        Enrolment.objects.create(course=site.course, user=user, role=Role.STUDENT)
        params = engine.draw_variant(version_spec(item.exercise_version), index).params
        answers.append(submission_add(variant_for(item, user, params=params, seed=index), "why_equal",
                                      f"Equal ({name}).", awarded=None, status=SubmissionStatus.MANUAL))
    return item, answers


def answer_url(item, answer) -> str:
    return f"/teach/{COURSE}/grading/{item.pk}/why_equal/answers/{answer.pk}/"


def test_leaving_with_a_tick_not_saved_asks_first_and_staying_keeps_it(page, two_waiting_answers):
    item, answers = two_waiting_answers
    log_in(page, "ta")
    page.goto(answer_url(item, answers[0]))
    dialogs = []

    def stay(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", stay)
    page.keyboard.press("1")  # tick the first item
    assert page.locator('#rubric-grade-form input[data-shortcut="1"]').is_checked()
    page.keyboard.press("n")  # next waiting
    page.wait_for_timeout(500)
    assert dialogs == ["beforeunload"]
    assert page.url.endswith(answer_url(item, answers[0]))
    assert page.locator('#rubric-grade-form input[data-shortcut="1"]').is_checked()


def test_leaving_an_untouched_answer_or_saving_asks_nothing(page, two_waiting_answers):
    item, answers = two_waiting_answers
    log_in(page, "ta")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    page.goto(answer_url(item, answers[0]))
    page.keyboard.press("n")
    page.wait_for_url(re.compile(rf"/why_equal/answers/{answers[1].pk}/$"))
    page.locator("#grade-comment").fill("Clear.")
    page.keyboard.press("Escape")
    page.locator('#rubric-grade-form input[data-shortcut="1"]').check()
    page.locator("#rubric-grade-form button[type=submit]").first.click()
    page.wait_for_load_state()
    assert dialogs == []
    answers[1].refresh_from_db()
    assert answers[1].manual_grades.count() == 1
