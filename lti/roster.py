"""Roster sync through Names and Role Provisioning Services (NRPS 2.0).

The LMS course's membership is fetched page by page (``rel="next"``, at most
``MAX_PAGES``), people become attnquiz users with the role the LMS gives them, and
people with an identity from this LMS who are no longer active members are marked as
dropped: their enrolment stays, and so does their work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from pylti1p3.names_roles import NamesRolesProvisioningService

from courses.models import Enrolment, EnrolmentSource, EnrolmentStatus, Role
from courses.services import CourseRefused, enrolment_ensure, enrolment_remove

from .connector import ServiceRefused, ServiceTemporaryError, call_service, service_connector
from .models import LtiContext, LtiIdentity

logger = logging.getLogger(__name__)

NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
MAX_PAGES = 50
MAX_MEMBERS = 20_000


@dataclass
class RosterSyncResult:
    members: int = 0
    added: int = 0
    updated: int = 0
    dropped: int = 0
    skipped: int = 0
    error: str = ""
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.error:
            return f"roster not synced: {self.error}"
        return (
            f"{self.members} members: {self.added} added, {self.updated} updated, "
            f"{self.dropped} dropped, {self.skipped} skipped"
        )


def roster_fetch(*, context: LtiContext) -> list[dict]:
    """Every member of the LMS course, following ``next`` links. Raises the connector's errors."""
    if not context.memberships_url:
        raise ServiceRefused(
            "the LMS has not offered its roster service (NRPS) for this course; "
            "turn on 'Names and Role Provisioning' for attnquiz in the LMS"
        )
    connector = service_connector(platform=context.platform)
    service = NamesRolesProvisioningService(
        connector, {"context_memberships_url": context.memberships_url}
    )
    members: list[dict] = []
    url = context.memberships_url
    for _page in range(MAX_PAGES):
        page, url = call_service(
            connector, [NRPS_SCOPE], lambda url=url: service.get_members_page(url)
        )
        if not isinstance(page, list):
            raise ServiceRefused("the LMS's roster page has no list of members")
        members.extend(member for member in page if isinstance(member, dict))
        if len(members) > MAX_MEMBERS:
            raise ServiceRefused(f"the roster has more than {MAX_MEMBERS} members")
        if not url:
            return members
    raise ServiceRefused(f"the roster has more than {MAX_PAGES} pages; nobody was dropped")


def roster_sync(*, context_id: int) -> RosterSyncResult:
    """Fetch the roster and apply it; the outcome is also stored on the context."""
    context = LtiContext.objects.select_related("platform", "course").get(pk=context_id)
    result = RosterSyncResult()
    try:
        members = roster_fetch(context=context)
    except (ServiceRefused, ServiceTemporaryError) as error:
        result.error = str(error)
        LtiContext.objects.filter(pk=context.pk).update(roster_sync_error=result.error[:1000])
        logger.warning("roster sync of %s failed: %s", context, error)
        return result
    roster_apply(context=context, members=members, result=result)
    LtiContext.objects.filter(pk=context.pk).update(
        roster_synced_at=timezone.now(), roster_sync_error=""
    )
    return result


@transaction.atomic
def roster_apply(*, context: LtiContext, members: list[dict], result: RosterSyncResult) -> None:
    """Create or update users and enrolments; mark those who left as dropped."""
    from .services import lti_user_ensure, role_from_lti_roles, sub_storable

    course = context.course
    platform = context.platform
    active_users: set[int] = set()
    if course.archived_at is not None:
        result.notes.append("the course is archived: its roster is left as it is")
        return
    current = {
        user_id: (role, status)
        for user_id, role, status in Enrolment.objects.filter(course=course).values_list(
            "user_id", "role", "status"
        )
    }
    result.members = len(members)
    for member in members:
        sub = member.get("user_id")
        roles = member.get("roles")
        if not isinstance(sub, str) or not sub or not sub_storable(sub) or not isinstance(roles, list):
            # A user id past 255 characters or holding a NUL cannot be stored; cut short, two
            # such ids would name one person.
            result.skipped += 1
            continue
        role = role_from_lti_roles([r for r in roles if isinstance(r, str)])
        status = member.get("status") or "Active"
        if role is None:
            result.skipped += 1
            continue
        user = lti_user_ensure(platform=platform, sub=sub, claims=member)
        if status != "Active":
            continue  # Inactive or Deleted: treated as having left (below)
        active_users.add(user.pk)
        if current.get(user.pk) is None:
            result.added += 1
        elif current[user.pk] != (role, EnrolmentStatus.ACTIVE):
            result.updated += 1
        else:
            continue
        enrolment_ensure(course=course, user=user, role=role, source=EnrolmentSource.LMS)
    left = (
        Enrolment.objects.filter(
            course=course,
            status=EnrolmentStatus.ACTIVE,
            user__lti_identities__platform=platform,
        )
        .exclude(user_id__in=active_users)
        .exclude(role=Role.INSTRUCTOR)  # a sync never locks the course's instructors out
        .select_related("course")
    )
    for enrolment in left:
        try:
            enrolment_remove(enrolment=enrolment)  # students: dropped, work kept; staff: removed
        except CourseRefused as refusal:
            result.notes.append(str(refusal))
            continue
        result.dropped += 1
