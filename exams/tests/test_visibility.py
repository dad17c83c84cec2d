"""The review policy (exams.selectors.feedback_visibility): each ReleaseMoment against
each state of a student's attempt, on a frozen clock."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest

from courses.models import ReleaseMoment
from exams.services import attempt_finish, attempt_start
from exams.selectors import EVERYTHING, FeedbackVisibility, feedback_visibility, feedback_visibility_for

from .conftest import START

NOW = START + timedelta(hours=1)
BEFORE, AFTER = NOW - timedelta(seconds=1), NOW + timedelta(seconds=1)


def assignment(moment: str, *, released_at=None):
    return SimpleNamespace(
        show_correctness=moment, show_score=moment, show_misconception=moment,
        show_hints=moment, show_heatmap=moment, show_solutions=moment,
        grades_released_at=released_at,
    )


def attempt(finished_at=None):
    return SimpleNamespace(started_at=START, finished_at=finished_at)


# (state, attempt, the student's close date, released at)
STATES = {
    "not started": (None, None, None),
    "open": (attempt(), AFTER, None),
    "finished": (attempt(finished_at=BEFORE), AFTER, None),
    "finished later": (attempt(finished_at=AFTER), AFTER, None),  # a clock that ran back
    "closed": (attempt(), BEFORE, None),
    "closed at this instant": (attempt(), NOW, None),
    "released": (attempt(), AFTER, BEFORE),
    "released later": (attempt(), AFTER, AFTER),
}

# For each moment: the states in which that feedback shows.
SHOWN_IN = {
    ReleaseMoment.DURING: set(STATES),
    ReleaseMoment.AFTER_FINISH: {"finished", "closed", "closed at this instant"},
    ReleaseMoment.AFTER_CLOSE: {"closed", "closed at this instant"},
    ReleaseMoment.ON_RELEASE: {"released"},
    ReleaseMoment.NEVER: set(),
}


@pytest.mark.parametrize("moment", list(SHOWN_IN))
@pytest.mark.parametrize("state", list(STATES))
def test_each_moment_in_each_state(moment, state):
    the_attempt, closes_at, released_at = STATES[state]
    visibility = feedback_visibility(
        assignment=assignment(moment, released_at=released_at),
        attempt=the_attempt, closes_at=closes_at, now=NOW,
    )
    shown = state in SHOWN_IN[moment]
    assert visibility == FeedbackVisibility(shown, shown, shown, shown, shown, shown)


def test_each_kind_of_feedback_follows_its_own_field():
    mixed = SimpleNamespace(
        show_correctness=ReleaseMoment.AFTER_FINISH, show_score=ReleaseMoment.ON_RELEASE,
        show_misconception=ReleaseMoment.DURING, show_hints=ReleaseMoment.NEVER,
        show_heatmap=ReleaseMoment.AFTER_CLOSE, show_solutions=ReleaseMoment.ON_RELEASE,
        grades_released_at=None,
    )
    finished = feedback_visibility(
        assignment=mixed, attempt=attempt(finished_at=BEFORE), closes_at=AFTER, now=NOW
    )
    assert finished == FeedbackVisibility(
        correctness=True, score=False, misconception=True, hints=False, heatmap=False, solutions=False
    )
    assert not finished.grade_hidden and not finished.everything
    mixed.grades_released_at = BEFORE
    later = feedback_visibility(
        assignment=mixed, attempt=attempt(finished_at=BEFORE), closes_at=BEFORE, now=NOW
    )
    assert later == FeedbackVisibility(
        correctness=True, score=True, misconception=True, hints=False, heatmap=True, solutions=True
    )


def test_without_a_close_date_after_close_never_comes():
    visibility = feedback_visibility(
        assignment=assignment(ReleaseMoment.AFTER_CLOSE), attempt=attempt(finished_at=BEFORE),
        closes_at=None, now=NOW + timedelta(days=3650),
    )
    assert visibility.grade_hidden and not any(vars(visibility).values())


def test_homework_shows_everything_without_a_query(demo, django_assert_num_queries, student):
    with django_assert_num_queries(0):
        assert feedback_visibility_for(assignment=demo.assignment, student=student) == EVERYTHING
        assert feedback_visibility_for(assignment=None, student=student) == EVERYTHING
    assert EVERYTHING.everything and not EVERYTHING.grade_hidden


def test_an_exam_before_release_hides_everything(exam, student, clock):
    visibility = feedback_visibility_for(assignment=exam, student=student)
    assert visibility == FeedbackVisibility(False, False, False, False, False, False)
    assert visibility.grade_hidden
    exam.grades_released_at = clock.now
    exam.save()
    # A release reaches only an attempt that has ended: not one not started, not one running.
    assert feedback_visibility_for(assignment=exam, student=student).grade_hidden
    attempt_start(assignment=exam, student=student)
    assert feedback_visibility_for(assignment=exam, student=student).grade_hidden
    attempt_finish(assignment=exam, student=student)
    assert feedback_visibility_for(assignment=exam, student=student) == FeedbackVisibility(
        True, True, True, True, True, solutions=False  # the preset: solutions never
    )
