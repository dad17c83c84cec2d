"""An answer's grading page shown with a rubric change's question (at the rubric's address,
nothing changed yet) still grades that answer: "Save and next waiting", the anonymous
toggle and Cancel lead where they do on the answer's own page, and the save goes on to the
next answer waiting."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urljoin

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD, submission_add, user_create, variant_for
from courses.models import Enrolment, Role
from grading.models import SubmissionStatus
from instructor.models import ManualGrade
from instructor.tests.test_rubric_change_rescore import graded, rubric_url, token_of  # noqa: F401 (fixture)


@pytest.fixture
def two_waiting(people, graded):  # noqa: F811
    """The fixture's answers, with a second answer waiting after its first."""
    late = user_create("s99")
    Enrolment.objects.create(course=people.course, user=late, role=Role.STUDENT)
    second = submission_add(variant_for(graded["item"], late, params={"d": 64}, seed=99), "why", "answer 99",
                            awarded=None, status=SubmissionStatus.MANUAL)
    return {**graded, "second_waiting": second}


def answer_url(item, submission) -> str:
    return reverse("instructor:grading_answer", args=["attn", item.pk, "why", submission.pk])


def form_target(page: str, form_id: str, page_url: str) -> str:
    """Where a browser posts the form: its action, or the page's own address without one."""
    tag = re.search(rf'<form\b[^>]*\bid="{form_id}"[^>]*>', page).group(0)
    action = re.search(r'\baction="([^"]*)"', tag)
    return urljoin(page_url, unescape(action.group(1))) if action else page_url


def link_target(page: str, text: str, page_url: str) -> str:
    href = re.search(rf'<a href="([^"]*)"[^>]*>{re.escape(text)}</a>', page).group(1)
    return urljoin(page_url, unescape(href))


@pytest.fixture
def asked(client, two_waiting):
    """The first waiting answer's page, asking whether to give item A 4 points."""
    client.login(username="tariq", password=PASSWORD)
    waiting = two_waiting["waiting"]
    response = client.post(rubric_url(two_waiting["item"]), {
        "update": str(two_waiting["items"]["A"].pk), "points": "4", "back_to": str(waiting.pk),
    })
    page = response.content.decode()
    assert response.status_code == 200 and 'id="rubric-confirmation"' in page and 'id="rubric-grade-form"' in page
    return page


def test_save_and_next_on_the_asking_page_grades_the_answer_and_goes_to_the_next_waiting(client, two_waiting, asked):
    item, waiting, second = two_waiting["item"], two_waiting["waiting"], two_waiting["second_waiting"]
    target = form_target(asked, "rubric-grade-form", page_url=rubric_url(item))
    assert target == answer_url(item, waiting)
    items_before = two_waiting["rubric"].items.count()
    saved = client.post(target, {"items": [str(two_waiting["items"]["B"].pk)], "comment": "fine"})
    assert saved.status_code == 302
    assert saved["Location"] == answer_url(item, second)
    waiting.refresh_from_db()
    assert (waiting.status, round(waiting.score, 6)) == (SubmissionStatus.GRADED, 0.4)
    assert ManualGrade.objects.filter(submission=waiting).count() == 1
    assert two_waiting["rubric"].items.count() == items_before  # the save added no rubric item


def test_confirming_then_save_and_next_goes_to_the_next_waiting(client, two_waiting, asked):
    item, waiting, second = two_waiting["item"], two_waiting["waiting"], two_waiting["second_waiting"]
    confirmed = client.post(form_target(asked, "rubric-confirmation", page_url=rubric_url(item)), {
        "update": str(two_waiting["items"]["A"].pk), "points": "4", "back_to": str(waiting.pk),
        "confirm": "yes", "impact": token_of(asked),
    })
    assert confirmed.status_code == 302 and confirmed["Location"] == answer_url(item, waiting)
    page = client.get(confirmed["Location"]).content.decode()
    target = form_target(page, "rubric-grade-form", page_url=confirmed["Location"])
    saved = client.post(target, {"items": [str(two_waiting["items"]["A"].pk)], "comment": ""})
    assert saved.status_code == 302 and saved["Location"] == answer_url(item, second)
    waiting.refresh_from_db()
    assert round(waiting.score, 6) == round(4 / 7, 6)  # A is worth 4 of 7 now


def test_the_asking_page_links_back_to_the_answer_not_to_the_rubric(client, two_waiting, asked):
    item, waiting = two_waiting["item"], two_waiting["waiting"]
    here = rubric_url(item)
    assert link_target(asked, "Hide names", here) == answer_url(item, waiting) + "?anonymous=1"
    assert link_target(asked, "Cancel", here) == answer_url(item, waiting)
    assert client.get(link_target(asked, "Hide names", here)).status_code == 200


def test_the_question_page_asking_cancels_to_the_question(client, two_waiting):
    item = two_waiting["item"]
    client.login(username="tariq", password=PASSWORD)
    page = client.post(rubric_url(item), {"update": str(two_waiting["items"]["A"].pk), "points": "4"}).content.decode()
    question = reverse("instructor:grading_question", args=["attn", item.pk, "why"])
    assert link_target(page, "Cancel", rubric_url(item)) == question
    assert link_target(page, "Grade anonymously (hide names)", rubric_url(item)) == question + "?anonymous=1"
