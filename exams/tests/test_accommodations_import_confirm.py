"""The CSV import of accommodations asks before it cuts a running attempt short, as the
form does: its dry run names the students who would lose time, with the question's token,
and the import applies only with that token for the same file and the same numbers. The
services ask every caller that does not confirm: a cut is never applied by default.

The clock and fixtures are test_accommodation_confirmations': sam started the 30-minute
exam at 10:00 CET with 5 extra minutes, so it ends at 10:35 CET."""

from __future__ import annotations

import html

import pytest

from attnquiz.confirmations import ConfirmationNeeded
from exams import services_accommodations as services
from exams.models import AccommodationChange, AssignmentAttempt, CourseAccommodation
from exams.tests.test_accommodation_confirmations import (  # noqa: F401 (fixtures)
    SHORTENS, STARTED, exam, instructor, people, running, stored, url,
)

CUTTING_CSV = "username,extra_minutes,note\nsue,10,\nsam,,DSO\n"
QUESTION = f"Importing this file cuts the time of 1 student short. Line 3: {SHORTENS}"


def _import(assignment, people, *, text=CUTTING_CSV, dry_run: bool, **confirmed):
    return services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(text), dry_run=dry_run,
        actor=people.instructor, **confirmed,
    )


# ---------------------------------------------------------------------------
# The services refuse a cut nobody confirmed
# ---------------------------------------------------------------------------


def _set_own(people, assignment):
    services.accommodation_set(assignment=assignment, student=people.student, values={}, actor=people.instructor)


def _remove_own(people, assignment):
    services.accommodation_remove(assignment=assignment, student=people.student, actor=people.instructor)


def _set_course_wide(people, assignment):
    services.course_accommodation_set(course=people.course, student=people.student, values={}, actor=people.instructor)


def _remove_course_wide(people, assignment):
    services.course_accommodation_remove(course=people.course, student=people.student, actor=people.instructor)


COURSE_WIDE_CUT = "This shortens sam's running attempt on Exam-Two from 10:35 CET to 10:30 CET."


@pytest.mark.parametrize("call, course_wide, message", [
    (_set_own, False, SHORTENS),
    (_remove_own, False, SHORTENS),
    (_set_course_wide, True, COURSE_WIDE_CUT),
    (_remove_course_wide, True, COURSE_WIDE_CUT),
], ids=["set", "remove", "course-wide set", "course-wide remove"])
def test_a_cut_without_the_confirmation_flag_is_refused(people, exam, call, course_wide, message):
    """sam's 5 extra minutes, on the exam or course-wide, are in use: taking them away asks."""
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=STARTED)
    if course_wide:
        services.course_accommodation_set(
            course=people.course, student=people.student, values={"extra_minutes": 5}, actor=people.instructor,
        )
    else:
        services.accommodation_set(
            assignment=exam, student=people.student, values={"extra_minutes": 5}, actor=people.instructor,
        )
    before = (stored(exam), list(CourseAccommodation.objects.values_list("extra_minutes", flat=True)))
    changes = AccommodationChange.objects.count()
    with pytest.raises(ConfirmationNeeded) as needed:
        call(people, exam)
    assert needed.value.message == message
    assert AccommodationChange.objects.count() == changes
    assert (stored(exam), list(CourseAccommodation.objects.values_list("extra_minutes", flat=True))) == before


def test_more_time_needs_no_flag(people, running):
    outcome, detail = services.accommodation_set(
        assignment=running, student=people.student, values={"extra_minutes": 10}, actor=people.instructor,
    )
    assert (outcome, detail) == ("change", "extra minutes 5 → 10")


# ---------------------------------------------------------------------------
# The import: a dry run that asks, then the confirmed import
# ---------------------------------------------------------------------------


def test_the_dry_run_names_who_would_lose_time_and_gives_a_token(people, running):
    report = _import(running, people, dry_run=True)
    assert [(cut.line, cut.who, cut.sentence) for cut in report.cuts] == [(3, "sam", SHORTENS)]
    assert report.question == QUESTION
    assert report.token
    assert stored(running) == {"sam": (5, None, "")}


def test_a_dry_run_that_cuts_nothing_asks_nothing(people, running):
    report = _import(running, people, text="username,extra_minutes\nsam,9\n", dry_run=True)
    assert (report.cuts, report.question, report.token) == ([], "", "")


@pytest.mark.parametrize("confirmed", [{}, {"confirmed": False}, {"confirmed": "forged:token"}],
                         ids=["no flag", "not confirmed", "forged"])
def test_the_import_without_the_dry_runs_token_changes_nothing(people, running, confirmed):
    with pytest.raises(ConfirmationNeeded) as needed:
        _import(running, people, dry_run=False, **confirmed)
    assert needed.value.message == QUESTION and needed.value.stale is False
    assert stored(running) == {"sam": (5, None, "")}  # sue's row, which cuts nothing, is not applied either
    assert AccommodationChange.objects.count() == 0


