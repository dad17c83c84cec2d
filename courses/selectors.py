"""Reads of courses and assignments, always through the caller's role.

``access_*`` functions fetch *with* the permission check, so a view cannot forget it:
an object the user may not see raises ``Http404`` (we do not reveal that it exists),
one they may see but not act on raises ``PermissionDenied``.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import Http404
from django.urls import reverse

from attnquiz.prepared_reads import PreparedRead

from . import pools
from .models import Assignment, AssignmentItem, Course, Enrolment, EnrolmentInvitation, EnrolmentStatus, Role

STAFF_ROLES = (Role.INSTRUCTOR, Role.TEACHING_ASSISTANT)


def active_enrolments() -> QuerySet[Enrolment]:
    """Enrolments that give access: a dropped one keeps its submissions but opens nothing."""
    return Enrolment.objects.filter(status=EnrolmentStatus.ACTIVE)


# Every student page asks it: compiled once (``PreparedRead``).
_ROLE_IN_COURSE = PreparedRead(
    lambda *, course_id, user_id: active_enrolments()
    .filter(course_id=course_id, user_id=user_id)
    .values_list("role", flat=True)[:1],  # one enrolment per course and user
    course_id=int,
    user_id=int,
)


def course_role(*, user, course: Course) -> str | None:
    """The user's role in the course, or None when not enrolled (or dropped)."""
    if not user.is_authenticated:
        return None
    return _ROLE_IN_COURSE.first(course_id=course.pk, user_id=user.pk)


def is_course_staff(*, user, course: Course) -> bool:
    return course_role(user=user, course=course) in STAFF_ROLES


def course_section_url(*, course: Course) -> str:
    """A student's place of a course: its section of their dashboard (``/#course-<slug>``),
    where its assignments, progress and reviews are."""
    return _course_section_url(course.slug)


def _course_section_url(slug: str) -> str:
    return f"{reverse('dashboard')}#course-{slug}"


def sign_in_landing_url(*, user) -> str:
    """Where signing in leads when no safe ``next`` says otherwise: a student of exactly one
    course to that course's section; staff (of any course, or of the site) and everyone
    else to the dashboard."""
    if not (user.is_staff or user.is_superuser):
        enrolments = list(active_enrolments().filter(user=user).values_list("role", "course__slug")[:2])
        if len(enrolments) == 1 and enrolments[0][0] == Role.STUDENT:
            return _course_section_url(enrolments[0][1])
    return reverse("dashboard")


def courses_for_user(*, user) -> QuerySet[Course]:
    return Course.objects.filter(
        enrolments__user=user, enrolments__status=EnrolmentStatus.ACTIVE
    ).distinct()


def enrolments_for_user(*, user) -> QuerySet[Enrolment]:
    return active_enrolments().filter(user=user).select_related("course").order_by("course__title")


# Every course and assignment page reads them: compiled once (``PreparedRead``).
_COURSE_BY_SLUG = PreparedRead(lambda *, slug: Course.objects.filter(slug=slug)[:1], slug=str)  # slugs are unique
_ASSIGNMENT_BY_SLUG = PreparedRead(
    lambda *, course_id, slug: Assignment.objects.filter(course_id=course_id, slug=slug)[:1],  # unique per course
    course_id=int,
    slug=str,
)
_PUBLISHED_ASSIGNMENT_BY_SLUG = PreparedRead(
    lambda *, course_id, slug: Assignment.objects.filter(course_id=course_id, slug=slug, is_published=True)[:1],
    course_id=int,
    slug=str,
)


def _only_one(queryset: QuerySet):
    rows = list(queryset[:2])
    return rows[0] if len(rows) == 1 else None


def course_by_slug(slug: str) -> Course | None:
    """The course a short name names: the one stored under it, else the only one stored under
    it in another case (short names from before they were stored in lower case, or set in
    the admin); None for none, and for two that differ only in case (which one is not guessed)."""
    return _COURSE_BY_SLUG.first(slug=slug) or _only_one(Course.objects.filter(slug__iexact=slug))


def _assignment_by_slug(*, course: Course, slug: str, published_only: bool) -> Assignment | None:
    """The course's assignment a short name names, as ``course_by_slug`` reads a course's."""
    read = _PUBLISHED_ASSIGNMENT_BY_SLUG if published_only else _ASSIGNMENT_BY_SLUG
    found = read.first(course_id=course.pk, slug=slug)
    if found is None:
        others = Assignment.objects.filter(course=course, slug__iexact=slug)
        found = _only_one(others.filter(is_published=True) if published_only else others)
    if found is not None:
        found.course = course  # the row the caller read, not a query
    return found


