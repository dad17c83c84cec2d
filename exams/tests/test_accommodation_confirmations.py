"""Saving an accommodation never silently cuts a running attempt, and the "add" form never
silently replaces a student's accommodation.

- The "add" form, given a student who already has one, saves nothing and opens theirs for
  editing (its values shown; the page says what was typed).
- A save (new, edit, removal; the assignment's or the course-wide one) that ends or
  shortens the student's running attempt asks first with the times, in the course's zone,
  and stores nothing until confirmed with the token of that very sentence; a stale token
  (the numbers moved) or one of another change asks again. A longer time saves at once.

The clock is frozen at 2026-03-02 09:00 UTC (10:00 CET, the course's zone); sam started the
30-minute exam then, so it ends at 10:30 CET, at 10:35 CET with 5 extra minutes."""

from __future__ import annotations

import html
from datetime import datetime, timezone as dt_timezone

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from attnquiz.confirmations import ConfirmationNeeded
from authoring.tests.factories import (
    assignment_create, people_create, product_yaml, published_version, variant_for,
)
from courses.models import AssignmentKind
from exams import services_accommodations as services
from exams.models import (
    Accommodation,
    AccommodationAction,
    AccommodationChange,
    AssignmentAttempt,
    CourseAccommodation,
)

STARTED = datetime(2026, 3, 2, 9, 0, tzinfo=dt_timezone.utc)
SHORTENS = "This shortens sam's running attempt from 10:35 CET to 10:30 CET."


@pytest.fixture
def people(db):
    people = people_create()
    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    return people


@pytest.fixture
def exam(people, clock):
    return assignment_create(
        people.course, [published_version(source=product_yaml())], slug="exam-two", kind=AssignmentKind.EXAM,
        time_limit_minutes=30,
        opens_at=datetime(2026, 3, 2, 8, 0, tzinfo=dt_timezone.utc),
        closes_at=datetime(2026, 3, 10, 8, 0, tzinfo=dt_timezone.utc),
    )


@pytest.fixture
def running(exam, people):
    """sam's attempt, started at 10:00 CET, with 5 extra minutes (as the proctor gives)."""
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=STARTED)
    services.accommodation_set(
        assignment=exam, student=people.student, values={"extra_minutes": 5}, actor=people.instructor
    )
    AccommodationChange.objects.all().delete()
    return exam


@pytest.fixture
def instructor(client, people):
    client.force_login(people.instructor)
    return client


def url(name, assignment, *args):
    return reverse(f"proctor:{name}", args=["attn", assignment.slug, *args])


def stored(assignment):
    return {
        row.student.username: (row.extra_minutes, row.time_limit_minutes, row.note)
        for row in Accommodation.objects.filter(assignment=assignment).select_related("student")
    }


