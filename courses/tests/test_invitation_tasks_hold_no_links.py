"""A course invitation's set-password link is a credential: the task that sends it carries the
invitations' ids and the site's address only, never a link or an e-mail's text, so neither
the broker nor a retry holds one. The worker renders each e-mail, with a link made then, as
it sends it; without a worker, or with the broker refusing, the request does the same."""

from __future__ import annotations

import json
import logging
import re
import smtplib
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.mail.backends import locmem
from django.urls import reverse

from accounts import tasks
from accounts.tests.helpers import email_confirmed
from attnquiz.enqueue import registered_task
from authoring.tests.factories import PASSWORD, user_create
from courses import invitations
from courses.models import EnrolmentInvitation, Invitation

LINK = re.compile(r"http://testserver(/accounts/invitation/[^/\s]+/[^/\s]+/)")
ROSTER = "email,name\nada@example.org,Ada Lovelace\nbob@example.org,Bob Byte\ncy@example.org,Cy Young\n"
NEW_PASSWORD = "a-long-new-pass-42"
SITE = "http://testserver/"
SUBJECT = "You are invited to Attention on attnquiz"
COURSE_TASK = "accounts.tasks.send_course_invitations"
NOTES_TASK = "accounts.tasks.send_enrolment_invitation_notes"


@pytest.fixture
def instructor(client, people):
    client.login(username="ines", password=PASSWORD)
    return people.instructor


@pytest.fixture
def handed(settings):
    """A deployment with a worker: what the request gives ``task_send``, as (name, args, queue)."""
    settings.GRADING_MODE = "celery"
    sent = []
    with mock.patch(
        "attnquiz.enqueue.task_send",
        side_effect=lambda name, *, args, queue=None, countdown=None: sent.append((name, args, queue)),
    ):
        yield sent


def worker_runs(handed) -> None:
    """The worker's turn: each task handed over run as the worker would (eagerly, here)."""
    while handed:
        name, args, _queue = handed.pop(0)
        assert registered_task(name).apply(args=args).successful()


def import_roster(client, capture, text=ROSTER):
    with capture(execute=True):
        return client.post(reverse("courses:roster", args=["attn"]), {"text": text, "invite": "on", "apply": "1"})


def invitation_ids(*usernames) -> list[int]:
    return sorted(Invitation.objects.filter(user__username__in=usernames).values_list("pk", flat=True))


def password_chosen_through(client, body: str):
    """Follow the e-mail's link as its reader would and choose a password."""
    form_page = client.get(LINK.search(body).group(1), follow=True)
    return client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})


def outbox_of(address: str) -> list:
    return [m for m in mail.outbox if m.to == [address]]


# --- what the request hands over


