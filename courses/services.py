"""Writes for courses: creating, settings, archiving and copying courses; staff; bringing
students in (join code, roster import, by hand) and dropping them; the demo course.

Every write refuses with ``CourseRefused`` (a message for the person) rather than
raising a 500; an archived course refuses everything but unarchiving.
"""

from __future__ import annotations

import csv
import io
import re
import secrets
import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.identifiers import email_normalise, identifier_normalise, name_normalise, username_scripts_refusal
from accounts.models import EmailTrust
from accounts.selectors import (
    LookalikeUsernames, awaits_first_password, trusted_emails_recorded, user_by_username_or_trusted_email, usernames_claiming_email,
    usernames_claiming_emails, users_by_trusted_email,
)
from accounts.services import email_trust_record, email_trust_record_new_account
from attnquiz.confirmations import Confirmed, confirmation_require
from exams.selectors_proctor import running_attempts_by_exam
from exercises.models import ExerciseVersion, VersionStatus

from . import selectors
from .import_report import ImportLine, LineReport
from .models import (
    Assignment, AssignmentItem, Course, Enrolment, EnrolmentInvitation, EnrolmentSource, EnrolmentStatus, Role,
)

DEMO_PASSWORD = "attention-demo"
DEMO_COURSE_SLUG = "attention-101"
DEMO_INSTRUCTORS = ("instructor", "reviewer")
DEMO_TEACHING_ASSISTANTS = ("ta",)
DEMO_STUDENTS = ("student1", "student2", "student3")
# The worked example comes first: it is the exercise a newcomer should open.
DEMO_FIRST_EXERCISE = "attention-weights-one-query"


@dataclass(frozen=True)
class DemoCourse:
    course: Course
    assignment: Assignment
    logins: list[tuple[str, str, str]]  # (username, password, role)


