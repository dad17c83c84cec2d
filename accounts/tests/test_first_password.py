"""Accounts without a usable password and "Forgot your password?": Django sends them no
link, and an LMS's accounts still get none; the one exception is an account a course's
staff made for its address (roster import, "add by e-mail"), which has had no password
yet (``selectors.awaits_first_password``): its owner sets the first one through the link."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from accounts.models import EmailTrust
from accounts.selectors import awaits_first_password, email_trust
from accounts.services import email_trust_record
from authoring.tests.factories import user_create
from courses.services import roster_import
from lti.models import Platform
from lti.services import lti_email_vouch, lti_user_ensure

NEW_PASSWORD = "a-long-unusual-passphrase-42"
RESET_LINK = re.compile(r"http://testserver(/accounts/password/reset/[^/\s]+/[^/\s]+/)")


def roster_made(people, email="ada@example.org"):
    report = roster_import(course=people.course, rows=[{"email": email}], dry_run=False, actor=people.instructor)
    return get_user_model().objects.get(pk=report.created_user_ids[0])


def lms_account(email: str, *, verifies_emails: bool):
    platform = Platform.objects.create(issuer="https://lms.example", client_id="c1", verifies_emails=verifies_emails)
    claims = {"sub": "u-1", "email": email, "given_name": "Lee", "family_name": "Ames"}
    user = lti_user_ensure(platform=platform, sub="u-1", claims=claims)
    lti_email_vouch(platform=platform, user=user, claims=claims)
    return user


def staff_made_then_disabled(people):
    user = roster_made(people)
    user.set_password(NEW_PASSWORD)
    user.save()
    email_trust_record(user=user, email=user.email, trust=EmailTrust.CONFIRMED_BY_PASSWORD)
    user.set_unusable_password()  # an administrator turned its password sign-in off
    user.save()
    return user


def deactivated(people):
    user = roster_made(people)
    user.is_active = False
    user.save()
    return user


def claimed_without_password(people):
    user = user_create("claimer", email="ada@example.org")
    user.set_unusable_password()
    user.save()
    return user


@pytest.mark.parametrize("make, trust, awaits, mails", [
    (roster_made, EmailTrust.GIVEN_BY_STAFF, True, 1),
    (lambda people: lms_account("ada@example.org", verifies_emails=True), EmailTrust.GIVEN_BY_LMS, False, 0),
    (lambda people: lms_account("ada@example.org", verifies_emails=False), None, False, 0),
    (staff_made_then_disabled, EmailTrust.CONFIRMED_BY_PASSWORD, False, 0),
    (deactivated, EmailTrust.GIVEN_BY_STAFF, True, 0),
    (claimed_without_password, None, False, 0),
    (lambda people: user_create("plain", email="ada@example.org"), None, False, 1),  # a usable password: Django's rule
], ids=["roster-made", "lms-verified", "lms-unverified", "password-disabled", "deactivated", "claimed", "usable"])
def test_who_is_sent_a_reset_link(client, people, make, trust, awaits, mails):
    user = make(people)
    assert (getattr(email_trust(user=user), "trust", None), awaits_first_password(user=user)) == (trust, awaits)
    response = client.post(reverse("password_reset"), {"email": "ADA@example.org"})
    assert response["Location"] == reverse("password_reset_done")  # the same answer whoever has the address
    assert [(m.to, re.search(r"Your username is (\S+)\.", m.body).group(1)) for m in mail.outbox] == (
        [(["ada@example.org"], user.username)] * mails
    )


def test_the_first_password_set_through_the_link_signs_in_and_ends_the_exception(client, people):
    ada = roster_made(people)
    assert not ada.has_usable_password()
    client.post(reverse("password_reset"), {"email": "ada@example.org"})
    link = RESET_LINK.search(mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done["Location"] == reverse("password_reset_complete")
    ada.refresh_from_db()
    assert (ada.has_usable_password(), email_trust(user=ada).trust, awaits_first_password(user=ada)) == (
        True, EmailTrust.CONFIRMED_BY_PASSWORD, False,
    )
    assert client.post(reverse("login"), {"username": "ada", "password": NEW_PASSWORD}).status_code == 302
    # The link is spent.
    assert "The link has been used already or has expired." in client.get(link, follow=True).content.decode()
