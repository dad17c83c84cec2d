"""The course's people page: everyone enrolled (staff and students, dropped ones too),
filtered by role, enrolment status, invitation state and a search, sorted, one page of 50
at a time; the counts at its top; and whom "send the invitation again" reaches.

An invitation's state is read in SQL by the rule of ``invitations.invitation_status``
(accepted; else expired once ``PASSWORD_RESET_TIMEOUT`` has passed since it was sent; else
sent; none without one), so that filters, counts and pages are cut in the database. The
page reads in a fixed number of queries whatever the roster: the counts (one grouped
query), the matching count and the page's rows (``Paginator``), the page's invitations
and e-mail trust, and, for an instructor, how many a resend would reach.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Case, CharField, Count, Exists, F, IntegerField, OuterRef, QuerySet, Value, When
from django.db.models.functions import Lower
from django.utils import timezone

from accounts import selectors as account_selectors
from accounts.name_order import name_ordering
from attnquiz.paging import ShownRange

from .invitations import InvitationStatus, invitation_status
from .models import Course, Enrolment, EnrolmentStatus, Invitation, Role
from .selectors import MAX_SEARCH_WORDS, enrolments_matching

PER_PAGE = 50
MAX_SEARCH_LENGTH = 100

# A filter's value in the query string -> (its words on the page, the states it keeps).
INVITATION_FILTERS = {
    "joined": ("joined", (InvitationStatus.ACCEPTED,)),
    "invited": ("invited and not yet joined", (InvitationStatus.SENT, InvitationStatus.EXPIRED)),
    "expired": ("invitation link expired", (InvitationStatus.EXPIRED,)),
    "none": ("not invited", (InvitationStatus.NONE,)),
}
NOT_YET_JOINED = INVITATION_FILTERS["invited"][1]
ROLE_FILTERS = {
    Role.STUDENT.value: "students",
    Role.TEACHING_ASSISTANT.value: "teaching assistants",
    Role.INSTRUCTOR.value: "instructors",
}
STATUS_FILTERS = {EnrolmentStatus.ACTIVE.value: "enrolled", EnrolmentStatus.DROPPED.value: "dropped"}
SORTS = {
    "role": "role, then name",
    "name": "name",
    "username": "username",
    "student_id": "student ID",
}
DEFAULT_SORT = "role"


@dataclass(frozen=True)
class PeopleQuery:
    """What the page shows, as its query string says (every value checked: an unknown one
    reads as no filter, an unknown sort as the default, so a hand-edited address still
    gives a page). ``search`` keeps the people matching every word of it (at most
    MAX_SEARCH_WORDS) in their username, names, e-mail or student ID."""

    role: str = ""
    invitation: str = ""
    status: str = ""
    search: str = ""
    sort: str = DEFAULT_SORT
    descending: bool = False

    @classmethod
    def from_request(cls, params) -> PeopleQuery:
        def one_of(name: str, allowed) -> str:
            value = params.get(name, "")
            return value if value in allowed else ""

        sort = params.get("sort", DEFAULT_SORT)
        return cls(
            role=one_of("role", ROLE_FILTERS),
            invitation=one_of("invitation", INVITATION_FILTERS),
            status=one_of("status", STATUS_FILTERS),
            search=" ".join(str(params.get("person", "")).split())[:MAX_SEARCH_LENGTH],
            sort=sort if sort in SORTS else DEFAULT_SORT,
            descending=params.get("order") == "desc",
        )

    @property
    def is_filtered(self) -> bool:
        return bool(self.role or self.invitation or self.status or self.search)

    def params(self, *, page: int = 1, **changes) -> dict[str, str]:
        """The query string's values (defaults left out), with ``changes`` applied."""
        query = replace(self, **changes)
        values = {
            "role": query.role, "invitation": query.invitation, "status": query.status, "person": query.search,
            "sort": "" if query.sort == DEFAULT_SORT else query.sort, "order": "desc" if query.descending else "",
            "page": str(page) if page > 1 else "",
        }
        return {name: value for name, value in values.items() if value}

    def query_string(self, *, page: int = 1, **changes) -> str:
        return urlencode(self.params(page=page, **changes))

    @property
    def words(self) -> str:
        """The filter in words, e.g. "students, invited and not yet joined, matching “sam”"."""
        parts = [ROLE_FILTERS[self.role] if self.role else "everyone"]
        if self.status:
            parts.append(STATUS_FILTERS[self.status])
        if self.invitation:
            parts.append(INVITATION_FILTERS[self.invitation][0])
        if self.search:
            parts.append(f"matching “{self.search}”")
        return ", ".join(parts)

    @property
    def sort_words(self) -> str:
        return SORTS[self.sort] + (" (descending)" if self.descending else "")


def invitation_state(*, now=None) -> Case:
    """The ``InvitationStatus`` of an enrolment's invitation to its course, as SQL."""
    now = now or timezone.now()
    sent = Invitation.objects.filter(course=OuterRef("course_id"), user=OuterRef("user_id"))
    expired_before = now - timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    return Case(
        When(Exists(sent.filter(accepted_at__isnull=False)), then=Value(InvitationStatus.ACCEPTED)),
        When(Exists(sent.filter(sent_at__lt=expired_before)), then=Value(InvitationStatus.EXPIRED)),
        When(Exists(sent), then=Value(InvitationStatus.SENT)),
        default=Value(InvitationStatus.NONE),
        output_field=CharField(),
    )