def user_get_or_create(*, username: str, password: str):
    """A user with a known password; an existing one keeps its password."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user


def enrolment_ensure(
    *, course: Course, user, role: str, source: str = EnrolmentSource.MANUAL
) -> Enrolment:
    """Enrol the user with this role, active again if they had been dropped.

    ``source`` is recorded only when the enrolment is new: how someone first came in."""
    enrolment, _ = Enrolment.objects.update_or_create(
        course=course,
        user=user,
        defaults={"role": role, "status": EnrolmentStatus.ACTIVE, "dropped_at": None},
        create_defaults={
            "role": role, "status": EnrolmentStatus.ACTIVE, "dropped_at": None, "source": source,
        },
    )
    return enrolment


def assignment_item_ensure(
    *, assignment: Assignment, version: ExerciseVersion, position: int, points: float = 1.0
) -> AssignmentItem:
    item, _ = AssignmentItem.objects.get_or_create(
        assignment=assignment,
        exercise_version=version,
        defaults={"position": position, "points": points},
    )
    return item


def latest_published_versions() -> list[ExerciseVersion]:
    versions = {}
    for version in ExerciseVersion.objects.filter(status=VersionStatus.PUBLISHED).select_related(
        "exercise"
    ).order_by("exercise__slug", "-number"):
        versions.setdefault(version.exercise.slug, version)
    ordered = sorted(versions.values(), key=lambda v: (v.exercise.slug != DEMO_FIRST_EXERCISE, v.exercise.slug))
    return ordered


@transaction.atomic
def demo_course_ensure() -> DemoCourse:
    """The demo course with its accounts and one assignment holding the bank. Idempotent."""
    course, _ = Course.objects.get_or_create(
        slug=DEMO_COURSE_SLUG, defaults={"title": "Attention, from scratch"}
    )
    logins = []
    for usernames, role in (
        (DEMO_INSTRUCTORS, Role.INSTRUCTOR),
        (DEMO_TEACHING_ASSISTANTS, Role.TEACHING_ASSISTANT),
        (DEMO_STUDENTS, Role.STUDENT),
    ):
        for username in usernames:
            user = user_get_or_create(username=username, password=DEMO_PASSWORD)
            enrolment_ensure(course=course, user=user, role=role)
            logins.append((username, DEMO_PASSWORD, role.label))
            if role == Role.INSTRUCTOR:
                course_creation_grant(user=user)
    assignment, _ = Assignment.objects.get_or_create(
        course=course,
        slug="scaled-dot-product",
        defaults={"title": "Scaled dot-product attention", "attempts_per_part": 5},
    )
    for position, version in enumerate(latest_published_versions()):
        if not assignment.items.filter(exercise_version__exercise=version.exercise).exists():
            assignment_item_ensure(assignment=assignment, version=version, position=position)
    return DemoCourse(course=course, assignment=assignment, logins=logins)


class CourseRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class CourseArchived(CourseRefused):
    """A write to an archived course; pages answer it 409 wherever it is raised."""

    MESSAGE = "This course is archived: it is read-only (it can still be exported)."

    def __init__(self, message: str = MESSAGE):
        super().__init__(message)


# ---------------------------------------------------------------------------
# Courses
# ---------------------------------------------------------------------------

# No 0/O or 1/I/L: codes are read aloud and typed from a slide.
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 8
COURSE_FIELDS = ("title", "term", "time_zone", "description")


def course_creation_grant(*, user, granted: bool = True) -> None:
    """Give (or take away) the site-level permission to create courses."""
    permission = Permission.objects.get(content_type__app_label="courses", codename="create_course")
    if granted:
        user.user_permissions.add(permission)
    else:
        user.user_permissions.remove(permission)


def require_course_writable(*, course: Course) -> None:
    """The one guard every write to a course passes (pages, API, LTI, tasks): an archived
    course takes no change but being brought back (``course_archive``) or copied."""
    if course.archived_at is not None:
        raise CourseArchived()


# ---------------------------------------------------------------------------
# Assignments (the teaching pages and the LMS create them)
# ---------------------------------------------------------------------------

ASSIGNMENT_FIELDS = (
    "title", "slug", "opens_at", "due_at", "closes_at", "attempts_per_part",
    "penalty_per_extra_attempt", "late_penalty", "time_limit_minutes", "solution_policy",
    "is_published",
    # Order and exam access controls.
    "shuffle_items", "access_code", "allowed_networks", "session_policy",
    # Kind and review policy.
    "kind", "show_correctness", "show_score", "show_misconception", "show_hints", "show_heatmap",
    "show_solutions",
)


def assignment_create(*, course: Course, **fields) -> Assignment:
    """A new assignment of ``course`` from the ASSIGNMENT_FIELDS given, its slug stored in
    lower case; refused in an archived course or when the slug is taken in any case."""
    require_course_writable(course=course)
    slug = course_slug_normalise(fields["slug"])
    assignment_slug_require_free(course=course, slug=slug)
    values = {name: fields[name] for name in ASSIGNMENT_FIELDS if name in fields}
    return Assignment.objects.create(course=course, **{**values, "slug": slug})


def assignment_slug_require_free(*, course: Course, slug: str, exclude_pk: int | None = None) -> None:
    """Refuse (CourseRefused) a slug another assignment of the course has in any case: one
    address may not name two assignments (addresses read it in any case)."""
    taken = course.assignments.filter(slug__iexact=slug).exclude(pk=exclude_pk).values_list("slug", flat=True).first()
    if taken is not None:
        raise CourseRefused(f"This course already has an assignment called '{taken}'.")


def require_version_published(*, version: ExerciseVersion) -> None:
    if version.status != VersionStatus.PUBLISHED:
        raise CourseRefused(
            f"{version} is {version.get_status_display().lower()}; only published versions can be assigned."
        )


@transaction.atomic
def assignment_item_add(
    *, assignment: Assignment, version: ExerciseVersion, points: float = 1.0
) -> AssignmentItem:
    """Append a published exercise version to the assignment (once per exercise)."""
    require_course_writable(course=assignment.course)
    require_version_published(version=version)
    if assignment.items.filter(exercise_version__exercise=version.exercise).exists():
        raise CourseRefused(
            f"{version.exercise.slug} is already in this assignment; switch its version instead."
        )
    position = (assignment.items.order_by("-position").values_list("position", flat=True).first() or 0) + 1
    if not assignment.items.exists():
        position = 0
    return AssignmentItem.objects.create(
        assignment=assignment, exercise_version=version, position=position, points=points
    )


def _check_time_zone(time_zone: str) -> None:
    if time_zone not in zoneinfo.available_timezones():
        raise CourseRefused(f"'{time_zone[:64]}' is not a time zone name (e.g. Europe/Berlin, UTC).")


def _new_join_code() -> str:
    while True:
        code = "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))
        if not Course.objects.filter(join_code=code).exists():
            return code


# Words the site's addresses use where a course's short name goes (/courses/new/ is the
# form that creates a course); ``course_slug_refusal`` also asks the URLconf itself.
RESERVED_COURSE_SLUGS = frozenset({"new"})
COURSE_SLUG_PREFIXES = ("courses", "teach", "author", "exam", "lti/courses", "api/v1/courses")


def _slug_names_a_page(slug: str) -> bool:
    """Whether /<prefix>/<slug>/ is another page than the course's own, for a prefix under
    which course short names go."""
    from django.urls import Resolver404, resolve

    for prefix in COURSE_SLUG_PREFIXES:
        try:
            match = resolve(f"/{prefix}/{slug}/")
        except Resolver404:
            continue
        if match.kwargs.get("course_slug") == slug:
            continue
        try:  # "~" is in no short name: only a catch-all (the API's 404 problem) takes it
            catch_all = resolve(f"/{prefix}/~/~/")
        except Resolver404:
            catch_all = None
        if catch_all is None or catch_all.func is not match.func:
            return True
    return False


def course_slug_normalise(slug: str) -> str:
    """Short names (of courses and assignments) are stored in lower case: ``LA300`` and
    ``la300`` are one name."""
    return str(slug or "").strip().lower()


def course_slug_refusal(slug: str) -> str | None:
    """Why this (normalised) short name cannot name a new course, or None."""
    if slug in RESERVED_COURSE_SLUGS or _slug_names_a_page(slug):
        return f"'{slug}' is a word the site's addresses use (/courses/{slug}/ is another page); choose another short name."
    if Course.objects.filter(slug__iexact=slug).exists():
        return f"There is already a course called '{slug}'; choose another short name."
    return None


def course_text_normalise(text: str) -> str:
    """A course's title or term on one line: no control character (a line break, a tab) or
    invisible character survives, and runs of white space become one space."""
    return name_normalise(text)


@transaction.atomic
def course_create(
    *, actor, slug: str, title: str, term: str = "", time_zone: str = "UTC", description: str = ""
) -> Course:
    """A new course with the actor as its instructor and an open join code. The short name
    is stored in lower case and may not be taken in any case nor be a word of the site's
    addresses; the title and term are kept on one line."""
    selectors.require_course_creation(user=actor)
    _check_time_zone(time_zone)
    slug = course_slug_normalise(slug)
    if refusal := course_slug_refusal(slug):
        raise CourseRefused(refusal)
    title, term = course_text_normalise(title), course_text_normalise(term)
    if not title:
        raise CourseRefused("A course needs a title.")
    course = Course.objects.create(
        slug=slug, title=title, term=term, time_zone=time_zone, description=description,
        created_by=actor, join_code=_new_join_code(), join_open=True,
    )
    enrolment_ensure(course=course, user=actor, role=Role.INSTRUCTOR)
    return course


def course_update(*, course: Course, **fields) -> Course:
    require_course_writable(course=course)
    if "time_zone" in fields:
        _check_time_zone(fields["time_zone"])
    for name in ("title", "term"):
        if name in fields:
            fields[name] = course_text_normalise(fields[name])
    if "title" in fields and not fields["title"]:
        raise CourseRefused("A course needs a title.")
    for name in COURSE_FIELDS:
        if name in fields:
            setattr(course, name, fields[name])
    course.save()
    return course


def course_archive(*, course: Course, archived: bool = True, confirmed: Confirmed = False) -> Course:
    """Archive (read-only, joining closed) or bring back a course. Idempotent. Archiving
    while students sit an exam of the course asks first, in numbers (ConfirmationNeeded,
    nothing changed; ``confirmed`` as attnquiz.confirmations.Confirmed): their exam pages
    stop taking answers at once."""
    with transaction.atomic():
        locked = Course.objects.select_for_update().get(pk=course.pk)
        if archived and locked.archived_at is None:
            confirmation_require(
                scope=f"courses.archive:{locked.pk}", message=course_archive_question(course=locked),
                confirmed=confirmed,
            )
            locked.archived_at = timezone.now()
        elif not archived:
            locked.archived_at = None
        locked.save(update_fields=["archived_at"])
    course.archived_at = locked.archived_at
    return course


def course_archive_question(*, course: Course) -> str:
    """What archiving does to the students sitting an exam now, in words: "2 students are
    sitting an exam of this course now (Midterm: 2). …"; empty when nobody is."""
    running = running_attempts_by_exam(course_id=course.pk)
    total = sum(count for _, count in running)
    if not total:
        return ""
    each = ", ".join(f"{exam.title}: {count}" for exam, count in running)
    who = f"{total} student{'s are' if total != 1 else ' is'}"
    return (
        f"{who} sitting an exam of this course now ({each}). Archiving makes the course read-only at once: "
        "their exam pages stop taking answers, and the answers they saved count."
    )


