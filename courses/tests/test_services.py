"""Course services: creating, copying, archiving, join codes, staff and dropping."""

import re
from datetime import datetime, timedelta, timezone as dt_timezone

import pytest

from exams.access import access_code_hash, access_code_matches
from django.utils import timezone

from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import assignment_create, product_yaml, published_version, submission_add, variant_for, user_create
from courses import services
from courses.models import (
    Assignment, AssignmentKind, Course, Enrolment, EnrolmentSource, EnrolmentStatus, ReleaseMoment, Role, SessionPolicy,
)
from courses.services import CourseRefused


@pytest.fixture
def creator(people):
    services.course_creation_grant(user=people.instructor)
    people.instructor.refresh_from_db()
    return type(people.instructor).objects.get(pk=people.instructor.pk)  # fresh permission cache


def test_creating_a_course_needs_the_permission_and_makes_the_creator_its_instructor(people, creator):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        services.course_create(actor=people.ta, slug="fresh", title="New")
    course = services.course_create(actor=creator, slug="fresh", title="New", term="Spring 2027", time_zone="Europe/Berlin")
    assert (course.term, course.time_zone, course.join_open, len(course.join_code)) == ("Spring 2027", "Europe/Berlin", True, 8)
    assert list(course.enrolments.values_list("user__username", "role")) == [("ines", Role.INSTRUCTOR)]
    with pytest.raises(CourseRefused, match="already a course called 'fresh'"):
        services.course_create(actor=creator, slug="fresh", title="Again")
    with pytest.raises(CourseRefused, match="not a time zone"):
        services.course_create(actor=creator, slug="tz", title="TZ", time_zone="Mars/Olympus")
    assert Course.objects.filter(slug="tz").exists() is False


def test_copy_for_a_new_term_keeps_assignments_and_versions_shifts_dates_and_brings_no_students(people, creator):
    version = published_version(source=product_yaml())
    due = datetime(2026, 10, 1, 9, 0, tzinfo=dt_timezone.utc)
    assignment = assignment_create(people.course, [version], opens_at=due - timedelta(days=7), due_at=due, attempts_per_part=4)
    submission_add(variant_for(assignment.items.get(), people.student, params={"a": 2, "b": 3}), "product", "6", awarded=1.0)
    copy = services.course_copy(source=people.course, actor=creator, slug="attn-2027", title="Attention", term="2027", offset=timedelta(days=182))
    copied = copy.assignments.get()
    assert (copied.slug, copied.attempts_per_part, copied.opens_at, copied.due_at, copied.closes_at) == (
        "week1", 4, due + timedelta(days=175), due + timedelta(days=182), None)
    assert list(copied.items.values_list("exercise_version_id", flat=True)) == [version.pk]
    # The copier is its instructor; the source's other staff are invited with their roles.
    assert sorted(copy.enrolments.values_list("user__username", "role")) == [("ines", Role.INSTRUCTOR)]
    assert sorted(copy.enrolment_invitations.values_list("user__username", "role", "invited_by__username")) == [
        ("rita", Role.INSTRUCTOR, "ines"), ("tariq", Role.TEACHING_ASSISTANT, "ines")]
    assert copy.copied_from == people.course
    assert assignment.items.get().variants.count() == 1 and copied.items.get().variants.count() == 0
    alone = services.course_copy(source=people.course, actor=creator, slug="solo", title="Solo", copy_staff=False)
    assert list(alone.enrolments.values_list("user__username", flat=True)) == ["ines"]


