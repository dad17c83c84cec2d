"""Roster import: a table of good, bad and repeated rows, the dry run, and re-importing;
student ids, names of existing accounts, and what the lines say of invitations."""

import re

import pytest
from django.contrib.auth import get_user_model

from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import user_create
from courses import services
from courses.models import Enrolment, EnrolmentSource, EnrolmentStatus, Role
from courses.services import CourseRefused, roster_import, roster_rows_from_csv

ROSTER = """\
username,email,name,student_id,role
,ada@example.org,Ada Lovelace,S-001,student
sam,,,,
,SUE@example.org,,,
,new.person@example.org,Grace Brewster Hopper,,ta
bob!,,Bob,,student
,not-an-email,,,
ghost,,,,student
,ada@example.org,,,
,x@example.org,,,owner
sam,other@example.org,,,
,,Nobody,,

otto,,,,instructor
"""

EXPECTED = [
    (2, "create", "new account 'ada', enrolled as student; they choose a password with “Forgot your password?” on the sign-in page"),
    (3, "skip", "'sam' is already enrolled as student"),
    (4, "skip", "'sue' is already enrolled as student"),
    (5, "create", "new account 'new.person', enrolled as teaching assistant; they choose a password with “Forgot your password?” on the sign-in page"),
    (6, "error", "'bob!' is not a valid username (letters, digits and @.+-_ only)"),
    (7, "error", "'not-an-email' is not an e-mail address"),
    (8, "error", "no account is called 'ghost'; add an e-mail to create one"),
    (9, "error", "the same person as line 2"),
    (10, "error", "'owner' is not a role (student, ta or instructor)"),
    (11, "error", "the account 'sam' has another e-mail address"),
    (12, "error", "needs a username or an e-mail"),
    # Otto's account exists and is not in the course: invited, shown as typed, not enrolled.
    (14, "invite", "'otto' invited as instructor: enrolled once they accept the invitation on their dashboard"),
]


@pytest.fixture
def roster_people(people):
    email_confirmed(people.student, "sam@example.org")
    email_confirmed(people.student2, "sue@example.org")
    return people


def snapshot():
    User = get_user_model()
    return (
        sorted(User.objects.values_list("username", "email", "first_name", "last_name")),
        sorted(Enrolment.objects.values_list("course__slug", "user__username", "role", "status", "student_id", "source")),
    )


def report_rows(report):
    return [(line.line, line.action, line.detail) for line in report.lines]


def test_the_dry_run_reports_every_line_and_changes_nothing(roster_people):
    before = snapshot()
    report = roster_import(course=roster_people.course, rows=roster_rows_from_csv(ROSTER), dry_run=True, actor=roster_people.instructor)
    assert report_rows(report) == EXPECTED
    assert report.counts == {"create": 2, "enrol": 0, "re-enrol": 0, "change role": 0, "update": 0, "invite": 1, "skip": 2, "error": 7}
    assert snapshot() == before


def test_applying_matches_the_dry_run_and_reimporting_changes_nothing(roster_people):
    rows = roster_rows_from_csv(ROSTER)
    applied = roster_import(course=roster_people.course, rows=rows, dry_run=False, actor=roster_people.instructor)
    assert report_rows(applied) == EXPECTED
    ada = get_user_model().objects.get(username="ada")
    # No usable password (none was hashed): the invitation or "Forgot your password?" sets it.
    assert (ada.email, ada.first_name, ada.last_name, ada.has_usable_password()) == ("ada@example.org", "Ada", "Lovelace", False)
    assert Enrolment.objects.filter(course=roster_people.course, user=ada).values_list("role", "student_id", "source").get() == (
        Role.STUDENT, "S-001", EnrolmentSource.ROSTER)
    hopper = get_user_model().objects.get(username="new.person")
    assert (hopper.first_name, hopper.last_name) == ("Grace Brewster", "Hopper")
    assert not get_user_model().objects.filter(username__in=["bob!", "ghost"]).exists()
    after = snapshot()
    again = roster_import(course=roster_people.course, rows=roster_rows_from_csv(ROSTER), dry_run=False, actor=roster_people.instructor)
    assert again.changes == 0
    assert [line.action for line in again.lines if line.action != "error"] == ["skip"] * 5
    assert snapshot() == after


