"""The accommodations pages: one student's form (each value checked, dates in the course's
zone), the CSV import (a dry run that changes nothing, per-row errors, hostile files that
never give a 500), the log, and the gradebook's marker and list."""

from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import (
    assignment_create, people_create, product_yaml, published_version, user_create,
)
from courses.models import Enrolment, Role
from exams import services_accommodations as services
from exams.models import Accommodation, AccommodationAction, AccommodationChange


@pytest.fixture
def people(db):
    people = people_create()
    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    return people


@pytest.fixture
def assignment(people):
    return assignment_create(
        people.course, [published_version(source=product_yaml())], time_limit_minutes=30,
        opens_at=datetime(2026, 3, 2, 8, 0, tzinfo=dt_timezone.utc),
        due_at=datetime(2026, 3, 9, 8, 0, tzinfo=dt_timezone.utc),
        closes_at=datetime(2026, 3, 10, 8, 0, tzinfo=dt_timezone.utc),
    )


@pytest.fixture
def instructor(client, people):
    client.force_login(people.instructor)
    return client


def url(name, assignment, *args):
    return reverse(f"proctor:{name}", args=["attn", assignment.slug, *args])


def stored(assignment):
    return {
        a.student.username: (a.time_factor, a.extra_minutes, a.time_limit_minutes, a.closes_at, a.attempts_per_part, a.note)
        for a in Accommodation.objects.filter(assignment=assignment).select_related("student")
    }


# ---------------------------------------------------------------------------
# One student's form
# ---------------------------------------------------------------------------


def test_adding_an_accommodation_reads_dates_in_the_course_zone_and_logs_it(instructor, people, assignment):
    response = instructor.post(url("accommodation_new", assignment), {
        "student": people.student.pk, "time_factor": "1.5", "closes_at": "2026-03-11T18:00",
        "attempts_per_part": "5", "note": "DSO ref 2026-114",
    })
    assert response.status_code == 302
    assert stored(assignment) == {
        "sam": (1.5, None, None, datetime(2026, 3, 11, 17, 0, tzinfo=dt_timezone.utc), 5, "DSO ref 2026-114")
    }
    [change] = AccommodationChange.objects.all()
    assert (change.action, change.by, change.student) == (AccommodationAction.SET, people.instructor, people.student)
    assert change.detail == (
        "closes — → Wed 11 Mar 2026, 18:00 CET; time factor — → 1.5; attempts per part — → 5; note — → DSO ref 2026-114"
    )
    page = instructor.get(url("accommodations", assignment)).content.decode()
    assert "time ×1.5; closes Wed 11 Mar 2026, 18:00 CET; 5 attempts per part; note: DSO ref 2026-114" in page
    assert "closes — → Wed 11 Mar 2026, 18:00 CET" in page  # the history


def test_every_wrong_field_is_named_at_once_each_with_its_own_message(instructor, people, assignment):
    # A field that did not parse (minutes below 0) kept the checks of the others from running:
    # the factor's problem showed only once the minutes were fixed.
    response = instructor.post(url("accommodation_new", assignment), {
        "student": people.student.pk, "time_factor": "-1", "extra_minutes": "-5", "attempts_per_part": "100000",
    })
    assert response.status_code == 422
    form = response.context["form"]
    assert form.errors == {
        "time_factor": ["Give a factor between 1 and 10 (1.5 is 50 % extra time)."],
        "extra_minutes": ["Ensure this value is greater than or equal to 0."],
        "attempts_per_part": [form.errors["attempts_per_part"][0]],
    }
    assert form.errors["attempts_per_part"][0].startswith("Give between 0 (unlimited) and ")
    assert stored(assignment) == {}


