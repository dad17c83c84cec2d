"""One rubric per question: once the course has a rubric of a free-text part, the manual
queue and the manual-grade page send the grader to the rubric's page of the answer, and a
grade by the author's criteria is refused with nothing saved. Without one, the manual-grade
page grades by the author's criteria as before."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from grading.models import SubmissionStatus
from instructor import selectors_rubrics, services_rubrics
from instructor.models import ManualGrade


@pytest.fixture
def essay(people):
    """sam answered the free-text part 'why' and waits for a grade."""
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"d": 64})
    answer = submission_add(variant, "why", "The variance grows with d.", awarded=None, status=SubmissionStatus.MANUAL)
    return {"item": item, "variant": variant, "answer": answer}


@pytest.fixture
def course_rubric(people, essay):
    return services_rubrics.rubric_create(
        course=people.course, item=essay["item"], part="why", criteria=[("Says the variance grows", 1.0)]
    )


def manual_url(submission):
    return reverse("instructor:manual_grade", args=["attn", submission.pk])


def answer_url(item, submission):
    return reverse("instructor:grading_answer", args=["attn", item.pk, "why", submission.pk])


def queue_page(client, **query) -> str:
    return client.get(reverse("instructor:manual_queue", args=["attn"]), query).content.decode()


def test_with_a_course_rubric_the_manual_grade_page_leads_to_the_rubrics_page(client, essay, course_rubric):
    client.login(username="tariq", password=PASSWORD)
    response = client.get(manual_url(essay["answer"]))
    assert (response.status_code, response["Location"]) == (302, answer_url(essay["item"], essay["answer"]))
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "This part is graded by the course's rubric, on its grading page."
    ]
    page = client.get(response["Location"]).content.decode()
    assert "Says the variance grows" in page and "mentions that large scores saturate" not in page
    assert f'href="{answer_url(essay["item"], essay["answer"])}">Grade {essay["answer"].pk}</a>' in queue_page(client)
    assert f'href="{manual_url(essay["answer"])}"' not in queue_page(client)
    assert f'href="{answer_url(essay["item"], essay["answer"])}">Grade' in queue_page(client, all="1")


def test_with_a_course_rubric_a_grade_by_the_authors_criteria_is_refused(client, essay, course_rubric):
    client.login(username="tariq", password=PASSWORD)
    response = client.post(manual_url(essay["answer"]), {"criteria": ["0"], "comment": "By the author's list."})
    page = response.content.decode()
    assert response.status_code == 409
    assert "Not saved: this part is graded by the course&#x27;s rubric now" in page
    rubric_page = answer_url(essay["item"], essay["answer"])
    assert f"<a href=\"{rubric_page}\">Grade it with the course's rubric</a>" in page
    assert 'name="criteria"' not in page and "mentions that the dot product" not in page
    essay["answer"].refresh_from_db()
    assert (essay["answer"].status, essay["answer"].score) == (SubmissionStatus.MANUAL, None)
    assert not ManualGrade.objects.exists()


def test_the_rubric_grades_the_newest_answer_of_the_student(client, essay, course_rubric):
    newest = submission_add(essay["variant"], "why", "Softmax saturates.", awarded=None, status=SubmissionStatus.MANUAL)
    client.login(username="tariq", password=PASSWORD)
    response = client.get(manual_url(essay["answer"]))
    assert response["Location"] == answer_url(essay["item"], newest)
    assert f"Submission {essay['answer'].pk} is an earlier attempt" in str(list(get_messages(response.wsgi_request))[1])
    # The earlier attempt is superseded: the queue lists only the answer the rubric grades.
    assert [(s.pk, s.rubric_answer_id) for s in selectors_rubrics.manual_queue_rows(
        course=essay["item"].assignment.course
    )] == [(newest.pk, newest.pk)]


def test_without_a_course_rubric_the_manual_grade_page_grades_by_the_authors_criteria(client, essay):
    client.login(username="tariq", password=PASSWORD)
    page = client.get(manual_url(essay["answer"]))
    assert page.status_code == 200
    assert "mentions that the dot product&#x27;s variance grows with d_k (2 pts)" in page.content.decode()
    assert f'href="{manual_url(essay["answer"])}">Grade {essay["answer"].pk}</a>' in queue_page(client)
    response = client.post(manual_url(essay["answer"]), {"criteria": ["0"], "comment": ""})
    assert (response.status_code, response["Location"]) == (302, reverse("instructor:manual_queue", args=["attn"]))
    essay["answer"].refresh_from_db()
    assert (essay["answer"].status, essay["answer"].score) == (SubmissionStatus.GRADED, 2 / 3)
    assert ManualGrade.objects.get().criteria_met == [0]


def test_a_course_rubric_without_items_leaves_the_manual_grade_page_as_it_was(client, people, essay):
    # Opening the question's grading page makes the course rubric; with no criteria to start
    # from it has nothing to tick, and sending the grader there would leave no way to score.
    services_rubrics.rubric_create(course=people.course, item=essay["item"], part="why", criteria=[])
    client.login(username="tariq", password=PASSWORD)
    response = client.get(manual_url(essay["answer"]))
    assert response.status_code == 200
    assert f'href="{manual_url(essay["answer"])}">Grade {essay["answer"].pk}</a>' in queue_page(client)
    assert selectors_rubrics.course_rubric_answer_id(submission=essay["answer"]) is None
