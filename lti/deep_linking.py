"""Deep Linking 2.0: an instructor picks attnquiz content inside the LMS's content picker.

The picker offers the course's assignments, a single exercise of the bank (it becomes a
one-exercise assignment) or a new assignment made from several bank exercises. The answer
is an ``LtiDeepLinkingResponse`` JWT built with pylti1p3next's ``DeepLink``, signed with
our key, carrying one ``ltiResourceLink`` whose ``lineItem`` (score maximum, label,
resource id) makes the LMS create the gradebook column.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils.text import slugify
from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem

from courses import pools
from courses.models import Assignment, Course
from courses.services import latest_published_versions

from .connector import registration_for
from .models import LtiContext, Platform
from .passback import resource_id_for
from .services import LtiRefused

MAX_EXERCISES = 50


@dataclass(frozen=True)
class DeepLinkAnswer:
    """What the auto-submitting form posts back to the LMS."""

    return_url: str
    jwt: str
    assignment: Assignment


def bank_versions() -> list:
    """The published exercise versions the picker offers, demo exercise first."""
    return latest_published_versions()


def assignment_points(assignment: Assignment) -> float:
    # A pool is one slot: each student is given (and scored on) one of its items.
    return round(pools.slot_points(assignment.items.all()), 6)


@transaction.atomic
def deep_link_assignment_from_bank(
    *, course: Course, title: str, exercise_slugs: list[str]
) -> Assignment:
    """A new published assignment holding the chosen bank exercises, in bank order."""
    from courses.services import CourseRefused, assignment_create, assignment_item_add

    title = title.strip()[:200]
    wanted = [slug for slug in dict.fromkeys(exercise_slugs) if slug][:MAX_EXERCISES]
    if not wanted:
        raise LtiRefused("Pick at least one exercise.")
    versions = {version.exercise.slug: version for version in bank_versions()}
    unknown = [slug for slug in wanted if slug not in versions]
    if unknown:
        raise LtiRefused(f"No published exercise is called '{unknown[0]}'.")
    if not title:
        title = versions[wanted[0]].exercise.title if len(wanted) == 1 else ""
    if not title:
        raise LtiRefused("Give the new assignment a title.")
    base = slugify(title)[:40] or "assignment"
    slug = base
    while course.assignments.filter(slug=slug).exists():
        slug = f"{base}-{secrets.token_hex(2)}"
    try:
        assignment = assignment_create(course=course, title=title, slug=slug, is_published=True)
        for slug_ in wanted:
            assignment_item_add(assignment=assignment, version=versions[slug_], points=1.0)
    except CourseRefused as refusal:
        raise LtiRefused(str(refusal)) from None
    return assignment


def deep_link_response(
    *,
    platform: Platform,
    deployment_id: str,
    settings: dict,
    assignment: Assignment,
    launch_url: str,
) -> DeepLinkAnswer:
    """The signed ``LtiDeepLinkingResponse`` that adds ``assignment`` to the LMS course."""
    points = assignment_points(assignment)
    if points <= 0:
        raise LtiRefused("That assignment has no exercises with points yet; add some first.")
    lineitem = (
        LineItem()
        .set_score_maximum(points)
        .set_label(assignment.title[:200])
        .set_resource_id(resource_id_for(assignment=assignment))
        .set_tag("attnquiz")
    )
    resource = (
        DeepLinkResource()
        .set_type("ltiResourceLink")
        .set_title(assignment.title[:200])
        .set_url(launch_url)
        .set_custom_params({"assignment": assignment.slug})
        .set_lineitem(lineitem)
    )
    deep_link = DeepLink(registration_for(platform=platform), deployment_id, settings)
    message = deep_link.get_message_jwt([resource])
    # The library always writes the "data" claim, as null when the request had none;
    # the spec asks to echo it only when it was sent.
    data_claim = "https://purl.imsglobal.org/spec/lti-dl/claim/data"
    if message.get(data_claim) is None:
        message.pop(data_claim, None)
    return DeepLinkAnswer(
        return_url=settings["deep_link_return_url"],
        jwt=deep_link.encode_jwt(message),
        assignment=assignment,
    )


def deep_link_context(*, platform_id: int, context_id: int) -> LtiContext:
    return LtiContext.objects.select_related("course", "platform").get(
        pk=context_id, platform_id=platform_id
    )