def _copy_staff_invite(*, source: Course, copy: Course, actor) -> None:
    """The source's other instructors and teaching assistants, with their roles, in the copy:
    each is invited and joins when they accept on their dashboard (a new course on someone's
    dashboard, and their name and e-mail shown to its staff, is their choice), except where
    ``enrolment_needs_consent`` says no consent is needed."""
    for enrolment in selectors.active_enrolments().filter(
        course=source, role__in=selectors.STAFF_ROLES
    ).exclude(user=actor).select_related("user"):
        user = enrolment.user
        if enrolment_needs_consent(user=user, actor=actor):
            _invite(course=copy, user=user, role=enrolment.role, source=EnrolmentSource.MANUAL,
                    student_id="", identifier=user.get_username(), actor=actor)
        else:
            enrolment_ensure(course=copy, user=user, role=enrolment.role)


@transaction.atomic
def course_copy(
    *, source: Course, actor, slug: str, title: str, term: str = "", offset: timedelta = timedelta(0),
    copy_staff: bool = True,
) -> Course:
    """A course for a new term: the same assignments, holding the same exercise versions, with
    every date moved by ``offset`` (in the course's local time); no students, no submissions.
    The copy starts unarchived, with its own join code, and no assignment's grades released.
    With ``copy_staff`` the source's other staff are invited with their roles
    (``_copy_staff_invite``).
    What belongs to one term stays behind: LMS links, exams' access codes (last term's
    students know them) and grade releases, made or scheduled (templates/courses/copy.html
    says so). Allowed networks and the other exam controls are copied."""
    copy = course_create(
        actor=actor, slug=slug, title=title, term=term, time_zone=source.time_zone,
        description=source.description,
    )
    copy.copied_from = source
    copy.save(update_fields=["copied_from"])
    if copy_staff:
        _copy_staff_invite(source=source, copy=copy, actor=actor)
    # Shift on the course's wall clock: a 09:00 deadline stays at 09:00 across a DST change.
    zone = zoneinfo.ZoneInfo(source.time_zone)
    assignments = list(source.assignments.prefetch_related("items"))
    slugs = _copied_assignment_slugs(assignments)
    for assignment in assignments:
        items = list(assignment.items.all())
        assignment.slug = slugs[assignment.pk]
        assignment.pk = None
        assignment.id = None
        assignment._state.adding = True
        assignment.course = copy
        assignment.has_lti_link = False  # the LMS links stay with the source course
        assignment.grades_released_at = None  # a new term's exam starts unreleased
        # A release scheduled for last term's date would fire at once in the copy.
        assignment.grades_release_scheduled_at = None
        assignment.grades_release_scheduled_by = None
        assignment.access_code = ""  # last term's students know it: set a new one
        for name in ("opens_at", "due_at", "closes_at"):
            value = getattr(assignment, name)
            if value is not None:
                setattr(assignment, name, (value.astimezone(zone) + offset).astimezone(dt_timezone.utc))
        assignment.save()
        AssignmentItem.objects.bulk_create(
            AssignmentItem(
                assignment=assignment, exercise_version_id=item.exercise_version_id,
                position=item.position, points=item.points, pool=item.pool,
            )
            for item in items
        )
    return copy


def _copied_assignment_slugs(assignments: list[Assignment]) -> dict[int, str]:
    """Each assignment's slug in a copy (by its id), in lower case as every new slug is. Two
    that differed only in case (stored before slugs were lower case) would be one: the one
    already in lower case keeps it, the other gets the first free "-2", "-3", …"""
    slugs: dict[int, str] = {}
    taken: set[str] = set()
    for assignment in sorted(assignments, key=lambda a: (a.slug != a.slug.lower(), a.pk)):
        base = course_slug_normalise(assignment.slug)
        slug, number = base, 1
        while slug in taken:
            number += 1
            suffix = f"-{number}"
            slug = base[: Assignment._meta.get_field("slug").max_length - len(suffix)] + suffix
        taken.add(slug)
        slugs[assignment.pk] = slug
    return slugs


def join_code_rotate(*, course: Course) -> Course:
    """A new code (the old link stops working); joining is opened."""
    require_course_writable(course=course)
    course.join_code = _new_join_code()
    course.join_open = True
    course.save(update_fields=["join_code", "join_open"])
    return course


def join_settings_update(*, course: Course, join_open: bool, expires_at: datetime | None) -> Course:
    require_course_writable(course=course)
    if join_open and course.join_code is None:
        course.join_code = _new_join_code()
    course.join_open = join_open
    course.join_expires_at = expires_at
    course.save(update_fields=["join_code", "join_open", "join_expires_at"])
    return course


def join_refusal(*, course: Course | None) -> str | None:
    """Why this code cannot be used now, or None when it can."""
    if course is None:
        return "There is no course with that code. Check it and try again."
    if course.archived_at is not None:
        return f"{course.title} is archived and takes no new students."
    if not course.join_open:
        return f"Joining {course.title} by code is closed. Ask your instructor."
    if course.join_expires_at is not None and timezone.now() >= course.join_expires_at:
        return f"The join code of {course.title} has expired. Ask your instructor for a new one."
    return None


@transaction.atomic
def join_code_guess_wait(*, address: str) -> float:
    """Take one join-code look-up from the address's bucket: 0.0, or seconds to wait.
    Every look-up counts, found or not, so a refusal says nothing about the code."""
    from django.conf import settings

    from grading.throttle import token_take

    return token_take(
        key=f"join:{address}", burst=settings.JOIN_RATE_BURST, per_second=settings.JOIN_RATE_PER_SECOND,
    )


