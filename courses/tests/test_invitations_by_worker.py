"""Course invitation e-mails leave from a worker: the roster import and "add by e-mail" record
them in the request and, once committed, publish one task per batch (of invitation ids: the
worker renders each e-mail, test_invitation_tasks_hold_no_links.py); the request opens no
mail connection. The worker sends the batch over one connection, and a mail server that
fails after some messages has only the rest tried again. A broker that cannot take the task
costs neither the e-mails nor a 500: they are sent from the request, and logged."""

from __future__ import annotations

import logging
import re
import smtplib
from datetime import timedelta
from unittest import mock

import pytest
from django.core import mail
from django.core.mail.backends import locmem
from django.urls import reverse
from django.utils import timezone

from accounts import services, tasks
from accounts.tests.helpers import email_confirmed
from accounts.tests.mail_worker import (  # noqa: F401 (fixtures)
    broker_down, mail_server_down, published, run_published,
)
from authoring.tests.factories import PASSWORD, user_create
from courses import invitations
from courses.models import Enrolment, EnrolmentInvitation, Invitation

LINK = re.compile(r"http://testserver(/accounts/invitation/[^/\s]+/[^/\s]+/)")
ROSTER = "email,name\nada@example.org,Ada Lovelace\nbob@example.org,Bob Byte\ncy@example.org,Cy Young\n"
NEW_PASSWORD = "a-long-new-pass-42"
TASK_NAME = services.ACCOUNT_EMAILS_TASK
INVITATIONS_TASK = invitations.INVITATIONS_TASK
NOTES_TASK = invitations.ENROLMENT_INVITATIONS_TASK
SITE = "http://testserver/"
SUBJECT = "You are invited to Attention on attnquiz"


class CountingBackend(locmem.EmailBackend):
    """The test mailbox, counting the mail connections made."""

    made = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        type(self).made += 1


class FlakyBackend(locmem.EmailBackend):
    """A mail server that takes ``accepts`` messages, then drops the connection ``failures``
    times (on each new connection's first message), then works again."""

    accepts = 0
    failures = 0

    def send_messages(self, messages):
        cls = type(self)
        if len(mail.outbox) >= cls.accepts and cls.failures:
            cls.failures -= 1
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return super().send_messages(messages)


class RefusingBackend(locmem.EmailBackend):
    """A mail server that refuses one recipient with ``code``, every time."""

    refused = "bob@example.org"
    code = 550

    def send_messages(self, messages):
        for message in messages:
            if self.refused in message.to:
                raise smtplib.SMTPRecipientsRefused({self.refused: (type(self).code, b"no such mailbox")})
        return super().send_messages(messages)


class RefusingThenDroppingBackend(RefusingBackend):
    """Refuses ``b@example.org`` for now, then drops the connection ``drops`` times on the
    message after it."""

    refused = "b@example.org"
    drops = 0

    def send_messages(self, messages):
        cls = type(self)
        if cls.drops and any("c@example.org" in m.to for m in messages):
            cls.drops -= 1
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return super().send_messages(messages)


@pytest.fixture
def instructor(client, people):
    client.login(username="ines", password=PASSWORD)
    return people.instructor


@pytest.fixture
def connections(settings):
    settings.EMAIL_BACKEND = f"{__name__}.CountingBackend"
    CountingBackend.made = 0
    return CountingBackend


@pytest.fixture
def runs():
    """The messages each run of the batch task was given."""
    with mock.patch.object(services, "account_emails_send", wraps=services.account_emails_send) as send:
        yield lambda: [[m["to"] for m in call.kwargs["messages"]] for call in send.call_args_list]


def import_roster(client, capture, text=ROSTER):
    with capture(execute=True):
        return client.post(reverse("courses:roster", args=["attn"]), {"text": text, "invite": "on", "apply": "1"})


def batch(*addresses) -> list[dict]:
    return [{"subject": f"To {to}", "body": f"Hello {to}", "to": to} for to in addresses]


FIVE = ["a@example.org", "b@example.org", "c@example.org", "d@example.org", "e@example.org"]


# --- the request


