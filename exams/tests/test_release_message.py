"""The release's message says what happened to this assignment: attempts only for an exam,
scores sent only where an LMS link opened it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from exams.views import release_done_message


@pytest.mark.parametrize(("kind", "linked", "message"), [
    ("exam", True, "Grades released: each student sees what the review policy shows on release once their own "
                   "attempt has ended, and the scores are sent to the LMS."),
    ("exam", False, "Grades released: each student sees what the review policy shows on release once their own "
                    "attempt has ended."),
    ("homework", False, "Grades released: students see what the review policy shows on release."),
    ("homework", True, "Grades released: students see what the review policy shows on release, and the scores "
                       "are sent to the LMS."),
])
def test_the_release_message_fits_the_assignment(kind, linked, message):
    assert release_done_message("release", SimpleNamespace(kind=kind, has_lti_link=linked)) == message


def test_withdrawing_says_the_same_for_every_assignment():
    assert release_done_message("withdraw", SimpleNamespace(kind="homework", has_lti_link=False)) == (
        "Grades withdrawn: students see only what the review policy shows before release."
    )
