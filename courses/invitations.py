"""Invitation e-mails: a person added to a course (by the roster import or by hand) gets a
link to choose their own password, instead of finding "Forgot your password?" alone.

The link is Django's password-reset link (``default_token_generator``): it expires after
``PASSWORD_RESET_TIMEOUT`` (3 days by default) and stops working once the password is set.
Resending makes a new link; the people page shows each invitation's status.

The e-mails are rendered in the request (the links as the instructor reached the site) and,
once the invitations are committed, handed to a worker as one task per batch
(``accounts.services.account_email_hand_off``): a roster of hundreds does not hold the
instructor's page for the mail server's conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.services import ACCOUNT_EMAILS_TASK, account_email_hand_off, account_emails_send

from .models import Course, EnrolmentInvitation, Invitation
from .time_text import course_time_text

MAX_INVITATIONS_AT_ONCE = 2000


class InvitationStatus:
    NONE = "not invited"
    SENT = "sent"
    EXPIRED = "link expired"
    ACCEPTED = "accepted"


@dataclass(frozen=True)
class InvitationShown:
    status: str
    invitation: Invitation | None

    @property
    def words(self) -> str:
        if self.invitation is None:
            return "not invited"
        # In the active zone: the course's, on the course's pages (CourseTimeZoneMiddleware).
        if self.status == InvitationStatus.ACCEPTED:
            return f"accepted {course_time_text(self.invitation.accepted_at)}"
        sent = course_time_text(self.invitation.sent_at)
        if self.status == InvitationStatus.EXPIRED:
            return f"link expired (sent {sent})"
        return f"sent {sent}" + (f", {self.invitation.times_sent} times" if self.invitation.times_sent > 1 else "")


def invitation_status(invitation: Invitation | None, *, now=None) -> InvitationShown:
    if invitation is None:
        return InvitationShown(InvitationStatus.NONE, None)
    if invitation.accepted_at is not None:
        return InvitationShown(InvitationStatus.ACCEPTED, invitation)
    now = now or timezone.now()
    if invitation.sent_at + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT) < now:
        return InvitationShown(InvitationStatus.EXPIRED, invitation)
    return InvitationShown(InvitationStatus.SENT, invitation)


def invitations_of_course(*, course: Course) -> dict[int, Invitation]:
    """user id -> invitation, one query (the people page)."""
    return {invitation.user_id: invitation for invitation in Invitation.objects.filter(course=course)}


def invitation_link(*, user, base_url: str) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return base_url.rstrip("/") + reverse("invitation_accept", kwargs={"uidb64": uid, "token": token})


def _message(*, course: Course, user, actor, base_url: str) -> dict:
    context = {
        "course": course, "user": user, "inviter": actor,
        "link": invitation_link(user=user, base_url=base_url),
        "valid_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
    }
    # A subject is plain text on one line (its template does not escape HTML): a title's
    # "<b>" stays "<b>", and a line break, which no header may hold, becomes a space.
    subject = " ".join(render_to_string("registration/invitation_subject.txt", context).split())
    body = render_to_string("registration/invitation_email.txt", context)
    return {"subject": subject, "body": body, "to": user.email}


def invitations_send(*, course: Course, users, actor, base_url: str) -> list:
    """Send each user with an e-mail address an invitation to ``course`` (handed to a worker
    after the commit of the caller's transaction, ``_hand_off``); returns the users invited.

    ``base_url`` is the site's address as the instructor reached it (the link's host)."""
    users = [user for user in users if user.email][:MAX_INVITATIONS_AT_ONCE]
    if not users:
        return []
    now = timezone.now()
    with transaction.atomic():
        existing = {i.user_id: i for i in Invitation.objects.select_for_update().filter(course=course, user__in=users)}
        for user in users:
            invitation = existing.get(user.pk)
            if invitation is None:
                Invitation.objects.create(course=course, user=user, sent_by=actor, sent_at=now)
            else:
                invitation.sent_at, invitation.sent_by = now, actor
                invitation.times_sent += 1
                invitation.save(update_fields=["sent_at", "sent_by", "times_sent"])
        messages = [_message(course=course, user=user, actor=actor, base_url=base_url) for user in users]
        transaction.on_commit(lambda: _hand_off(messages))
    return users


def _hand_off(messages: list[dict]) -> None:
    """One task for the whole batch, sent over one mail connection by the worker. Without a
    worker, or with the broker down, it is sent from the request (logged); a mail server that
    is down then must not turn the import into an error page: the invitations stay recorded
    (the people page offers "resend")."""
    account_email_hand_off(
        task=ACCOUNT_EMAILS_TASK, args=[messages], send_here=lambda: account_emails_send(messages=messages),
    )


def invitations_accepted(*, user) -> Course | None:
    """The user has chosen their password through an invitation link: every pending
    invitation of theirs is accepted. Returns the course of the one sent last (the e-mail
    they most likely followed), None when none was pending."""
    pending = Invitation.objects.filter(user=user, accepted_at__isnull=True)
    latest = pending.select_related("course").order_by("-sent_at", "-pk").first()
    pending.update(accepted_at=timezone.now())
    return latest.course if latest is not None else None


# ---------------------------------------------------------------------------
# Invitations to join, of existing accounts (``EnrolmentInvitation``): the e-mail only
# tells them; they accept or decline on their dashboard, signed in.
# ---------------------------------------------------------------------------

# The same invitation is e-mailed again only after this long (re-adding someone does not
# flood their mailbox).
INVITATION_EMAIL_AGAIN_AFTER = timedelta(minutes=10)


def inviter_name(invitation: EnrolmentInvitation) -> str:
    inviter = invitation.invited_by
    if inviter is None:
        return "The course's staff"
    return inviter.get_full_name() or inviter.get_username()


def enrolment_invitation_link(*, base_url: str) -> str:
    return base_url.rstrip("/") + reverse("dashboard") + "#invitations"


def enrolment_invitations_email(*, invitations, base_url: str) -> int:
    """E-mail each invited person with an address (handed to a worker after the commit of
    the caller's transaction, as ``invitations_send`` does) a note of the invitation with a
    link to their dashboard, where they accept or decline it; not one e-mailed in the last
    ``INVITATION_EMAIL_AGAIN_AFTER``. Returns how many were e-mailed."""
    now = timezone.now()
    recent = now - INVITATION_EMAIL_AGAIN_AFTER
    chosen = [
        invitation for invitation in invitations
        if invitation.user.email and (invitation.emailed_at is None or invitation.emailed_at <= recent)
    ][:MAX_INVITATIONS_AT_ONCE]
    if not chosen:
        return 0
    link = enrolment_invitation_link(base_url=base_url)
    messages = []
    for invitation in chosen:
        context = {
            "course": invitation.course, "user": invitation.user, "inviter_name": inviter_name(invitation),
            "role": invitation.get_role_display().lower(), "link": link,
        }
        subject = " ".join(render_to_string("courses/enrolment_invitation_subject.txt", context).split())
        body = render_to_string("courses/enrolment_invitation_email.txt", context)
        messages.append({"subject": subject, "body": body, "to": invitation.user.email})
    EnrolmentInvitation.objects.filter(pk__in=[invitation.pk for invitation in chosen]).update(emailed_at=now)
    transaction.on_commit(lambda: _hand_off(messages))
    return len(chosen)