def test_a_copied_exam_keeps_its_policy_and_controls_but_starts_unreleased_without_its_code(people, creator):
    """Last term's students know the access code, and a release scheduled for last term's
    date would fire at once: neither is copied. The source keeps both."""
    version = published_version(source=product_yaml())
    exam = assignment_create(people.course, [version])
    released = datetime(2026, 10, 2, 12, 0, tzinfo=dt_timezone.utc)
    Assignment.objects.filter(pk=exam.pk).update(
        kind=AssignmentKind.EXAM, show_score=ReleaseMoment.ON_RELEASE, grades_released_at=released,
        grades_release_scheduled_at=released, grades_release_scheduled_by=people.instructor,
        access_code=access_code_hash("s3cret"), allowed_networks="10.0.0.0/8", shuffle_items=True,
        has_lti_link=True, session_policy=SessionPolicy.REFUSE_SECOND)
    Course.objects.filter(pk=people.course.pk).update(join_code="SRC23456", join_open=True)
    copy = services.course_copy(source=people.course, actor=creator, slug="exam-2027", title="Exam copy")
    copied = copy.assignments.get()
    assert (copied.kind, copied.show_score, copied.allowed_networks, copied.shuffle_items, copied.session_policy) == (
        AssignmentKind.EXAM, ReleaseMoment.ON_RELEASE, "10.0.0.0/8", True, SessionPolicy.REFUSE_SECOND)
    assert (copied.access_code, copied.has_lti_link) == ("", False)
    assert (copied.grades_released_at, copied.grades_release_scheduled_at, copied.grades_release_scheduled_by) == (
        None, None, None)
    assert copy.join_code not in (None, "SRC23456") and len(copy.join_code) == 8
    source = Assignment.objects.get(pk=exam.pk)
    assert access_code_matches(stored=source.access_code, given="s3cret")
    assert (source.grades_released_at, source.grades_release_scheduled_at) == (released, released)


def test_an_archived_course_refuses_writes_and_joining_until_brought_back(people, creator):
    course = services.course_create(actor=creator, slug="arch", title="Arch")
    services.course_archive(course=course)
    for write in (
        lambda: services.course_update(course=course, title="X"),
        lambda: services.join_code_rotate(course=course),
        lambda: services.enrolment_add(course=course, identifier="sam", role=Role.STUDENT, actor=creator),
        lambda: services.roster_import(course=course, rows=[{"username": "sam"}], dry_run=True, actor=creator),
    ):
        with pytest.raises(CourseRefused, match="archived"):
            write()
    with pytest.raises(CourseRefused, match="archived and takes no new students"):
        services.course_join(code=course.join_code, user=people.student)
    services.course_archive(course=course, archived=False)
    assert services.course_join(code=course.join_code.lower(), user=people.student).role == Role.STUDENT


