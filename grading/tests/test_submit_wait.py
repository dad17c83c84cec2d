"""How long an answer's own response waits for its grade: the submit wait, never longer
than a result's long poll, never negative."""

from __future__ import annotations

import pytest

from grading.views import submit_wait_seconds


@pytest.mark.parametrize(
    "submit_wait, long_poll, expected",
    [
        (0.1, 1.5, 0.1),
        (0.0, 1.5, 0.0),
        (5.0, 1.5, 1.5),  # never past the long poll
        (0.1, 0.0, 0.0),  # no long poll: no wait at all
        (-1.0, 1.5, 0.0),
    ],
)
def test_the_answers_wait_for_its_grade(settings, submit_wait, long_poll, expected):
    settings.GRADING_SUBMIT_WAIT_SECONDS = submit_wait
    settings.GRADING_LONG_POLL_SECONDS = long_poll
    assert submit_wait_seconds() == expected
