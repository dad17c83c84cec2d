"""The course-wide accommodations pages and CSV rows: one student's form (values checked,
dates and own limits refused), the log with the course as its scope and times in the
course's zone, the assignment's list showing course-wide rows and its overrides, and
course-wide rows of the CSV import (good and bad, a dry run first)."""

from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

import pytest
from django.urls import reverse

from authoring.tests.factories import assignment_create, people_create, product_yaml, published_version
from exams import services_accommodations as services
from exams.models import Accommodation, AccommodationChange, CourseAccommodation


@pytest.fixture
def people(db):
    people = people_create()
    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    return people


@pytest.fixture
def assignment(people):
    return assignment_create(people.course, [published_version(source=product_yaml())], time_limit_minutes=30)


@pytest.fixture
def instructor(client, people):
    client.force_login(people.instructor)
    return client


def course_url(name, *args):
    return reverse(f"proctor:{name}", args=["attn", *args])


def course_wide_stored():
    return {
        row.student.username: (row.time_factor, row.extra_minutes, row.attempts_per_part, row.note)
        for row in CourseAccommodation.objects.select_related("student")
    }


def test_setting_one_is_logged_with_the_course_as_scope(instructor, people, assignment):
    response = instructor.post(
        course_url("course_accommodation_new"),
        {"student": people.student.pk, "time_factor": "1.5", "attempts_per_part": "4", "note": "DSO 7"},
    )
    assert response.status_code == 302
    assert course_wide_stored() == {"sam": (1.5, None, 4, "DSO 7")}
    change = AccommodationChange.objects.get()
    assert (change.course, change.assignment, change.action, change.by, change.detail) == (
        people.course, None, "set", people.instructor,
        "course-wide: time factor — → 1.5; attempts per part — → 4; note — → DSO 7",
    )
    # The assignment's log does not list it; the course-wide page does, at a labelled local time.
    assert not AccommodationChange.objects.filter(assignment=assignment).exists()
    page = instructor.get(course_url("course_accommodations")).content.decode()
    assert "time ×1.5; 4 attempts per part; note: DSO 7" in page
    change.at = datetime(2026, 3, 2, 8, 0, tzinfo=dt_timezone.utc)
    AccommodationChange.objects.filter(pk=change.pk).update(at=change.at)
    page = instructor.get(course_url("course_accommodations")).content.decode()
    assert "Mon 2 Mar 2026, 09:00 CET · sam · set on the page by ines: course-wide: time factor" in page


def test_editing_then_emptying_removes_it_and_remove_says_when_there_is_none(instructor, people):
    CourseAccommodation.objects.create(course=people.course, student=people.student, extra_minutes=5)
    edit = course_url("course_accommodation_edit", people.student.pk)
    assert 'value="5"' in instructor.get(edit).content.decode()
    assert instructor.post(edit, {"extra_minutes": "5"}).status_code == 302
    assert not AccommodationChange.objects.exists()  # nothing changed, nothing logged
    assert instructor.post(edit, {}).status_code == 302
    assert course_wide_stored() == {}
    assert AccommodationChange.objects.get().detail == "course-wide removed (extra minutes 5 → —)"
    response = instructor.post(course_url("course_accommodation_remove", people.student.pk), follow=True)
    assert "sam has no course-wide accommodation." in response.content.decode()


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"time_factor": "0.5"}, "time_factor", "Give a factor between 1 and 10 (1.5 is 50 % extra time)."),
        ({"time_factor": "abc"}, "time_factor", "Give a number, e.g. 1.5."),
        ({"extra_minutes": "-1"}, "extra_minutes", "Ensure this value is greater than or equal to 0."),
        ({"extra_minutes": "99999"}, "extra_minutes", "Give between 0 and 10080 minutes."),
        ({"attempts_per_part": "1001"}, "attempts_per_part", "Give between 0 (unlimited) and 1000 attempts."),
        ({"note": "=HYPERLINK()"}, "note", "A note may not start with = + - @"),
    ],
)
def test_bad_values_are_refused_with_a_422_and_change_nothing(instructor, people, data, field, message):
    response = instructor.post(course_url("course_accommodation_edit", people.student.pk), data)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert course_wide_stored() == {} and not AccommodationChange.objects.exists()


def test_the_assignments_list_shows_course_wide_rows_and_its_overrides(instructor, people, assignment):
    CourseAccommodation.objects.create(course=people.course, student=people.student, time_factor=1.5)
    CourseAccommodation.objects.create(course=people.course, student=people.student2, time_factor=1.5, attempts_per_part=2)
    Accommodation.objects.create(assignment=assignment, student=people.student2, time_factor=2.0)
    page = instructor.get(reverse("proctor:accommodations", args=["attn", assignment.slug])).content.decode()
    assert '<tr id="student-%d" data-scope="course">' % people.student.pk in page
    assert "<td>course-wide: time ×1.5</td>" in page
    assert (
        "<td>time ×2; course-wide: 2 attempts per part "
        '<span class="muted aq-overrides">(this assignment overrides the course-wide time factor)</span></td>'
    ) in page


def csv_import(people, assignment, text, *, dry_run=False):
    return services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(text), dry_run=dry_run,
        actor=people.instructor,
    )


