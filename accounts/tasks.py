"""Celery entry points for accounts: the e-mails a page hands to a worker
(``services.account_email_hand_off``), on the follow-ups' queue. Thin: the work is in
``services`` and ``forms``.

Safe to run twice: a message sent again is a second copy, a reset link sent again a second
link. A mail server that fails is tried again later, a few times."""

import smtplib

from celery import shared_task

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


@shared_task(acks_late=True, ignore_result=True, **MAIL_RETRY)
def send_password_reset_links(
    email: str, domain: str, use_https: bool, subject_template_name: str, email_template_name: str,
) -> None:
    """The reset links of the accounts an address finds (none for an unknown address)."""
    forms.password_reset_links_send(
        email=email, domain=domain, use_https=use_https,
        subject_template_name=subject_template_name, email_template_name=email_template_name,
    )
