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


# --- Course-wide accommodations (accommodation_merge) ----------------------------------------

from exams.window import COURSE_WIDE_FIELDS, accommodation_merge, clock_view  # noqa: E402


def course_wide(**fields):
    values = dict(time_factor=None, extra_minutes=None, attempts_per_part=None, note="")
    values.update(fields)
    return SimpleNamespace(**values)


# Per field: (the assignment's own value, the course-wide value, the merged value).
# None is "not set at that level"; 0 is set (0 attempts: unlimited; 0 minutes: none).
MERGE_VALUES = {
    "time_factor": (1.25, 1.5),
    "extra_minutes": (0, 10),
    "attempts_per_part": (0, 5),
}
MERGE_ROWS = [
    # (own set?, course set?, merged from)
    (True, True, "own"),
    (True, False, "own"),
    (False, True, "course"),
    (False, False, "neither"),
]


@pytest.mark.parametrize("name", COURSE_WIDE_FIELDS)
@pytest.mark.parametrize(("own_set", "course_set", "expected_from"), MERGE_ROWS)
def test_the_merge_takes_each_field_from_the_assignment_then_the_course(name, own_set, course_set, expected_from):
    own_value, course_value = MERGE_VALUES[name]
    own = accommodation(**{name: own_value}) if own_set else accommodation()
    wide = course_wide(**{name: course_value}) if course_set else course_wide()
    merged = accommodation_merge(own=own, course_wide=wide)
    expected = {"own": own_value, "course": course_value, "neither": None}[expected_from]
    assert getattr(merged, name) == expected
    assert merged.source(name) == {"own": "assignment", "course": "course", "neither": ""}[expected_from]
    # The other course-wide fields stay empty: nothing leaks from one field to another.
    assert [getattr(merged, other) for other in COURSE_WIDE_FIELDS if other != name] == [None, None]


@pytest.mark.parametrize("name", COURSE_WIDE_FIELDS)
@pytest.mark.parametrize(("has_own", "has_course"), [(True, False), (False, True)])
def test_the_merge_with_one_level_missing_takes_the_other(name, has_own, has_course):
    own_value, course_value = MERGE_VALUES[name]
    own = accommodation(**{name: own_value}) if has_own else None
    wide = course_wide(**{name: course_value}) if has_course else None
    merged = accommodation_merge(own=own, course_wide=wide)
    assert getattr(merged, name) == (own_value if has_own else course_value)
    assert (merged.own, merged.course_wide) == (own, wide)


def test_the_merge_of_nothing_is_none_and_a_merged_value_stays_as_it_is():
    assert accommodation_merge(own=None, course_wide=None) is None
    merged = accommodation_merge(own=None, course_wide=course_wide(time_factor=1.5))
    assert accommodation_merge(own=merged, course_wide=None) is merged


def test_the_assignments_own_dates_and_limit_pass_through_and_override_lists_its_fields():
    own = accommodation(closes_at=NOW, time_limit_minutes=20, extra_minutes=5)
    merged = accommodation_merge(
        own=own, course_wide=course_wide(time_factor=1.5, extra_minutes=10, attempts_per_part=2)
    )
    assert (merged.closes_at, merged.time_limit_minutes, merged.time_factor, merged.extra_minutes,
            merged.attempts_per_part) == (NOW, 20, 1.5, 5, 2)
    assert merged.overridden == ("extra_minutes",)


# name: (the assignment's limit, own accommodation, course-wide, limit seconds, attempts per part)
COURSE_WIDE_WINDOWS = {
    "course ×1.5 of 10 min": (10, None, course_wide(time_factor=1.5), 900, 3),
    "course +5 min": (10, None, course_wide(extra_minutes=5), 900, 3),
    "course ×1.5 and +5 min": (10, None, course_wide(time_factor=1.5, extra_minutes=5), 1200, 3),
    "course attempts": (10, None, course_wide(attempts_per_part=6), 600, 6),
    "course unlimited attempts": (10, None, course_wide(attempts_per_part=0), 600, 0),
    "own factor overrides the course's": (10, accommodation(time_factor=2.0), course_wide(time_factor=1.5), 1200, 3),
    "own minutes add to the course's factor": (10, accommodation(extra_minutes=2), course_wide(time_factor=1.5), 1020, 3),
    "own limit replaces the course's factor": (10, accommodation(time_limit_minutes=12), course_wide(time_factor=1.5), 720, 3),
    "own attempts override the course's": (10, accommodation(attempts_per_part=1), course_wide(attempts_per_part=6), 600, 1),
    "own dates keep the course's factor": (10, accommodation(closes_at=NOW + 2 * timedelta(hours=1)), course_wide(time_factor=1.5), 900, 3),
    "no limit: the course's factor changes nothing": (None, None, course_wide(time_factor=1.5, extra_minutes=5), None, 3),
    "no limit: the course's attempts still count": (None, None, course_wide(attempts_per_part=6), None, 6),
}


@pytest.mark.parametrize("name", COURSE_WIDE_WINDOWS)
def test_the_window_applies_the_course_wide_accommodation(name):
    limit, own, wide, seconds, attempts = COURSE_WIDE_WINDOWS[name]
    window = window_compute(
        assignment=exam(time_limit_minutes=limit), accommodation=own, course_accommodation=wide,
        attempt=None, clock_started_at=None, archived=False, now=NOW,
    )
    assert (window.limits.time_limit_seconds, window.attempts_per_part) == (seconds, attempts)


def test_before_start_a_course_wide_factor_is_the_limit_the_start_page_shows():
    window = window_compute(
        assignment=exam(), accommodation=None, course_accommodation=course_wide(time_factor=1.5),
        attempt=None, clock_started_at=None, archived=False, now=NOW,
    )
    view = clock_view(window)
    assert (window.state, view["limit_text"], view["latest_finish"]) == (
        AttemptState.NOT_STARTED, "15 minutes", NOW + 15 * MIN,
    )


def test_a_course_wide_factor_moves_the_running_deadline_and_the_time_up():
    started = NOW - 12 * MIN
    wide = course_wide(time_factor=1.5)
    running = window_compute(
        assignment=exam(), accommodation=None, course_accommodation=wide, attempt=attempt(started),
        clock_started_at=None, archived=False, now=NOW,
    )
    assert (running.state, running.deadline, running.seconds_left) == (AttemptState.RUNNING, started + 15 * MIN, 180)
    over = window_compute(
        assignment=exam(), accommodation=None, course_accommodation=wide, attempt=attempt(started),
        clock_started_at=None, archived=False, now=NOW + 3 * MIN,
    )
    assert (over.state, over.ended_at, over.refusal[0]) == (AttemptState.TIMED_OUT, started + 15 * MIN, "time_up")