def test_editing_shows_the_current_values_and_saves_only_what_changed(instructor, people, assignment):
    services.accommodation_set(
        assignment=assignment, student=people.student, values={"extra_minutes": 10}, actor=people.instructor
    )
    page = instructor.get(url("accommodation_edit", assignment, people.student.pk)).content.decode()
    assert 'name="extra_minutes" value="10"' in page
    assert 'name="student"' not in page  # the student is fixed by the address
    response = instructor.post(url("accommodation_edit", assignment, people.student.pk), {"extra_minutes": "25"})
    assert response.status_code == 302
    assert stored(assignment)["sam"][1] == 25
    assert AccommodationChange.objects.first().detail == "extra minutes 10 → 25"


@pytest.mark.parametrize(
    "data, field_message",
    [
        ({"time_factor": "0.5"}, "Give a factor between 1 and 10 (1.5 is 50 % extra time)."),
        ({"time_factor": "abc"}, "Give a number, e.g. 1.5."),
        ({"time_factor": "nan"}, "Give a number, e.g. 1.5."),
        ({"time_factor": "1e999"}, "Give a number, e.g. 1.5."),
        ({"extra_minutes": "-5"}, "Ensure this value is greater than or equal to 0."),
        ({"extra_minutes": "99999"}, "Give between 0 and 10080 minutes."),
        ({"time_limit_minutes": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"time_limit_minutes": "40", "extra_minutes": "5"},
         "Give either the student&#x27;s own time limit or extra time (a factor, minutes), not both."),
        ({"attempts_per_part": "1001"}, "Give between 0 (unlimited) and 1000 attempts."),
        ({"due_at": "2026-03-01T09:00"}, "The student&#x27;s due date is before their opening date."),
        ({"closes_at": "2026-03-08T09:00"}, "The student&#x27;s close date is before their due date."),
        ({"closes_at": "yesterday"}, "Enter a valid date/time."),
        ({"note": "=HYPERLINK(\"http://x\")"}, "A note may not start with = + - @"),
        ({"note": "x" * 201}, "Ensure this value has at most 200 characters"),
    ],
)
def test_bad_values_are_refused_with_a_message_and_change_nothing(
    instructor, people, assignment, data, field_message
):
    response = instructor.post(url("accommodation_edit", assignment, people.student.pk), data)
    assert response.status_code == 422
    assert field_message in response.content.decode()
    assert stored(assignment) == {}
    assert not AccommodationChange.objects.exists()


def test_extra_time_without_a_time_limit_is_refused(instructor, people, assignment):
    assignment.time_limit_minutes = None
    assignment.save()
    response = instructor.post(url("accommodation_edit", assignment, people.student.pk), {"time_factor": "1.5"})
    assert response.status_code == 422
    assert "This assignment has no time limit, so extra time changes nothing" in response.content.decode()
    response = instructor.post(url("accommodation_edit", assignment, people.student.pk), {"time_limit_minutes": "90"})
    assert response.status_code == 302
    assert stored(assignment)["sam"][2] == 90


def test_emptying_every_field_removes_it_and_remove_is_logged(instructor, people, assignment):
    services.accommodation_set(
        assignment=assignment, student=people.student, values={"extra_minutes": 10}, actor=people.instructor
    )
    assert instructor.post(url("accommodation_edit", assignment, people.student.pk), {}).status_code == 302
    assert stored(assignment) == {}
    services.accommodation_set(
        assignment=assignment, student=people.student2, values={"attempts_per_part": 0}, actor=people.instructor
    )
    assert instructor.post(url("accommodation_remove", assignment, people.student2.pk)).status_code == 302
    assert stored(assignment) == {}
    assert list(AccommodationChange.objects.order_by("id").values_list("student__username", "action")) == [
        ("sam", "set"), ("sam", "remove"), ("sue", "set"), ("sue", "remove"),
    ]
    response = instructor.post(url("accommodation_remove", assignment, people.student2.pk), follow=True)
    assert "sue has no accommodation on this assignment." in response.content.decode()


# ---------------------------------------------------------------------------
# CSV import
# ---------------------------------------------------------------------------

