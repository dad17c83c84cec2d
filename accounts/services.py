"""Writes for accounts: signing up, confirming an e-mail address, and recording which
address may find an account (accounts.models).

The confirmation link is a value signed by ``django.core.signing`` (time-stamped, with its
own salt), so no token is stored or hand-made; following it shows the address and the
account, and a button confirms (a mail scanner that opens links confirms nothing). Like
Django's password-reset token, it carries a hash of the account's state: its e-mail, its
trusted address and its latest requested address (``EmailRequest``, with a key new for
every link), so a link works once, and only while it is the latest one sent. A
changed address only replaces the old one once confirmed, whatever
``ACCOUNT_EMAIL_VERIFICATION`` says; with that setting on, a new account also stays
inactive until its address is confirmed.

An account e-mail leaves from a worker, never from the request (``account_email_hand_off``):
how long a page takes must not say whether an address has an account. A batch of e-mails (a
course's invitations) leaves the same way, as one task over one mail connection
(``account_emails_send``)."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Callable
from dataclasses import dataclass
from time import monotonic

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import EmailMessage, get_connection, send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare, get_random_string, salted_hmac

from .identifiers import email_normalise
from .models import EmailRequest, EmailTrust, TrustedEmail
from .selectors import email_in_use, users_with_trusted_email

logger = logging.getLogger(__name__)

VERIFY_SALT = "accounts.verify-email"
VERIFY_MAX_AGE = 3 * 24 * 3600


class AccountRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def verification_required() -> bool:
    return bool(getattr(settings, "ACCOUNT_EMAIL_VERIFICATION", False))


@transaction.atomic
def account_create(*, form) -> object:
    """Save a valid SignUpForm; the account is inactive when e-mails must be confirmed."""
    user = form.save(commit=False)
    user.is_active = not verification_required()
    user.save()
    return user


def _account_state_hash(*, user_pk: int) -> str:
    """A hash of what a confirmation link is bound to: the account's e-mail, its trusted
    address and its latest requested address. Any of them changing (another link asked
    for, a link followed, the e-mail changed) changes it."""
    User = get_user_model()
    email = User._default_manager.filter(pk=user_pk).values_list("email", flat=True).first() or ""
    trusted = TrustedEmail.objects.filter(user_id=user_pk).values_list("email", "trust").first() or ("", "")
    requested = EmailRequest.objects.filter(user_id=user_pk).values_list("email", "key", "requested_at").first()
    requested = (requested[0], requested[1], requested[2].isoformat()) if requested else ("", "", "")
    value = "\x1f".join([str(user_pk), email_normalise(email), *trusted, *requested])
    return salted_hmac(VERIFY_SALT + ".state", value, algorithm="sha256").hexdigest()


@transaction.atomic
def email_verification_token(*, user, email: str, join_code: str = "", signup: bool = False) -> str:
    """The token of a link confirming ``email`` for ``user``. It records ``email`` as the
    account's latest requested address, so every link sent before stops working."""
    email = email_normalise(email)
    EmailRequest.objects.update_or_create(
        user_id=user.pk,
        defaults={"email": email, "key": get_random_string(32), "requested_at": timezone.now()},
    )
    return signing.dumps(
        {"u": user.pk, "e": email, "j": join_code, "s": int(signup), "h": _account_state_hash(user_pk=user.pk)},
        salt=VERIFY_SALT, compress=True,
    )


class ConfirmationLinksTooMany(AccountRefused):
    pass


