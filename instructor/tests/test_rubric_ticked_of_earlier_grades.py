"""Grades given before a grade's feedback kept its rubric items: what was stored with them
(the course rubric's items a ManualGrade ticked, or the author's criteria by index) gives
back the items that applied (instructor migration 0006); a rubric grade whose items cannot
be read any more says so in one plain line, under the same review rule as the list; a
grade that ticked nothing is left as it was."""

import html
import importlib
import re

import pytest
from django.apps import apps
from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from courses.models import ReleaseMoment
from grading.models import Submission, SubmissionStatus
from instructor import services, services_rubrics

recovery = importlib.import_module("instructor.migrations.0006_rubric_ticked_of_earlier_grades")

LINE = "Graded with the rubric before ticked items were recorded."


@pytest.fixture
def essay(people):
    """sam answered the free-text part 'why'; the course's rubric of it has three items."""
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"d": 64})
    answer = submission_add(variant, "why", "Because the softmax saturates.", awarded=None, status=SubmissionStatus.MANUAL)
    rubric = services_rubrics.rubric_create(
        course=people.course, item=item, part="why",
        criteria=[("Divides by √d_k", 1.0), ("Says the variance grows with d_k", 2.0), ("Forgot the softmax", -0.5)],
    )
    return {"assignment": assignment, "item": item, "answer": answer, "rubric": rubric,
            "items": {i.text: i for i in rubric.items.all()}}


def as_given_before(answer, *, criteria_met=(), message="Graded by your instructor: 50%.", comment=""):
    """The feedback the grading service stored before it kept the items: no "rubric"."""
    Submission.objects.filter(pk=answer.pk).update(feedback={
        "message": message, "grader_comment": comment, "details": {"manual": True, "criteria_met": list(criteria_met)},
    })


def feedback_of(answer) -> dict:
    return Submission.objects.get(pk=answer.pk).feedback


def recover():
    recovery.rubric_ticked_recover(apps, None)


def ticked_lines(page: str) -> list[str] | None:
    block = re.search(r"<div class=\"rubric-ticked\" data-rubric-ticked>(.*?)</div>", page, re.S)
    if block is None:
        return None
    lines = re.findall(r"<li>(.*?)</li>", block[1], re.S)
    return [html.unescape(re.sub(r"<span aria-hidden=\"true\">(.*?)</span>", r"\1", line)).strip() for line in lines]


def unrecorded_line(page: str) -> str | None:
    found = re.search(r"<p class=\"rubric-ticked muted\" data-rubric-unrecorded>(.*?)</p>", page, re.S)
    return found[1] if found else None


def student_pages(client, essay) -> tuple[str, str, str]:
    """(the exercise page, the part's result, the answers-graded-by-people page) as sam reads them."""
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("exercise", args=[essay["item"].pk])).content.decode()
    result = client.get(reverse("submission", args=[essay["answer"].pk]), HTTP_HX_REQUEST="true").content.decode()
    mine = client.get(reverse("grades:mine")).content.decode()
    return page, result, mine


# --- What is stored gives the items back ---------------------------------------------------


def test_the_course_rubrics_ticked_items_come_back_in_its_order(client, essay):
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answer"], rubric=essay["rubric"], grader=None,
        item_ids=[essay["items"]["Forgot the softmax"].pk, essay["items"]["Divides by √d_k"].pk],
    )
    as_given_before(essay["answer"], message="Graded by your instructor: 17%.")
    assert all(ticked_lines(page) is None for page in student_pages(client, essay))
    recover()
    assert feedback_of(essay["answer"]) == {
        "message": "Graded by your instructor: 17%.", "grader_comment": "",
        "details": {"manual": True, "criteria_met": []},
        "rubric": [{"text": "Divides by √d_k", "points": 1.0}, {"text": "Forgot the softmax", "points": -0.5}],
    }
    for page in student_pages(client, essay):
        assert ticked_lines(page) == ["✓ Divides by √d_k (+1)", "✓ Forgot the softmax (−0.5)"]
        assert unrecorded_line(page) is None


def test_the_authors_criteria_ticked_by_index_come_back(client, essay):
    services.submission_grade_manually(submission=essay["answer"], grader=None, score=1.0, criteria_met=[0, 1])
    as_given_before(essay["answer"], criteria_met=[0, 1], message="Graded by your instructor: 100%.")
    recover()
    assert feedback_of(essay["answer"])["rubric"] == [
        {"text": "mentions that the dot product's variance grows with d_k", "points": 2.0},
        {"text": "mentions that large scores saturate the softmax", "points": 1.0},
    ]
    page, _, _ = student_pages(client, essay)
    assert ticked_lines(page) == [
        "✓ mentions that the dot product's variance grows with d_k (+2)",
        "✓ mentions that large scores saturate the softmax (+1)",
    ]