GOOD_CSV = (
    "username,email,time_factor,extra_minutes,time_limit_minutes,opens_at,due_at,closes_at,attempts_per_part,note\n"
    "sam,,1.5,,,,,2026-03-11 18:00,,DSO 1\n"
    ",sue@example.org,,10,,,,,4,\n"
)


@pytest.fixture
def emails(people):
    email_confirmed(people.student2, "Sue@Example.org")


def import_post(client, assignment, text=None, *, apply=False, upload=None):
    data = {"text": text or ""}
    if apply:
        data["apply"] = "1"
    if upload is not None:
        data["file"] = upload
    return client.post(url("accommodations_import", assignment), data)


def test_the_dry_run_reports_each_line_and_changes_nothing(instructor, people, assignment, emails):
    response = import_post(instructor, assignment, GOOD_CSV)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Dry run: what importing would do" in page
    assert "add: 2" in page
    assert "closes — → Wed 11 Mar 2026, 18:00 CET; time factor — → 1.5; note — → DSO 1" in page
    assert "extra minutes — → 10; attempts per part — → 4" in page
    assert "Apply these 2 changes" in page
    assert stored(assignment) == {}
    assert not AccommodationChange.objects.exists()


def test_applying_matches_the_dry_run_and_reimporting_changes_nothing(instructor, people, assignment, emails):
    dry = services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(GOOD_CSV), dry_run=True,
        actor=people.instructor,
    )
    response = import_post(instructor, assignment, GOOD_CSV, apply=True)
    assert response.status_code == 200
    applied = services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(GOOD_CSV), dry_run=True,
        actor=people.instructor,
    )
    assert [(line.line, line.who, line.action) for line in dry.lines] == [(2, "sam", "add"), (3, "sue", "add")]
    assert [(line.line, line.action, line.detail) for line in applied.lines] == [
        (2, "skip", "no change"), (3, "skip", "no change"),
    ]
    assert stored(assignment) == {
        "sam": (1.5, None, None, datetime(2026, 3, 11, 17, 0, tzinfo=dt_timezone.utc), None, "DSO 1"),
        "sue": (None, 10, None, None, 4, ""),
    }
    assert list(AccommodationChange.objects.values_list("action", flat=True)) == ["import", "import"]


def test_a_row_replaces_the_whole_accommodation_and_an_empty_row_removes_it(people, assignment):
    services.accommodation_set(
        assignment=assignment, student=people.student, values={"extra_minutes": 10, "note": "old"},
        actor=people.instructor,
    )
    services.accommodation_set(
        assignment=assignment, student=people.student2, values={"attempts_per_part": 9}, actor=people.instructor
    )
    report = services.accommodations_import(
        assignment=assignment,
        rows=services.accommodation_rows_from_csv("username,time_factor,note\nsam,2,\nsue,,\n"),
        dry_run=False, actor=people.instructor,
    )
    assert [(line.action, line.detail) for line in report.lines] == [
        ("change", "time factor — → 2; extra minutes 10 → —; note old → —"),
        ("remove", "removed: attempts per part 9 → —"),
    ]
    assert stored(assignment) == {"sam": (2.0, None, None, None, None, "")}


def test_bad_rows_are_reported_one_by_one_and_the_good_ones_applied(people, assignment, emails):
    other_student = user_create("stella", email="stella@example.org")
    Enrolment.objects.create(course=people.other_course, user=other_student, role=Role.STUDENT)
    text = (
        "username,email,time_factor\n"
        "sam,,=1+2\n"
        "sue,,1.5\n"
        "tariq,,1.5\n"
        "stella,,1.5\n"
        ",nobody@example.org,1.5\n"
        ",SUE@example.org,2\n"
        "ines,,1.5\n"
        ",,1.5\n"
        "sam,other@example.org,1.5\n"
        "sam,,1.5\n"
    )
    report = services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(text), dry_run=False,
        actor=people.instructor,
    )
    assert [(line.line, line.action, line.detail) for line in report.lines] == [
        (2, "error", "time factor: '=1+2' is not a number"),
        (3, "add", "time factor — → 1.5"),
        (4, "error", "'tariq' is not a student of this course"),
        (5, "error", "'stella' is not a student of this course"),
        (6, "error", "no student of this course has confirmed the e-mail 'nobody@example.org'; give the username instead"),
        (7, "error", "the same student as line 3"),
        (8, "error", "'ines' is not a student of this course"),
        (9, "error", "needs a username or an e-mail"),
        (10, "error", "'sam' has another e-mail address"),
        (11, "error", "the same student as line 2"),
    ]
    assert stored(assignment) == {"sue": (1.5, None, None, None, None, "")}