def url_slugs_as_stored(*, user, course_slug: str, assignment_slug: str | None = None) -> dict[str, str] | None:
    """The stored short names of the course (and assignment) an address names in another case
    (``course_slug``, ``assignment_slug`` as the URL's keywords), where the address should
    lead; None when it names them as stored, names nothing, or names what the user may not
    open (we do not reveal that it exists)."""
    try:
        if assignment_slug is None:
            course, _ = access_course(user=user, slug=course_slug)
            stored = {"course_slug": course.slug}
        else:
            assignment, _ = access_assignment(user=user, course_slug=course_slug, assignment_slug=assignment_slug)
            stored = {"course_slug": assignment.course.slug, "assignment_slug": assignment.slug}
    except Http404:
        return None
    given = {"course_slug": course_slug, "assignment_slug": assignment_slug}
    return stored if any(given[name] != value for name, value in stored.items()) else None


def access_course(*, user, slug: str) -> tuple[Course, str]:
    """The course and the user's role in it; 404 for anyone not enrolled. The short name is
    read in any case (``course_by_slug``)."""
    course = course_by_slug(slug)
    role = course_role(user=user, course=course) if course else None
    if role is None:
        raise Http404("No such course.")
    return course, role


def assignments_visible(*, course: Course, role: str) -> QuerySet[Assignment]:
    assignments = course.assignments.all()
    if role not in STAFF_ROLES:
        assignments = assignments.filter(is_published=True)
    return assignments


def access_assignment(*, user, course_slug: str, assignment_slug: str) -> tuple[Assignment, str]:
    course, role = access_course(user=user, slug=course_slug)
    # assignments_visible's rule, as a prepared read per role
    assignment = _assignment_by_slug(course=course, slug=assignment_slug, published_only=role not in STAFF_ROLES)
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment, role


def access_assignment_item(*, user, item_id: int) -> tuple[AssignmentItem, str]:
    """An exercise slot of an assignment the user may open."""
    item = (
        AssignmentItem.objects.select_related(
            "assignment__course", "exercise_version__exercise"
        )
        .filter(pk=item_id)
        .first()
    )
    if item is None:
        raise Http404("No such exercise.")
    role = course_role(user=user, course=item.assignment.course)
    require_item_open(item=item, role=role)
    if role not in STAFF_ROLES:
        # A student opens only the items they were given: of a pool, the one drawn for them.
        pools.require_item_given(item=item, student=user)
    return item, role


def course_role_annotation(*, user, course_path: str) -> Subquery:
    """``course_role`` as a subquery, to read the role with the row that leads to the course
    (``course_path`` names the course from that row, e.g. "assignment_item__assignment__course")."""
    return Subquery(
        active_enrolments().filter(course=OuterRef(course_path), user=user).values("role")[:1]
    )


def require_item_open(*, item: AssignmentItem, role: str | None) -> None:
    """The rule of ``access_assignment_item`` for an item and role read by the caller: 404
    for anyone not enrolled, and for students while the assignment is unpublished."""
    if role is None:
        raise Http404("No such exercise.")
    if role not in STAFF_ROLES and not item.assignment.is_published:
        raise Http404("No such exercise.")


def require_staff(*, role: str | None) -> None:
    if role not in STAFF_ROLES:
        raise PermissionDenied("Only the course's instructors and teaching assistants may do this.")


def require_instructor(*, role: str | None) -> None:
    if role != Role.INSTRUCTOR:
        raise PermissionDenied("Only the course's instructors may do this.")


def access_course_staff(*, user, slug: str, instructor_only: bool = False) -> tuple[Course, str]:
    """The course and role of one of its staff; 404 for outsiders, 403 for students (and TAs
    when ``instructor_only``)."""
    course, role = access_course(user=user, slug=slug)
    require_staff(role=role)
    if instructor_only:
        require_instructor(role=role)
    return course, role


def access_staff_assignment(
    *, user, course_slug: str, assignment_slug: str, instructor_only: bool = False
) -> tuple[Assignment, str]:
    """An assignment and the role of one of its course's staff (404 for no such assignment)."""
    course, role = access_course_staff(user=user, slug=course_slug, instructor_only=instructor_only)
    assignment = _assignment_by_slug(course=course, slug=assignment_slug, published_only=False)
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment, role


def may_create_courses(*, user) -> bool:
    return user.is_authenticated and user.has_perm("courses.create_course")


def require_course_creation(*, user) -> None:
    if not may_create_courses(user=user):
        raise PermissionDenied(
            "Creating courses needs the “may create courses” permission; ask an administrator."
        )