def email_verification_send(*, request, user, email: str, join_code: str = "", signup: bool = False) -> None:
    """E-mail ``email`` a link confirming it for ``user``. Refuses (``ConfirmationLinksTooMany``)
    past a few links an hour per account, so the profile cannot be used to flood a mailbox.

    An address another account holds (``selectors.email_in_use``) is sent a note saying so
    instead of a link, and the caller cannot tell the two apart: the same refusals, the same
    earlier links retired, one e-mail either way, rendered here and sent by a worker. Sign-up
    and the profile would otherwise tell anyone which addresses have an account."""
    from grading.throttle import token_take

    wait = token_take(
        key=f"verify-email:{user.pk}", burst=settings.ACCOUNT_CONFIRMATION_LINKS_BURST,
        per_second=settings.ACCOUNT_CONFIRMATION_LINKS_PER_HOUR / 3600,
    )
    if wait:
        minutes = max(1, round(wait / 60))
        raise ConfirmationLinksTooMany(
            f"Too many confirmation links were sent for this account; try again in {minutes} minute{'s' * (minutes != 1)}."
        )
    token = email_verification_token(user=user, email=email, join_code=join_code, signup=signup)
    context = {"user": user, "email": email, "days": VERIFY_MAX_AGE // 86400, "signup": signup}
    if email_in_use(email=email, exclude_user=user):
        subject, template = "Your e-mail address at attnquiz", "accounts/email_in_use.txt"
        context["reset_link"] = request.build_absolute_uri(reverse("password_reset"))
    else:
        subject, template = "Confirm your e-mail address for attnquiz", "accounts/verify_email.txt"
        context["link"] = request.build_absolute_uri(reverse("verify_email", args=[token]))
    message = {"subject": subject, "body": render_to_string(template, context), "to": email}
    if not account_email_hand_off(
        task=ACCOUNT_EMAIL_TASK, args=list(message.values()), send_here=lambda: account_email_send(**message),
    ):
        raise AccountRefused("We could not send the confirmation e-mail just now; try again later.")


# --- Account e-mails, sent by a worker ------------------------------------------------------

ACCOUNT_EMAIL_TASK = "accounts.tasks.send_account_email"
ACCOUNT_EMAILS_TASK = "accounts.tasks.send_account_emails"
PASSWORD_RESET_TASK = "accounts.tasks.send_password_reset_links"


def account_email_hand_off(*, task: str, args: list, send_here: Callable[[], object]) -> bool:
    """Have a worker run ``task`` (an e-mail's sending) on the follow-ups' queue, which every
    deployment's worker consumes: a mail server's seconds, and whether a message was sent at
    all, never show in the request's time. ``args`` are plain values (strings, lists and dicts
    of them): what the e-mail's links need is taken from the request here, never the request
    itself. The account e-mails' tasks read no row the caller wrote, so they are published at
    once; e-mails that must not leave unless the caller's transaction commits (a course's
    invitations) are handed off from its ``transaction.on_commit``.

    Without a worker (GRADING_MODE "inline", the embedded set-up) ``send_here`` sends it now.
    So does a broker that refuses the task, after ``attnquiz.celery.task_publish`` tried a
    fresh connection: logged, and sent rather than lost or turned into an error page.
    Returns False when it was to be sent here and the mail server failed (logged)."""
    if settings.GRADING_MODE != "inline":
        from attnquiz.enqueue import task_send

        try:
            task_send(task, args=args, queue=settings.FOLLOWUP_QUEUE)
            return True
        except Exception:  # the broker being down must never fail the request or lose the e-mail
            logger.warning("broker unreachable; %s sent from the request instead", task, exc_info=True)
    try:
        send_here()
    except (smtplib.SMTPException, OSError, AccountEmailsInterrupted) as failure:
        logger.exception("could not send %s (%s)", _unsent_words(failure), task)
        return False
    return True


def _unsent_words(failure: Exception) -> str:
    if isinstance(failure, AccountEmailsInterrupted):
        return f"{len(failure.remaining)} of {failure.total} account e-mails"
    return "an account e-mail"


def account_email_send(*, subject: str, body: str, to: str) -> None:
    """Send one rendered account e-mail (``send_account_email``'s work); a mail server that
    fails raises, so the task tries again later."""
    send_mail(subject=subject, message=body, from_email=None, recipient_list=[to])


class AccountEmailsInterrupted(Exception):
    """The mail server failed during a batch: ``remaining`` are the messages not sent (the one
    being sent first, as the server may or may not have taken it). The failure is the cause."""

    def __init__(self, *, remaining: list, total: int):
        super().__init__(f"{len(remaining)} of {total} e-mails not sent")
        self.remaining = remaining
        self.total = total


def account_emails_send(*, messages: list, seconds: float | None = None) -> list:
    """Send rendered e-mails (dicts of ``subject``, ``body`` and ``to``, as
    ``account_email_send`` takes them) in order over one mail connection; returns the ones
    left when ``seconds`` ran out (at least one is sent each time), else [].

    A mail server that fails (cannot be reached, drops the connection, answers an error)
    raises ``AccountEmailsInterrupted`` with the messages not sent. A recipient the server
    refuses for now (a 4xx answer: a full mailbox, greylisting) holds back only its own
    message: the rest are sent, then it is raised with the messages so refused. A message no
    server will ever take is logged and passed over: one not of that shape, one that cannot
    be made (a line break in a header), or one whose recipient the server refuses for good
    (a 5xx answer)."""
    if not isinstance(messages, list):
        logger.error("account e-mails that are not a list were passed over")
        return []
    if not messages:
        return []
    deadline = None if seconds is None else monotonic() + seconds
    connection = get_connection(fail_silently=False)
    index = 0
    refused_for_now: list = []
    last_refusal = None
    try:
        connection.open()
        for index, message in enumerate(messages):
            if index and deadline is not None and monotonic() >= deadline:
                return messages[index:] + refused_for_now
            try:
                _batch_message_send(connection=connection, message=message)
            except RecipientRefusedForNow as refusal:
                refused_for_now.append(message)
                last_refusal = refusal.__cause__
    except (smtplib.SMTPException, OSError) as failure:
        raise AccountEmailsInterrupted(
            remaining=messages[index:] + refused_for_now, total=len(messages)
        ) from failure
    finally:
        _connection_close(connection)
    if refused_for_now:
        raise AccountEmailsInterrupted(remaining=refused_for_now, total=len(messages)) from last_refusal
    return []


class RecipientRefusedForNow(Exception):
    """The mail server refused a message's recipient with a temporary (4xx) answer; the
    refusal is the cause."""


def _batch_message_send(*, connection, message) -> None:
    email = _email_from(message)
    if email is None:
        logger.error("an account e-mail that is not a subject, body and address was passed over")
        return
    try:
        connection.send_messages([email])
    except smtplib.SMTPRecipientsRefused as refused:
        if not all(code >= 500 for code, _answer in refused.recipients.values()):
            raise RecipientRefusedForNow() from refused  # tried again after the rest
        logger.warning("the mail server refused an account e-mail's recipient for good: %s", refused.recipients)
    except ValueError:  # BadHeaderError: no server would take it
        logger.exception("an account e-mail that cannot be made was passed over")


def _email_from(message) -> EmailMessage | None:
    if not isinstance(message, dict):
        return None
    subject, body, to = (message.get(key) for key in ("subject", "body", "to"))
    if not all(isinstance(value, str) for value in (subject, body, to)) or not to:
        return None
    return EmailMessage(subject, body, None, [to])


def _connection_close(connection) -> None:
    """Whatever was sent stays sent: a server that fails to say goodbye is no failure."""
    try:
        connection.close()
    except (smtplib.SMTPException, OSError):
        logger.info("closing the mail connection failed", exc_info=True)


@dataclass(frozen=True)
class EmailConfirmation:
    user: object
    email: str
    join_code: str
    signup: bool


LINK_SPENT = (
    "This confirmation link has been used already, or a newer one was sent since; "
    "only the latest link sent for an account works, once."
)


def email_confirmation_read(*, token: str) -> EmailConfirmation:
    """What a confirmation link confirms, without changing anything (the page that asks).
    Refused (``AccountRefused``) when it is not valid, has expired, or has been used or
    replaced by a newer link."""
    try:
        data = signing.loads(token, salt=VERIFY_SALT, max_age=VERIFY_MAX_AGE)
    except signing.SignatureExpired:
        raise AccountRefused("This confirmation link has expired; sign in or ask for a new one.") from None
    except signing.BadSignature:
        raise AccountRefused("This confirmation link is not valid.") from None
    if not isinstance(data, dict):
        raise AccountRefused("This confirmation link is not valid.")
    user = get_user_model()._default_manager.filter(pk=data.get("u")).first() if isinstance(data.get("u"), int) else None
    email = email_normalise(str(data.get("e") or ""))
    if user is None or not email:
        raise AccountRefused("This confirmation link is not valid.")
    if not constant_time_compare(str(data.get("h") or ""), _account_state_hash(user_pk=user.pk)):
        raise AccountRefused(LINK_SPENT)
    requested = EmailRequest.objects.filter(user=user).values_list("email", flat=True).first()
    if requested != email:  # bound by the hash already; said plainly
        raise AccountRefused(LINK_SPENT)
    return EmailConfirmation(user, email, str(data.get("j") or ""), bool(data.get("s")))


@transaction.atomic
def email_verify(*, token: str) -> tuple[object, str]:
    """Set the confirmed address as the account's e-mail, trusted to find it (and activate
    an account waiting for its first confirmation). Returns (user, join code). The link is
    spent: it, and any other sent before, confirms nothing more."""
    try:
        user_pk = signing.loads(token, salt=VERIFY_SALT, max_age=VERIFY_MAX_AGE).get("u")
    except (signing.BadSignature, AttributeError):
        user_pk = None
    User = get_user_model()
    if isinstance(user_pk, int):  # the account first, then its state, read again under the lock
        User._default_manager.select_for_update().filter(pk=user_pk).first()
    confirmation = email_confirmation_read(token=token)
    user = User._default_manager.get(pk=confirmation.user.pk)
    email = confirmation.email
    EmailRequest.objects.filter(user=user).delete()
    if users_with_trusted_email(email=email).exclude(pk=user.pk).exists():
        raise AccountRefused(
            "Another account has confirmed this e-mail address; sign in to it, or reset its password."
        )
    user.email = email
    fields = ["email"]
    first_confirmation = user.last_login is None and not TrustedEmail.objects.filter(user=user).exists()
    if confirmation.signup and not user.is_active and first_confirmation:
        # The sign-up this link was sent for; an account switched off since stays off.
        user.is_active = True
        fields.append("is_active")
    user.save(update_fields=fields)
    if not email_trust_record(user=user, email=email, trust=EmailTrust.CONFIRMED_BY_LINK):
        raise AccountRefused(
            "Another account has confirmed this e-mail address; sign in to it, or reset its password."
        )
    return user, confirmation.join_code


def email_trust_record(*, user, email: str, trust: str) -> bool:
    """Record that ``email`` (the account's e-mail) finds ``user``; False, recording nothing,
    when another account holds it already. A record left by an account whose e-mail has
    changed since is given up. An address confirmed stays confirmed when staff give it again."""
    email = email_normalise(email)
    if not email:
        return False
    try:
        with transaction.atomic():
            for held in TrustedEmail.objects.select_for_update().filter(email=email).exclude(user=user).select_related("user"):
                if email_normalise(held.user.email) == email:
                    return False
                held.delete()
            current = TrustedEmail.objects.select_for_update().filter(user=user).first()
            if current is None:
                TrustedEmail.objects.create(user=user, email=email, trust=trust)
            elif current.email != email or (
                current.trust == EmailTrust.GIVEN_BY_STAFF and trust != EmailTrust.GIVEN_BY_STAFF
            ):
                current.email, current.trust, current.recorded_at = email, trust, timezone.now()
                current.save(update_fields=["email", "trust", "recorded_at"])
    except IntegrityError:  # another request recorded the address for another account meanwhile
        return False
    return True


def email_trust_record_new_account(*, user, email: str, trust: str) -> None:
    """``email_trust_record`` for an account just made for ``email``, when no trust record
    holds the address (``selectors.trusted_emails_recorded``): one INSERT. Call inside a
    savepoint: a record another request made meanwhile raises IntegrityError."""
    TrustedEmail.objects.create(user=user, email=email_normalise(email), trust=trust)


def email_confirmed_by_password_link(*, user) -> bool:
    """The account's password was set through a link e-mailed to its address (a reset or an
    invitation; Django's token includes the address, so it is still the one mailed)."""
    return email_trust_record(user=user, email=user.email, trust=EmailTrust.CONFIRMED_BY_PASSWORD)


def sign_in_failures_clear(*, user) -> int:
    """Forget the account's failed sign-ins from every address (after a password reset),
    under both the names they are counted under: its username and its e-mail address."""
    from axes.utils import reset

    names = {user.get_username()} | ({email_normalise(user.email)} if user.email else set())
    return sum(reset(username=name) for name in sorted(names))
