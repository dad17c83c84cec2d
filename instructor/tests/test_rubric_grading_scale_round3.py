"""Rubric grading of a 300-student course: the question's page and one answer's page read
in the same number of queries for 20 and for 300 answers."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from authoring.tests.factories import FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, user_create, variant_for
from courses.models import Enrolment, Role
from grading.models import SubmissionStatus
from instructor import services_rubrics
from instructor.models import Rubric


@pytest.fixture
def essay(people):
    version = published_version(source=FREE_TEXT_YAML)
    assignment = assignment_create(people.course, [version], slug="essay")
    return assignment.items.get()


def answers_add(course, item, *, start: int, stop: int) -> list:
    submissions = []
    for n in range(start, stop):
        user = user_create(f"s{n:04d}")
        Enrolment.objects.create(course=course, user=user, role=Role.STUDENT)
        variant = variant_for(item, user, params={"d": 64}, seed=n + 1)
        submissions.append(submission_add(variant, "why", f"answer {n}", awarded=None, status=SubmissionStatus.MANUAL))
    return submissions


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured)


def test_grading_pages_read_in_the_same_queries_at_20_and_300_answers(client, people, essay):
    client.login(username="tariq", password=PASSWORD)
    question = reverse("instructor:grading_question", args=["attn", essay.pk, "why"])
    submissions = answers_add(people.course, essay, start=0, stop=20)
    client.get(question)  # makes the rubric from the author's criteria
    rubric = Rubric.objects.get()
    big, small = rubric.items.all()
    for submission in submissions[:10]:
        services_rubrics.submission_grade_with_rubric(
            submission=submission, rubric=rubric, grader=people.ta, item_ids=[big.pk], comment="ok"
        )
    answer = reverse("instructor:grading_answer", args=["attn", essay.pk, "why", submissions[3].pk])
    home = reverse("instructor:grading", args=["attn"])
    at_20 = {url: _queries(client, url) for url in (question, answer, home)}
    more = answers_add(people.course, essay, start=20, stop=300)
    for submission in more[:150]:
        services_rubrics.submission_grade_with_rubric(
            submission=submission, rubric=rubric, grader=people.ta, item_ids=[small.pk], comment=""
        )
    at_300 = {url: _queries(client, url) for url in (question, answer, home)}
    assert at_300 == at_20