def test_a_roster_import_publishes_one_task_with_every_invitation_and_sends_nothing(
    client, people, instructor, published, connections, django_capture_on_commit_callbacks,
):
    response = import_roster(client, django_capture_on_commit_callbacks)
    assert response.status_code == 200
    assert "Imported the roster: 3 changes; 3 invitations sent." in response.content.decode()
    assert (mail.outbox, connections.made) == ([], 0)  # no mail connection in the request
    [(task, [ids, base_url], queue)] = published
    assert (task.name, queue, base_url) == (INVITATIONS_TASK, "followups", SITE)  # the host the page was reached on
    invited = Invitation.objects.filter(course=people.course)
    assert sorted(ids) == sorted(invited.values_list("pk", flat=True))
    assert sorted(i.user.username for i in invited) == ["ada", "bob", "cy"]


def test_the_workers_run_delivers_each_invitation_over_one_connection_and_its_link_works(
    client, people, instructor, published, connections, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks)
    [(_task, [ids, _base_url], _queue)] = published
    run_published(published)
    assert connections.made == 1
    assert [m.to[0] for m in mail.outbox] == [Invitation.objects.get(pk=pk).user.email for pk in ids]  # in order
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.org", "bob@example.org", "cy@example.org"]
    assert all(m.subject == SUBJECT and LINK.search(m.body) for m in mail.outbox)
    [bob] = [m for m in mail.outbox if m.to == ["bob@example.org"]]
    assert "Your username is bob." in bob.body
    client.logout()
    form_page = client.get(LINK.search(bob.body).group(1), follow=True)
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert (done.status_code, done["Location"]) == (302, "/courses/attn/")
    assert Invitation.objects.get(user__username="bob").accepted_at is not None
    assert Invitation.objects.filter(accepted_at__isnull=True).count() == 2


