"""The history filter of the exercise page: the attempts before the one the result block
shows, each feedback message written once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from exercises.templatetags.exercise_markup import earlier_attempts

SLIP = "The variance of a sum of d_k independent terms is d_k times the variance of one term."
NOT_EQUAL = "Line 2: 'd_k^2' does not follow from line 1."
TOLERANCE = "Not quite: 4 of the 4 entries are outside the accepted tolerance."


def entry(attempt: int, message: str = "", slip: str = "") -> dict:
    return {
        "submission": SimpleNamespace(pk=100 + attempt, attempt=attempt),
        "heatmap": None,
        "answer": None,
        "feedback": {"message": message, "misconception_message": slip},
    }


def shown(history, attempt: int):
    return next(e["submission"] for e in history if e["submission"].attempt == attempt)


def summary(history, shown_submission) -> list[tuple]:
    return [
        (e["submission"].attempt, e["misconception"], e["message"], e["same_as"])
        for e in earlier_attempts(history, shown_submission)
    ]


@pytest.mark.parametrize(("history", "shown_attempt", "expected"), [
    # The shown attempt (the latest) is the result block's: never listed.
    ([entry(1, TOLERANCE)], 1, []),
    ([entry(1, "Too small."), entry(2, "Too large.")], 2, [(1, "", "Too small.", None)]),
    # The same message as a later attempt: written once, at the latest, and pointed to.
    ([entry(1, TOLERANCE), entry(2, TOLERANCE), entry(3, TOLERANCE)], 3,
     [(1, "", TOLERANCE, 3), (2, "", TOLERANCE, 3)]),
    ([entry(1, TOLERANCE), entry(2, TOLERANCE), entry(3, "Too large.")], 3,
     [(1, "", TOLERANCE, 2), (2, "", TOLERANCE, None)]),
    # The checker's message repeats the slip it diagnosed: the slip is said once.
    ([entry(1, f"{NOT_EQUAL} {SLIP}", SLIP), entry(2, "Too large.")], 2, [(1, SLIP, NOT_EQUAL, None)]),
    ([entry(1, SLIP, SLIP), entry(2, "x")], 2, [(1, SLIP, "", None)]),
    # The same slip with another message is other feedback.
    ([entry(1, f"{NOT_EQUAL} {SLIP}", SLIP), entry(2, SLIP, SLIP), entry(3, "")], 3,
     [(1, SLIP, NOT_EQUAL, None), (2, SLIP, "", None)]),
    # No feedback (hidden by the review policy, not graded yet): nothing to point to.
    ([entry(1), entry(2), entry(3)], 3, [(1, "", "", None), (2, "", "", None)]),
    # Spaces left where the slip was cut out make no other message.
    ([entry(1, f"{NOT_EQUAL}  {SLIP}", SLIP), entry(2, f"{NOT_EQUAL} {SLIP}", SLIP), entry(3, "")], 3,
     [(1, SLIP, NOT_EQUAL, 2), (2, SLIP, NOT_EQUAL, None)]),
])
def test_earlier_attempts(history, shown_attempt, expected):
    assert summary(history, shown(history, shown_attempt)) == expected


def test_without_a_shown_attempt_every_attempt_is_listed():
    history = [entry(1, TOLERANCE), entry(2, TOLERANCE)]
    assert summary(history, None) == [(1, "", TOLERANCE, 2), (2, "", TOLERANCE, None)]
    assert summary([], None) == [] and summary(None, None) == []


def test_an_entry_keeps_its_own_fields():
    history = [entry(1, "Too small."), entry(2, "Too large.")]
    history[0]["heatmap"] = {"cells": [0.5]}
    (listed,) = earlier_attempts(history, shown(history, 2))
    assert listed["heatmap"] == {"cells": [0.5]} and listed["submission"] is history[0]["submission"]
    assert "same_as" not in history[0]  # the history itself is left as it was
