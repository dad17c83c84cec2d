"""Invitation e-mails: the roster import and "add someone" send a link to choose a
password (Django's expiring, single-use token), resend works, and the people page shows
each invitation's status."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import PASSWORD, user_create
from courses import invitations
from courses.models import Enrolment, EnrolmentSource, Invitation, Role

LINK = re.compile(r"http://testserver(/accounts/invitation/[^/\s]+/[^/\s]+/)")


def _link(message) -> str:
    return LINK.search(message.body).group(1)


@pytest.fixture
def instructor(client, people):
    client.login(username="ines", password=PASSWORD)
    return people.instructor


def test_a_roster_import_invites_the_new_accounts_only(client, people, instructor, django_capture_on_commit_callbacks):
    text = "email,name,student_id\nada@example.org,Ada Lovelace,S-1\nsam@example.org,,\n"
    email_confirmed(people.student, "sam@example.org")
    url = reverse("courses:roster", args=["attn"])
    with django_capture_on_commit_callbacks(execute=True):
        dry = client.post(url, {"text": text, "invite": "on"})
    assert dry.status_code == 200 and mail.outbox == [] and Invitation.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"text": text, "invite": "on", "apply": "1"})
    assert "1 invitation sent" in response.content.decode()
    assert [m.to for m in mail.outbox] == [["ada@example.org"]]
    message = mail.outbox[0]
    assert message.subject == "You are invited to Attention on attnquiz"
    assert "Your username is ada." in message.body and "for 3 days" in message.body
    invitation = Invitation.objects.get()
    assert (invitation.user.username, invitation.course, invitation.sent_by) == ("ada", people.course, instructor)


def test_the_link_sets_a_password_once_and_the_invitation_is_accepted(client, people, instructor, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("courses:roster", args=["attn"]), {"text": "email\nada@example.org\n", "invite": "on", "apply": "1"})
    link = _link(mail.outbox[0])
    client.logout()
    form_page = client.get(link, follow=True)
    assert "Welcome to attnquiz" in form_page.content.decode()
    set_url = form_page.redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": "a-long-new-pass-42", "new_password2": "a-long-new-pass-42"})
    assert done.status_code == 302
    ada = get_user_model().objects.get(username="ada")
    assert ada.check_password("a-long-new-pass-42")
    assert Invitation.objects.get().accepted_at is not None
    assert client.login(username="ada", password="a-long-new-pass-42")
    client.logout()
    again = client.get(link, follow=True).content.decode()
    assert "That invitation link did not work" in again


def test_add_someone_by_email_creates_the_account_and_invites(client, people, instructor, django_capture_on_commit_callbacks):
    url = reverse("courses:person_add", args=["attn"])
    refused = client.post(url, {"identifier": "grace@example.org", "role": "student"})
    assert refused.status_code == 422  # without the invitation box no account is made
    with django_capture_on_commit_callbacks(execute=True):
        added = client.post(url, {"identifier": "grace@example.org", "role": "student", "student_id": "S-7", "invite": "on"},
                            follow=True)
    grace = get_user_model().objects.get(email="grace@example.org")
    enrolment = Enrolment.objects.get(user=grace, course=people.course)
    # Added on the people page, by hand: not a roster import, whatever made the account.
    assert (enrolment.student_id, enrolment.source) == ("S-7", EnrolmentSource.MANUAL)
    assert [m.to for m in mail.outbox] == [["grace@example.org"]]
    assert [str(m) for m in added.context["messages"]] == [
        "new account 'grace', enrolled as student; invitation sent: its link lets them choose a password"
    ]


def test_resend_and_the_status_column(client, people, instructor, django_capture_on_commit_callbacks, settings):
    people.student2.email = "sue@example.org"
    people.student2.save()
    enrolment = Enrolment.objects.get(user=people.student2, course=people.course)
    page = client.get(reverse("courses:people", args=["attn"])).content.decode()
    assert "not invited" in page and "Send invitation" in page
    invite = reverse("courses:person_invite", args=["attn", enrolment.pk])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(invite)
        # Again at once: refused, nothing sent, so one mailbox cannot be flooded.
        refused = client.post(invite, follow=True)
    assert [str(m) for m in refused.context["messages"]] == [
        "Sent sue an invitation e-mail.",
        "sue was sent an invitation less than a minute ago; send it again after 10 minutes, "
        "if they have not joined by then.",
    ]
    assert [m.to for m in mail.outbox] == [["sue@example.org"]]
    Invitation.objects.update(sent_at=timezone.now() - timedelta(minutes=9, seconds=30))
    with django_capture_on_commit_callbacks(execute=True):
        still_refused = client.post(invite, follow=True)
    assert [str(m) for m in still_refused.context["messages"]] == [
        "sue was sent an invitation 9 minutes ago; send it again after 10 minutes, if they have not joined by then."
    ]
    assert [m.to for m in mail.outbox] == [["sue@example.org"]]
    Invitation.objects.update(sent_at=timezone.now() - timedelta(minutes=10, seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(invite)
    assert [m.to for m in mail.outbox] == [["sue@example.org"], ["sue@example.org"]]
    invitation = Invitation.objects.get()
    assert invitation.times_sent == 2
    page = client.get(reverse("courses:people", args=["attn"])).content.decode()
    assert ", 2 times" in page and "Resend invitation" in page
    Invitation.objects.update(sent_at=timezone.now() - timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 60))
    assert "link expired (sent" in client.get(reverse("courses:people", args=["attn"])).content.decode()
    # Someone without an e-mail cannot be invited.
    no_mail = Enrolment.objects.get(user=people.student, course=people.course)
    client.post(reverse("courses:person_invite", args=["attn", no_mail.pk]))
    assert Invitation.objects.count() == 1


def test_only_instructors_invite(client, people):
    enrolment = Enrolment.objects.get(user=people.student2, course=people.course)
    client.login(username="tariq", password=PASSWORD)
    assert client.post(reverse("courses:person_invite", args=["attn", enrolment.pk])).status_code == 403
    client.login(username="otto", password=PASSWORD)
    assert client.post(reverse("courses:person_invite", args=["attn", enrolment.pk])).status_code == 404


def test_a_mail_server_that_is_down_loses_no_invitation(people, django_capture_on_commit_callbacks, monkeypatch):
    user = user_create("zed", email="zed@example.org")
    Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)

    def broken(*args, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", broken)
    with django_capture_on_commit_callbacks(execute=True):
        invitations.invitations_send(course=people.course, users=[user], actor=people.instructor, base_url="http://x/")
    assert Invitation.objects.filter(user=user).exists()


def signed_in_as(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).username if user_id else None


def _set_password(client, link: str, password: str = "a-long-new-pass-42"):
    form_page = client.get(link, follow=True)
    return client.post(form_page.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})


def _invite_by_roster(client, django_capture_on_commit_callbacks, email="ada@example.org"):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("courses:roster", args=["attn"]), {"text": f"email\n{email}\n", "invite": "on", "apply": "1"})
    return _link(mail.outbox[-1])


def test_choosing_the_password_signs_the_invitee_in_and_opens_the_course(client, people, instructor, django_capture_on_commit_callbacks):
    link = _invite_by_roster(client, django_capture_on_commit_callbacks)
    client.logout()
    done = _set_password(client, link)
    assert (done.status_code, done["Location"]) == (302, "/courses/attn/")
    assert signed_in_as(client) == "ada"
    course_page = client.get(done["Location"], follow=True)
    assert course_page.redirect_chain == [("/#course-attn", 302)]  # the course's section of a student's courses page
    assert [str(m) for m in course_page.context["messages"]] == ["Your password is set. Welcome to Attention."]
    assert "<h2>Attention" in course_page.content.decode()
    # Single use, as before: the spent link neither shows the form nor signs anyone in.
    client.logout()
    again = client.get(link, follow=True)
    assert "That invitation link did not work" in again.content.decode()
    spent = client.post(again.redirect_chain[-1][0] if again.redirect_chain else link,
                        {"new_password1": "other-long-pass-77", "new_password2": "other-long-pass-77"})
    assert spent.status_code == 400 and signed_in_as(client) is None
    assert get_user_model().objects.get(username="ada").check_password("a-long-new-pass-42")


def test_an_invited_ta_lands_on_the_teaching_page(client, people, instructor, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("courses:person_add", args=["attn"]), {"identifier": "tess@example.org", "role": "ta", "invite": "on"})
    client.logout()
    done = _set_password(client, _link(mail.outbox[0]))
    assert client.get(done["Location"])["Location"] == "/teach/attn/"
    assert signed_in_as(client) == "tess"


def test_the_link_signs_in_the_invitee_not_whoever_was_signed_in(client, people, instructor, django_capture_on_commit_callbacks):
    link = _invite_by_roster(client, django_capture_on_commit_callbacks)
    assert signed_in_as(client) == "ines"
    done = _set_password(client, link)
    assert done["Location"] == "/courses/attn/" and signed_in_as(client) == "ada"


def test_with_two_invitations_the_latest_course_opens(client, people, instructor, django_capture_on_commit_callbacks):
    ada = user_create("ada", email="ada@example.org")
    ada.set_unusable_password()
    ada.save()
    for course in (people.other_course, people.course):
        Enrolment.objects.create(course=course, user=ada, role=Role.STUDENT)
    with django_capture_on_commit_callbacks(execute=True):
        invitations.invitations_send(course=people.other_course, users=[ada], actor=people.outsider, base_url="http://testserver/")
    Invitation.objects.update(sent_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        invitations.invitations_send(course=people.course, users=[ada], actor=people.instructor, base_url="http://testserver/")
    client.logout()
    done = _set_password(client, _link(mail.outbox[-1]))
    assert done["Location"] == "/courses/attn/"
    assert Invitation.objects.filter(accepted_at__isnull=True).count() == 0


def test_an_invitee_removed_since_the_e_mail_is_signed_in_to_their_courses_page(client, people, instructor, django_capture_on_commit_callbacks):
    link = _invite_by_roster(client, django_capture_on_commit_callbacks)
    Enrolment.objects.filter(user__username="ada").delete()
    client.logout()
    done = _set_password(client, link)
    assert done["Location"] == "/" and signed_in_as(client) == "ada"
    assert [str(m) for m in client.get("/").context["messages"]] == ["Your password is set and you are signed in."]


def test_a_plain_reset_link_at_the_invitation_address_signs_nobody_in(client, people):
    """Without a pending invitation the page is only the reset page it is built on."""
    from django.contrib.auth.tokens import default_token_generator

    people.student.email = "sam@example.org"
    people.student.save()
    link = invitations.invitation_link(user=people.student, base_url="http://testserver/").removeprefix("http://testserver")
    assert default_token_generator.check_token(people.student, link.rstrip("/").rsplit("/", 1)[1])
    done = _set_password(client, link)
    assert (done.status_code, done["Location"]) == (302, reverse("password_reset_complete"))
    assert signed_in_as(client) is None


@pytest.mark.parametrize("title, subject", [
    ("Transformers 2027 <b>bold</b>", "You are invited to Transformers 2027 <b>bold</b> on attnquiz"),
    ("Ada & Alan's \"seminar\"", "You are invited to Ada & Alan's \"seminar\" on attnquiz"),
    ("Two\nlines\r\nof title", "You are invited to Two lines of title on attnquiz"),
])
def test_the_invitation_subject_is_plain_text_on_one_line(people, django_capture_on_commit_callbacks, title, subject):
    people.course.title = title
    people.course.save()
    user = user_create("zed", email="zed@example.org")
    Enrolment.objects.create(course=people.course, user=user, role=Role.STUDENT)
    with django_capture_on_commit_callbacks(execute=True):
        invitations.invitations_send(course=people.course, users=[user], actor=people.instructor, base_url="http://x/")
    assert [m.subject for m in mail.outbox] == [subject]
    assert f'the course "{title}"' in mail.outbox[0].body  # the body was never escaped