def test_join_codes_rotate_close_and_expire_and_joining_twice_changes_nothing(people, creator):
    course = services.course_create(actor=creator, slug="j", title="J")
    old = course.join_code
    first = services.course_join(code=f"  {old} ", user=people.student)
    again = services.course_join(code=old, user=people.student)
    assert (first.pk, again.pk, first.source) == (again.pk, first.pk, EnrolmentSource.JOIN_CODE)
    assert services.course_join(code=old, user=creator).role == Role.INSTRUCTOR  # staff keep their role
    services.join_code_rotate(course=course)
    assert course.join_code != old
    with pytest.raises(CourseRefused, match="no course with that code"):
        services.course_join(code=old, user=people.student2)
    services.join_settings_update(course=course, join_open=False, expires_at=None)
    with pytest.raises(CourseRefused, match="closed"):
        services.course_join(code=course.join_code, user=people.student2)
    services.join_settings_update(course=course, join_open=True, expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(CourseRefused, match="expired"):
        services.course_join(code=course.join_code, user=people.student2)
    services.join_settings_update(course=course, join_open=True, expires_at=timezone.now() + timedelta(days=1))
    assert services.course_join(code=course.join_code, user=people.student2).user == people.student2
    with pytest.raises(CourseRefused, match="no course with that code"):
        services.course_join(code="x" * 500, user=people.student2)


def test_a_dropped_student_cannot_come_back_by_code_but_can_be_added_again(people, creator):
    course = services.course_create(actor=creator, slug="d", title="D")
    enrolment = services.course_join(code=course.join_code, user=people.student)
    assert services.enrolment_remove(enrolment=enrolment) == "dropped"
    assert Enrolment.objects.get(pk=enrolment.pk).status == EnrolmentStatus.DROPPED
    with pytest.raises(CourseRefused, match="removed from D"):
        services.course_join(code=course.join_code, user=people.student)
    change = services.enrolment_add(course=course, identifier="sam", role=Role.STUDENT, actor=creator)
    assert (change.action, change.enrolment.status) == ("re-enrolled", EnrolmentStatus.ACTIVE)


def test_staff_are_added_by_username_or_email_and_a_course_keeps_one_instructor(people, creator):
    course = services.course_create(actor=creator, slug="s", title="S")
    ella = user_create("ella", email="Ella@Example.org")
    # An address the account has only typed finds nobody: anyone may type anyone's.
    with pytest.raises(CourseRefused, match=re.escape(
        "No account has confirmed the e-mail 'ella@example.org' (the account 'ella' gives it without having "
        "confirmed it, so it is not used). Tick “Send an invitation e-mail” to make an account for that address "
        "and invite it, or add them by username."
    )):
        services.enrolment_add(course=course, identifier="ella@example.org", role=Role.TEACHING_ASSISTANT, actor=creator)
    email_confirmed(ella, "ella@example.org")
    # An existing account is invited, shown by the address typed; it joins once Ella accepts.
    invited = services.enrolment_add(course=course, identifier="ELLA@example.org", role=Role.TEACHING_ASSISTANT, actor=creator)
    assert (invited.action, invited.enrolment, invited.invitation.identifier) == ("invited", None, "ella@example.org")
    assert services.enrolment_invitation_accept(invitation=invited.invitation, user=ella).role == Role.TEACHING_ASSISTANT
    assert services.enrolment_add(course=course, identifier="ella", role=Role.TEACHING_ASSISTANT, actor=creator).action == "unchanged"
    assert services.enrolment_add(course=course, identifier="ella", role=Role.INSTRUCTOR, actor=creator).action == "role changed"
    with pytest.raises(CourseRefused, match="No account has confirmed the e-mail 'nobody@example.org'. Tick"):
        services.enrolment_add(course=course, identifier="nobody@example.org", role=Role.STUDENT, actor=creator)
    with pytest.raises(CourseRefused, match="not a role"):
        services.enrolment_add(course=course, identifier="ella", role="owner", actor=creator)
    ines = Enrolment.objects.get(course=course, user=creator)
    assert services.enrolment_remove(enrolment=ines) == "removed"
    ella = Enrolment.objects.get(course=course, user__username="ella")
    with pytest.raises(CourseRefused, match="at least one instructor"):
        services.enrolment_remove(enrolment=ella)
    with pytest.raises(CourseRefused, match="at least one instructor"):
        services.enrolment_add(course=course, identifier="ella", role=Role.STUDENT, actor=creator)
    assert list(course.enrolments.values_list("user__username", "role")) == [("ella", Role.INSTRUCTOR)]


def test_the_demo_instructor_may_create_courses(demo):
    from django.contrib.auth import get_user_model

    User = get_user_model()
    assert User.objects.get(username="instructor").has_perm("courses.create_course") is True
    assert User.objects.get(username="student1").has_perm("courses.create_course") is False


def test_copy_keeps_the_local_wall_clock_time_across_summer_time(people, creator):
    from zoneinfo import ZoneInfo

    berlin = ZoneInfo("Europe/Berlin")
    people.course.time_zone = "Europe/Berlin"
    people.course.save()
    assignment_create(people.course, [published_version(source=product_yaml())], due_at=datetime(2027, 3, 1, 9, 0, tzinfo=berlin))
    copy = services.course_copy(source=people.course, actor=creator, slug="summer", title="S", offset=timedelta(days=182))
    due = copy.assignments.get().due_at
    assert due == datetime(2027, 8, 30, 9, 0, tzinfo=berlin)
    assert due == datetime(2027, 8, 30, 7, 0, tzinfo=dt_timezone.utc)


def test_copied_staff_join_the_copy_only_once_they_accept(people, creator):
    copy = services.course_copy(source=people.course, actor=creator, slug="attn-next", title="Attention")
    invitation = copy.enrolment_invitations.get(user=people.reviewer)
    assert not copy.enrolments.filter(user=people.reviewer).exists()
    services.enrolment_invitation_accept(invitation=invitation, user=people.reviewer)
    assert copy.enrolments.get(user=people.reviewer).role == Role.INSTRUCTOR
    assert not copy.enrolment_invitations.filter(user=people.reviewer).exists()


def test_copied_staff_made_by_staff_and_never_signed_in_are_enrolled_at_once(people, creator):
    from django.contrib.auth import get_user_model

    from courses.models import Enrolment

    report = services.roster_import(course=people.course, rows=[{"email": "tom@example.org"}], dry_run=False,
                                    actor=people.instructor)  # made by staff, awaits its first password
    fresh = get_user_model().objects.get(pk=report.created_user_ids[0])
    Enrolment.objects.filter(course=people.course, user=fresh).update(role=Role.TEACHING_ASSISTANT)
    copy = services.course_copy(source=people.course, actor=creator, slug="attn-next", title="Attention")
    assert copy.enrolments.get(user=fresh).role == Role.TEACHING_ASSISTANT
    assert not copy.enrolment_invitations.filter(user=fresh).exists()
