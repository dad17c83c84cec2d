"""The student's window (exams.window.window_compute), as tables: each release moment ×
each attempt state × a release before / after the student's start × accommodation, and
the refusals, clock and attempts an attempt's state implies. Pure: no database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from courses.models import ReleaseMoment
from exams.window import (
    AttemptState,
    FeedbackVisibility,
    clock_sentence,
    window_compute,
)

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
NOW = START + timedelta(hours=1)
MIN = timedelta(minutes=1)


def exam(moment: str = ReleaseMoment.DURING, *, released_at=None, closes_at=NOW + timedelta(hours=1), **fields):
    values = dict(
        kind="exam", opens_at=None, due_at=None, closes_at=closes_at, time_limit_minutes=10,
        attempts_per_part=3, grades_released_at=released_at,
        **{name: moment for name in (
            "show_correctness", "show_score", "show_misconception", "show_hints", "show_heatmap",
            "show_solutions",
        )},
    )
    values.update(fields)
    return SimpleNamespace(**values)


def attempt(started_at, finished_at=None, close_reason=""):
    return SimpleNamespace(started_at=started_at, finished_at=finished_at, close_reason=close_reason)


def accommodation(**fields):
    values = dict(opens_at=None, due_at=None, closes_at=None, time_limit_minutes=None,
                  time_factor=None, extra_minutes=None, attempts_per_part=None)
    values.update(fields)
    return SimpleNamespace(**values)


ALL = {
    ReleaseMoment.DURING, ReleaseMoment.AFTER_FINISH, ReleaseMoment.LATER,
    ReleaseMoment.AFTER_CLOSE, ReleaseMoment.ON_RELEASE,
}
D, F, L, C, R = (ReleaseMoment.DURING, ReleaseMoment.AFTER_FINISH, ReleaseMoment.LATER,
                 ReleaseMoment.AFTER_CLOSE, ReleaseMoment.ON_RELEASE)

# name: (attempt, accommodation, the assignment's close date, state, moments shown at NOW)
# R means: shown once released (a release before or after the student's start alike).
ROWS = {
    "not started": (None, None, NOW + timedelta(hours=1), AttemptState.NOT_STARTED, {D}),
    "running": (attempt(NOW - 5 * MIN), None, NOW + timedelta(hours=1), AttemptState.RUNNING, {D}),
    # Twelve minutes in: a 10-minute limit has run out, the ×1.5 student's 15 have not.
    "running on extra time": (
        attempt(NOW - 12 * MIN), accommodation(time_factor=1.5), NOW + timedelta(hours=1),
        AttemptState.RUNNING, {D},
    ),
    "timed out, closer not by yet": (
        attempt(NOW - 13 * MIN), None, NOW + timedelta(hours=1), AttemptState.TIMED_OUT, {D, F, L, R},
    ),
    "timed out by the closer": (
        attempt(NOW - 13 * MIN, NOW - 3 * MIN, "time_up"), None, NOW + timedelta(hours=1),
        AttemptState.TIMED_OUT, {D, F, L, R},
    ),
    "just finished": (
        attempt(NOW - 5 * MIN, NOW - MIN, "finished"), None, NOW + timedelta(hours=1),
        AttemptState.FINISHED, {D, F, R},
    ),
    "finished earlier": (
        attempt(NOW - 20 * MIN, NOW - 10 * MIN, "finished"), None, NOW + timedelta(hours=1),
        AttemptState.FINISHED, {D, F, L, R},
    ),
    "never started, closed": (None, None, NOW - 5 * MIN, AttemptState.NOT_STARTED, ALL),
    "running past the close date": (
        attempt(NOW - 5 * MIN), None, NOW - MIN, AttemptState.TIMED_OUT, {D, F, C, R},
    ),
    # Closed for everyone else; this student's accommodation closes later.
    "running, own close date later": (
        attempt(NOW - 5 * MIN), accommodation(closes_at=NOW + timedelta(hours=1)), NOW - MIN,
        AttemptState.RUNNING, {D},
    ),
    "finished, own close date passed": (
        attempt(NOW - 30 * MIN, NOW - 25 * MIN, "finished"), accommodation(closes_at=NOW - MIN),
        NOW + timedelta(hours=1), AttemptState.FINISHED, ALL,
    ),
    "finished, closed for others only": (
        attempt(NOW - 30 * MIN, NOW - 25 * MIN, "finished"), accommodation(closes_at=NOW + MIN),
        NOW - MIN, AttemptState.FINISHED, {D, F, L, R},
    ),
}

RELEASES = {
    "not released": None,
    "released before the start": START - timedelta(days=1),
    "released after the start": NOW - MIN / 2,
    "release scheduled later": NOW + MIN,
}


@pytest.mark.parametrize("release", list(RELEASES))
@pytest.mark.parametrize("moment", [*sorted(ALL), ReleaseMoment.NEVER])
@pytest.mark.parametrize("row", list(ROWS))
def test_each_moment_in_each_attempt_state(row, moment, release):
    the_attempt, the_accommodation, closes_at, state, shown_moments = ROWS[row]
    released_at = RELEASES[release]
    window = window_compute(
        assignment=exam(moment, released_at=released_at, closes_at=closes_at),
        accommodation=the_accommodation, attempt=the_attempt, clock_started_at=None,
        archived=False, now=NOW,
    )
    assert window.state == state
    shown = moment in shown_moments and (
        moment != ReleaseMoment.ON_RELEASE or release in ("released before the start", "released after the start")
    )
    assert window.visibility == FeedbackVisibility(*[shown] * 6)


def test_a_release_reaches_a_later_starter_only_when_their_attempt_ends():
    released = exam(ReleaseMoment.ON_RELEASE, released_at=START)
    seen = []
    for the_attempt, now in (
        (None, NOW),  # released before they start
        (attempt(NOW), NOW + MIN),  # started after the release: running
        (attempt(NOW), NOW + 9 * MIN),
        (attempt(NOW, NOW + 9 * MIN, "finished"), NOW + 9 * MIN),  # Finish
    ):
        window = window_compute(
            assignment=released, accommodation=None, attempt=the_attempt, clock_started_at=None,
            archived=False, now=now,
        )
        seen.append((window.state, window.visibility.correctness))
    assert seen == [
        (AttemptState.NOT_STARTED, False), (AttemptState.RUNNING, False), (AttemptState.RUNNING, False),
        (AttemptState.FINISHED, True),
    ]


def test_homework_shows_a_release_without_an_attempt():
    homework = exam(ReleaseMoment.ON_RELEASE, released_at=START, kind="homework")
    window = window_compute(
        assignment=homework, accommodation=None, attempt=None, clock_started_at=None, archived=False, now=NOW
    )
    assert (window.state, window.visibility.score, window.refusal) == (AttemptState.NONE, True, None)


# --- What the state implies: refusals, the clock, attempts left -----------------------------

# name: (attempt, accommodation, state, refusal code, seconds left, attempts left of 1 used, ended by)
IMPLIED = {
    "not started": (None, None, AttemptState.NOT_STARTED, "not_started", None, 2, ""),
    "running": (attempt(NOW - 4 * MIN), None, AttemptState.RUNNING, None, 360, 2, ""),
    "running ×1.5, 12 min in": (
        attempt(NOW - 12 * MIN), accommodation(time_factor=1.5, attempts_per_part=5),
        AttemptState.RUNNING, None, 180, 4, "",
    ),
    "past the limit": (attempt(NOW - 12 * MIN), None, AttemptState.TIMED_OUT, "time_up", None, None, "time"),
    "finished by the student": (
        attempt(NOW - 5 * MIN, NOW - MIN, "finished"), None, AttemptState.FINISHED, "attempt_finished",
        None, None, "you",
    ),
    "closed by the instructor": (
        attempt(NOW - 5 * MIN, NOW - MIN, "instructor"), None, AttemptState.TIMED_OUT, "attempt_finished",
        None, None, "instructor",
    ),
}


@pytest.mark.parametrize("row", list(IMPLIED))
def test_what_each_attempt_state_implies(row):
    the_attempt, the_accommodation, state, code, seconds_left, attempts_left, ended_by = IMPLIED[row]
    window = window_compute(
        assignment=exam(), accommodation=the_accommodation, attempt=the_attempt, clock_started_at=None,
        archived=False, now=NOW,
    )
    assert (window.state, window.refusal and window.refusal[0], window.seconds_left,
            window.attempts_left(1), window.ended_by) == (state, code, seconds_left, attempts_left, ended_by)
    # An ended attempt has no clock and no attempts left.
    if window.ended:
        assert (window.deadline, window.seconds_left, window.attempts_left(0)) == (None, None, None)


def test_the_start_page_clock_is_the_students_own():
    window = window_compute(
        assignment=exam(closes_at=NOW + timedelta(hours=2)), accommodation=accommodation(time_factor=1.5),
        attempt=None, clock_started_at=None, archived=False, now=NOW,
    )
    assert (window.limits.time_limit_minutes, window.latest_finish, window.deadline) == (15, NOW + 15 * MIN, None)
    near_close = window_compute(
        assignment=exam(closes_at=NOW + 5 * MIN), accommodation=accommodation(time_factor=1.5),
        attempt=None, clock_started_at=None, archived=False, now=NOW,
    )
    assert near_close.latest_finish == NOW + 5 * MIN  # never past the close date


def test_the_clock_sentence_is_true_for_each_kind():
    assert clock_sentence(exam=True, has_limit=True) == (
        "The clock starts when you press Start and keeps running if you leave."
    )
    assert clock_sentence(exam=False, has_limit=True) == (
        "The clock starts when you open the first exercise of this assignment, and keeps running if you leave."
    )
    assert clock_sentence(exam=True, has_limit=False) == ""


@pytest.mark.parametrize(
    "fields, archived, code",
    [
        ({}, True, "archived"),
        ({"opens_at": NOW + MIN}, False, "not_open"),
        ({"closes_at": NOW - MIN, "time_limit_minutes": None}, False, "closed"),
        ({"closes_at": NOW + MIN}, False, None),
    ],
)
def test_refusals_of_a_running_attempt(fields, archived, code):
    window = window_compute(
        assignment=exam(**fields), accommodation=None, attempt=attempt(NOW - MIN / 2), clock_started_at=None,
        archived=archived, now=NOW,
    )
    assert (window.refusal[0] if window.refusal else None) == code