def course_join(*, code: str, user) -> Enrolment:
    """Enrol the user as a student through a join code. Idempotent: someone already in the
    course keeps their role; a dropped student is not let back in by the code."""
    course = selectors.course_by_join_code(code=code)
    refusal = join_refusal(course=course)
    if refusal:
        raise CourseRefused(refusal)
    existing = Enrolment.objects.filter(course=course, user=user).first()
    if existing is not None:
        if existing.status == EnrolmentStatus.DROPPED:
            raise CourseRefused(
                f"You were removed from {course.title}; ask its instructor to add you again."
            )
        return existing
    return Enrolment.objects.create(
        course=course, user=user, role=Role.STUDENT, source=EnrolmentSource.JOIN_CODE
    )


# ---------------------------------------------------------------------------
# People: staff, students by hand, dropping
# ---------------------------------------------------------------------------


def _guard_last_instructor(*, enrolment: Enrolment, new_role: str | None) -> None:
    """Refuse a change that would leave the course without an active instructor."""
    if (
        enrolment.role == Role.INSTRUCTOR
        and enrolment.status == EnrolmentStatus.ACTIVE
        and new_role != Role.INSTRUCTOR
        and selectors.course_instructor_count(course=enrolment.course) <= 1
    ):
        raise CourseRefused("A course needs at least one instructor; add another one first.")


@dataclass(frozen=True)
class EnrolmentChange:
    enrolment: Enrolment | None  # None when the person was invited (``invitation``)
    action: str  # "enrolled", "re-enrolled", "role changed", "unchanged", "invited", "already invited"
    previous_role: str = ""  # the role before, when it changed
    invitation: EnrolmentInvitation | None = None  # set for "invited" and "already invited"
    shown: str = ""  # for an invitation: who was named this time, as typed (``identifier_shown``)

    @property
    def is_invitation(self) -> bool:
        return self.invitation is not None


def enrolment_needs_consent(*, user, actor) -> bool:
    """Whether adding this existing account (not in the course yet) by hand or by a roster
    import must wait for its owner to accept an invitation (``EnrolmentInvitation``):
    anyone can type anyone's username or address, and an enrolment shows the account's name
    and e-mail to the course's staff and puts the course on its owner's dashboard.

    No consent is asked when a site administrator adds people, or for an account made by a
    course's staff that has never been signed in to (it still awaits its first password,
    ``accounts.selectors.awaits_first_password``): staff made it for this purpose."""
    if actor is not None and getattr(actor, "is_superuser", False):
        return False
    return not (user.last_login is None and awaits_first_password(user=user))


def identifier_shown(*, user, identifier: str) -> str:
    """How an invited person is shown to the course's staff: the username they typed, or
    else the address they typed (normalised), never what the account says about itself."""
    identifier = identifier_normalise(identifier)[:254]
    return user.get_username() if identifier == user.get_username() else email_normalise(identifier)


def _invite(*, course: Course, user, role: str, source: str, student_id: str, identifier: str,
            actor) -> EnrolmentChange:
    """Invite an existing account that is not in the course (no enrolment is made). Call
    inside a transaction holding the course row. An invitation already pending is updated
    (its role, student id, what was typed); the same one again changes nothing."""
    if student_id:
        _student_id_check(course=course, user=user, student_id=student_id)
    invitation = EnrolmentInvitation.objects.filter(course=course, user=user).first()
    if invitation is None:
        invitation = EnrolmentInvitation.objects.create(
            course=course, user=user, role=role, source=source, student_id=student_id,
            identifier=identifier, invited_by=actor,
        )
        return EnrolmentChange(None, "invited", invitation=invitation, shown=identifier)
    if (invitation.role, invitation.student_id) == (role, student_id or invitation.student_id):
        return EnrolmentChange(None, "already invited", invitation=invitation, shown=identifier)
    previous_role = invitation.role if invitation.role != role else ""
    invitation.role, invitation.identifier, invitation.invited_by = role, identifier, actor
    if student_id:
        invitation.student_id = student_id
    invitation.save()
    return EnrolmentChange(None, "invited", previous_role, invitation=invitation, shown=identifier)


@transaction.atomic
def enrolment_add(
    *, course: Course, identifier: str, role: str, actor, source: str = EnrolmentSource.MANUAL,
    student_id: str = "", consented: bool = False,
) -> EnrolmentChange:
    """Add an existing account (by username, or by an e-mail address it has confirmed)
    with a role. Idempotent. An address an account gives without having confirmed it
    finds nobody (accounts.models): anyone can type anyone's address.

    An account not yet in the course is *invited* (``EnrolmentInvitation``, action
    "invited"; it is enrolled once its owner accepts) unless ``enrolment_needs_consent``
    says otherwise or ``consented`` is True: only for callers acting on the person's own
    request (set-up scripts, tests of enrolment itself), never for a form or an import.
    Someone already enrolled or dropped in this course is enrolled (again) at once, with
    the role given (a role change, as before)."""
    require_course_writable(course=course)
    if role not in Role.values:
        raise CourseRefused(f"'{role[:20]}' is not a role (instructor, ta or student).")
    user = user_by_username_or_trusted_email(identifier=identifier)
    if user is None:
        identifier = identifier_normalise(identifier)[:254]
        if "@" not in identifier:
            raise CourseRefused(
                f"No account has the username '{identifier}'. "
                "They can sign up first, or you can import them with the roster."
            )
        claimed = usernames_claiming_email(email=identifier)
        raise CourseRefused(
            f"No account has confirmed the e-mail '{email_normalise(identifier)}'"
            + (f" ({_claimed_by(claimed)} gives it without having confirmed it, so it is not used)" if claimed else "")
            + ". Tick “Send an invitation e-mail” to make an account for that address and invite it, "
            "or add them by username."
        )
    Course.objects.select_for_update().filter(pk=course.pk).first()
    if (
        not consented and not Enrolment.objects.filter(course=course, user=user).exists()
        and enrolment_needs_consent(user=user, actor=actor)
    ):
        return _invite(
            course=course, user=user, role=role, source=source, student_id=student_id,
            identifier=identifier_shown(user=user, identifier=identifier), actor=actor,
        )
    return _enrol(course=course, user=user, role=role, source=source, student_id=student_id)