def test_add_by_e_mail_publishes_the_invitation_and_sends_nothing(
    client, people, instructor, published, connections, django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        added = client.post(
            reverse("courses:person_add", args=["attn"]),
            {"identifier": "grace@example.org", "role": "student", "invite": "on"}, follow=True,
        )
    assert [str(m) for m in added.context["messages"]] == [
        "new account 'grace', enrolled as student; invitation sent: its link lets them choose a password"
    ]
    assert (mail.outbox, connections.made) == ([], 0)
    [(task, [[invitation_id], base_url], _queue)] = published
    grace = Invitation.objects.get(pk=invitation_id)
    assert (task.name, grace.user.email, base_url) == (INVITATIONS_TASK, "grace@example.org", SITE)
    run_published(published)
    assert [(m.to, m.subject) for m in mail.outbox] == [(["grace@example.org"], SUBJECT)]


def test_existing_accounts_are_told_by_the_worker_and_each_batch_is_one_task(
    client, people, instructor, published, connections, django_capture_on_commit_callbacks,
):
    for username in ("vera", "walt"):
        email_confirmed(user_create(username), f"{username}@uni.example")
    text = ROSTER + "vera@uni.example,\nwalt@uni.example,\n"
    response = import_roster(client, django_capture_on_commit_callbacks, text)
    assert (
        "Imported the roster: 5 changes; 3 invitations sent; 2 existing accounts invited: "
        "enrolled once they accept (told by e-mail)."
    ) in response.content.decode()
    assert (mail.outbox, connections.made) == ([], 0)
    # The new accounts' password links, then the existing accounts' notes: one task each.
    assert [(task.name, sorted(args[0]), args[1]) for task, args, _queue in published] == [
        (INVITATIONS_TASK, sorted(Invitation.objects.values_list("pk", flat=True)), SITE),
        (NOTES_TASK, sorted(EnrolmentInvitation.objects.values_list("pk", flat=True)), SITE),
    ]
    # Recorded in the request, so adding them again within 10 minutes e-mails nobody.
    assert EnrolmentInvitation.objects.filter(emailed_at__isnull=False).count() == 2
    run_published(published)
    notes = [m for m in mail.outbox if m.to[0].endswith("@uni.example")]
    assert sorted(m.to[0] for m in notes) == ["vera@uni.example", "walt@uni.example"]
    assert all("http://testserver/#invitations" in m.body for m in notes)
    import_roster(client, django_capture_on_commit_callbacks, "email\nvera@uni.example\n")
    assert published == []


# --- the worker's run


@pytest.mark.parametrize("accepts", [0, 2, 4])
def test_a_mail_server_failing_after_some_messages_has_only_the_rest_tried_again(settings, runs, accepts):
    settings.EMAIL_BACKEND = f"{__name__}.FlakyBackend"
    FlakyBackend.accepts, FlakyBackend.failures = accepts, 1
    task = tasks.send_account_emails
    with mock.patch.object(task, "retry", wraps=task.retry) as retry:
        result = task.apply(args=[batch(*FIVE)])
    assert result.successful()
    assert runs() == [FIVE, FIVE[accepts:]]
    assert [m.to[0] for m in mail.outbox] == FIVE  # each once, in order
    [call] = retry.call_args_list
    assert [m["to"] for m in call.kwargs["args"][0]] == FIVE[accepts:]
    assert 0 <= call.kwargs["countdown"] <= tasks.MAIL_RETRY["retry_backoff"]


def test_a_mail_server_that_stays_down_is_tried_a_few_times_with_what_is_left(settings, runs):
    settings.EMAIL_BACKEND = f"{__name__}.FlakyBackend"
    FlakyBackend.accepts, FlakyBackend.failures = 2, 100
    result = tasks.send_account_emails.apply(args=[batch(*FIVE)])
    assert (result.state, type(result.result)) == ("FAILURE", smtplib.SMTPServerDisconnected)
    assert runs() == [FIVE] + [FIVE[2:]] * tasks.MAIL_RETRY["max_retries"]
    assert [m.to[0] for m in mail.outbox] == FIVE[:2]


def test_an_unreachable_mail_server_is_tried_again(mail_server_down, runs):
    result = tasks.send_account_emails.apply(args=[batch(*FIVE[:3])])
    assert (result.state, isinstance(result.result, ConnectionRefusedError)) == ("FAILURE", True)
    assert runs() == [FIVE[:3]] * (1 + tasks.MAIL_RETRY["max_retries"])


RETRIES = tasks.MAIL_RETRY["max_retries"]
THREE = ["ada@example.org", "bob@example.org", "cy@example.org"]


@pytest.mark.parametrize("code, runs_expected", [
    (550, [THREE]),  # refused for good: passed over
    (450, [THREE] + [["bob@example.org"]] * RETRIES),  # for now: the rest sent, it alone tried again
])
def test_a_refused_recipient_holds_back_only_its_own_message(settings, runs, caplog, code, runs_expected):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    RefusingBackend.code = code
    with caplog.at_level(logging.WARNING, logger="accounts.services"):
        result = tasks.send_account_emails.apply(args=[batch(*THREE)])
    assert runs() == runs_expected
    assert [m.to[0] for m in mail.outbox] == ["ada@example.org", "cy@example.org"]
    assert (result.state, type(result.result).__name__) == (
        ("SUCCESS", "NoneType") if code == 550 else ("FAILURE", "SMTPRecipientsRefused")
    )
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refusals == ([
        "the mail server refused an account e-mail's recipient for good: {'bob@example.org': (550, b'no such mailbox')}"
    ] if code == 550 else [])


def test_a_recipient_refused_for_now_is_tried_again_with_what_a_failing_server_left(settings, runs):
    """Refused for now, then the server drops the connection: the retry carries the messages
    not reached and the refused one, each once."""
    settings.EMAIL_BACKEND = f"{__name__}.RefusingThenDroppingBackend"
    RefusingThenDroppingBackend.code, RefusingThenDroppingBackend.drops = 450, 1
    task = tasks.send_account_emails
    with mock.patch.object(task, "retry", wraps=task.retry) as retry:
        task.apply(args=[batch(*FIVE)])
    first_retry = retry.call_args_list[0]
    assert [m["to"] for m in first_retry.kwargs["args"][0]] == ["c@example.org", "d@example.org", "e@example.org", "b@example.org"]
    assert runs()[:2] == [FIVE, ["c@example.org", "d@example.org", "e@example.org", "b@example.org"]]
    assert [m.to[0] for m in mail.outbox] == ["a@example.org", "c@example.org", "d@example.org", "e@example.org"]


def test_a_recipient_refused_for_now_goes_with_the_rest_when_the_runs_time_is_up(settings, published, runs):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    RefusingBackend.code, RefusingBackend.refused = 450, "a@example.org"
    try:
        with mock.patch.object(tasks, "mail_run_seconds", return_value=0):
            assert tasks.send_account_emails.apply(args=[batch(*FIVE[:3])]).successful()
    finally:
        RefusingBackend.refused = "bob@example.org"
    [(_task, [rest], _queue)] = published
    assert [m["to"] for m in rest] == ["b@example.org", "c@example.org", "a@example.org"]
    assert mail.outbox == []  # the run's one message was refused for now


@pytest.mark.parametrize("messages", [
    "not a list", 7, None, {"subject": "S", "body": "B", "to": "a@example.org"},
])
def test_a_batch_that_is_not_a_list_sends_nothing(messages):
    assert tasks.send_account_emails.apply(args=[messages]).successful()
    assert mail.outbox == []


def test_messages_of_the_wrong_shape_are_passed_over_and_the_rest_sent(caplog):
    messages = [
        {"subject": "S"}, "text", None, {"subject": 1, "body": "B", "to": "x@example.org"},
        {"subject": "S", "body": "B", "to": ""},
        {"subject": "Two\nlines", "body": "B", "to": "header@example.org"},  # no header holds a line break
        {"subject": "S", "body": "B", "to": "a@example.org"},
    ]
    with caplog.at_level(logging.ERROR, logger="accounts.services"):
        assert tasks.send_account_emails.apply(args=[messages]).successful()
    assert [(m.to, m.subject) for m in mail.outbox] == [(["a@example.org"], "S")]
    assert [r.getMessage() for r in caplog.records if r.name == "accounts.services"] == [
        "an account e-mail that is not a subject, body and address was passed over",
    ] * 5 + ["an account e-mail that cannot be made was passed over"]


def test_a_long_batch_hands_what_is_left_to_a_new_task_when_its_time_is_up(published, runs):
    assert tasks.mail_run_seconds(tasks.send_account_emails) == 8.0  # a 20 s soft limit, a 10 s mail timeout
    with mock.patch.object(tasks, "mail_run_seconds", return_value=0):
        assert tasks.send_account_emails.apply(args=[batch(*FIVE[:3])]).successful()
        assert [m.to[0] for m in mail.outbox] == FIVE[:1]  # at least one message a run
        [(task, [rest], queue)] = published
        assert (task.name, [m["to"] for m in rest], queue) == (TASK_NAME, FIVE[1:3], "followups")
        run_published(published)
    assert runs() == [FIVE[:3], FIVE[1:3], FIVE[2:3]]  # a new task each time, not a retry
    assert [m.to[0] for m in mail.outbox] == FIVE[:3]


# --- without a broker


def test_with_the_broker_down_the_invitations_are_sent_from_the_request_and_logged(
    client, people, instructor, broker_down, caplog, django_capture_on_commit_callbacks,
):
    with caplog.at_level(logging.WARNING, logger="accounts.services"):
        response = import_roster(client, django_capture_on_commit_callbacks)
    assert response.status_code == 200
    assert "Imported the roster: 3 changes; 3 invitations sent." in response.content.decode()
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.org", "bob@example.org", "cy@example.org"]
    assert all(LINK.search(m.body) for m in mail.outbox)
    assert [r.getMessage() for r in caplog.records if r.name == "accounts.services"] == [
        f"broker unreachable; {INVITATIONS_TASK} sent from the request instead",
    ]


def test_with_broker_and_mail_server_down_the_import_answers_and_resend_works_later(
    client, people, instructor, broker_down, mail_server_down, caplog, settings, django_capture_on_commit_callbacks,
):
    with caplog.at_level(logging.WARNING, logger="accounts.services"):
        response = import_roster(client, django_capture_on_commit_callbacks)
    assert response.status_code == 200
    assert "Imported the roster: 3 changes; 3 invitations sent." in response.content.decode()
    assert mail.outbox == []
    assert [r.getMessage() for r in caplog.records if r.name == "accounts.services"] == [
        f"broker unreachable; {INVITATIONS_TASK} sent from the request instead",
        f"could not send 3 of 3 account e-mails ({INVITATIONS_TASK})",
    ]
    assert Invitation.objects.filter(course=people.course).count() == 3  # recorded: "resend" is offered
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # the mail server is back
    Invitation.objects.update(sent_at=timezone.now() - timedelta(minutes=11))
    enrolment = Enrolment.objects.get(course=people.course, user__username="ada")
    with django_capture_on_commit_callbacks(execute=True):
        resent = client.post(reverse("courses:person_invite", args=["attn", enrolment.pk]), follow=True)
    assert [str(m) for m in resent.context["messages"]] == ["Sent ada an invitation e-mail."]
    assert [m.to for m in mail.outbox] == [["ada@example.org"]]
    assert Invitation.objects.get(user__username="ada").times_sent == 2
