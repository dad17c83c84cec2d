"""A rubric's items each say something of their own (the same words twice are refused,
ignoring case and spacing), and the rubric's pages say how ticked items become a score."""

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from grading.models import SubmissionStatus
from instructor import selectors_rubrics, services_rubrics
from instructor.models import Rubric, RubricItem
from instructor.services import InstructorRefused

SAME_AS_KEPT = "This rubric already has the item “Names the variance”: give each item its own description."


@pytest.fixture
def essay(people):
    """sam's free-text answer to 'why' waits for a grade; the course rubric of 'why' has
    "Names the variance" (2) and "Says why softmax saturates" (1)."""
    assignment = assignment_create(people.course, [published_version(source=FREE_TEXT_YAML)], slug="essay")
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"d": 64})
    submission = submission_add(variant, "why", "It grows.", awarded=None, status=SubmissionStatus.MANUAL)
    rubric = services_rubrics.rubric_for_part(
        course=people.course, item=item, part="why",
        seed_criteria=[("Names the variance", 2), ("Says why softmax saturates", 1)],
    )
    return {"item": item, "rubric": rubric, "submission": submission}


def texts(rubric):
    return list(rubric.items.order_by("position", "pk").values_list("text", flat=True))


@pytest.mark.parametrize("text", [
    "Names the variance", "names THE variance", "  Names   the\tvariance ",
    "Names the variance\u200b", "Names\u00a0the variance", "Ｎａｍｅｓ the variance", "Names the\u2060 variance",
])
def test_adding_an_item_that_says_the_same_as_another_is_refused(people, essay, text):
    with pytest.raises(InstructorRefused) as refused:
        services_rubrics.rubric_item_add(rubric=essay["rubric"], text=text, points=1)
    assert refused.value.message == SAME_AS_KEPT
    assert texts(essay["rubric"]) == ["Names the variance", "Says why softmax saturates"]


def test_an_item_of_other_words_is_added(people, essay):
    services_rubrics.rubric_item_add(rubric=essay["rubric"], text="Names the variance of q·k", points=1)
    assert texts(essay["rubric"]) == ["Names the variance", "Says why softmax saturates", "Names the variance of q·k"]


def test_the_same_words_in_another_rubric_are_fine(people, essay):
    other = Rubric.objects.create(course=people.course, exercise=essay["rubric"].exercise, part="other")
    services_rubrics.rubric_item_add(rubric=other, text="Names the variance", points=1)
    assert texts(other) == ["Names the variance"]


def test_rewording_an_item_into_another_ones_words_is_refused_but_into_its_own_is_not(people, essay):
    second = essay["rubric"].items.get(text="Says why softmax saturates")
    with pytest.raises(InstructorRefused) as refused:
        services_rubrics.rubric_item_update(item=second, text="NAMES the variance")
    assert refused.value.message == SAME_AS_KEPT
    first = essay["rubric"].items.get(text="Names the variance")
    services_rubrics.rubric_item_update(item=first, text="names the variance")
    assert texts(essay["rubric"]) == ["names the variance", "Says why softmax saturates"]


def test_a_new_rubric_with_the_same_item_twice_is_refused(people):
    assignment = assignment_create(people.course, [published_version(source=FREE_TEXT_YAML)], slug="essay")
    with pytest.raises(InstructorRefused) as refused:
        services_rubrics.rubric_create(
            course=people.course, item=assignment.items.get(), part="why",
            criteria=[("Clear", 1), ("Correct", 2), (" clear ", 1)],
        )
    assert refused.value.message == "This rubric already has the item “Clear”: give each item its own description."
    assert Rubric.objects.count() == 0


def test_the_question_page_refuses_a_duplicate_item_with_the_message(client, people, essay):
    client.login(username="tariq", password=PASSWORD)
    response = client.post(
        reverse("instructor:grading_rubric", args=["attn", essay["item"].pk, "why"]),
        {"text": "names the variance ", "points": "1"}, follow=True,
    )
    assert response.status_code == 200
    assert SAME_AS_KEPT in response.content.decode()
    assert RubricItem.objects.filter(rubric=essay["rubric"]).count() == 2


def test_the_api_refuses_a_duplicate_item_with_a_4xx(client, people, essay):
    client.force_login(people.instructor)
    url = f"/api/v1/courses/attn/questions/{essay['item'].pk}/why/rubric/criteria/"
    response = client.post(url, {"text": "NAMES the variance", "points": 1}, content_type="application/json")
    assert 400 <= response.status_code < 500
    assert SAME_AS_KEPT in response.content.decode()
    assert RubricItem.objects.filter(rubric=essay["rubric"]).count() == 2


@pytest.mark.parametrize("points, words", [
    ([2, 1], "A student's score on this part is the points of the ticked items ÷ 3 (the sum of the positive "
             "items), between 0 and 100 %."),
    ([2, 1, -0.5], "A student's score on this part is the points of the ticked items ÷ 3 (the sum of the positive "
                   "items), between 0 and 100 %. A negative item is a deduction."),
    ([1.5, 0.25], "A student's score on this part is the points of the ticked items ÷ 1.75 (the sum of the positive "
                  "items), between 0 and 100 %."),
    ([-1], "No item is worth points yet: a student's score on this part will be the points of the ticked items ÷ "
           "the sum of the positive items, between 0 and 100 %."),
    ([], "No item is worth points yet: a student's score on this part will be the points of the ticked items ÷ "
         "the sum of the positive items, between 0 and 100 %."),
])
def test_the_scaling_in_words(points, words):
    assert selectors_rubrics.rubric_scale_words([RubricItem(text=f"i{n}", points=p) for n, p in enumerate(points)]) == words


def test_the_sentence_matches_the_score_ticking_two_of_three_points_gives(people, essay):
    items = list(essay["rubric"].items.all())
    assert services_rubrics.rubric_score(rubric_items=items, ticked=items[:1]) == 2 / 3


def test_the_question_and_answer_pages_state_the_scaling(client, people, essay):
    client.login(username="tariq", password=PASSWORD)
    sentence = (
        '<p class="muted" id="rubric-scale">A student&#x27;s score on this part is the points of the ticked items '
        "÷ 3 (the sum of the positive items), between 0 and 100 %.</p>"
    )
    question = client.get(reverse("instructor:grading_question", args=["attn", essay["item"].pk, "why"]))
    assert sentence in question.content.decode()
    answer = client.get(
        reverse("instructor:grading_answer", args=["attn", essay["item"].pk, "why", essay["submission"].pk])
    )
    assert sentence in answer.content.decode()
