"""Accounts: every URL for every role, sign-up (with a join code), signing in by username or
e-mail, password change and reset through the e-mail, e-mail confirmation, the profile."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from accounts.tests.helpers import email_confirmed
from authoring.tests.factories import PASSWORD, ROLES, request_as
from courses import services as course_services
from courses.models import Enrolment, Role

NEW_PASSWORD = "a-long-unusual-passphrase-42"


def urls():
    return [
        ("signup", reverse("signup"), (200, 302, 302, 302, 302)),
        ("profile", reverse("profile"), (302, 200, 200, 200, 200)),
        ("email_confirmation_send", reverse("email_confirmation_send"), (302, 405, 405, 405, 405)),
        ("verify_email", reverse("verify_email", args=["not-a-token"]), (400, 400, 400, 400, 400)),
        ("password_change", reverse("password_change"), (302, 200, 200, 200, 200)),
        ("password_change_done", reverse("password_change_done"), (302, 200, 200, 200, 200)),
        ("password_reset", reverse("password_reset"), (200, 200, 200, 200, 200)),
        ("password_reset_done", reverse("password_reset_done"), (200, 200, 200, 200, 200)),
        ("password_reset_confirm", reverse("password_reset_confirm", args=["MQ", "bad-token"]), (400, 400, 400, 400, 400)),
        ("password_reset_complete", reverse("password_reset_complete"), (200, 200, 200, 200, 200)),
        ("invitation_accept", reverse("invitation_accept", args=["MQ", "bad-token"]), (400, 400, 400, 400, 400)),
    ]


def test_the_walk_covers_every_url_of_the_app():
    from accounts.urls import urlpatterns

    assert sorted(p.name for p in urlpatterns) == sorted(name for name, _, _ in urls())


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("name", [name for name, _, _ in urls()])
def test_every_url_for_every_role(client, people, role_index, role, name):
    _, url, expected = next(row for row in urls() if row[0] == name)
    assert request_as(client, role, "get", url).status_code == expected[role_index], (role, name)


def signed_in_as(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).username if user_id else None


def sign_up(client, **fields):
    data = {"username": "newbie", "email": "newbie@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD, **fields}
    return client.post(reverse("signup"), data)


def test_sign_up_checks_passwords_with_djangos_validators(client, people):
    email_confirmed(people.student, "sam@example.org")
    weak = sign_up(client, password1="12345678", password2="12345678")
    text = weak.content.decode()
    assert weak.status_code == 422
    assert "This password is too common." in text and "This password is entirely numeric." in text
    assert get_user_model().objects.filter(username="newbie").exists() is False
    ok = sign_up(client)
    assert (ok.status_code, ok["Location"], signed_in_as(client)) == (302, reverse("dashboard"), "newbie")
    # Usable at once; the address is only claimed until the link sent to it is followed.
    assert [m.to for m in mail.outbox] == [["newbie@example.org"]]
    assert "/accounts/verify/" in mail.outbox[0].body


def test_a_visitor_from_a_join_link_signs_up_and_lands_enrolled(client, people):
    course_services.join_code_rotate(course=people.course)
    people.course.refresh_from_db()
    page = client.get(reverse("signup"), {"join": people.course.join_code}).content.decode()
    assert "After signing up you are enrolled in <strong>Attention</strong>" in page
    response = sign_up(client, join=people.course.join_code)
    assert response["Location"] == reverse("courses:home", args=["attn"])  # the course joined
    assert client.get(response["Location"])["Location"] == "/#course-attn"
    assert Enrolment.objects.get(course=people.course, user__username="newbie").role == Role.STUDENT
    assert "You are enrolled in Attention." in client.get(reverse("dashboard")).content.decode()


@pytest.mark.parametrize("typed", ["sam", "sam@example.org", "SAM@Example.org"])
def test_sign_in_with_username_or_email(client, people, typed):
    people.student.email = "sam@example.org"
    people.student.save()
    response = client.post(reverse("login"), {"username": typed, "password": PASSWORD})
    assert (response.status_code, signed_in_as(client)) == (302, "sam")


@pytest.mark.parametrize("typed,password", [("sam", "wrong"), ("nobody@example.org", PASSWORD), ("shared@example.org", PASSWORD)])
def test_wrong_or_ambiguous_sign_ins_fail(client, people, typed, password):
    for user in (people.student, people.student2):
        user.email = "shared@example.org"
        user.save()
    response = client.post(reverse("login"), {"username": typed, "password": password})
    assert response.status_code == 200 and signed_in_as(client) is None
    assert "do not match" in response.content.decode()


def test_an_e_mail_sign_in_is_throttled_like_a_username(client, people, settings):
    from axes.models import AccessAttempt

    settings.AXES_ENABLED = True
    people.student.email = "sam@example.org"
    people.student.save()
    for _ in range(5):
        last = client.post(reverse("login"), {"username": "sam@example.org", "password": "wrong"}, REMOTE_ADDR="10.1.1.1")
    assert last.status_code == 429
    # The failures count under the name typed, the address as a lookup reads it: pausing
    # "sam" as well would tell whose address it is.
    assert list(AccessAttempt.objects.values_list("username", "failures_since_start")) == [("sam@example.org", 5)]
    locked = client.post(reverse("login"), {"username": "sam@example.org", "password": PASSWORD}, REMOTE_ADDR="10.1.1.1")
    assert locked.status_code == 429 and signed_in_as(client) is None


def test_password_reset_through_the_e_mail(client, people):
    people.student.email = "sam@example.org"
    people.student.save()
    response = client.post(reverse("password_reset"), {"email": "SAM@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["sam@example.org"]
    assert mail.outbox[0].subject == "Choose a new attnquiz password"
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    set_url = form_page.redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done["Location"] == reverse("password_reset_complete")
    assert client.login(username="sam", password=NEW_PASSWORD) is True
    client.logout()
    reused = client.get(link, follow=True).content.decode()
    assert "The link has been used already or has expired." in reused
    client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert len(mail.outbox) == 1


def test_password_change(client, people):
    client.login(username="sam", password=PASSWORD)
    bad = client.post(reverse("password_change"), {"old_password": "nope", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert bad.status_code == 200 and "Your old password was entered incorrectly" in bad.content.decode()
    ok = client.post(reverse("password_change"), {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert ok["Location"] == reverse("password_change_done")
    people.student.refresh_from_db()
    assert people.student.check_password(NEW_PASSWORD)


def test_profile_edits_names_and_email(client, people):
    client.login(username="sam", password=PASSWORD)
    page = client.get(reverse("profile")).content.decode()
    assert "Attention: student" in page
    saved = client.post(reverse("profile"), {"first_name": "Samuel", "last_name": "Stone", "email": "samuel@example.org"}, follow=True)
    assert [str(m) for m in saved.context["messages"]] == [
        "Saved your profile.",
        "We sent a link to samuel@example.org; your e-mail changes to it once you follow the link.",
    ]
    people.student.refresh_from_db()
    assert (people.student.first_name, people.student.email) == ("Samuel", "")
    link = re.search(r"http://testserver(/accounts/verify/\S+/)", mail.outbox[-1].body).group(1)
    client.post(link)
    people.student.refresh_from_db()
    assert people.student.email == "samuel@example.org"


def test_with_verification_on_the_account_waits_for_the_link_and_then_joins(client, people, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = True
    course_services.join_code_rotate(course=people.course)
    people.course.refresh_from_db()
    response = sign_up(client, join=people.course.join_code)
    assert response.status_code == 200 and "We sent a link to <strong>newbie@example.org</strong>" in response.content.decode()
    user = get_user_model().objects.get(username="newbie")
    assert (user.is_active, signed_in_as(client)) == (False, None)
    assert client.post(reverse("login"), {"username": "newbie", "password": NEW_PASSWORD}).status_code == 200
    link = re.search(r"http://testserver(/accounts/verify/\S+/)", mail.outbox[0].body).group(1)
    tampered = client.get(link.replace("/verify/", "/verify/x"))
    assert tampered.status_code == 400
    asked = client.get(link)  # the link asks; it confirms nothing by being opened
    assert "Confirm <strong>newbie@example.org</strong> as the e-mail address of the account <strong>newbie</strong>?" in asked.content.decode()
    assert get_user_model().objects.get(username="newbie").is_active is False
    confirmed = client.post(link)
    assert confirmed["Location"] == "/login/?next=/courses/attn/"  # then to the course joined
    user.refresh_from_db()
    assert user.is_active is True
    assert Enrolment.objects.get(course=people.course, user=user).role == Role.STUDENT
    # A changed address only replaces the old one once confirmed.
    client.login(username="newbie", password=NEW_PASSWORD)
    client.post(reverse("profile"), {"first_name": "", "last_name": "", "email": "moved@example.org"})
    user.refresh_from_db()
    assert user.email == "newbie@example.org"
    link = re.search(r"http://testserver(/accounts/verify/\S+/)", mail.outbox[-1].body).group(1)
    client.post(link)
    user.refresh_from_db()
    assert user.email == "moved@example.org"


def test_sign_up_can_be_closed(client, settings):
    settings.ACCOUNT_SIGNUP_OPEN = False
    assert client.get(reverse("signup")).status_code == 403


def test_a_long_email_fits_the_sign_in_field(client, people):
    long_email = "a" * 60 + "@" + "b" * 60 + "." + "c" * 40 + ".org"
    people.student.email = long_email
    people.student.save()
    page = client.get(reverse("login")).content.decode()
    assert 'maxlength="254"' in page
    client.post(reverse("login"), {"username": long_email, "password": PASSWORD})
    assert signed_in_as(client) == "sam"