@transaction.atomic
def enrolment_remove(*, enrolment: Enrolment) -> str:
    """Drop a student (kept, with every submission, out of sight) or remove a member of staff.

    Returns "dropped" or "removed". A course always keeps one instructor."""
    require_course_writable(course=enrolment.course)
    Course.objects.select_for_update().filter(pk=enrolment.course_id).first()
    _guard_last_instructor(enrolment=enrolment, new_role=None)
    if enrolment.role == Role.STUDENT:
        if enrolment.status != EnrolmentStatus.DROPPED:
            enrolment.status, enrolment.dropped_at = EnrolmentStatus.DROPPED, timezone.now()
            enrolment.save(update_fields=["status", "dropped_at", "updated_at"])
        return "dropped"
    enrolment.delete()
    return "removed"


def enrolment_restore(*, enrolment: Enrolment) -> Enrolment:
    require_course_writable(course=enrolment.course)
    if enrolment.status != EnrolmentStatus.ACTIVE:
        enrolment.status, enrolment.dropped_at = EnrolmentStatus.ACTIVE, None
        enrolment.save(update_fields=["status", "dropped_at", "updated_at"])
    return enrolment


# ---------------------------------------------------------------------------
# Invitations to join (existing accounts): accepted or declined by their owner
# ---------------------------------------------------------------------------


@transaction.atomic
def enrolment_invitation_accept(*, invitation: EnrolmentInvitation, user) -> Enrolment:
    """The invited person accepts: enrolled with the role invited (and the student id, unless
    someone enrolled since holds it), and the invitation is gone. Only its own person may
    accept it (CourseRefused otherwise, as for an archived course)."""
    if invitation.user_id != user.pk:
        raise CourseRefused("This invitation is not yours.")
    course = invitation.course
    if course.is_archived:
        raise CourseRefused(f"{course.title} is archived and takes no new people.")
    Course.objects.select_for_update().filter(pk=course.pk).first()
    locked = EnrolmentInvitation.objects.select_for_update().filter(pk=invitation.pk).first()
    if locked is None:
        raise CourseRefused("This invitation was withdrawn or already answered.")
    student_id = locked.student_id
    if student_id and Enrolment.objects.filter(course=course, student_id=student_id).exclude(user=user).exists():
        student_id = ""  # taken since: the staff can set it again
    change = _enrol(course=course, user=user, role=locked.role, source=locked.source, student_id=student_id)
    EnrolmentInvitation.objects.filter(pk=locked.pk).delete()
    return change.enrolment


def enrolment_invitation_decline(*, invitation: EnrolmentInvitation, user) -> None:
    """The invited person declines: the invitation is deleted (the staff may invite again)."""
    if invitation.user_id != user.pk:
        raise CourseRefused("This invitation is not yours.")
    EnrolmentInvitation.objects.filter(pk=invitation.pk).delete()


def enrolment_invitation_withdraw(*, invitation: EnrolmentInvitation) -> None:
    """The course's instructor takes back an invitation not answered yet."""
    require_course_writable(course=invitation.course)
    EnrolmentInvitation.objects.filter(pk=invitation.pk).delete()


# ---------------------------------------------------------------------------
# Roster import
# ---------------------------------------------------------------------------

MAX_ROSTER_ROWS = 2000
MAX_ROSTER_BYTES = 1_000_000
ROSTER_HEADER_ALIASES = {
    "username": "username", "user": "username", "login": "username",
    "email": "email", "e-mail": "email", "mail": "email", "email_address": "email",
    "name": "name", "full_name": "name",
    "first_name": "first_name", "given_name": "first_name",
    "last_name": "last_name", "family_name": "last_name", "surname": "last_name",
    "student_id": "student_id", "id_number": "student_id", "student_number": "student_id",
    "role": "role",
}
ROSTER_ROLES = {
    "": Role.STUDENT, "student": Role.STUDENT, "learner": Role.STUDENT,
    "ta": Role.TEACHING_ASSISTANT, "teaching assistant": Role.TEACHING_ASSISTANT,
    "teaching_assistant": Role.TEACHING_ASSISTANT,
    "instructor": Role.INSTRUCTOR, "teacher": Role.INSTRUCTOR,
}
ROSTER_ACTIONS = ("create", "enrol", "re-enrol", "change role", "update", "invite", "skip", "error")


RosterLine = ImportLine


@dataclass
class RosterReport(LineReport):
    ACTIONS = ROSTER_ACTIONS
    # The accounts this import created (none in a dry run): whom to send invitations.
    created_user_ids: list[int] = field(default_factory=list)
    # The invitations to join (``EnrolmentInvitation``) this import made or changed, of
    # existing accounts (none in a dry run): whom to tell by e-mail when asked.
    invitation_ids: list[int] = field(default_factory=list)


def csv_lines(text: str) -> io.StringIO:
    """The lines of a CSV's text for ``csv.reader``, without a byte order mark: a line ends at
    CR LF (Windows), LF (Unix) or a lone CR (old Mac OS), and a line break inside quotes
    stays in its field, as the csv module's "open with newline=''" asks."""
    return io.StringIO(text.lstrip("\ufeff"), newline="")