_ROLE_RANK = Case(
    When(role=Role.INSTRUCTOR, then=Value(0)),
    When(role=Role.TEACHING_ASSISTANT, then=Value(1)),
    default=Value(2),
    output_field=IntegerField(),
)


def _ordering(sort: str, descending: bool) -> list:
    def term(expression):
        return expression.desc() if descending else expression.asc()

    by_name = name_ordering(prefix="user__", descending=descending)
    if sort == "name":
        keys = by_name
    elif sort == "username":
        keys = [term(Lower("user__username"))]
    elif sort == "student_id":
        keys = [term(Lower("student_id")), *by_name]
    else:  # staff first, and the dropped after everyone enrolled
        keys = [term(F("status")), term(_ROLE_RANK), *by_name]
    return [*keys, term(F("pk"))]  # the id last: a page is cut from a total order


def people_matching(*, course: Course, query: PeopleQuery, now=None) -> QuerySet[Enrolment]:
    """The course's enrolments that ``query`` keeps, in its order, each with
    ``invitation_state`` (an ``InvitationStatus``)."""
    enrolments = (
        Enrolment.objects.filter(course=course)
        .select_related("user")
        .annotate(invitation_state=invitation_state(now=now))
    )
    if query.role:
        enrolments = enrolments.filter(role=query.role)
    if query.status:
        enrolments = enrolments.filter(status=query.status)
    if query.invitation:
        enrolments = enrolments.filter(invitation_state__in=INVITATION_FILTERS[query.invitation][1])
    enrolments = enrolments_matching(enrolments, query.search)
    return enrolments.order_by(*_ordering(query.sort, query.descending))


def people_not_yet_joined(*, course: Course, query: PeopleQuery, now=None) -> QuerySet[Enrolment]:
    """Whom "send the invitation again" is about, of those ``query`` keeps: the enrolled
    (not dropped) people invited who have not joined yet, an expired link included."""
    return people_matching(course=course, query=query, now=now).filter(
        status=EnrolmentStatus.ACTIVE, invitation_state__in=NOT_YET_JOINED
    )


def people_to_invite_again_count(*, course: Course, query: PeopleQuery) -> int:
    """How many a resend would reach: those not yet joined who have an e-mail address."""
    return people_not_yet_joined(course=course, query=query).exclude(user__email="").order_by().count()


@dataclass
class PeopleSummary:
    """The counts at the top of the page: the enrolled people by role (and the students by
    invitation state), and how many were dropped."""

    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (status, role, state) -> people

    def _count(self, *, status=EnrolmentStatus.ACTIVE, role=None, states=None) -> int:
        return sum(
            number for (status_, role_, state), number in self.counts.items()
            if status_ == status and role in (None, role_) and (states is None or state in states)
        )

    @property
    def people(self) -> int:
        return self._count()

    @property
    def students(self) -> int:
        return self._count(role=Role.STUDENT)

    @property
    def teaching_assistants(self) -> int:
        return self._count(role=Role.TEACHING_ASSISTANT)

    @property
    def instructors(self) -> int:
        return self._count(role=Role.INSTRUCTOR)

    @property
    def students_joined(self) -> int:
        return self._count(role=Role.STUDENT, states=INVITATION_FILTERS["joined"][1])

    @property
    def students_not_yet_joined(self) -> int:
        return self._count(role=Role.STUDENT, states=NOT_YET_JOINED)

    @property
    def students_link_expired(self) -> int:
        return self._count(role=Role.STUDENT, states=INVITATION_FILTERS["expired"][1])

    @property
    def students_not_invited(self) -> int:
        return self._count(role=Role.STUDENT, states=INVITATION_FILTERS["none"][1])

    @property
    def dropped(self) -> int:
        return self._count(status=EnrolmentStatus.DROPPED)


def people_summary(*, course: Course, now=None) -> PeopleSummary:
    """The counts of the whole course, whatever the filter: one grouped query."""
    rows = (
        Enrolment.objects.filter(course=course)
        .annotate(invitation_state=invitation_state(now=now))
        .values("status", "role", "invitation_state")
        .annotate(number=Count("pk"))
        .order_by()
    )
    return PeopleSummary({(row["status"], row["role"], row["invitation_state"]): row["number"] for row in rows})


@dataclass
class PeoplePage(ShownRange):
    """One page of the people the query keeps: ``rows`` are enrolments (with their user),
    each with ``invitation`` (an ``InvitationShown``) and ``email_trust``."""

    rows: list[Enrolment]
    number: int
    pages: int
    matching: int
    per_page: int = PER_PAGE


def people_page(*, course: Course, query: PeopleQuery, page: int = 1, per_page: int = PER_PAGE) -> PeoplePage:
    """Page ``page`` of the people ``query`` keeps, clamped to the pages there are (as the
    course gradebook clamps: past the last page reads as the last one)."""
    now = timezone.now()
    paginator = Paginator(people_matching(course=course, query=query, now=now), per_page)
    shown = paginator.get_page(min(max(page, 1), paginator.num_pages))
    rows = list(shown.object_list)
    if rows:
        sent = {
            invitation.user_id: invitation
            for invitation in Invitation.objects.filter(course=course, user_id__in=[row.user_id for row in rows])
        }
        trusted = account_selectors.email_trust_of_users(users=[row.user for row in rows])
        for row in rows:
            row.invitation = invitation_status(sent.get(row.user_id), now=now)
            row.email_trust = trusted.get(row.user_id)
    return PeoplePage(
        rows=rows, number=shown.number, pages=paginator.num_pages, matching=paginator.count, per_page=per_page
    )
