"""What the teaching pages show: a student's answer in full with its typeset reading,
rubric criteria only where a rubric exists, and common wrong answers typeset with counts."""

import pytest
from django.urls import reverse

from authoring.tests.factories import (
    FREE_TEXT_YAML, PASSWORD, assignment_create, published_version, submission_add, variant_for,
)
from grading.models import SubmissionStatus

from .test_grades import known  # noqa: F401  (four students' answers to a product exercise)

MODEL_ANSWER_YAML = FREE_TEXT_YAML.replace("slug: explain-scaling", "slug: explain-briefly").replace(
    """    answer:
      - text: mentions that the dot product's variance grows with d_k
        points: 2
      - text: mentions that large scores saturate the softmax
        points: 1
""",
    """    answer: "The variance grows with d, so the scores must shrink by sqrt(d)."
""",
)
LONG_ANSWER = "The variance of q·k is the sum of d products, " * 12 + "so we divide by sqrt(d)."


def manual_submission(people, source, slug, answer):
    version = published_version(source=source)
    assignment = assignment_create(people.course, [version], slug=slug)
    variant = variant_for(assignment.items.get(), people.student, params={"d": 64})
    return submission_add(variant, "why", answer, awarded=None, status=SubmissionStatus.MANUAL)


@pytest.fixture
def staff_client(client, people):
    client.login(username="tariq", password=PASSWORD)
    return client


def test_without_a_rubric_there_are_no_criteria_to_tick(staff_client, people):
    submission = manual_submission(people, MODEL_ANSWER_YAML, "brief", "Because it grows.")
    url = reverse("instructor:manual_grade", args=["attn", submission.pk])
    page = staff_client.get(url).content.decode()
    assert "tick" not in page.lower() and "Rubric" not in page
    assert 'name="criteria"' not in page
    assert "Fraction 0–1 of the part&#x27;s points." in page
    assert "The variance grows with d, so the scores must shrink by sqrt(d)." in page  # model answer
    refused = staff_client.post(url, {"score": ""})
    assert refused.status_code == 422
    assert "Give a score between 0 and 1 (this part has no rubric points)." in refused.content.decode()
    assert staff_client.post(url, {"score": "0.5"}).status_code == 302


def test_with_a_rubric_the_criteria_are_offered(staff_client, people):
    submission = manual_submission(people, FREE_TEXT_YAML, "rubric", "Because it grows.")
    page = staff_client.get(reverse("instructor:manual_grade", args=["attn", submission.pk])).content.decode()
    assert "Rubric: tick what the answer does" in page
    assert page.count('name="criteria"') == 2
    assert "Leave empty to score by the ticked criteria." in page


def test_the_whole_answer_is_shown_wrapped(staff_client, people):
    submission = manual_submission(people, FREE_TEXT_YAML, "long", LONG_ANSWER)
    page = staff_client.get(reverse("instructor:manual_grade", args=["attn", submission.pk])).content.decode()
    assert f'<pre class="source aq-answer-text" id="answer">{LONG_ANSWER}</pre>' in page
    assert "Read as:" not in page  # free text has no maths reading


def test_a_numeric_answer_is_typeset_on_the_submission_page(staff_client, people, known):
    wrong = known["variants"]["tom"].submissions.get(part="total")
    page = staff_client.get(reverse("instructor:submission", args=["attn", wrong.pk])).content.decode()
    assert '<pre class="source aq-answer-text" id="raw-answer">-8</pre>' in page
    assert '<span class="aq-answer-typeset__line">$-8$</span>' in page


def test_analytics_lists_wrong_answers_typeset_with_counts(staff_client, known):
    page = staff_client.get(reverse("instructor:analytics", args=["attn", "week1"])).content.decode()
    assert '<li data-count="2"><span data-math>$13$</span> <span class="aq-count">× 2</span>' in page
    assert '<li data-count="1"><span data-math>$14$</span> <span class="aq-count">× 1</span>' in page
    assert "[[" not in page  # no raw JSON
