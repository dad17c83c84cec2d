"""Celery entry points for accounts: the e-mails a page hands to a worker
(``services.account_email_hand_off``), on the follow-ups' queue. Thin: the work is in
``services`` and ``forms``.

Safe to run twice: a message sent again is a second copy, a reset link sent again a second
link; a task changes no row, so a run delivered twice costs duplicate e-mails, never a lost
one. A mail server that fails is tried again later, a few times.

A batch (``send_account_emails``, a course's invitations) is sent in order over one
connection. When the server fails after some of it, the retry carries only the messages not
yet sent (the one being sent among them: the server may have taken it before failing, so
that one may arrive twice), so the ones before are not sent again. A recipient refused
for now (a 4xx answer) holds back only its own message: the rest are sent, and the retry
carries it. A run sends for at most ``mail_run_seconds`` and hands the rest to a new task, not a retry (the server is working):
a run stays inside the soft time limit, and inside the broker's visibility timeout, after
which an unacknowledged task is delivered again and its messages would all be sent twice.
A run delivered twice anyway (a worker lost mid-run) sends its messages again.

A course's invitations (``send_course_invitations``, ``send_enrolment_invitation_notes``)
go the same way, but their arguments, retries and hand-ons are invitation ids and the site's
address: each message is rendered as it is sent (``courses.invitations``), so a set-password
link never sits in the broker. A run delivered twice, or retried, mails a second, new link,
as an invitation sent twice would."""

import smtplib

from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from courses import invitations

from . import forms, services

MAIL_RETRY = {
    "autoretry_for": (smtplib.SMTPException, OSError),
    "retry_backoff": 30,
    "retry_backoff_max": 600,
    "max_retries": 5,
}


@shared_task(acks_late=True, ignore_result=True, **MAIL_RETRY)
def send_account_email(subject: str, body: str, to: str) -> None:
    """One rendered message (a confirmation link, or the note that an address is taken)."""
    services.account_email_send(subject=subject, body=body, to=to)


@shared_task(bind=True, acks_late=True, ignore_result=True)
def send_account_emails(self, messages: list) -> None:
    """Rendered messages (dicts of subject, body and to) over one mail connection."""
    try:
        rest = services.account_emails_send(messages=messages, seconds=mail_run_seconds(self))
    except services.AccountEmailsInterrupted as interrupted:
        raise _retry_with(self, args=[interrupted.remaining], interrupted=interrupted)
    if rest:
        _rest_hand_on(self, args=[rest])


@shared_task(bind=True, acks_late=True, ignore_result=True)
def send_course_invitations(self, invitation_ids: list, base_url: str) -> None:
    """A course's invitations by id, each rendered here with a new set-password link."""
    _invitations_send(self, invitations.invitation_emails_send, invitation_ids, base_url)


@shared_task(bind=True, acks_late=True, ignore_result=True)
def send_enrolment_invitation_notes(self, invitation_ids: list, base_url: str) -> None:
    """The notes of invitations to join a course, by id, each rendered here."""
    _invitations_send(self, invitations.enrolment_invitation_emails_send, invitation_ids, base_url)


def _invitations_send(task, send, invitation_ids, base_url) -> None:
    try:
        rest = send(invitation_ids=invitation_ids, base_url=base_url, seconds=mail_run_seconds(task))
    except services.AccountEmailsInterrupted as interrupted:  # its remaining are ids
        raise _retry_with(task, args=[interrupted.remaining, base_url], interrupted=interrupted)
    if rest:
        _rest_hand_on(task, args=[rest, base_url])


def _retry_with(task, *, args: list, interrupted: services.AccountEmailsInterrupted):
    """The retry of a batch the mail server interrupted, carrying only what is left."""
    return task.retry(
        args=args, exc=interrupted.__cause__, max_retries=MAIL_RETRY["max_retries"],
        countdown=get_exponential_backoff_interval(
            factor=MAIL_RETRY["retry_backoff"], retries=task.request.retries,
            maximum=MAIL_RETRY["retry_backoff_max"], full_jitter=True,
        ),
    )


def _rest_hand_on(task, *, args: list) -> None:
    """What a run had no time for goes to a new task (the server is working: not a retry)."""
    from attnquiz.enqueue import task_send

    task_send(task.name, args=args, queue=settings.FOLLOWUP_QUEUE)


def mail_run_seconds(task) -> float:
    """How long one run of a batch sends before handing the rest on: the message being sent
    then may still wait up to the mail server's timeout, and the run must end inside the
    task's soft time limit."""
    limit = task.soft_time_limit or task.app.conf.task_soft_time_limit or 20
    last_message = settings.EMAIL_TIMEOUT or limit / 2
    return max(1.0, limit - last_message - 2)


@shared_task(acks_late=True, ignore_result=True, **MAIL_RETRY)
def send_password_reset_links(
    email: str, domain: str, use_https: bool, subject_template_name: str, email_template_name: str,
) -> None:
    """The reset links of the accounts an address finds (none for an unknown address)."""
    forms.password_reset_links_send(
        email=email, domain=domain, use_https=use_https,
        subject_template_name=subject_template_name, email_template_name=email_template_name,
    )
