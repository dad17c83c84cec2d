"""In the browser, under the enforced CSP: the analytics page flags a harder variant family,
the assignment editor adds a pool of interchangeable exercises for one skill after a
preview, and an author runs the pre-flight spread."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def site(transactional_db):
    from courses.services import demo_course_ensure
    from exercises.services_bank import bank_load

    bank_load()
    return demo_course_ensure()


@pytest.fixture
def quiz(site):
    """A quiz of one bank exercise answered by 160 students: its d_k = 25 family is right
    at the first try 8 of 40 times, every other family 30 of 40."""
    from django.contrib.auth import get_user_model

    from courses.models import Assignment, AssignmentItem
    from courses.services import latest_published_versions
    from exercises import engine
    from exercises.models import Variant
    from exercises.specs import version_spec
    from grading.models import Submission, SubmissionStatus

    version = {v.exercise.slug: v for v in latest_published_versions()}["scaled-scores-one-query"]
    quiz = Assignment.objects.create(course=site.course, slug="scaling-quiz", title="Scaling quiz")
    item = AssignmentItem.objects.create(assignment=quiz, exercise_version=version, position=0)
    spec = version_spec(version)
    User = get_user_model()
    User.objects.bulk_create([User(username=f"learner{i:03d}") for i in range(160)])
    students_in: dict[int, int] = {}
    seed = 0
    for student in User.objects.filter(username__startswith="learner").order_by("username"):
        while True:  # 40 students in each of the four d_k families
            params = engine.draw_variant(spec, seed).params
            seed += 1
            if students_in.get(params["d_k"], 0) < 40:
                break
        count = students_in.get(params["d_k"], 0)
        students_in[params["d_k"]] = count + 1
        right = count < (8 if params["d_k"] == 25 else 30)
        variant = Variant.objects.create(exercise_version=version, student=student, assignment_item=item,
                                         context=f"assignment:{item.pk}", seed=seed, params=params)
        Submission.objects.bulk_create([
            Submission(variant=variant, student=student, part=part.key, raw_answer="x", attempt=1,
                       status=SubmissionStatus.GRADED, score=float(right), awarded=float(right), correct=right)
            for part in spec.parts
        ])
    return quiz


def test_the_analytics_page_flags_the_harder_family(page, quiz, artifacts):
    log_in(page, "instructor")
    page.goto("/teach/attention-101/a/scaling-quiz/analytics/")
    flags = page.locator("[data-fairness-flags]")
    assert flags.get_attribute("data-fairness-flags") == "1"  # one exercise flagged
    flagged = page.locator('tr.is-flagged[data-factor="d_k"]')
    assert flagged.count() == 1
    assert "25:" in flagged.locator(".aq-bin.is-hardest").inner_text()
    page.locator("#fairness").screenshot(path=str(artifacts / "fairness-flag.png"))


def test_adding_a_pool_by_skill_after_its_preview(page, site):
    from courses.models import Assignment

    Assignment.objects.create(course=site.course, slug="week2", title="Week 2")
    log_in(page, "instructor")
    page.goto("/teach/attention-101/a/week2/")
    page.locator("#pool-by-skill a").click()
    page.select_option("#id_skill", "multi-head-shapes")
    page.select_option("#id_count", "3")
    page.locator("#pool-skill-form button").click()
    previews = page.locator(".aq-pool-preview")
    expect(previews).to_have_count(3)  # waits for the previews page: count() read the old one under load
    previews.first.locator("summary").click()
    assert previews.first.locator(".prompt").is_visible()
    page.fill("#id_pool_name", "heads")
    page.locator("#pool-add button").click()
    page.wait_for_url("**/a/week2/")
    assert page.locator("#items tbody td:nth-child(6)").all_inner_texts() == ["heads"] * 3


def test_the_preflight_spread_for_an_author(page, site):
    log_in(page, "instructor")
    page.goto("/author/attention-101/e/heatmap-reading/v1/")
    page.get_by_role("link", name="Variant spread (pre-flight)").click()
    page.locator("#run-preflight").click()
    assert page.locator("#preflight-summary").inner_text() == "200 seeds drawn."
    assert page.locator('table[data-feature="top_weight"]').is_visible()