# --- Not readable any more: one plain line ------------------------------------------------


@pytest.fixture
def unreadable(essay):
    """A grade that ticked the author's criterion 5 of a part that has two: it came from a
    rubric, and which item applied cannot be read."""
    services.submission_grade_manually(submission=essay["answer"], grader=None, score=0.5, comment="See me.")
    as_given_before(essay["answer"], criteria_met=[5], message="See me.", comment="See me.")
    from instructor.models import ManualGrade

    ManualGrade.objects.filter(submission=essay["answer"]).update(criteria_met=[5])
    recover()
    return essay


def test_the_student_and_the_staff_read_one_plain_line(client, people, unreadable):
    stored = feedback_of(unreadable["answer"])
    assert stored == {
        "message": "See me.", "grader_comment": "See me.", "details": {"manual": True, "criteria_met": [5]},
        "rubric_unrecorded": True,
    }
    for page in student_pages(client, unreadable):
        assert unrecorded_line(page) == LINE and ticked_lines(page) is None
    client.login(username="tariq", password=PASSWORD)
    result = client.get(reverse("submission", args=[unreadable["answer"].pk]), HTTP_HX_REQUEST="true").content.decode()
    staff_page = client.get(reverse("instructor:submission", args=["attn", unreadable["answer"].pk])).content.decode()
    assert unrecorded_line(result) == LINE and unrecorded_line(staff_page) == LINE


@pytest.mark.parametrize("correctness, score, shown", [
    (ReleaseMoment.DURING, ReleaseMoment.DURING, True),
    (ReleaseMoment.DURING, ReleaseMoment.ON_RELEASE, False),
    (ReleaseMoment.ON_RELEASE, ReleaseMoment.DURING, False),
])
def test_the_line_follows_the_rule_of_the_list(client, unreadable, correctness, score, shown):
    assignment = unreadable["assignment"]
    assignment.show_correctness, assignment.show_score = correctness, score
    assignment.save()
    page, result, _ = student_pages(client, unreadable)
    assert (unrecorded_line(page) is not None, unrecorded_line(result) is not None) == (shown, shown)


def test_the_api_says_so_too(people, unreadable):
    from api.tests.conftest import api_client

    secret = api_token_create(user=people.student, name="t", scope=TokenScope.READ, lifetime_days=7)[1]
    feedback = api_client(secret).get(f"/api/v1/submissions/{unreadable['answer'].pk}/").json()["feedback"]
    assert (feedback["rubric"], feedback["rubric_unrecorded"]) == ([], True)


# --- Left as they were --------------------------------------------------------------------


def test_a_grade_that_ticked_nothing_is_left_as_it_was(client, essay):
    services.submission_grade_manually(submission=essay["answer"], grader=None, score=0.5, comment="Fine.")
    as_given_before(essay["answer"], message="Fine.", comment="Fine.")
    before = feedback_of(essay["answer"])
    recover()
    assert feedback_of(essay["answer"]) == before
    for page in student_pages(client, essay):
        assert ticked_lines(page) is None and unrecorded_line(page) is None


def test_grades_that_kept_their_items_and_answers_waiting_are_not_touched(essay, people):
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answer"], rubric=essay["rubric"], grader=None, item_ids=[essay["items"]["Divides by √d_k"].pk],
    )
    essay["items"]["Divides by √d_k"].text = "Reworded since"
    essay["items"]["Divides by √d_k"].save()
    kept = feedback_of(essay["answer"])
    waiting = submission_add(
        variant_for(essay["item"], people.student2, params={"d": 64}, seed=2), "why", "x", awarded=None,
        status=SubmissionStatus.MANUAL,
    )
    Submission.objects.filter(pk=waiting.pk).update(feedback={"message": "Waiting.", "details": {"manual": True}})
    recover()
    assert feedback_of(essay["answer"]) == kept
    assert kept["rubric"] == [{"text": "Divides by √d_k", "points": 1.0}]  # as the grader saw it
    assert feedback_of(waiting) == {"message": "Waiting.", "details": {"manual": True}}


def test_recovering_twice_changes_nothing_more(essay):
    services_rubrics.submission_grade_with_rubric(
        submission=essay["answer"], rubric=essay["rubric"], grader=None, item_ids=[essay["items"]["Divides by √d_k"].pk],
    )
    as_given_before(essay["answer"])
    recover()
    once = feedback_of(essay["answer"])
    recover()
    assert feedback_of(essay["answer"]) == once and once["rubric"] == [{"text": "Divides by √d_k", "points": 1.0}]
