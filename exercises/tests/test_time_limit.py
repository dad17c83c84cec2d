"""Time limits at minute granularity, on a frozen clock: rounding, the clock's start,
the pages' wording and countdown data, and the server refusing answers after expiry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from attnquiz.testing import CLOCK_START
from exercises.selectors import assignment_clock, assignment_deadline, assignment_time_left
from exercises.services import variant_get_or_create_for_item
from grading import services

from .test_selectors import item, student  # noqa: F401  (the worked example, student3)

START = CLOCK_START
UNIFORM = "[0.25, 0.25, 0.25, 0.25]"


def limit(item, minutes: int | None):
    assignment = item.assignment
    assignment.time_limit_minutes = minutes
    assignment.save()
    return assignment


def submit(variant, student, part="weights"):
    return services.submission_create(variant=variant, student=student, part=part, raw_answer=UNIFORM)


def test_without_a_limit_there_is_no_clock(item, student, clock):
    assignment = limit(item, None)
    assert assignment_deadline(assignment=assignment, student=student) is None
    assert assignment_time_left(assignment=assignment, student=student) is None
    assert assignment_clock(assignment=assignment, student=student) is None


def test_before_the_first_exercise_the_clock_has_not_started(item, student, clock):
    assignment = limit(item, 30)
    clock.advance(hours=5)  # waiting before starting costs nothing
    assert assignment_clock(assignment=assignment, student=student) == {
        "limit_minutes": 30,
        "limit_text": "30 minutes",
        "started": False,
        "deadline": START + timedelta(hours=5, minutes=30),
        "seconds_left": 1800,
        "minutes_left": 30,
        "is_up": False,
    }


@pytest.mark.parametrize(
    "elapsed, seconds_left, minutes_left, is_up",
    [
        (timedelta(0), 60, 1, False),  # first opening of a 1-minute limit: not "time is up"
        (timedelta(seconds=0.5), 60, 1, False),
        (timedelta(seconds=1), 59, 1, False),
        (timedelta(seconds=59), 1, 1, False),
        (timedelta(seconds=59, milliseconds=999), 1, 1, False),
        (timedelta(minutes=1), 0, 0, True),
        (timedelta(minutes=7), 0, 0, True),
    ],
)
def test_one_minute_limit_rounds_up_and_ends_exactly_on_the_minute(
    item, student, clock, elapsed, seconds_left, minutes_left, is_up
):
    assignment = limit(item, 1)
    variant_get_or_create_for_item(item=item, student=student)  # the clock starts here
    clock.advance(seconds=elapsed.total_seconds())
    state = assignment_clock(assignment=assignment, student=student)
    assert (state["started"], state["deadline"]) == (True, START + timedelta(minutes=1))
    assert (state["seconds_left"], state["minutes_left"], state["is_up"]) == (
        seconds_left,
        minutes_left,
        is_up,
    )


def test_answers_are_accepted_until_the_last_second_and_refused_after(
    item, student, clock, django_capture_on_commit_callbacks
):
    limit(item, 2)
    variant = variant_get_or_create_for_item(item=item, student=student)
    clock.advance(minutes=1, seconds=59)
    with django_capture_on_commit_callbacks(execute=True):
        assert submit(variant, student).attempt == 1
    clock.advance(seconds=1)
    with pytest.raises(services.SubmissionRefused) as refused:
        submit(variant, student, part="output")
    assert (refused.value.code, refused.value.message) == (
        "time_up",
        "Your time on this assignment is up: its limit is 2 minutes.",
    )
    assert variant.submissions.count() == 1  # nothing stored for the refused answer


def test_the_clock_counts_from_the_first_exercise_opened_not_the_one_answered(
    demo, item, student, clock
):
    assignment = limit(item, 10)
    other = assignment.items.exclude(pk=item.pk).first()
    variant_get_or_create_for_item(item=other, student=student)
    clock.advance(minutes=9)
    variant = variant_get_or_create_for_item(item=item, student=student)
    assert assignment_clock(assignment=assignment, student=student)["minutes_left"] == 1
    clock.advance(minutes=1)
    with pytest.raises(services.SubmissionRefused):
        submit(variant, student)


def test_pages_show_the_limit_before_starting_and_the_countdown_after(item, student, clock, client):
    assignment = limit(item, 1)
    client.force_login(student)
    overview = client.get(reverse("assignment", args=[assignment.course.slug, assignment.slug])).content.decode()
    assert "Time limit: 1 minute." in overview
    assert "The clock starts when you open the first exercise" in overview
    assert "data-seconds-left" not in overview

    page = client.get(f"/exercises/{item.pk}/").content.decode()
    assert "your time for this assignment is up" not in page.lower()
    assert 'data-countdown data-seconds-left="60"' in page
    assert '<strong data-countdown-text>1:00</strong>' in page
    assert page.count('class="answer-form"') == 2

    clock.advance(seconds=61)
    page = client.get(f"/exercises/{item.pk}/").content.decode()
    assert "Your time for this assignment is up; answers are no longer accepted." in page
    assert "data-seconds-left" not in page
    assert 'class="answer-form"' not in page  # no form to fill in once time is up