def test_a_dropped_student_is_re_enrolled_and_roles_and_ids_are_updated(roster_people):
    Enrolment.objects.filter(user=roster_people.student).update(status=EnrolmentStatus.DROPPED)
    rows = [{"username": "sam"}, {"username": "sue", "role": "TA"}, {"email": "sue@example.org", "student_id": "9"}]
    report = roster_import(course=roster_people.course, rows=rows, dry_run=False, actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [
        (1, "re-enrol", "'sam' was dropped; enrolled again as student"),
        (2, "change role", "'sue' is now teaching assistant"),
        (3, "error", "the same person as line 2"),
    ]


def test_a_roster_line_that_takes_staff_access_away_says_so(roster_people):
    Enrolment.objects.filter(user=roster_people.student, course=roster_people.course).update(role=Role.TEACHING_ASSISTANT)
    rows = [{"username": "sam", "role": "student"}]
    report = roster_import(course=roster_people.course, rows=rows, dry_run=True, actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [
        (1, "change role", "'sam' is now student (was teaching assistant: loses staff access to this course)"),
    ]


def test_the_last_instructor_cannot_be_demoted_by_a_roster(people):
    course = people.other_course  # otto is its only instructor
    report = roster_import(course=course, rows=[{"username": "otto", "role": "student"}], dry_run=False, actor=people.outsider)
    assert report_rows(report) == [(2, "error", "A course needs at least one instructor; add another one first.")]
    assert Enrolment.objects.get(course=course, user=people.outsider).role == Role.INSTRUCTOR


@pytest.mark.parametrize("text,message", [
    ("", "The roster is empty."),
    ("name,role\nAda,student\n", "must name the columns, with a 'username' or 'email' column"),
    ("email\n" + "a@example.org\n" * (services.MAX_ROSTER_ROWS + 1), f"more than {services.MAX_ROSTER_ROWS} rows"),
    ("email\n" + "x" * (services.MAX_ROSTER_BYTES + 1), "larger than 1000 kB"),
    ('email\n"a@example.org\n', "not valid CSV"),
    ("email,name\nada@example.org,A\x00da\n", "NUL characters"),
])
def test_files_that_are_not_rosters_are_refused_whole(text, message):
    with pytest.raises(CourseRefused, match=message):
        roster_rows_from_csv(text)


def test_headers_are_read_loosely_and_blank_lines_keep_their_numbers():
    rows = roster_rows_from_csv("\ufeffE-mail, Student ID ,Full Name,extra\n\nada@example.org,7,Ada L,zzz\n")
    assert rows == [{"line": 3, "email": "ada@example.org", "student_id": "7", "name": "Ada L"}]


def test_a_username_taken_by_an_email_derived_name_gets_a_number(people):
    user_create("ada")
    report = roster_import(course=people.course, rows=[{"email": "ada@example.org"}], dry_run=False, actor=people.instructor)
    assert report.lines[0].detail.startswith("new account 'ada2'")


def test_a_student_id_names_one_person_of_the_course(roster_people):
    Enrolment.objects.filter(user=roster_people.student2).update(student_id="S-2")
    rows = [
        {"username": "sam", "student_id": "S-2"},  # sue's
        {"email": "ada@example.org", "student_id": "S-7"},
        {"email": "bo@example.org", "student_id": "S-7"},  # ada's, a line above
        {"username": "sue", "student_id": "S-2"},  # her own
    ]
    report = roster_import(course=roster_people.course, rows=rows, dry_run=True, actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [
        (1, "error", "The student id S-2 already belongs to 'sue' in this course."),
        (2, "create", "new account 'ada', enrolled as student; they choose a password with “Forgot your password?” on the sign-in page"),
        (3, "error", "the student id S-7 is also on line 2"),
        (4, "skip", "'sue' is already enrolled as student"),
    ]
    # Adding someone by hand follows the same rule.
    with pytest.raises(CourseRefused, match="The student id S-2 already belongs to 'sue' in this course."):
        services.enrolment_add(course=roster_people.course, identifier="sam", role=Role.STUDENT, actor=roster_people.instructor, student_id="S-2")
    # In another course the id is free.
    Enrolment.objects.create(course=roster_people.other_course, user=roster_people.student, role=Role.STUDENT)
    other = roster_import(course=roster_people.other_course, rows=[{"username": "sam", "student_id": "S-2"}], dry_run=False, actor=roster_people.outsider)
    assert report_rows(other) == [(2, "update", "'sam': student id set to S-2")]


def test_the_name_of_an_existing_account_is_kept_and_the_report_says_so(roster_people):
    user_create("nameless", email="")
    rows = [
        {"username": "sam", "name": "Samuel Other"},
        {"username": "sue", "name": "Sue Shaw"},  # the same: nothing to say
        {"username": "nameless", "first_name": "Nia", "last_name": "Ewe"},
    ]
    report = roster_import(course=roster_people.course, rows=rows, dry_run=False, actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [
        (1, "skip", "'sam' is already enrolled as student; the name “Samuel Other” is not used: the account keeps its own, “Sam Stone”"),
        (2, "skip", "'sue' is already enrolled as student"),
        # Not in the course: invited, and nothing said of the account's own name.
        (3, "invite", "'nameless' invited as student: enrolled once they accept the invitation on their dashboard"),
    ]
    assert sorted(get_user_model().objects.filter(username__in=["sam", "nameless"]).values_list("first_name", "last_name")) == [
        ("", ""), ("Sam", "Stone"),
    ]


def test_with_invitations_ticked_the_dry_run_says_the_invitation_sets_the_password(client, roster_people):
    from django.urls import reverse

    from authoring.tests.factories import PASSWORD

    client.login(username="ines", password=PASSWORD)
    url = reverse("courses:roster", args=["attn"])
    text = "email,name\nada@example.org,Ada Lovelace\n"
    for extra, detail in (
        ({"invite": "on"}, "new account 'ada', enrolled as student; the invitation e-mail lets them choose a password"),
        ({}, "new account 'ada', enrolled as student; they choose a password with “Forgot your password?” on the sign-in page"),
    ):
        page = client.post(url, {"text": text, **extra})
        assert [line.detail for line in page.context["report"].lines] == [detail]
        assert detail in page.content.decode().replace("&#x27;", "'")
        checkbox = re.search(r'<input type="checkbox" name="invite" id="apply-invite"[^>]*>', page.content.decode()).group(0)
        assert ("checked" in checkbox) is bool(extra)


def test_the_accommodations_import_takes_the_same_upload_without_an_invitation_box(client, roster_people):
    from datetime import datetime, timezone as dt_timezone

    from django.urls import reverse

    from authoring.tests.factories import assignment_create, product_yaml, published_version
    from courses.forms import RosterForm
    from exams.forms_accommodations import AccommodationsCsvForm

    assert list(AccommodationsCsvForm().fields) == ["file", "text"]
    assert list(RosterForm().fields) == ["file", "text", "invite"]
    assignment = assignment_create(
        roster_people.course, [published_version(source=product_yaml())], time_limit_minutes=30,
        opens_at=datetime(2026, 3, 2, 8, 0, tzinfo=dt_timezone.utc),
    )
    client.force_login(roster_people.instructor)
    page = client.get(reverse("proctor:accommodations_import", args=["attn", assignment.slug])).content.decode()
    assert 'name="text"' in page and 'name="invite"' not in page and "invitation" not in page
    roster_page = client.get(reverse("courses:roster", args=["attn"])).content.decode()
    assert 'name="invite"' in roster_page


@pytest.mark.parametrize(
    ("typed", "line"),
    [
        ("SAM", (1, "skip", "'sam' is already enrolled as student; the file writes 'SAM': the account is 'sam'")),
        ("Sam", (1, "skip", "'sam' is already enrolled as student; the file writes 'Sam': the account is 'sam'")),
        ("sam", (1, "skip", "'sam' is already enrolled as student")),
        ("GHOST", (1, "error", "no account is called 'GHOST'; add an e-mail to create one")),
    ],
)
def test_a_username_in_another_letter_case_finds_its_one_account(roster_people, typed, line):
    """A spreadsheet capitalises: "Sam" finds sam, and the report names the account."""
    report = roster_import(course=roster_people.course, rows=[{"username": typed}], dry_run=True,
                           actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [line]


@pytest.mark.parametrize(
    ("email", "line"),
    [
        ("sam@example.org", (1, "skip", "'sam' is already enrolled as student; the file writes 'SAM': the account is 'sam'")),
        ("other@example.org", (1, "error", "the username 'SAM' looks like the existing account 'sam'; choose another")),
    ],
)
def test_a_username_in_another_case_with_an_email_must_give_that_accounts_own(roster_people, email, line):
    report = roster_import(course=roster_people.course, rows=[{"username": "SAM", "email": email}], dry_run=True,
                           actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [line]


def test_a_username_two_accounts_share_but_for_case_finds_neither(roster_people):
    user_create("Sam")  # made before usernames were compared without case
    report = roster_import(course=roster_people.course, rows=[{"username": "SAM"}], dry_run=True,
                           actor=roster_people.instructor, first_line=1)
    assert report_rows(report) == [(1, "error", "no account is called 'SAM'; add an e-mail to create one")]
