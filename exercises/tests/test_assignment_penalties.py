"""The assignment page says the assignment's penalties before the student starts, in the
exercise page's words, and nothing when none can apply to them."""

import re
from datetime import datetime, timezone

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from exams.models import Accommodation
from exercises.tests.test_assignment_page import statements_run

DUE = datetime(2030, 3, 2, 17, 25, tzinfo=timezone.utc)
CLOSES = datetime(2030, 3, 9, 17, 25, tzinfo=timezone.utc)


@pytest.fixture
def student(demo, django_user_model):
    return django_user_model.objects.get(username="student1")


@pytest.fixture
def assignment(demo):
    demo.course.time_zone = "Europe/Berlin"
    demo.course.save(update_fields=["time_zone"])
    return demo.assignment


def policy_text(client, assignment, user) -> str | None:
    """The text of the page's penalty sentence(s), None when the page has none."""
    client.force_login(user)
    html = client.get(reverse("assignment", args=[assignment.course.slug, assignment.slug])).content.decode()
    found = re.findall(r'<p class="penalties" id="penalty-policy">(.*?)</p>', html, re.S)
    assert len(found) <= 1
    return found[0] if found else None


def set_policy(assignment, **fields) -> None:
    for name, value in fields.items():
        setattr(assignment, name, value)
    assignment.save()


def test_no_penalty_shows_nothing(client, assignment, student):
    set_policy(assignment, penalty_per_extra_attempt=0.0, late_penalty=0.0, due_at=DUE, closes_at=CLOSES)
    assert policy_text(client, assignment, student) is None


def test_a_retry_penalty_says_what_each_attempt_after_the_first_costs(client, assignment, student):
    set_policy(assignment, penalty_per_extra_attempt=0.1, late_penalty=0.0, due_at=DUE, closes_at=CLOSES)
    assert policy_text(client, assignment, student) == "Each attempt after the first costs 10% of the part's score."


def test_a_late_penalty_says_what_late_answers_lose_and_until_when(client, assignment, student):
    set_policy(assignment, penalty_per_extra_attempt=0.0, late_penalty=0.2, due_at=DUE, closes_at=CLOSES)
    assert policy_text(client, assignment, student) == (
        "Answers after the due date (until Sat 9 Mar 2030, 18:25 CET) lose 20%."
    )


def test_a_late_penalty_without_a_close_date_has_no_until(client, assignment, student):
    set_policy(assignment, penalty_per_extra_attempt=0.0, late_penalty=0.125, due_at=DUE, closes_at=None)
    assert policy_text(client, assignment, student) == "Answers after the due date lose 12.5%."


def test_both_penalties_read_one_after_the_other(client, assignment, student):
    set_policy(assignment, penalty_per_extra_attempt=0.1, late_penalty=0.2, due_at=DUE, closes_at=CLOSES)
    assert policy_text(client, assignment, student) == (
        "Each attempt after the first costs 10% of the part's score. "
        "Answers after the due date (until Sat 9 Mar 2030, 18:25 CET) lose 20%."
    )


def test_a_penalty_that_cannot_apply_is_not_said(client, assignment, student):
    # One attempt per part: no retry to pay for. No due date: no answer is late.
    set_policy(
        assignment, penalty_per_extra_attempt=0.1, late_penalty=0.2, attempts_per_part=1, due_at=None, closes_at=CLOSES
    )
    assert policy_text(client, assignment, student) is None
    # Closing when it is due: no answer can come after the due date either.
    set_policy(assignment, due_at=CLOSES)
    assert policy_text(client, assignment, student) is None


def test_a_student_with_own_dates_and_attempts_reads_their_own(client, assignment, student):
    set_policy(assignment, penalty_per_extra_attempt=0.1, late_penalty=0.2, attempts_per_part=1, due_at=DUE, closes_at=CLOSES)
    Accommodation.objects.create(
        assignment=assignment, student=student, attempts_per_part=3,
        closes_at=datetime(2030, 3, 16, 17, 25, tzinfo=timezone.utc),
    )
    assert policy_text(client, assignment, student) == (
        "Each attempt after the first costs 10% of the part's score. "
        "Answers after the due date (until Sat 16 Mar 2030, 18:25 CET) lose 20%."
    )


def test_the_penalty_sentences_add_no_query_to_the_page(client, assignment, student):
    url = reverse("assignment", args=[assignment.course.slug, assignment.slug])
    client.force_login(student)
    counts = []
    for retry, late in ((0.0, 0.0), (0.1, 0.2)):
        set_policy(assignment, penalty_per_extra_attempt=retry, late_penalty=late, due_at=DUE, closes_at=CLOSES)
        with CaptureQueriesContext(connection) as captured:
            html = client.get(url).content.decode()
        counts.append((len(statements_run(captured)), 'id="penalty-policy"' in html))
    assert counts == [(counts[0][0], False), (counts[0][0], True)]