def test_the_import_with_the_dry_runs_token_applies_every_row(people, running):
    token = _import(running, people, dry_run=True).token
    report = _import(running, people, dry_run=False, confirmed=token)
    assert [(line.line, line.who, line.action, line.detail) for line in report.lines] == [
        (2, "sue", "add", "extra minutes — → 10"),
        (3, "sam", "change", f"extra minutes 5 → —; note — → DSO (confirmed: {SHORTENS})"),
    ]
    assert stored(running) == {"sam": (None, None, "DSO"), "sue": (10, None, "")}


def test_a_token_of_another_file_does_not_confirm_this_one(people, running):
    other = "username,extra_minutes,note\nsam,,DSO\n"  # the same cut, without sue's row
    token = _import(running, people, text=other, dry_run=True).token
    with pytest.raises(ConfirmationNeeded):
        _import(running, people, dry_run=False, confirmed=token)
    assert stored(running) == {"sam": (5, None, "")}


def test_a_token_whose_numbers_moved_asks_again(people, running):
    token = _import(running, people, dry_run=True).token
    services.accommodation_extend(assignment=running, student=people.student, minutes=5, actor=people.instructor)
    with pytest.raises(ConfirmationNeeded) as needed:
        _import(running, people, dry_run=False, confirmed=token)
    assert needed.value.stale is True
    assert needed.value.message == (
        "Importing this file cuts the time of 1 student short. "
        "Line 3: This shortens sam's running attempt from 10:40 CET to 10:30 CET."
    )
    assert stored(running) == {"sam": (10, None, "")}


def test_a_course_wide_row_is_asked_about_too(people, exam):
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=STARTED)
    CourseAccommodation.objects.create(course=people.course, student=people.student, extra_minutes=5)
    text = "username,scope,extra_minutes\nsam,course,\n"
    report = _import(exam, people, text=text, dry_run=True)
    assert report.question == f"Importing this file cuts the time of 1 student short. Line 2: {COURSE_WIDE_CUT}"
    with pytest.raises(ConfirmationNeeded):
        _import(exam, people, text=text, dry_run=False)
    _import(exam, people, text=text, dry_run=False, confirmed=report.token)
    assert not CourseAccommodation.objects.exists()


# ---------------------------------------------------------------------------
# The import's page
# ---------------------------------------------------------------------------


def test_the_pages_dry_run_lists_the_cuts_and_applies_them_only_when_confirmed(instructor, people, running):
    page_url = url("accommodations_import", running)
    dry = instructor.post(page_url, {"text": CUTTING_CSV})
    page = html.unescape(dry.content.decode())
    assert dry.status_code == 200
    assert 'id="import-cuts"' in page and f"<li>Line 3, sam: {SHORTENS}</li>" in page
    assert '<button type="submit" name="confirm" value="yes">Apply these 2 changes, cutting their time</button>' in page
    token = dry.context["report"].token
    assert f'name="impact" value="{token}"' in page

    unconfirmed = instructor.post(page_url, {"text": CUTTING_CSV, "apply": "1"})
    assert unconfirmed.status_code == 200
    assert unconfirmed.context["report"].dry_run is True  # shown again, asking
    assert "Nothing was imported yet." in html.unescape(unconfirmed.content.decode())
    assert stored(running) == {"sam": (5, None, "")}

    applied = instructor.post(page_url, {"text": CUTTING_CSV, "apply": "1", "confirm": "yes", "impact": token})
    assert applied.status_code == 200 and applied.context["report"].dry_run is False
    assert stored(running) == {"sam": (None, None, "DSO"), "sue": (10, None, "")}


def test_the_page_says_when_the_numbers_moved_since_the_dry_run(instructor, people, running):
    page_url = url("accommodations_import", running)
    token = instructor.post(page_url, {"text": CUTTING_CSV}).context["report"].token
    services.accommodation_extend(assignment=running, student=people.student, minutes=5, actor=people.instructor)
    again = instructor.post(page_url, {"text": CUTTING_CSV, "apply": "1", "confirm": "yes", "impact": token})
    page = html.unescape(again.content.decode())
    assert "Nothing was imported yet: the numbers changed since the dry run." in page
    assert "This shortens sam's running attempt from 10:40 CET to 10:30 CET." in page
    assert again.context["report"].token != token
    assert stored(running) == {"sam": (10, None, "")}


def test_a_file_that_cuts_nothing_applies_without_a_question(instructor, people, running):
    page_url = url("accommodations_import", running)
    dry = instructor.post(page_url, {"text": "username,extra_minutes\nsam,9\n"})
    assert 'id="import-cuts"' not in dry.content.decode()
    applied = instructor.post(page_url, {"text": "username,extra_minutes\nsam,9\n", "apply": "1"})
    assert applied.context["report"].dry_run is False
    assert stored(running) == {"sam": (9, None, "")}


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"], ids=["LF", "CR LF", "lone CR"])
def test_every_line_ending_separates_rows(ending):
    text = ending.join(["username,extra_minutes", "sam,5", "", "sue,10"]) + ending
    assert services.accommodation_rows_from_csv(text) == [
        {"line": 2, "username": "sam", "extra_minutes": "5"}, {"line": 4, "username": "sue", "extra_minutes": "10"},
    ]