@pytest.mark.parametrize(
    "cells, detail",
    [
        ("time_factor\n=1+2", "time factor: '=1+2' is not a number"),
        ("due_at\n2026-03-05", "due: '2026-03-05' needs a date and a time, e.g. 2026-03-05 09:00"),
        ("due_at\nnot a date at all", "due: 'not a date at all' is not a date and time like 2026-03-05 09:00"),
        ("extra_minutes\n-3", "extra minutes: Give between 0 and 10080 minutes."),
        ("extra_minutes\n1.5", "extra minutes: '1.5' is not a whole number"),
        ("time_factor\n1e999", "time factor: '1e999' is not a finite number"),
        ("time_factor\nnan", "time factor: 'nan' is not a finite number"),
        ("time_factor\n0.9", "time factor: Give a factor between 1 and 10 (1.5 is 50 % extra time)."),
        ("closes_at\n2026-03-01 09:00", "closes: The student's close date is before their due date."),
        ("opens_at\n2026-03-09 10:00", "due: The student's due date is before their opening date."),
        ("note\n@SUM(A1)", "note: A note may not start with = + - @ (a spreadsheet would run it as a formula)."),
        ("note\n-2+3", "note: A note may not start with = + - @ (a spreadsheet would run it as a formula)."),
        ("attempts_per_part\n99999999999999999999999", "attempts per part: Give between 0 (unlimited) and 1000 attempts."),
        ("time_limit_minutes,extra_minutes\n40,5",
         "time limit minutes: Give either the student's own time limit or extra time (a factor, minutes), not both."),
        ("time_factor,extra_minutes\nx,y", "time factor: 'x' is not a number; extra minutes: 'y' is not a whole number"),
    ],
)
def test_each_bad_cell_has_its_own_message(people, assignment, cells, detail):
    header, values = cells.split("\n")
    text = f"username,{header}\nsam,{values}\n"
    report = services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(text), dry_run=False,
        actor=people.instructor,
    )
    assert [(line.line, line.who, line.action, line.detail) for line in report.lines] == [(2, "sam", "error", detail)]
    assert stored(assignment) == {}


def test_dates_with_an_offset_keep_it_and_local_dates_follow_summer_time(people, assignment):
    text = "username,due_at,closes_at\nsam,2026-03-29 12:00,2026-03-30T12:00:00+00:00\n"
    services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv(text), dry_run=False,
        actor=people.instructor,
    )
    accommodation = Accommodation.objects.get()
    # Berlin moved to summer time (UTC+2) at 02:00 on 29 March 2026.
    assert accommodation.due_at == datetime(2026, 3, 29, 10, 0, tzinfo=dt_timezone.utc)
    assert accommodation.closes_at == datetime(2026, 3, 30, 12, 0, tzinfo=dt_timezone.utc)


