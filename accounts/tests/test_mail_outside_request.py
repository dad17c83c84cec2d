"""Account e-mails leave from a worker, never from the request: the reset page asks the worker
the same for a known address as for an unknown one (it looks no account up, sends nothing),
so its time cannot say whether an address has an account. The worker's run mails the same
links as the page did. A broker that cannot take the task costs neither the e-mail nor a
500: it is sent from the request, and logged."""

from __future__ import annotations

import logging
import re
from unittest import mock

import pytest
from django.contrib.messages import get_messages
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts import services, tasks
from accounts.tests.helpers import email_confirmed
from accounts.tests.mail_worker import (  # noqa: F401 (fixtures)
    broker_down, mail_server_down, published, run_published,
)
from authoring.tests.factories import user_create

NEW_PASSWORD = "a-long-unusual-passphrase-42"
RESET_LINK = re.compile(r"http://testserver(/accounts/password/reset/\S+/)")
VERIFY_LINK = re.compile(r"http://testserver(/accounts/verify/\S+/)")
RESET_TEMPLATES = ["registration/password_reset_subject.txt", "registration/password_reset_email.txt"]


@pytest.fixture
def sam(people):
    return email_confirmed(people.student, "sam@example.org")


def ask_reset(client, typed: str):
    return client.post(reverse("password_reset"), {"email": typed})


# --- the request


@pytest.mark.parametrize("known, unknown", [
    ("sam@example.org", "nobody@example.org"),
    ("SAM@Example.org", "NOBODY@Example.org"),  # as a lookup would read them
])
def test_a_reset_asks_the_same_of_the_worker_for_a_known_and_an_unknown_address(client, sam, published, known, unknown):
    answers, queries = [], []
    for typed in (known, unknown):
        with CaptureQueriesContext(connection) as captured:
            response = ask_reset(client, typed)
        answers.append((response.status_code, response["Location"]))
        queries.append(len(captured))
    assert answers == [(302, reverse("password_reset_done"))] * 2
    assert queries == [0, 0]  # no account looked up
    assert mail.outbox == []  # nothing sent in the request
    assert [(task.name, args, queue) for task, args, queue in published] == [
        (services.PASSWORD_RESET_TASK, ["sam@example.org", "testserver", False, *RESET_TEMPLATES], "followups"),
        (services.PASSWORD_RESET_TASK, ["nobody@example.org", "testserver", False, *RESET_TEMPLATES], "followups"),
    ]


def test_the_link_is_made_for_the_host_and_scheme_the_page_was_asked_on(client, sam, published, settings):
    settings.ALLOWED_HOSTS = ["quiz.example.edu"]
    client.post(reverse("password_reset"), {"email": "sam@example.org"}, secure=True, HTTP_HOST="quiz.example.edu")
    [(_task, args, _queue)] = published
    assert args == ["sam@example.org", "quiz.example.edu", True, *RESET_TEMPLATES]
    run_published(published)
    assert re.search(r"https://quiz\.example\.edu/accounts/password/reset/\S+/", mail.outbox[0].body)


def test_an_invalid_address_publishes_nothing(client, sam, published):
    response = ask_reset(client, "not an address")
    assert response.status_code == 200
    assert "Enter a valid email address." in response.content.decode()
    assert published == [] and mail.outbox == []


# --- the worker's run


def test_the_workers_run_mails_the_known_address_a_link_that_sets_the_password(client, sam, published, django_user_model):
    ask_reset(client, "sam@example.org")
    ask_reset(client, "nobody@example.org")
    run_published(published)
    assert [(m.to, m.subject) for m in mail.outbox] == [(["sam@example.org"], "Choose a new attnquiz password")]
    assert "Your username is sam." in mail.outbox[0].body
    form_page = client.get(RESET_LINK.search(mail.outbox[0].body).group(1), follow=True)
    assert form_page.status_code == 200 and "Choose a new password" in form_page.content.decode()
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert (done.status_code, done["Location"]) == (302, reverse("password_reset_complete"))
    assert django_user_model.objects.get(username="sam").check_password(NEW_PASSWORD)


def test_the_worker_sends_no_link_where_the_page_would_not_have(client, people, published):
    """The worker applies the page's rules: an address only claimed does not find the
    account that confirmed it; a switched-off account is sent nothing."""
    email_confirmed(people.student, "sam@example.org")
    people.student2.email = "sam@example.org"  # claimed by sue, confirmed by sam
    people.student2.save()
    email_confirmed(user_create("ivan", is_active=False), "ivan@example.org")
    ask_reset(client, "sam@example.org")
    ask_reset(client, "ivan@example.org")
    assert [task.name for task, _args, _queue in published] == [services.PASSWORD_RESET_TASK] * 2
    assert mail.outbox == []
    run_published(published)
    assert [re.search(r"Your username is (\S+)\.", m.body).group(1) for m in mail.outbox] == ["sam"]