def access_course_enrolment(*, course: Course, enrolment_id: int) -> Enrolment:
    enrolment = (
        Enrolment.objects.select_related("user").filter(course=course, pk=enrolment_id).first()
    )
    if enrolment is None:
        raise Http404("No such person in this course.")
    return enrolment


def course_people(*, course: Course) -> QuerySet[Enrolment]:
    """Everyone enrolled, dropped included: staff first, then students by username."""
    return (
        Enrolment.objects.filter(course=course)
        .select_related("user")
        .order_by("status", "role", "user__username")
    )


def course_instructor_count(*, course: Course) -> int:
    return active_enrolments().filter(course=course, role=Role.INSTRUCTOR).count()


def course_by_join_code(*, code: str) -> Course | None:
    code = (code or "").strip().upper()
    if not code or len(code) > 16:
        return None
    return Course.objects.filter(join_code=code).first()


def course_named_by_url(view_kwargs: dict) -> Course | None:
    """The course a URL names: by ``course_slug``, an assignment ``item_id`` or a ``variant_id``."""
    from exercises.models import Variant

    if view_kwargs.get("course_slug"):
        return course_by_slug(view_kwargs["course_slug"])
    if isinstance(view_kwargs.get("item_id"), int):
        item = AssignmentItem.objects.select_related("assignment__course").filter(pk=view_kwargs["item_id"]).first()
        return item.assignment.course if item else None
    if isinstance(view_kwargs.get("variant_id"), int):
        variant = (
            Variant.objects.select_related("assignment_item__assignment__course")
            .filter(pk=view_kwargs["variant_id"]).first()
        )
        return variant.assignment_item.assignment.course if variant and variant.assignment_item_id else None
    return None


MAX_SEARCH_WORDS = 5


def enrolments_matching(enrolments: QuerySet, text: str) -> QuerySet:
    """The ``enrolments`` whose person matches every word of ``text`` (the first
    MAX_SEARCH_WORDS) in their username, names, e-mail or student ID ("sam sto" finds Sam
    Stone): the search of the people page and of the course gradebook."""
    for word in text.split()[:MAX_SEARCH_WORDS]:
        enrolments = enrolments.filter(
            Q(user__username__icontains=word)
            | Q(user__first_name__icontains=word)
            | Q(user__last_name__icontains=word)
            | Q(user__email__icontains=word)
            | Q(student_id__icontains=word)
        )
    return enrolments


# ---------------------------------------------------------------------------
# Invitations to join (``EnrolmentInvitation``): pending until their person answers
# ---------------------------------------------------------------------------


def course_invitations_pending(*, course: Course) -> QuerySet[EnrolmentInvitation]:
    """The course's invitations not answered yet, oldest first. Shown to the staff by
    ``identifier`` (what was typed) only: the invited account's name and e-mail are not
    the course's until its owner accepts (the query reads no column of the account)."""
    return (
        EnrolmentInvitation.objects.filter(course=course)
        .select_related("invited_by")
        .only("pk", "course_id", "user_id", "role", "source", "student_id", "identifier", "emailed_at",
              "created_at", "invited_by__username", "invited_by__first_name", "invited_by__last_name")
        .order_by("created_at", "pk")
    )


def course_invitations_by_id(*, course: Course, ids) -> QuerySet[EnrolmentInvitation]:
    """These invitations of the course, with their person (whom to e-mail them to)."""
    return EnrolmentInvitation.objects.filter(course=course, pk__in=list(ids)).select_related(
        "user", "course", "invited_by"
    )


def invitations_for_user(*, user) -> QuerySet[EnrolmentInvitation]:
    """The invitations waiting for this person's answer (their dashboard), course by course."""
    if not user.is_authenticated:
        return EnrolmentInvitation.objects.none()
    return (
        EnrolmentInvitation.objects.filter(user=user, course__archived_at__isnull=True)
        .select_related("course", "invited_by")
        .order_by("created_at", "pk")
    )


def access_own_invitation(*, user, invitation_id: int) -> EnrolmentInvitation:
    """One of the user's own invitations; 404 for any other (it is not theirs to see)."""
    invitation = (
        EnrolmentInvitation.objects.select_related("course").filter(pk=invitation_id, user=user).first()
        if user.is_authenticated else None
    )
    if invitation is None:
        raise Http404("No such invitation.")
    return invitation


def access_course_invitation(*, course: Course, invitation_id: int) -> EnrolmentInvitation:
    invitation = EnrolmentInvitation.objects.select_related("course").filter(course=course, pk=invitation_id).first()
    if invitation is None:
        raise Http404("No such invitation in this course.")
    return invitation