@pytest.mark.parametrize(
    "payload, message",
    [
        ("", "Choose a CSV file or paste its lines."),
        ("time_factor,note\n1.5,x\n", "The first line must name the columns, with a &#x27;username&#x27; or &#x27;email&#x27; column."),
        ("username,time factr\nsam,1.5\n", "Unknown column &#x27;time_factr&#x27;."),
        ("username,note\nsam,\"unterminated\n", "is not valid CSV"),
        ("username,note\nsam,a\0b\n", "Null characters are not allowed."),
        ("username,note\n" + "sam,x\n" * 2001, "The file has more than 2000 rows; split it."),
        ("username,note\nsam," + "x" * 200_000 + "\n", "is not valid CSV"),
    ],
)
def test_files_that_are_not_accommodations_are_refused_whole_with_a_message(
    instructor, people, assignment, payload, message
):
    response = import_post(instructor, assignment, payload)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert stored(assignment) == {}


@pytest.mark.parametrize(
    "content, message",
    [
        ("username,note\nsam,Müller\n".encode("latin-1"), "The file is not UTF-8 text"),
        ("username,note\nsam,x\n".encode("utf-16"), "The file is not UTF-8 text"),
        (b"\x00\x01\x02\xff" * 1000, "The file is not UTF-8 text"),
        (b"username,note\nsam,a\x00b\n", "The file contains NUL characters: it is not a text CSV."),
        (b"username\n" + b"a" * 1_000_001, "The file is larger than 1000 kB; split it."),
    ],
)
def test_uploads_in_other_encodings_or_too_large_get_a_message(instructor, assignment, content, message):
    response = import_post(instructor, assignment, upload=SimpleUploadedFile("a.csv", content, "text/csv"))
    assert response.status_code == 422
    assert message in response.content.decode()
    assert stored(assignment) == {}


def test_a_utf8_file_with_a_bom_from_a_spreadsheet_is_read(instructor, people, assignment):
    content = "\ufeffUsername,Time Factor,Note\r\nsam,1.25,Müller OK\r\n".encode("utf-8")
    response = import_post(instructor, assignment, upload=SimpleUploadedFile("a.csv", content, "text/csv"))
    assert response.status_code == 200
    assert "time factor — → 1.25; note — → Müller OK" in response.content.decode()


# ---------------------------------------------------------------------------
# The gradebook
# ---------------------------------------------------------------------------


def test_the_gradebook_marks_accommodated_students_and_lists_them(instructor, people, assignment):
    services.accommodation_set(
        assignment=assignment, student=people.student, values={"time_factor": 1.5, "note": "DSO"},
        actor=people.instructor,
    )
    page = instructor.get(reverse("instructor:gradebook", args=["attn", assignment.slug])).content.decode()
    anchor = url("accommodations", assignment) + f"#student-{people.student.pk}"
    assert (
        f'<a href="{anchor}" class="aq-accommodation-marker" title="Accommodation: time ×1.5; note: DSO">'
        'accommodation<span class="aq-visually-hidden">: time ×1.5; note: DSO</span></a>'
    ) in page
    assert page.count("aq-accommodation-marker") == 1  # sue has none
    assert f'<li><a href="{anchor}">sam</a>: time ×1.5; note: DSO</li>' in page


def test_an_e_mail_a_classmate_only_typed_finds_nobody(people, assignment, emails):
    # sam types sue's address into his profile: the import still finds sue by it, and only her.
    people.student.email = "sue@example.org"
    people.student.save(update_fields=["email"])
    report = services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv("email,time_factor\nSUE@example.org,2\n"),
        dry_run=False, actor=people.instructor,
    )
    assert [(line.action, line.detail) for line in report.lines] == [("add", "time factor — → 2")]
    assert stored(assignment) == {"sue": (2.0, None, None, None, None, "")}


def test_an_unconfirmed_e_mail_finds_nobody(people, assignment):
    people.student2.email = "sue@example.org"
    people.student2.save(update_fields=["email"])
    report = services.accommodations_import(
        assignment=assignment, rows=services.accommodation_rows_from_csv("email,time_factor\nsue@example.org,2\n"),
        dry_run=False, actor=people.instructor,
    )
    assert [(line.action, line.detail) for line in report.lines] == [
        ("error", "no student of this course has confirmed the e-mail 'sue@example.org'; give the username instead"),
    ]
    assert stored(assignment) == {}