def shown_messages(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def token_of(response) -> str:
    return response.context["confirmation"]["token"]


# ---------------------------------------------------------------------------
# The "add" form and an existing accommodation
# ---------------------------------------------------------------------------


def test_adding_for_a_student_who_has_one_opens_theirs_and_saves_nothing(instructor, people, running):
    page = html.unescape(instructor.get(url("accommodation_new", running)).content.decode())
    assert "sam (Sam Stone) · has one already: opens it for editing" in page
    assert "sue (Sue Shaw)</option>" in page
    response = instructor.post(url("accommodation_new", running), {"student": people.student.pk, "note": "DSO ref 12"})
    assert response.status_code == 302
    assert response["Location"] == url("accommodation_edit", running, people.student.pk)
    assert shown_messages(response) == [
        "Nothing was saved: sam already has an accommodation on this assignment (+5 min). "
        "It is shown below with its values: change what you need and save. You had entered: note DSO ref 12."
    ]
    assert stored(running) == {"sam": (5, None, "")}
    assert AccommodationChange.objects.count() == 0
    page = html.unescape(instructor.get(response["Location"]).content.decode())
    assert 'name="extra_minutes" value="5"' in page
    assert "You are editing sam's accommodation; its stored values are filled in." in page


def test_adding_for_a_student_without_one_still_adds_it(instructor, people, running):
    response = instructor.post(url("accommodation_new", running), {"student": people.student2.pk, "note": "DSO ref 13"})
    assert response.status_code == 302
    assert stored(running) == {"sam": (5, None, ""), "sue": (None, None, "DSO ref 13")}


def test_the_course_wide_add_form_opens_an_existing_one(instructor, people, exam):
    CourseAccommodation.objects.create(course=people.course, student=people.student, extra_minutes=5)
    response = instructor.post(
        reverse("proctor:course_accommodation_new", args=["attn"]), {"student": people.student.pk, "note": "DSO"}
    )
    assert response["Location"] == reverse("proctor:course_accommodation_edit", args=["attn", people.student.pk])
    assert shown_messages(response) == [
        "Nothing was saved: sam already has a course-wide accommodation (+5 min). "
        "It is shown below with its values: change what you need and save. You had entered: note DSO."
    ]
    assert list(CourseAccommodation.objects.values_list("extra_minutes", "note")) == [(5, "")]


# ---------------------------------------------------------------------------
# A save that shortens or ends a running attempt asks first
# ---------------------------------------------------------------------------


def test_dropping_the_extra_minutes_asks_first_and_saves_only_when_confirmed(instructor, people, running):
    edit = url("accommodation_edit", running, people.student.pk)
    response = instructor.post(edit, {"note": "DSO ref 12"})
    assert response.status_code == 200
    assert response.context["confirmation"]["message"] == SHORTENS
    assert response.context["confirmation"]["stale"] is False
    page = html.unescape(response.content.decode())
    assert "Nothing is saved yet." in page and SHORTENS in page
    assert 'name="confirm" value="yes">Save anyway' in page
    assert stored(running) == {"sam": (5, None, "")}
    assert AccommodationChange.objects.count() == 0

    response = instructor.post(edit, {"note": "DSO ref 12", "confirm": "yes", "impact": token_of(response)})
    assert response.status_code == 302
    assert stored(running) == {"sam": (None, None, "DSO ref 12")}
    [change] = AccommodationChange.objects.all()
    assert (change.action, change.detail) == (
        AccommodationAction.SET, f"extra minutes 5 → —; note — → DSO ref 12 (confirmed: {SHORTENS})"
    )


def test_a_cut_that_ends_the_attempt_says_so(instructor, people, running, clock):
    clock.advance(minutes=32)  # 10:32 CET: inside the 5 extra minutes
    response = instructor.post(url("accommodation_edit", running, people.student.pk), {"note": ""})
    assert response.context["confirmation"]["message"] == (
        "This ends sam's running attempt now (it was to end at 10:35 CET)."
    )
    assert stored(running) == {"sam": (5, None, "")}


def test_a_stale_confirmation_asks_again_with_the_new_numbers(instructor, people, running):
    edit = url("accommodation_edit", running, people.student.pk)
    token = token_of(instructor.post(edit, {"note": ""}))
    services.accommodation_extend(assignment=running, student=people.student, minutes=5, actor=people.instructor)
    response = instructor.post(edit, {"note": "", "confirm": "yes", "impact": token})
    assert response.status_code == 200
    assert response.context["confirmation"]["message"] == (
        "This shortens sam's running attempt from 10:40 CET to 10:30 CET."
    )
    assert response.context["confirmation"]["stale"] is True
    assert "Nothing is saved yet: the numbers changed since you confirmed." in html.unescape(response.content.decode())
    assert stored(running) == {"sam": (10, None, "")}


def test_a_token_of_another_change_does_not_confirm_this_one(instructor, people, running):
    edit = url("accommodation_edit", running, people.student.pk)
    token = token_of(instructor.post(edit, {"extra_minutes": "1"}))
    response = instructor.post(edit, {"extra_minutes": "2", "confirm": "yes", "impact": token})
    assert response.context["confirmation"]["message"] == (
        "This shortens sam's running attempt from 10:35 CET to 10:32 CET."
    )
    assert response.context["confirmation"]["stale"] is False
    response = instructor.post(edit, {"extra_minutes": "2", "confirm": "yes", "impact": "forged:token"})
    assert response.status_code == 200
    assert stored(running) == {"sam": (5, None, "")}


def test_more_time_saves_at_once(instructor, people, running):
    response = instructor.post(url("accommodation_edit", running, people.student.pk), {"extra_minutes": "10"})
    assert response.status_code == 302
    assert stored(running) == {"sam": (10, None, "")}
    assert [change.detail for change in AccommodationChange.objects.all()] == ["extra minutes 5 → 10"]


def test_a_student_who_has_not_started_is_not_asked_about(instructor, people, running):
    services.accommodation_set(
        assignment=running, student=people.student2, values={"extra_minutes": 5}, actor=people.instructor
    )
    response = instructor.post(url("accommodation_edit", running, people.student2.pk), {"note": "x"})
    assert response.status_code == 302
    assert stored(running)["sue"] == (None, None, "x")


def test_an_earlier_close_date_asks_first(instructor, people, running):
    response = instructor.post(
        url("accommodation_edit", running, people.student.pk), {"extra_minutes": "5", "closes_at": "2026-03-02T10:20"}
    )
    assert response.context["confirmation"]["message"] == (
        "This shortens sam's running attempt from 10:35 CET to 10:20 CET."
    )
    assert stored(running) == {"sam": (5, None, "")}


def test_removing_the_accommodation_asks_first(instructor, people, running):
    remove = url("accommodation_remove", running, people.student.pk)
    response = instructor.post(remove)
    assert response.status_code == 200
    confirmation = response.context["remove_confirmation"]
    assert confirmation["message"] == SHORTENS
    assert "Nothing is removed yet." in html.unescape(response.content.decode())
    assert stored(running) == {"sam": (5, None, "")}
    response = instructor.post(remove, {"confirm": "yes", "impact": confirmation["token"]})
    assert response.status_code == 302
    assert stored(running) == {}
    [change] = AccommodationChange.objects.all()
    assert change.detail == f"removed (extra minutes 5 → —) (confirmed: {SHORTENS})"


def test_the_service_asks_a_page_and_applies_for_scripts(people, running):
    with pytest.raises(ConfirmationNeeded) as needed:
        services.accommodation_set(
            assignment=running, student=people.student, values={}, actor=people.instructor, confirmed=False
        )
    assert needed.value.message == SHORTENS
    assert stored(running) == {"sam": (5, None, "")}
    outcome, detail = services.accommodation_set(
        assignment=running, student=people.student, values={}, actor=people.instructor, confirmed=True
    )
    assert (outcome, detail) == ("remove", f"removed: extra minutes 5 → —; {SHORTENS}")


def test_a_course_wide_cut_asks_first_naming_the_assignment(instructor, people, exam):
    AssignmentAttempt.objects.create(assignment=exam, student=people.student, started_at=STARTED)
    CourseAccommodation.objects.create(course=people.course, student=people.student, extra_minutes=5)
    edit = reverse("proctor:course_accommodation_edit", args=["attn", people.student.pk])
    response = instructor.post(edit, {"extra_minutes": "", "note": "DSO"})
    message = "This shortens sam's running attempt on Exam-Two from 10:35 CET to 10:30 CET."
    assert response.status_code == 200
    assert response.context["confirmation"]["message"] == message
    assert list(CourseAccommodation.objects.values_list("extra_minutes", "note")) == [(5, "")]
    response = instructor.post(edit, {"note": "DSO", "confirm": "yes", "impact": token_of(response)})
    assert response.status_code == 302
    assert list(CourseAccommodation.objects.values_list("extra_minutes", "note")) == [(None, "DSO")]


def test_a_course_wide_cut_the_assignments_own_overrides_does_not_ask(instructor, people, running):
    CourseAccommodation.objects.create(course=people.course, student=people.student, extra_minutes=20)
    edit = reverse("proctor:course_accommodation_edit", args=["attn", people.student.pk])
    response = instructor.post(edit, {"extra_minutes": "1"})  # sam's own 5 minutes win on the exam
    assert response.status_code == 302
    assert list(CourseAccommodation.objects.values_list("extra_minutes", flat=True)) == [1]


def test_homework_whose_clock_runs_asks_about_the_working_time(people, clock):
    homework = assignment_create(
        people.course, [published_version(source=product_yaml())], slug="week3", time_limit_minutes=30,
    )
    variant_for(homework.items.get(), people.student, params={})  # opened at 10:00 CET: the clock starts
    services.accommodation_set(
        assignment=homework, student=people.student, values={"time_limit_minutes": 60}, actor=people.instructor
    )
    with pytest.raises(ConfirmationNeeded) as needed:
        services.accommodation_set(
            assignment=homework, student=people.student, values={"time_limit_minutes": 45},
            actor=people.instructor, confirmed=False,
        )
    assert needed.value.message == "This shortens sam's working time from 11:00 CET to 10:45 CET."
    assert stored(homework) == {"sam": (None, 60, "")}


def test_the_csv_dry_run_says_what_a_row_cuts(people, running):
    rows = services.accommodation_rows_from_csv("username,note\nsam,DSO\n")
    report = services.accommodations_import(assignment=running, rows=rows, dry_run=True, actor=people.instructor)
    assert [(line.action, line.detail) for line in report.lines] == [
        ("change", f"extra minutes 5 → —; note — → DSO; {SHORTENS}"),
    ]
    assert stored(running) == {"sam": (5, None, "")}