def roster_rows_from_csv(text: str) -> list[dict[str, str]]:
    """The rows of a roster CSV as dicts keyed by known column names, each with its ``line``.

    Raises CourseRefused for a file that is not a roster at all (no username or e-mail
    column, too many rows, unreadable CSV); a bad row is left for ``roster_import``."""
    if len(text) > MAX_ROSTER_BYTES:
        raise CourseRefused(f"The roster is larger than {MAX_ROSTER_BYTES // 1000} kB; split it.")
    if "\x00" in text:  # csv reads NUL since Python 3.11; the database refuses to store it
        raise CourseRefused("The roster contains NUL characters: it is not a text CSV.")
    reader = csv.reader(csv_lines(text), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise CourseRefused("The roster is empty.")
        columns = [
            ROSTER_HEADER_ALIASES.get(name.strip().lower().replace(" ", "_"))
            for name in header
        ]
        if "username" not in columns and "email" not in columns:
            raise CourseRefused(
                "The first line must name the columns, with a 'username' or 'email' column "
                "(and optionally name, student_id, role)."
            )
        rows = []
        for values in reader:
            if not any(value.strip() for value in values):
                continue
            if len(rows) >= MAX_ROSTER_ROWS:
                raise CourseRefused(f"The roster has more than {MAX_ROSTER_ROWS} rows; split it.")
            row = {"line": reader.line_num}
            for column, value in zip(columns, values):
                if column:
                    row[column] = value
            rows.append(row)
    except csv.Error as problem:
        raise CourseRefused(f"Line {reader.line_num} is not valid CSV: {problem}.") from None
    return rows


class _RowError(Exception):
    pass


def _roster_clean(row) -> dict[str, str]:
    values = {
        key: str(row.get(key) or "").strip()
        for key in ("username", "email", "name", "first_name", "last_name", "student_id", "role")
    }
    values["username"] = identifier_normalise(values["username"])
    values["email"] = email_normalise(values["email"])
    # Shown to others: no right-to-left override or zero-width character survives (identifiers).
    for key in ("name", "first_name", "last_name"):
        values[key] = name_normalise(values[key])
    if not values["username"] and not values["email"]:
        raise _RowError("needs a username or an e-mail")
    if values["username"]:
        try:
            if len(values["username"]) > 150:
                raise ValidationError("too long")
            UnicodeUsernameValidator()(values["username"])
        except ValidationError:
            raise _RowError(
                f"'{values['username'][:40]}' is not a valid username (letters, digits and @.+-_ only)"
            ) from None
    if values["email"]:
        try:
            validate_email(values["email"])
        except ValidationError:
            raise _RowError(f"'{values['email'][:60]}' is not an e-mail address") from None
    role = ROSTER_ROLES.get(values["role"].lower())
    if role is None:
        raise _RowError(f"'{values['role'][:30]}' is not a role (student, ta or instructor)")
    values["role"] = role
    if len(values["student_id"]) > 64:
        raise _RowError("the student id is longer than 64 characters")
    if values["name"] and not (values["first_name"] or values["last_name"]):
        first, _, last = values["name"].rpartition(" ")
        values["first_name"], values["last_name"] = (first, last) if first else (last, "")
    if len(values["first_name"]) > 150 or len(values["last_name"]) > 150:
        raise _RowError("the name is longer than 150 characters")
    return values


def _claimed_by(usernames: list[str]) -> str:
    names = ", ".join(f"'{name}'" for name in usernames)
    return f"the account{'s' * (len(usernames) != 1)} {names}"


@dataclass(frozen=True)
class _RosterAccount:
    user: object  # the existing account, or None: one is made
    username: str
    note: str = ""  # what the report adds to the line


@dataclass
class _RosterLookups:
    """What the rows ask of the accounts, read for all rows at once, before the course row
    is locked (the lock guards the course's enrolments, not accounts), and kept up to date
    as the import makes accounts (``made``)."""

    by_username: dict[str, object]
    by_trusted_email: dict[str, object]
    by_folded_username: dict[str, list]  # casefolded -> accounts: "Stu005" from a spreadsheet finds stu005
    claims: dict[str, list[str]]  # address -> accounts giving it without its being trusted
    recorded_emails: set[str]  # addresses a trust record holds (perhaps one changed since)
    lookalikes: LookalikeUsernames

    @classmethod
    def read(cls, rows: list[dict[str, str]]) -> _RosterLookups:
        usernames = {values["username"] for values in rows if values["username"]}
        emails = {values["email"] for values in rows if values["email"]}
        by_username = {user.username: user for user in get_user_model()._default_manager.filter(username__in=usernames)}
        by_folded_username = _accounts_by_folded_username(usernames - set(by_username))
        by_trusted_email = users_by_trusted_email(emails=emails)
        lookalikes = LookalikeUsernames()
        if any(values["username"] not in by_username and values["email"] not in by_trusted_email for values in rows):
            lookalikes.load()  # a row may make an account: every username's look-alike, read now
        return cls(
            by_username=by_username,
            by_trusted_email=by_trusted_email,
            by_folded_username=by_folded_username,
            claims=usernames_claiming_emails(emails=set(emails) - set(by_trusted_email)),
            recorded_emails=trusted_emails_recorded(emails=emails),
            lookalikes=lookalikes,
        )

    def made(self, user) -> None:
        self.by_username[user.username] = user
        self.by_trusted_email[user.email] = user
        self.recorded_emails.add(user.email)
        self.lookalikes.add(user.username)


def _accounts_by_folded_username(usernames: set[str]) -> dict[str, list]:
    """The accounts whose username is one of ``usernames`` but for letter case."""
    if not usernames:
        return {}
    from django.db.models.functions import Lower

    folded: dict[str, list] = {}
    wanted = {username.lower() for username in usernames}
    for user in get_user_model()._default_manager.annotate(folded=Lower("username")).filter(folded__in=wanted):
        folded.setdefault(user.username.casefold(), []).append(user)
    return folded


def _account_of_username(username: str, email: str, lookups: _RosterLookups):
    """(account, note): the account called ``username``, else the one account called so but
    for letter case (a spreadsheet capitalises), named in the report, when the row gives no
    e-mail or that account's own; None otherwise (a row with another address asks for a new
    account, and is refused as a look-alike)."""
    user = lookups.by_username.get(username)
    if user is not None:
        return user, ""
    alike = lookups.by_folded_username.get(username.casefold(), [])
    if len(alike) == 1 and (not email or (alike[0].email and email_normalise(alike[0].email) == email)):
        return alike[0], f"; the file writes '{username}': the account is '{alike[0].username}'"
    return None, ""


def _roster_account(values: dict[str, str], lookups: _RosterLookups) -> _RosterAccount:
    """The account a row names, or the username of the one to make. Raises _RowError when it
    is ambiguous. An e-mail finds only the account that has confirmed it (or was made for
    it by staff): one merely giving it is not used, and the row makes a new account."""
    username, email = values["username"], values["email"]
    by_email = lookups.by_trusted_email.get(email) if email else None
    claimed = lookups.claims.get(email, []) if email and by_email is None else []
    note = f"; {_claimed_by(claimed)} also give{'s' * (len(claimed) == 1)} this e-mail without having confirmed it: not used" if claimed else ""
    if username:
        user, case_note = _account_of_username(username, email, lookups)
        if user is not None:
            if email and user.email and email_normalise(user.email) != email:
                raise _RowError(f"the account '{user.username}' has another e-mail address")
            return _RosterAccount(user, user.username, case_note)
        if by_email is not None:
            raise _RowError(
                f"no account is called '{username}', and the e-mail belongs to another account; give the e-mail alone"
            )
        if not email:
            raise _RowError(f"no account is called '{username}'; add an e-mail to create one")
        if refusal := username_scripts_refusal(username):
            raise _RowError(f"the username '{username[:40]}' {refusal}")
        if (taken := lookups.lookalikes.taken_by(username)) is not None:
            raise _RowError(f"the username '{username[:40]}' looks like the existing account '{taken}'; choose another")
        return _RosterAccount(None, username, note)
    if by_email is not None:
        return _RosterAccount(by_email, by_email.username)
    return _RosterAccount(None, _free_username(email.split("@", 1)[0], lookups.lookalikes), note)


def _free_username(base: str, lookalikes: LookalikeUsernames) -> str:
    """A username made from ``base`` that looks like no existing one (a number added)."""
    base = re.sub(r"[^\w.@+-]", "", base)[:140] or "student"
    candidate, number = base, 1
    while lookalikes.taken_by(candidate) is not None:
        number += 1
        candidate = f"{base}{number}"
    return candidate


ROSTER_ACTION_OF_CHANGE = {
    "enrolled": "enrol", "re-enrolled": "re-enrol", "role changed": "change role",
    "updated": "update", "unchanged": "skip",
}


def _student_id_check(*, course: Course, user, student_id: str) -> None:
    """A student id names one person of the course."""
    holder = (
        Enrolment.objects.filter(course=course, student_id=student_id).exclude(user=user)
        .select_related("user").first()
    )
    if holder is not None:
        raise CourseRefused(
            f"The student id {student_id} already belongs to '{holder.user.get_username()}' in this course."
        )


def _staff_access_note(change: EnrolmentChange) -> str:
    """What a roster line's new role takes away, said where it does: a teaching assistant or
    instructor made a student loses the course's staff pages, and an instructor made a
    teaching assistant loses what only instructors do."""
    before, after = change.previous_role, change.enrolment.role
    if before in (Role.INSTRUCTOR, Role.TEACHING_ASSISTANT) and after == Role.STUDENT:
        return f" (was {Role(before).label.lower()}: loses staff access to this course)"
    if before == Role.INSTRUCTOR and after == Role.TEACHING_ASSISTANT:
        return " (was instructor: can no longer do what only instructors do)"
    return ""


_UNREAD = object()


def _enrol(*, course: Course, user, role: str, source: str, student_id: str = "",
           enrolment=_UNREAD) -> EnrolmentChange:
    """Enrol or update one account. Call inside a transaction holding the course row.
    ``enrolment``: the account's enrolment in the course (or None), when the caller read it."""
    if enrolment is _UNREAD:
        enrolment = Enrolment.objects.filter(course=course, user=user).first()
    if student_id and (enrolment is None or enrolment.student_id != student_id):
        _student_id_check(course=course, user=user, student_id=student_id)
    if enrolment is None:
        enrolment = Enrolment.objects.create(
            course=course, user=user, role=role, source=source, student_id=student_id
        )
        EnrolmentInvitation.objects.filter(course=course, user=user).delete()  # answered by this
        return EnrolmentChange(enrolment, "enrolled")
    action, previous_role = "unchanged", ""
    if enrolment.status == EnrolmentStatus.DROPPED:
        enrolment.status, enrolment.dropped_at, action = EnrolmentStatus.ACTIVE, None, "re-enrolled"
    if enrolment.role != role:
        _guard_last_instructor(enrolment=enrolment, new_role=role)
        previous_role, enrolment.role = enrolment.role, role
        action = "role changed" if action == "unchanged" else action
    if student_id and enrolment.student_id != student_id:
        enrolment.student_id = student_id
        action = "updated" if action == "unchanged" else action
    if action != "unchanged":
        enrolment.save()
    return EnrolmentChange(enrolment, action, previous_role)


class _RosterRace(Exception):
    """Another request made an account with a username or address of the roster meanwhile."""


def _roster_account_make(*, course: Course, values: dict[str, str], username: str, source: str,
                         lookups: _RosterLookups):
    """Make the account of a roster row and enrol it: three INSERTs and no password hash (it
    has no usable password; see ``roster_import``). Raises CourseRefused when the student id
    is another's, before writing anything; no savepoint is needed, as the rows were checked
    (``_roster_clean``, ``_roster_account``) and the course row is locked. Only another
    request taking the username or the address meanwhile makes an INSERT fail: _RosterRace,
    and the whole import is rolled back. Call inside a transaction holding the course row."""
    if values["student_id"]:
        _student_id_check(course=course, user=None, student_id=values["student_id"])
    try:
        user = get_user_model().objects.create_user(
            username=username, email=values["email"],
            first_name=values["first_name"], last_name=values["last_name"],
            password=None,  # unusable: no hash; set through the mailbox
        )
        if values["email"] in lookups.recorded_emails:  # a record left by an address changed since
            email_trust_record(user=user, email=values["email"], trust=EmailTrust.GIVEN_BY_STAFF)
        else:
            email_trust_record_new_account(user=user, email=values["email"], trust=EmailTrust.GIVEN_BY_STAFF)
    except IntegrityError:
        raise _RosterRace from None
    Enrolment.objects.create(
        course=course, user=user, role=values["role"], source=source, student_id=values["student_id"]
    )
    lookups.made(user)
    return user


NEW_ACCOUNT_PASSWORD = "they choose a password with “Forgot your password?” on the sign-in page"
NEW_ACCOUNT_INVITED = "the invitation e-mail lets them choose a password"


def _name_note(*, user, values: dict[str, str]) -> str:
    """The roster's name is not written over an existing account's: the report says so."""
    given = " ".join(part for part in (values["first_name"], values["last_name"]) if part)
    if not given or (values["first_name"], values["last_name"]) == (user.first_name, user.last_name):
        return ""
    own = user.get_full_name()
    return f"; the name “{given}” is not used: the account keeps " + (f"its own, “{own}”" if own else "no name")


def roster_import(*, course: Course, rows, dry_run: bool, actor, first_line: int = 2,
                  source: str = EnrolmentSource.ROSTER, invite: bool = False) -> RosterReport:
    """Bring a roster into the course: one report line per row, in order.

    ``rows`` are mappings with ``username`` and/or ``email``, and optionally ``name`` (or
    ``first_name``/``last_name``), ``student_id``, ``role`` (student, ta, instructor) and
    ``line`` (its line number; else its position counted from ``first_line``).
    A bad row is reported and changes nothing; the good rows are applied together in one
    transaction. A dry run computes exactly the same report and then rolls it all back.
    Re-importing the same rows changes nothing (every line says "skip").

    An e-mail finds only an account that has confirmed it (accounts.models); a new account
    is made for an address no account has, its address trusted as given by staff. A name
    does not change an existing account (the line says so); a new account's name loses its
    invisible characters (``name_normalise``). A new username is refused as sign-up refuses
    it (mixed scripts, letters of another script that look like Latin ones, a look-alike of
    an existing account). ``invite``: the new accounts are sent an invitation (by the
    caller, after the import), and their lines say so.

    A new account has no usable password (Django's unusable password: nothing is hashed,
    where a random password cost one slow hash, about 0.3 s, an account, in the dry run as
    well): its owner chooses one through the invitation's link or "Forgot your password?",
    which finds such an account by the address staff gave it and no other account without
    a usable password (accounts.forms.PasswordResetFormTrusted). Rows are read and checked
    before the course row is locked; with the lock each row costs a few queries."""
    require_course_writable(course=course)
    report = RosterReport(dry_run=dry_run)
    checked: list[tuple[int, str, dict[str, str] | None, str]] = []  # line, who, values, or why not
    for index, row in enumerate(rows):
        line = row.get("line") if isinstance(row.get("line"), int) else index + first_line
        who = str(row.get("username") or row.get("email") or "").strip()[:254]
        try:
            checked.append((line, who, _roster_clean(row), ""))
        except _RowError as problem:
            checked.append((line, who, None, str(problem)))
    lookups = _RosterLookups.read([values for _, _, values, _ in checked if values is not None])
    try:
        return _roster_apply(course=course, checked=checked, lookups=lookups, report=report,
                             source=source, invite=invite, dry_run=dry_run, actor=actor)
    except _RosterRace:
        raise CourseRefused(
            "Someone signed up with a username or an e-mail address of this roster while it was "
            "imported; nothing was changed. Import it again."
        ) from None


def _roster_apply(*, course: Course, checked, lookups: _RosterLookups, report: RosterReport,
                  source: str, invite: bool, dry_run: bool, actor=None) -> RosterReport:
    """``roster_import``'s rows, checked and read, applied in one transaction with the course row locked."""
    seen: dict[str, int] = {}
    student_ids: dict[str, int] = {}
    with transaction.atomic():
        Course.objects.select_for_update().filter(pk=course.pk).first()
        for line, who, values, problem in checked:
            try:
                if values is None:
                    raise _RowError(problem)
                account = _roster_account(values, lookups)
                user, username = account.user, account.username
                key = f"user:{user.pk}" if user else f"new:{username.lower()}"
                if key in seen:
                    raise _RowError(f"the same person as line {seen[key]}")
                if values["student_id"] in student_ids:
                    raise _RowError(f"the student id {values['student_id']} is also on line {student_ids[values['student_id']]}")
                seen[key] = line
                if user is None:
                    user = _roster_account_make(
                        course=course, values=values, username=username, source=source, lookups=lookups
                    )
                    seen[f"user:{user.pk}"] = line
                    report.created_user_ids.append(user.pk)
                    report.lines.append(RosterLine(
                        line, who, "create",
                        f"new account '{username}', enrolled as {Role(values['role']).label.lower()}; "
                        + (NEW_ACCOUNT_INVITED if invite else NEW_ACCOUNT_PASSWORD) + account.note,
                    ))
                    if values["student_id"]:
                        student_ids[values["student_id"]] = line
                    continue
                enrolment = Enrolment.objects.filter(course=course, user=user).first()
                if enrolment is None and enrolment_needs_consent(user=user, actor=actor):
                    # No savepoint: _invite refuses (CourseRefused) before it writes anything.
                    typed = values["username"] or values["email"]
                    change = _invite(course=course, user=user, role=values["role"], source=source,
                                     student_id=values["student_id"], identifier=typed, actor=actor)
                    if values["student_id"]:
                        student_ids[values["student_id"]] = line
                    report.lines.append(_roster_invitation_line(line, typed, values, change))
                    if change.action == "invited":
                        report.invitation_ids.append(change.invitation.pk)
                    continue
                # No savepoint: _enrol refuses (CourseRefused) before it writes anything.
                change = _enrol(course=course, user=user, role=values["role"],
                                source=source, student_id=values["student_id"], enrolment=enrolment)
            except _RowError as problem:
                report.lines.append(RosterLine(line, who, "error", str(problem)))
                continue
            except CourseRefused as refused:
                report.lines.append(RosterLine(line, who, "error", refused.message))
                continue
            if values["student_id"]:
                student_ids[values["student_id"]] = line
            action = ROSTER_ACTION_OF_CHANGE[change.action]
            role_label = Role(values["role"]).label.lower()
            detail = {
                "enrol": f"'{user.username}' enrolled as {role_label}",
                "re-enrol": f"'{user.username}' was dropped; enrolled again as {role_label}",
                "change role": f"'{user.username}' is now {role_label}" + _staff_access_note(change),
                "update": f"'{user.username}': student id set to {values['student_id']}",
                "skip": f"'{user.username}' is already enrolled as {role_label}",
            }[action]
            report.lines.append(RosterLine(line, who, action, detail + account.note + _name_note(user=user, values=values)))
        if dry_run:
            transaction.set_rollback(True)
            report.created_user_ids = []
            report.invitation_ids = []
    return report


def _roster_invitation_line(line: int, typed: str, values: dict[str, str], change: EnrolmentChange) -> RosterLine:
    """The report's line of an invited account: by what the row says (``typed``) only,
    never the account's own username, name or e-mail."""
    role_label = Role(values["role"]).label.lower()
    if change.action == "already invited":
        return RosterLine(line, typed, "skip", f"'{typed}' is already invited as {role_label}")
    return RosterLine(
        line, typed, "invite",
        f"'{typed}' invited as {role_label}: enrolled once they accept the invitation on their dashboard",
    )
