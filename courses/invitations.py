"""Invitation e-mails: a person added to a course (by the roster import or by hand) gets a
link to choose their own password, instead of finding "Forgot your password?" alone.

The link is Django's password-reset link (``default_token_generator``): it expires after
``PASSWORD_RESET_TIMEOUT`` (3 days by default) and stops working once the password is set.
Resending makes a new link; the people page shows each invitation's status.

Once the invitations are committed, their ids (and the site's address as the instructor
reached it) are handed to a worker as one task per batch
(``accounts.services.account_email_hand_off``): a roster of hundreds does not hold the
instructor's page for the mail server's conversation. The worker renders each e-mail, with a
link made then, as it sends it (``invitation_emails_send``): a set-password link is a
credential, so it never sits in the broker, in a retry or in a result (a broker that
restarts loses at most ids: the invitations stay recorded, and "resend" makes new links). A run delivered twice, or retried, makes a second link, as
an invitation sent twice would; each works until the password is set. An invitation deleted
since, or whose person has no e-mail address any more, is passed over (logged). Without a
worker, or with the broker down, the same function renders and sends from the request.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from time import monotonic
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.http.request import split_domain_port, validate_host
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.services import AccountEmailsInterrupted, account_email_hand_off, account_emails_send

from .models import Course, EnrolmentInvitation, Invitation
from .time_text import course_time_text

logger = logging.getLogger(__name__)

MAX_INVITATIONS_AT_ONCE = 2000

# The workers' tasks (accounts.tasks), by name: their arguments are invitation ids and the
# site's address, never a rendered e-mail.
INVITATIONS_TASK = "accounts.tasks.send_course_invitations"
ENROLMENT_INVITATIONS_TASK = "accounts.tasks.send_enrolment_invitation_notes"


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


class _StaffUnnamed:
    """The inviter, in the e-mail's words, when the account that sent it is gone since."""

    def get_full_name(self) -> str:
        return "The course's staff"

    get_username = get_full_name