def test_a_confirmation_link_is_rendered_in_the_request_and_sent_by_the_worker(client, people, published):
    client.force_login(people.student)
    response = client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": "new@example.org"})
    assert response.status_code == 302
    assert mail.outbox == []
    [(task, [subject, body, to], queue)] = published
    assert (task.name, subject, to, queue) == (
        services.ACCOUNT_EMAIL_TASK, "Confirm your e-mail address for attnquiz", "new@example.org", "followups",
    )
    run_published(published)
    assert [(m.to, m.subject, m.body) for m in mail.outbox] == [(["new@example.org"], subject, body)]
    assert client.get(VERIFY_LINK.search(body).group(1)).status_code == 200
    assert "We sent a link to new@example.org" in " ".join(str(m) for m in get_messages(response.wsgi_request))


def test_the_note_that_an_address_is_taken_goes_the_same_way(client, people, published):
    email_confirmed(people.student2, "sue@example.org")
    client.force_login(people.student)
    client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": "sue@example.org"})
    [(task, [subject, body, to], _queue)] = published
    assert (task.name, subject, to) == (services.ACCOUNT_EMAIL_TASK, "Your e-mail address at attnquiz", "sue@example.org")
    assert "http://testserver/accounts/password/reset/" in body
    assert mail.outbox == []


def test_a_mail_server_that_fails_is_tried_again_by_the_worker(mail_server_down):
    with mock.patch("accounts.services.send_mail", wraps=services.send_mail) as send_mail:
        result = tasks.send_account_email.apply(args=["Subject", "Body", "sam@example.org"])
    assert (result.state, isinstance(result.result, ConnectionRefusedError)) == ("FAILURE", True)
    assert send_mail.call_count == 1 + tasks.MAIL_RETRY["max_retries"]


def test_a_reset_that_the_mail_server_refuses_is_tried_again_by_the_worker(sam, mail_server_down):
    with mock.patch("accounts.forms.EmailMultiAlternatives.send", side_effect=ConnectionRefusedError) as send:
        result = tasks.send_password_reset_links.apply(args=["sam@example.org", "testserver", False, *RESET_TEMPLATES])
    assert (result.state, send.call_count) == ("FAILURE", 1 + tasks.MAIL_RETRY["max_retries"])


# --- without a broker


def test_with_the_broker_down_the_reset_is_sent_from_the_request_and_logged(client, sam, broker_down, caplog):
    with caplog.at_level(logging.WARNING, logger="accounts.services"):
        known = ask_reset(client, "sam@example.org")
        unknown = ask_reset(client, "nobody@example.org")
    assert [(r.status_code, r["Location"]) for r in (known, unknown)] == [(302, reverse("password_reset_done"))] * 2
    assert [m.to for m in mail.outbox] == [["sam@example.org"]]
    assert RESET_LINK.search(mail.outbox[0].body)
    assert [r.getMessage() for r in caplog.records if r.name == "accounts.services"] == [
        f"broker unreachable; {services.PASSWORD_RESET_TASK} sent from the request instead",
    ] * 2


def test_with_the_broker_down_the_confirmation_link_is_sent_from_the_request(client, people, broker_down, caplog):
    client.force_login(people.student)
    with caplog.at_level(logging.WARNING, logger="accounts.services"):
        response = client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": "new@example.org"})
    assert response.status_code == 302
    assert [m.to for m in mail.outbox] == [["new@example.org"]] and VERIFY_LINK.search(mail.outbox[0].body)
    assert f"broker unreachable; {services.ACCOUNT_EMAIL_TASK} sent from the request instead" in caplog.messages


def test_with_broker_and_mail_server_down_the_pages_answer_and_say_so(client, people, broker_down, mail_server_down, caplog):
    email_confirmed(people.student, "sam@example.org")
    with caplog.at_level(logging.WARNING, logger="accounts.services"):
        reset = ask_reset(client, "sam@example.org")
        client.force_login(people.student)
        profile = client.post(reverse("profile"), {"first_name": "Sam", "last_name": "Stone", "email": "new@example.org"})
    assert (reset.status_code, reset["Location"]) == (302, reverse("password_reset_done"))
    assert profile.status_code == 302
    assert "We could not send the confirmation e-mail just now; try again later." in [
        str(m) for m in get_messages(profile.wsgi_request)
    ]
    assert [m for m in caplog.messages if m.startswith("could not send")] == [
        f"could not send an account e-mail ({services.PASSWORD_RESET_TASK})",
        f"could not send an account e-mail ({services.ACCOUNT_EMAIL_TASK})",
    ]
