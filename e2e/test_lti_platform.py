"""attnquiz inside an LMS page, in Chromium: the independent test platform (lti1p3platform)
frames attnquiz; an instructor adds an exercise through the deep-linking picker in the
iframe, a learner launches it, and their score reaches the platform's line item.

The pages run under attnquiz's enforced CSP (no inline script; the deep-linking answer is
posted by a static file, to the one LMS origin that response allows)."""

from __future__ import annotations

import pytest

from lti.tests.conftest import correct_answer
from lti.tests.lms_platform import INSTRUCTOR, LEARNER, LmsPlatform, wait_for

pytestmark = pytest.mark.browser

EXERCISE = "attention-weights-one-query"
TITLE = "Attention weights and context vector for one query"


@pytest.fixture
def lms(live_server, transactional_db, settings):
    from exercises.services_bank import bank_load

    settings.GRADING_MODE = "inline"
    bank_load()
    platform = LmsPlatform(tool_url=live_server.url, host="localhost")
    platform.add_user("prof", given="Grace", family="Hopper", roles=[INSTRUCTOR])
    platform.add_user("ada", given="Ada", family="Lovelace", roles=[LEARNER])
    platform.add_context("ml-301", title="Machine Learning 301", label="ML-301",
                         members=["prof", "ada"])
    platform.register_in_attnquiz()
    settings.LTI_FRAME_ANCESTORS = [platform.url]
    yield platform
    platform.stop()


def test_deep_link_then_learner_launch_and_passback_in_the_lms_iframe(page, lms):
    from courses.models import Assignment, Enrolment
    from exercises.services import variant_get_or_create_for_item
    from grading import services as grading_services

    page.goto(f"{lms.url}/launch?user=prof&hint=deeplink:ml-301")
    tool = page.frame_locator("#tool")
    tool.get_by_role("heading", name="Add attnquiz content to Machine Learning 301").wait_for()
    tool.get_by_label("Exercise").select_option(EXERCISE)
    tool.get_by_role("button", name="Add this exercise").click()
    tool.locator("#added").wait_for()  # the LMS's own page, after the auto-posted answer
    assert tool.locator("#added").inner_text() == f"Added: {TITLE}"
    (item,) = lms.deep_link_items
    assignment = Assignment.objects.get(title=TITLE)
    assert item["lineItem"] == {
        "scoreMaximum": 1.0, "label": TITLE,
        "resourceId": f"attnquiz-assignment-{assignment.pk}", "tag": "attnquiz",
    }
    # The instructor's launch synced the roster: Ada is enrolled before she ever launches.
    ada = Enrolment.objects.get(user__email="ada@testlms.example", course=assignment.course)
    assert (ada.role, ada.status, ada.source) == ("student", "active", "lms")

    page.goto(f"{lms.url}/launch?user=ada&hint=link:dl-link-1")
    tool.get_by_role("heading", name=assignment.title).first.wait_for()
    (frame,) = [f for f in page.frames if f.url.startswith(lms.tool_url)]
    assert frame.url == (
        f"{lms.tool_url}/courses/{assignment.course.slug}/assignments/{assignment.slug}/"
    )

    variant = variant_get_or_create_for_item(item=assignment.items.get(), student=ada.user)
    grading_services.submission_create(
        variant=variant, student=ada.user, part="weights",
        raw_answer=correct_answer(variant, "weights"),
    )
    line_item = lms.links["dl-link-1"].lineitem_id
    (score,) = wait_for(lambda: lms.scores_for(line_item), timeout=20)
    assert (score["userId"], score["scoreGiven"], score["scoreMaximum"]) == ("user-ada", 0.5, 1.0)