def test_the_published_task_carries_invitation_ids_and_the_site_address_only(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    response = import_roster(client, django_capture_on_commit_callbacks)
    assert "Imported the roster: 3 changes; 3 invitations sent." in response.content.decode()
    assert mail.outbox == []
    [(name, [ids, base_url], queue)] = handed
    assert (name, sorted(ids), base_url, queue) == (COURSE_TASK, invitation_ids("ada", "bob", "cy"), SITE, "followups")
    assert all(type(pk) is int for pk in ids)
    published = json.dumps(handed[0][1])
    for secret in ("/accounts/invitation/", "token", "Your username", SUBJECT, "@example.org"):
        assert secret not in published


def test_existing_accounts_notes_are_handed_over_as_ids_too(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    for username in ("vera", "walt"):
        email_confirmed(user_create(username), f"{username}@uni.example")
    import_roster(client, django_capture_on_commit_callbacks, "email\nvera@uni.example\nwalt@uni.example\n")
    [(name, [ids, base_url], _queue)] = handed
    expected = sorted(EnrolmentInvitation.objects.values_list("pk", flat=True))
    assert (name, sorted(ids), base_url) == (NOTES_TASK, expected, SITE)
    assert "invitations" not in json.dumps(handed[0][1])  # no "#invitations" link, no body
    worker_runs(handed)
    assert sorted(m.to[0] for m in mail.outbox) == ["vera@uni.example", "walt@uni.example"]
    assert all("http://testserver/#invitations" in m.body for m in mail.outbox)


# --- the worker's run


def test_the_workers_run_renders_each_invitation_whose_link_sets_the_password(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks)
    worker_runs(handed)
    assert sorted((m.to[0], m.subject) for m in mail.outbox) == [
        ("ada@example.org", SUBJECT), ("bob@example.org", SUBJECT), ("cy@example.org", SUBJECT),
    ]
    [bob] = outbox_of("bob@example.org")
    assert 'ines has added you to the course "Attention"' in bob.body  # the inviter, from the row
    assert "Your username is bob." in bob.body
    client.logout()
    done = password_chosen_through(client, bob.body)
    assert (done.status_code, done["Location"]) == (302, "/courses/attn/")
    assert get_user_model().objects.get(username="bob").check_password(NEW_PASSWORD)
    assert Invitation.objects.get(user__username="bob").accepted_at is not None


def test_a_task_run_twice_mails_a_second_working_link_and_each_is_spent_by_the_password(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks, "email\nada@example.org\n")
    [(name, args, _queue)] = handed
    for _run in range(2):
        assert registered_task(name).apply(args=args).successful()
    first, second = outbox_of("ada@example.org")
    client.logout()
    assert password_chosen_through(client, second.body).status_code == 302
    client.logout()
    spent = client.get(LINK.search(first.body).group(1), follow=True)
    assert spent.status_code == 400  # the password is set: every link sent before stops working


def test_a_deleted_invitation_and_unknown_or_malformed_ids_are_passed_over(
    client, people, instructor, handed, caplog, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks)
    [(name, [ids, base_url], _queue)] = handed
    [bob_id] = invitation_ids("bob")
    Invitation.objects.filter(pk=bob_id).delete()
    with caplog.at_level(logging.INFO, logger="courses.invitations"):
        result = registered_task(name).apply(args=[[*ids, 999_999, "7", 2.0, True, -1], base_url])
    assert result.successful()
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.org", "cy@example.org"]
    assert [r.getMessage() for r in caplog.records if r.name == "courses.invitations"] == [
        "invitation ids that are not distinct positive ints, or too many, were passed over",
        f"invitation {bob_id} was deleted before its e-mail was sent; passed over",
        "invitation 999999 was deleted before its e-mail was sent; passed over",
    ]


def test_a_person_without_an_e_mail_address_any_more_is_passed_over(
    client, people, instructor, handed, caplog, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks)
    get_user_model().objects.filter(username="cy").update(email="")
    [cy_id] = invitation_ids("cy")
    with caplog.at_level(logging.INFO, logger="courses.invitations"):
        worker_runs(handed)
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.org", "bob@example.org"]
    assert [r.getMessage() for r in caplog.records if r.name == "courses.invitations"] == [
        f"invitation {cy_id}: its person has no e-mail address any more; passed over",
    ]


def test_an_invitation_accepted_before_the_worker_ran_gets_no_new_link(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks, "email\nada@example.org\n")
    invitations.invitations_accepted(user=get_user_model().objects.get(username="ada"))
    worker_runs(handed)
    assert mail.outbox == []


@pytest.mark.parametrize("invitation_ids_given, base_url", [
    ("1,2,3", SITE),
    ({"ids": [1]}, SITE),
    (None, SITE),
    ("same", "https://attacker.example/"),  # a link to another host would hand it the token
    ("same", "javascript:alert(1)//testserver/"),
    ("same", "http://testserver/?next=x"),
    ("same", 7),
])
def test_arguments_not_of_the_expected_shape_send_nothing(
    client, people, instructor, handed, django_capture_on_commit_callbacks, invitation_ids_given, base_url,
):
    import_roster(client, django_capture_on_commit_callbacks)
    [(name, [ids, _base_url], _queue)] = handed
    given = ids if invitation_ids_given == "same" else invitation_ids_given
    assert registered_task(name).apply(args=[given, base_url]).successful()
    assert mail.outbox == []


class FlakyBackend(locmem.EmailBackend):
    """A mail server that takes ``accepts`` messages, then drops the connection once."""

    accepts = 1
    failures = 0

    def send_messages(self, messages):
        cls = type(self)
        if len(mail.outbox) >= cls.accepts and cls.failures:
            cls.failures -= 1
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return super().send_messages(messages)


def test_a_retry_after_a_mail_server_failure_carries_the_ids_left_and_no_link(
    client, people, instructor, handed, settings, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks)
    [(name, [ids, base_url], _queue)] = handed
    settings.EMAIL_BACKEND = f"{__name__}.FlakyBackend"
    FlakyBackend.failures = 1
    task = registered_task(name)
    with mock.patch.object(task, "retry", wraps=task.retry) as retry:
        assert task.apply(args=[ids, base_url]).successful()
    [call] = retry.call_args_list
    assert call.kwargs["args"] == [ids[1:], SITE]
    assert [m.to[0] for m in mail.outbox] == [
        Invitation.objects.get(pk=pk).user.email for pk in ids
    ]  # each once, in order: the retry rendered the rest anew


def test_a_run_out_of_time_hands_the_ids_left_to_a_new_task(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    import_roster(client, django_capture_on_commit_callbacks)
    [(name, [ids, base_url], _queue)] = handed
    handed.clear()
    with mock.patch.object(tasks, "mail_run_seconds", return_value=0):
        assert registered_task(name).apply(args=[ids, base_url]).successful()
        assert len(mail.outbox) == 1  # at least one message a run
        assert handed == [(COURSE_TASK, [ids[1:], SITE], "followups")]
        worker_runs(handed)
    assert len(mail.outbox) == 3


# --- without a worker


def test_inline_mode_renders_and_sends_from_the_request(
    client, people, instructor, settings, django_capture_on_commit_callbacks,
):
    settings.GRADING_MODE = "inline"
    with mock.patch("attnquiz.enqueue.task_send") as task_send:
        response = import_roster(client, django_capture_on_commit_callbacks)
    assert "Imported the roster: 3 changes; 3 invitations sent." in response.content.decode()
    task_send.assert_not_called()
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.org", "bob@example.org", "cy@example.org"]
    client.logout()
    done = password_chosen_through(client, outbox_of("cy@example.org")[0].body)
    assert (done.status_code, done["Location"]) == (302, "/courses/attn/")


def test_a_broker_that_refuses_has_the_request_render_and_send_them(
    client, people, instructor, settings, caplog, django_capture_on_commit_callbacks,
):
    settings.GRADING_MODE = "celery"
    with (
        mock.patch("attnquiz.enqueue.task_send", side_effect=ConnectionRefusedError(111, "Connection refused")),
        caplog.at_level(logging.WARNING, logger="accounts.services"),
    ):
        response = import_roster(client, django_capture_on_commit_callbacks)
    assert response.status_code == 200
    assert sorted(m.to[0] for m in mail.outbox) == ["ada@example.org", "bob@example.org", "cy@example.org"]
    assert [r.getMessage() for r in caplog.records if r.name == "accounts.services"] == [
        f"broker unreachable; {COURSE_TASK} sent from the request instead",
    ]
    client.logout()
    done = password_chosen_through(client, outbox_of("ada@example.org")[0].body)
    assert (done.status_code, done["Location"]) == (302, "/courses/attn/")


def test_the_per_person_resend_is_handed_over_as_its_id(
    client, people, instructor, handed, django_capture_on_commit_callbacks,
):
    people.student.email = "sam@example.org"
    people.student.save()
    enrolment = people.course.enrolments.get(user=people.student)
    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(reverse("courses:person_invite", args=["attn", enrolment.pk]), follow=True)
    assert [str(m) for m in sent.context["messages"]] == ["Sent sam an invitation e-mail."]
    assert handed == [(COURSE_TASK, [invitation_ids("sam"), SITE], "followups")]