def _message(*, invitation: Invitation, base_url: str) -> dict:
    """The e-mail of one invitation, with a new set-password link (made now: rendered in the
    worker, or in the request when there is none)."""
    course, user = invitation.course, invitation.user
    context = {
        "course": course, "user": user, "inviter": invitation.sent_by or _StaffUnnamed(),
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
        invitation_ids = []
        for user in users:
            invitation = existing.get(user.pk)
            if invitation is None:
                invitation = Invitation.objects.create(course=course, user=user, sent_by=actor, sent_at=now)
            else:
                invitation.sent_at, invitation.sent_by = now, actor
                invitation.times_sent += 1
                invitation.save(update_fields=["sent_at", "sent_by", "times_sent"])
            invitation_ids.append(invitation.pk)
        transaction.on_commit(
            lambda: _hand_off(task=INVITATIONS_TASK, invitation_ids=invitation_ids, base_url=base_url)
        )
    return users


def _hand_off(*, task: str, invitation_ids: list[int], base_url: str) -> None:
    """One task for the whole batch, carrying only the invitations' ids and the site's
    address: the worker renders and sends them over one mail connection. Without a worker, or
    with the broker down, they are rendered and sent from the request (logged); a mail server
    that is down then must not turn the import into an error page: the invitations stay
    recorded (the people page offers "resend")."""
    send = _SENDERS[task]
    account_email_hand_off(
        task=task, args=[invitation_ids, base_url],
        send_here=lambda: send(invitation_ids=invitation_ids, base_url=base_url, site_checked=True),
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
    invitation_ids = [invitation.pk for invitation in chosen]
    EnrolmentInvitation.objects.filter(pk__in=invitation_ids).update(emailed_at=now)
    transaction.on_commit(
        lambda: _hand_off(task=ENROLMENT_INVITATIONS_TASK, invitation_ids=invitation_ids, base_url=base_url)
    )
    return len(chosen)


def _enrolment_message(*, invitation: EnrolmentInvitation, base_url: str) -> dict:
    context = {
        "course": invitation.course, "user": invitation.user, "inviter_name": inviter_name(invitation),
        "role": invitation.get_role_display().lower(), "link": enrolment_invitation_link(base_url=base_url),
    }
    subject = " ".join(render_to_string("courses/enrolment_invitation_subject.txt", context).split())
    body = render_to_string("courses/enrolment_invitation_email.txt", context)
    return {"subject": subject, "body": body, "to": invitation.user.email}


# ---------------------------------------------------------------------------
# The sending, by id: the workers' tasks (accounts.tasks), or the request without one.
# ---------------------------------------------------------------------------


def invitation_emails_send(
    *, invitation_ids, base_url, seconds: float | None = None, site_checked: bool = False,
) -> list[int]:
    """Render the invitations ``invitation_ids`` (each with a new set-password link) and send
    them over one mail connection; returns the ids left when ``seconds`` ran out, else [].
    A mail server that fails raises ``AccountEmailsInterrupted`` whose ``remaining`` are ids.
    An invitation whose person set their password since it was sent gets no new link.
    ``site_checked``: the caller made ``base_url`` itself (the request), so it is not checked."""
    def renderable(invitation: Invitation) -> bool:
        if invitation.accepted_at is not None and invitation.accepted_at >= invitation.sent_at:
            logger.info("invitation %s was accepted before its e-mail was sent; passed over", invitation.pk)
            return False
        return True

    rows = Invitation.objects.select_related("course", "user", "sent_by")
    return _emails_send_by_id(
        rows=rows, render=_message, renderable=renderable,
        invitation_ids=invitation_ids, base_url=base_url, seconds=seconds, site_checked=site_checked,
    )


def enrolment_invitation_emails_send(
    *, invitation_ids, base_url, seconds: float | None = None, site_checked: bool = False,
) -> list[int]:
    """As ``invitation_emails_send``, for the notes of invitations to join (``EnrolmentInvitation``)."""
    rows = EnrolmentInvitation.objects.select_related("course", "user", "invited_by")
    return _emails_send_by_id(
        rows=rows, render=_enrolment_message, renderable=lambda invitation: True,
        invitation_ids=invitation_ids, base_url=base_url, seconds=seconds, site_checked=site_checked,
    )


_SENDERS = {INVITATIONS_TASK: invitation_emails_send, ENROLMENT_INVITATIONS_TASK: enrolment_invitation_emails_send}


def _emails_send_by_id(*, rows, render, renderable, invitation_ids, base_url, seconds, site_checked) -> list[int]:
    """Render each row still there, in the order of ``invitation_ids``, and send them
    (``account_emails_send``), speaking of what is left in ids. The arguments came through the
    broker, so they are not trusted: ids must be a list of ints (at most
    MAX_INVITATIONS_AT_ONCE), and the address one the site answers to (ALLOWED_HOSTS), or the
    link's host could be anyone's."""
    started = monotonic()
    ids = invitation_ids_trusted(invitation_ids)
    if not ids:
        return []
    if not site_checked and not base_url_trusted(base_url):
        logger.error("invitation e-mails for a site address not allowed were passed over: %r", base_url)
        return []
    found = rows.in_bulk(ids)
    id_of, messages = {}, []
    for pk in ids:
        invitation = found.get(pk)
        if invitation is None:
            logger.info("invitation %s was deleted before its e-mail was sent; passed over", pk)
        elif not invitation.user.email:
            logger.info("invitation %s: its person has no e-mail address any more; passed over", pk)
        elif renderable(invitation):
            message = render(invitation=invitation, base_url=base_url)
            id_of[id(message)] = pk
            messages.append(message)
    left = None if seconds is None else max(0.0, seconds - (monotonic() - started))
    try:
        rest = account_emails_send(messages=messages, seconds=left)
    except AccountEmailsInterrupted as interrupted:
        raise AccountEmailsInterrupted(
            remaining=[id_of[id(message)] for message in interrupted.remaining], total=interrupted.total,
        ) from interrupted.__cause__
    return [id_of[id(message)] for message in rest]


def invitation_ids_trusted(invitation_ids) -> list[int]:
    """The positive ints of ``invitation_ids``, each once, in order, at most
    MAX_INVITATIONS_AT_ONCE; anything else is logged and left out."""
    if not isinstance(invitation_ids, list):
        logger.error("invitation ids that are not a list were passed over")
        return []
    ids = list(dict.fromkeys(pk for pk in invitation_ids if type(pk) is int and pk > 0))
    if len(ids) != len(invitation_ids) or len(ids) > MAX_INVITATIONS_AT_ONCE:
        logger.error("invitation ids that are not distinct positive ints, or too many, were passed over")
    return ids[:MAX_INVITATIONS_AT_ONCE]


def base_url_trusted(base_url) -> bool:
    """Whether ``base_url`` is an http(s) address of this site (a host ALLOWED_HOSTS accepts,
    as the request that made it was), with nothing but a path after the host."""
    if not isinstance(base_url, str):
        return False
    try:
        parts = urlsplit(base_url)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or parts.username or parts.password or parts.query or parts.fragment:
        return False
    domain, _port = split_domain_port(parts.netloc)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]  # as Django's request.get_host()
    return port_ok and bool(domain) and validate_host(domain, allowed)