def test_course_wide_rows_are_imported_beside_the_assignments_own(people, assignment):
    text = (
        "username,scope,time_factor,extra_minutes,attempts_per_part,note\n"
        "sam,course,1.5,,,DSO 1\n"
        "sam,,,10,,\n"
        "sue,COURSE,,,0,\n"
    )
    dry = csv_import(people, assignment, text, dry_run=True)
    assert course_wide_stored() == {} and not Accommodation.objects.exists()
    report = csv_import(people, assignment, text)
    lines = [(line.line, line.who, line.action, line.detail) for line in report.lines]
    assert lines == [(line.line, line.who, line.action, line.detail) for line in dry.lines] == [
        (2, "sam", "add", "course-wide: time factor — → 1.5; note — → DSO 1"),
        (3, "sam", "add", "extra minutes — → 10"),
        (4, "sue", "add", "course-wide: attempts per part — → 0"),
    ]
    assert course_wide_stored() == {"sam": (1.5, None, None, "DSO 1"), "sue": (None, None, 0, "")}
    assert list(Accommodation.objects.values_list("student__username", "extra_minutes")) == [("sam", 10)]
    scopes = set(AccommodationChange.objects.values_list("student__username", "course_id", "assignment_id"))
    assert scopes == {("sam", None, assignment.pk), ("sam", people.course.pk, None), ("sue", people.course.pk, None)}
    assert [line.action for line in csv_import(people, assignment, text).lines] == ["skip", "skip", "skip"]
    removed = csv_import(people, assignment, "username,scope,time_factor\nsue,course,\n")
    assert [(line.action, line.detail) for line in removed.lines] == [
        ("remove", "course-wide removed: attempts per part 0 → —")
    ]


@pytest.mark.parametrize(
    "header, cells, detail",
    [
        ("scope,time_factor", "everyone,1.5", "scope: 'everyone' is neither 'assignment' nor 'course' (empty is 'assignment')"),
        ("scope,closes_at", "course,2026-03-05 09:00",
         "closes: A course-wide accommodation sets only a time factor, extra minutes and attempts per part; "
         "set dates and an own time limit on the assignment."),
        ("scope,time_limit_minutes", "course,40",
         "time limit minutes: A course-wide accommodation sets only a time factor, extra minutes and attempts "
         "per part; set dates and an own time limit on the assignment."),
        ("scope,time_factor", "course,0.5", "time factor: Give a factor between 1 and 10 (1.5 is 50 % extra time)."),
        ("scope,time_factor", "course,=1+1", "time factor: '=1+1' is not a number"),
        ("scope,extra_minutes", "course,1.5", "extra minutes: '1.5' is not a whole number"),
        ("scope,attempts_per_part", "course,-2", "attempts per part: Give between 0 (unlimited) and 1000 attempts."),
        ("scope,note", "course,@cmd", "note: A note may not start with = + - @ (a spreadsheet would run it as a formula)."),
    ],
)
def test_a_bad_course_wide_row_is_reported_and_stores_nothing(people, assignment, header, cells, detail):
    report = csv_import(people, assignment, f"username,{header}\nsam,{cells}\n")
    assert [(line.line, line.who, line.action, line.detail) for line in report.lines] == [(2, "sam", "error", detail)]
    assert course_wide_stored() == {} and not Accommodation.objects.exists()
    assert not AccommodationChange.objects.exists()


def test_the_same_student_twice_in_one_scope_is_an_error(people, assignment):
    report = csv_import(people, assignment, "username,scope,time_factor\nsam,course,1.5\nsam,course,2\n")
    assert [(line.line, line.action, line.detail) for line in report.lines] == [
        (2, "add", "course-wide: time factor — → 1.5"), (3, "error", "the same student as line 2"),
    ]


def test_the_import_page_answers_422_for_a_bad_line_and_the_dry_run_stores_nothing(instructor, people, assignment):
    url = reverse("proctor:accommodations_import", args=["attn", assignment.slug])
    response = instructor.post(url, {"text": "username,scope,time_factor\nsam,course,1.5\nsue,course,x\n"})
    assert response.status_code == 422
    page = response.content.decode()
    assert "course-wide: time factor — → 1.5" in page and "time factor: &#x27;x&#x27; is not a number" in page
    assert course_wide_stored() == {}
    good = instructor.post(url, {"text": "username,scope,time_factor\nsam,course,1.5\n"})
    assert good.status_code == 200 and course_wide_stored() == {}
    assert "<code>scope</code>" in good.content.decode()


def test_the_assignments_form_names_the_course_wide_values_it_would_override(instructor, people, assignment):
    CourseAccommodation.objects.create(course=people.course, student=people.student, time_factor=1.5)
    page = instructor.get(reverse("proctor:accommodation_edit", args=["attn", assignment.slug, people.student.pk]))
    assert "sam's course-wide accommodation: time ×1.5. A time factor" in page.content.decode()
    other = instructor.get(reverse("proctor:accommodation_edit", args=["attn", assignment.slug, people.student2.pk]))
    assert 'id="course-wide-note"' not in other.content.decode()
