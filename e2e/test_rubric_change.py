"""In the browser: a TA adds a rubric item after answers were graded with the rubric. The
page asks first with the numbers and changes nothing; confirming scores every graded answer
again, and the answers' points read on the new scale."""

from __future__ import annotations

import re

import pytest

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


def test_a_ta_adding_an_item_is_asked_and_the_graded_answers_follow(page, teaching_site, live_server):
    from authoring.tests.factories import submission_add, user_create, variant_for
    from courses.models import Enrolment, Role
    from exercises import engine
    from exercises.specs import version_spec
    from grading.models import SubmissionStatus
    from instructor import services_rubrics
    from instructor.models import ManualGrade

    item = teaching_site.assignment.items.get(exercise_version__exercise__slug="equal-keys")
    rubric = services_rubrics.rubric_create(
        course=teaching_site.course, item=item, part="why_equal",
        criteria=[("Says equal keys give equal scores", 2), ("Says the value changes across queries", 1)],
    )
    first = rubric.items.first()
    ta = Enrolment.objects.filter(course=teaching_site.course, role=Role.TEACHING_ASSISTANT).first().user
    answers = []
    for index, name in enumerate(("ada", "grace", "alan"), start=1):
        user = user_create(name)
        Enrolment.objects.create(course=teaching_site.course, user=user, role=Role.STUDENT)
        params = engine.draw_variant(version_spec(item.exercise_version), index).params
        answer = submission_add(variant_for(item, user, params=params, seed=index), "why_equal", f"Equal ({name}).",
                                awarded=None, status=SubmissionStatus.MANUAL)
        services_rubrics.submission_grade_with_rubric(submission=answer, rubric=rubric, grader=ta, item_ids=[first.pk])
        answers.append(answer)
    grades = ManualGrade.objects.count()

    log_in(page, "ta")
    page.goto(f"/teach/{COURSE}/grading/{item.pk}/why_equal/")
    page.locator("#rubric-edit summary").click()
    form = page.locator("#rubric-add")
    form.get_by_label("Item").fill("TA item")
    form.get_by_label("Points").fill("100")
    form.get_by_role("button", name="Add item").click()
    page.wait_for_load_state()
    question = page.locator("#rubric-confirmation")
    text = question.inner_text()
    assert text.startswith("Nothing is changed yet. 3 answers were graded with this rubric, out of 3 points; "
                           "with “TA item” (+100) they are scored out of 103: 3 scores change (e.g. 66.7% → 1.9%).")
    assert rubric.items.count() == 2 and ManualGrade.objects.count() == grades
    question.get_by_role("button", name="Add the item and score the answers again").click()
    page.wait_for_url(re.compile(r"/grading/\d+/why_equal/$"))
    assert "Added the item." in page.content()
    assert rubric.items.count() == 3 and ManualGrade.objects.count() == grades + 3
    for answer in answers:
        answer.refresh_from_db()
        assert answer.score == pytest.approx(2 / 103)
    assert page.locator("#rubric-out-of-step").count() == 0
    header = page.locator("#question-answers thead").inner_text()
    assert re.search(r"Points\s*/", header)
