"""Writes of the course's people page that reach many people at once: sending the
invitation again to everyone a filter keeps who has not joined yet; and "Add someone"
asking first when it would take a member of staff's role away (``enrolment_add_asking``).

It goes through ``invitations.invitations_send``, the service of the per-person "Resend
invitation" button, so it is bounded the same way (at most MAX_INVITATIONS_AT_ONCE e-mails,
sent after the commit over one mail connection). What stops a double click from mailing
everyone twice is the confirmation: it holds only for the very invitations it counted (each
one's ``times_sent``), so once they are sent the same confirmation asks again instead of
sending. And an invitation sent in the last ``INVITE_AGAIN_AFTER`` is left out (said in the
question's numbers), so repeated bulk sends cannot flood a mailbox or the mail server; the
per-person button (``invitation_send_to_person``) keeps the same interval for its one person.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from attnquiz.confirmations import Confirmed, confirmation_require, scope_of

from accounts.selectors import user_by_username_or_trusted_email

from . import invitations, selectors_people, services
from .invitations import MAX_INVITATIONS_AT_ONCE
from .models import Course, Enrolment, EnrolmentStatus, Invitation, Role
from .selectors_people import PeopleQuery
from .services import CourseRefused, EnrolmentChange

# A bulk send leaves out whoever was sent an invitation this recently.
INVITE_AGAIN_AFTER = timedelta(minutes=10)

NOBODY_TO_INVITE_AGAIN = (
    "Nobody here is waiting to join: everyone this list shows has joined, was never invited or was dropped."
)


def _people(number: int) -> str:
    return f"{number:,} person" if number == 1 else f"{number:,} people"


def _minutes(delta: timedelta) -> str:
    minutes = max(1, round(delta.total_seconds() / 60))
    return f"{minutes} minute{'s' * (minutes != 1)}"


def invitations_send_again_message(
    *, sending: int, waiting: int, without_email: int, query: PeopleQuery, recent: int = 0
) -> str:
    """The sentence the confirmation shows, in numbers: ``sending`` of the ``waiting``
    people with an e-mail address (all of them up to MAX_INVITATIONS_AT_ONCE)."""
    days = max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)
    whom = f" ({query.words})" if query.is_filtered else ""
    if sending < waiting:
        text = (
            f"Send the invitation e-mail again to the {_people(sending)} of the {waiting:,} not yet joined{whom} "
            f"whose invitation is oldest? Send again afterwards to reach the others."
        )
    else:
        has = "has" if sending == 1 else "have"
        text = f"Send the invitation e-mail again to {_people(sending)} who {has} not joined yet{whom}?"
    text += f" Each gets a new link to choose a password, valid for {days} day{'s' * (days != 1)}."
    if recent:
        text += f" {_people(recent)} sent one in the last {_minutes(INVITE_AGAIN_AFTER)} {'is' if recent == 1 else 'are'} left out."
    if without_email:
        text += f" {_people(without_email)} without an e-mail address cannot be sent one."
    return text


def invitations_send_again(
    *, course: Course, query: PeopleQuery, actor, base_url: str, confirmed: Confirmed
) -> list:
    """Send the invitation again to the enrolled people ``query`` keeps who were invited
    and have not joined yet (expired links included), oldest invitation first, at most
    MAX_INVITATIONS_AT_ONCE; returns the users sent to. Raises ``ConfirmationNeeded`` (with
    their number) until ``confirmed`` answers that very sentence about those very
    invitations, and ``CourseRefused`` when there is nobody to send to."""
    with transaction.atomic():
        waiting = list(selectors_people.people_not_yet_joined(course=course, query=query))
        # Locked, and read again: whoever accepts meanwhile is left out, not mailed.
        pending = {
            invitation.user_id: invitation
            for invitation in Invitation.objects.select_for_update().filter(
                course=course, accepted_at__isnull=True, user_id__in=[enrolment.user_id for enrolment in waiting]
            )
        }
        reachable = [e.user for e in waiting if e.user_id in pending and e.user.email]
        without_email = sum(1 for e in waiting if e.user_id in pending and not e.user.email)
        if not reachable:
            raise CourseRefused(
                NOBODY_TO_INVITE_AGAIN if not without_email
                else f"Nobody here can be sent the invitation again: {_people(without_email)} not yet joined "
                "have no e-mail address."
            )
        since = timezone.now() - INVITE_AGAIN_AFTER
        with_email = [user for user in reachable if pending[user.pk].sent_at <= since]
        recent = len(reachable) - len(with_email)
        if not with_email:
            raise CourseRefused(
                f"Everyone here not yet joined was sent the invitation in the last {_minutes(INVITE_AGAIN_AFTER)} "
                f"({_people(recent)}): give them time to read it, and send it again later if they do not join."
            )
        with_email.sort(key=lambda user: (pending[user.pk].sent_at, user.pk))
        users = with_email[:MAX_INVITATIONS_AT_ONCE]
        message = invitations_send_again_message(
            sending=len(users), waiting=len(with_email), without_email=without_email, query=query, recent=recent,
        )
        confirmation_require(
            scope=scope_of(
                "invitations_send_again", course.pk,
                change=sorted((user.pk, pending[user.pk].times_sent) for user in users),
            ),
            message=message, confirmed=confirmed,
        )
        return invitations.invitations_send(course=course, users=users, actor=actor, base_url=base_url)


def _sent_ago(sent_at) -> str:
    minutes = int((timezone.now() - sent_at).total_seconds() // 60)
    return "less than a minute ago" if minutes < 1 else f"{minutes} minute{'s' * (minutes != 1)} ago"


def invitation_send_to_person(*, course: Course, user, actor, base_url: str) -> None:
    """The people page's per-person "send the invitation": the first one at once, another
    only ``INVITE_AGAIN_AFTER`` after the last (decided with the invitation's row locked, so
    two clicks at once send one e-mail). CourseRefused, sending nothing, for an archived
    course, a person without an e-mail address, or an invitation sent too recently."""
    if course.is_archived:
        raise CourseRefused("This course is archived: nobody is invited to it.")
    if not user.email:
        raise CourseRefused(f"{user.get_username()} has no e-mail address to send an invitation to.")
    with transaction.atomic():
        sent = Invitation.objects.select_for_update().filter(course=course, user=user).first()
        if sent is not None and sent.sent_at > timezone.now() - INVITE_AGAIN_AFTER:
            raise CourseRefused(
                f"{user.get_username()} was sent an invitation {_sent_ago(sent.sent_at)}; "
                f"send it again after {_minutes(INVITE_AGAIN_AFTER)}, if they have not joined by then."
            )
        invitations.invitations_send(course=course, users=[user], actor=actor, base_url=base_url)


# ---------------------------------------------------------------------------
# "Add someone" who is already staff of the course, with a lower role
# ---------------------------------------------------------------------------

# What each role may do here, in order: a change to a lower rank takes something away.
_ROLE_RANK = {Role.STUDENT: 0, Role.TEACHING_ASSISTANT: 1, Role.INSTRUCTOR: 2}


_ROLE_WORDS = {Role.STUDENT: "a student", Role.TEACHING_ASSISTANT: "a teaching assistant", Role.INSTRUCTOR: "an instructor"}


def _role_words(role: str) -> str:
    return _ROLE_WORDS.get(role, "a member")


def person_add_role_question(*, course: Course, identifier: str, role: str) -> str:
    """The sentence "Add someone" asks before it lowers the role of an active member of the
    course's staff ("" when it would not): the form's role starts at "student", so typing a
    colleague's username to look them up made them a student at once, without a word."""
    user = user_by_username_or_trusted_email(identifier=identifier)
    if user is None or role not in _ROLE_RANK:
        return ""
    enrolment = Enrolment.objects.filter(course=course, user=user, status=EnrolmentStatus.ACTIVE).first()
    if enrolment is None or _ROLE_RANK[role] >= _ROLE_RANK.get(enrolment.role, 0):
        return ""
    name = user.get_username()
    loses = (
        "the course's staff pages (gradebook, grading, people) and see the course as a student does"
        if role == Role.STUDENT else "what only instructors do (people, roster, settings, categories)"
    )
    return (
        f"{name} is {_role_words(enrolment.role)} of this course. Adding {name} as {_role_words(role)} "
        f"changes their role at once: they lose {loses}. To keep their role, cancel; to add someone "
        "else, check the username or e-mail."
    )


def enrolment_add_asking(
    *, course: Course, identifier: str, role: str, actor, student_id: str = "", confirmed: Confirmed,
) -> EnrolmentChange:
    """``services.enrolment_add`` from the people page's "Add someone": the same, except
    that lowering the role of an active member of staff raises ConfirmationNeeded (nothing
    changed) until ``confirmed`` answers that very sentence, for that person and role.
    Decided with the course row locked, as ``enrolment_add`` decides."""
    with transaction.atomic():
        Course.objects.select_for_update().filter(pk=course.pk).first()
        message = person_add_role_question(course=course, identifier=identifier, role=role)
        if message:
            user = user_by_username_or_trusted_email(identifier=identifier)
            confirmation_require(
                scope=scope_of("person_add_role", course.pk, change={"user": user.pk, "role": role}),
                message=message, confirmed=confirmed,
            )
        return services.enrolment_add(
            course=course, identifier=identifier, role=role, actor=actor, student_id=student_id,
        )
