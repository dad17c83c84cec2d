"""Nobody but a course's staff learns from us whether a username or an e-mail address has an
account. Sign-in, its pause, "Forgot your password?", sign-up, the profile's e-mail change,
the device cookie and the API answer an unknown name exactly as a known one given a wrong
secret: the same status, the same page, the same messages (only what was typed differs).
Sign-up may say a username is taken, in Django's own words."""

from __future__ import annotations

import base64
import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import EmailTrust
from accounts.selectors import user_by_identifier
from accounts.services import email_trust_record
from accounts.tests.helpers import email_confirmed
from attnquiz import device_trust
from authoring.tests.factories import PASSWORD, user_create

NEW_PASSWORD = "a-long-unusual-passphrase-42"
ZWSP = "\u200b"
VERIFY_LINK = re.compile(r"http://testserver(/accounts/verify/\S+/)")


@pytest.fixture
def accounts(people):
    """One account of every kind a name can find: a confirmed address (sam), a merely
    claimed one (sue), made by staff and awaiting its first password (nadia), an LMS's
    (leo, no usable password), switched off (ivan), and two giving one address (tariq, otto)."""
    email_confirmed(people.student, "sam@example.org")
    people.student2.email = "sue@example.org"
    people.student2.save()
    nadia = user_create("nadia", email="nadia@example.org")
    nadia.set_unusable_password()
    nadia.save()
    assert email_trust_record(user=nadia, email="nadia@example.org", trust=EmailTrust.GIVEN_BY_STAFF)
    leo = user_create("leo", email="leo@example.org")
    leo.set_unusable_password()
    leo.save()
    email_confirmed(user_create("ivan", is_active=False), "ivan@example.org")
    for user in (people.ta, people.outsider):
        user.email = "shared@example.org"
        user.save()
    return people


def page(response, *typed: str) -> str:
    """The page as any visitor sees it: the CSRF token (new on every page) and what was
    typed set aside."""
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken"', response.content.decode())
    text = re.sub(r'"X-CSRFToken": "[^"]+"', '"X-CSRFToken"', text)
    for value in typed:
        text = text.replace(value, "TYPED")
    return text


def sign_in(client, typed: str, password: str, *, ip: str = "10.5.0.1"):
    return client.post(reverse("login"), {"username": typed, "password": password}, REMOTE_ADDR=ip)


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


# --- sign-in


KNOWN_WITH_A_WRONG_SECRET = [
    ("sam", "wrong"),
    ("sam@example.org", "wrong"),
    ("SAM@Example.org", "wrong"),
    (f"sam{ZWSP}", "wrong"),
    ("sue@example.org", "wrong"),  # an address only claimed
    ("nadia", "wrong"),  # made by staff, no password yet
    ("nadia@example.org", PASSWORD),
    ("leo", PASSWORD),  # an LMS's account: no usable password
    ("ivan", PASSWORD),  # switched off: even the right password says nothing more
    ("shared@example.org", PASSWORD),  # two accounts give it: finds neither
]
UNKNOWN = [("nobody", PASSWORD), ("nobody@example.org", PASSWORD), ("Sam", "wrong")]


@pytest.mark.parametrize("typed, password", KNOWN_WITH_A_WRONG_SECRET + UNKNOWN[1:])
def test_sign_in_answers_a_known_name_with_a_wrong_secret_as_an_unknown_one(client, accounts, typed, password):
    unknown = sign_in(Client(), "nobody", PASSWORD)
    response = sign_in(client, typed, password)
    assert (response.status_code, signed_in(client)) == (unknown.status_code, False) == (200, False)
    assert page(response, typed) == page(unknown, "nobody")
    assert "That username (or e-mail) and password do not match. Please try again." in response.content.decode()


@pytest.mark.parametrize("typed, again", [
    ("sam", f"sam{ZWSP}"),
    ("nobody", f"nobody{ZWSP}"),
    ("sam@example.org", "SAM@example.org"),
    ("nobody@example.org", "NOBODY@example.org"),
    ("sue@example.org", f"Sue@Example{ZWSP}.org"),
    ("shared@example.org", "SHARED@example.org"),
])
def test_the_pause_falls_alike_on_known_and_unknown_names_in_any_form(client, accounts, settings, typed, again):
    settings.AXES_ENABLED = True
    for _ in range(4):
        assert sign_in(client, typed, "wrong").status_code == 200
    fifth = sign_in(client, typed, "wrong")
    # Another spelling of the same name is the same name, whether or not an account has it.
    refused = sign_in(client, again, "wrong")
    assert (fifth.status_code, refused.status_code, refused["Retry-After"]) == (429, 429, "900")
    assert "Too many failed sign-ins (5 in a row) for this username from this network." in refused.content.decode()
    # An address's failures count against the account it finds, and only that one.
    assert sign_in(client, "rita", PASSWORD).status_code == 302


def test_the_pause_pages_of_a_known_and_an_unknown_name_are_the_same(accounts, settings):
    settings.AXES_ENABLED = True
    pages = []
    for typed in ("sam", "nobody"):
        browser = Client()
        for _ in range(5):
            sign_in(browser, typed, "wrong")
        response = sign_in(browser, typed, PASSWORD)
        assert (response.status_code, response["Retry-After"]) == (429, "900")
        pages.append(re.sub(r"after [^.]+\.", "after TIME.", page(response, typed)))
    assert pages[0] == pages[1]


@pytest.mark.parametrize("cookie_of", ["sue", "sam"])
@pytest.mark.parametrize("typed", ["sam", "nobody", "sam@example.org", "nobody@example.org"])
def test_a_device_cookie_tells_nothing_about_the_name_typed_with_it(accounts, settings, cookie_of, typed):
    settings.AXES_ENABLED = True
    browser = Client()
    assert sign_in(browser, cookie_of, PASSWORD).status_code == 302
    cookie = browser.cookies[device_trust.COOKIE].value
    browser = Client()
    browser.cookies[device_trust.COOKIE] = cookie
    reference = sign_in(Client(), "nobody", "wrong", ip="10.5.9.9")
    for _ in range(4):
        response = sign_in(browser, typed, "wrong")
        assert response.status_code == 200
        assert page(response, typed) == page(reference, "nobody")
    assert sign_in(browser, typed, "wrong").status_code == 429


# --- "Forgot your password?"


@pytest.mark.parametrize("typed, mailed", [
    ("sam@example.org", ["sam@example.org"]),
    ("SAM@example.org", ["sam@example.org"]),
    ("sue@example.org", ["sue@example.org"]),
    ("nadia@example.org", ["nadia@example.org"]),
    ("ivan@example.org", []),  # switched off
    ("leo@example.org", []),  # signs in through the LMS
    ("shared@example.org", ["shared@example.org", "shared@example.org"]),
    ("nobody@example.org", []),
])
def test_a_password_reset_answers_every_address_alike_and_mails_only_its_mailbox(client, accounts, typed, mailed):
    response = client.post(reverse("password_reset"), {"email": typed})
    assert (response.status_code, response["Location"]) == (302, reverse("password_reset_done"))
    assert [address for message in mail.outbox for address in message.to] == mailed
    done = client.get(response["Location"]).content.decode()
    assert "If an account has that address, a link to choose a new password is on its way." in done


def test_a_malformed_address_is_refused_alike_at_password_reset(client, accounts):
    response = client.post(reverse("password_reset"), {"email": "not-an-address"})
    assert response.status_code == 200
    assert "Enter a valid email address." in response.content.decode()
    assert mail.outbox == []


# --- sign-up


def sign_up(client, *, username="newbie", email):
    return client.post(reverse("signup"), {
        "username": username, "email": email, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD,
    })


def messages_after(client, response, *typed: str) -> list[str]:
    shown = client.get(response["Location"], follow=True).context["messages"]
    texts = [str(message) for message in shown]
    for value in typed:
        texts = [text.replace(value, "TYPED") for text in texts]
    return texts


@pytest.mark.parametrize("held", ["sam@example.org", "SAM@Example.org", "nadia@example.org"])
def test_sign_up_with_an_address_another_account_holds_answers_as_with_a_free_one(accounts, held):
    free_browser, held_browser = Client(), Client()
    free = sign_up(free_browser, username="newbie", email="free@example.org")
    taken = sign_up(held_browser, username="newbie2", email=held)
    assert (taken.status_code, taken["Location"]) == (free.status_code, free["Location"]) == (302, reverse("dashboard"))
    assert messages_after(held_browser, taken, held.lower(), "newbie2") == messages_after(free_browser, free, "free@example.org", "newbie") == [
        "We sent a link to TYPED: follow it to confirm your e-mail address.", "Welcome, TYPED.",
    ]
    # The mailbox is told, with no link; the address still finds its own account only.
    assert [(m.to, m.subject) for m in mail.outbox] == [
        (["free@example.org"], "Confirm your e-mail address for attnquiz"),
        ([held.lower()], "Your e-mail address at attnquiz"),
    ]
    note = mail.outbox[1].body
    assert 'the attnquiz account "newbie2" asks to use this address. This address already belongs to another' in note
    assert "/accounts/verify/" not in note and "http://testserver/accounts/password/reset/" in note
    assert user_by_identifier(identifier=held) == get_user_model().objects.get(email=held.lower(), trusted_email__isnull=False)


def test_with_verification_on_a_held_address_gets_the_same_page_and_no_account_is_activated(accounts, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = True
    free = sign_up(Client(), username="newbie", email="free@example.org")
    taken = sign_up(Client(), username="newbie2", email="sam@example.org")
    assert taken.status_code == free.status_code == 200
    assert page(taken, "sam@example.org") == page(free, "free@example.org")
    assert not get_user_model().objects.get(username="newbie2").is_active
    assert (mail.outbox[-1].to, mail.outbox[-1].subject) == (["sam@example.org"], "Your e-mail address at attnquiz")
    assert 'someone signed up to attnquiz as "newbie2" with this address.' in mail.outbox[-1].body


def test_sign_up_says_a_username_is_taken_in_djangos_words_only(client, accounts):
    response = sign_up(client, username="sam", email="free@example.org")
    assert response.status_code == 422
    assert "A user with that username already exists." in response.content.decode()
    assert mail.outbox == []


# --- the profile's e-mail change


@pytest.mark.parametrize("held", ["sue@example.org", "nadia@example.org", f"NADIA@example{ZWSP}.org"])
def test_the_profile_answers_an_address_another_account_holds_as_a_free_one(client, accounts, held):
    assert client.login(username="rita", password=PASSWORD)
    own = client.post(reverse("profile"), {"first_name": "R", "last_name": "R", "email": "rita@example.org"})
    first_link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    own_messages = messages_after(client, own, "rita@example.org")
    email_confirmed(accounts.student2, "sue@example.org")
    taken = client.post(reverse("profile"), {"first_name": "R", "last_name": "R", "email": held})
    normal = held.replace(ZWSP, "").lower()
    assert (taken.status_code, taken["Location"]) == (own.status_code, own["Location"]) == (302, reverse("profile"))
    assert messages_after(client, taken, normal) == own_messages == [
        "Saved your profile.", "We sent a link to TYPED; your e-mail changes to it once you follow the link.",
    ]
    assert [(m.to, m.subject) for m in mail.outbox[1:]] == [([normal], "Your e-mail address at attnquiz")]
    assert 'the attnquiz account "rita" asks to use this address.' in mail.outbox[1].body
    # The earlier link is retired, as asking for any other address would retire it.
    spent = client.get(first_link)
    assert spent.status_code == 400 and "only the latest link sent for an account works" in spent.content.decode()
    accounts.reviewer.refresh_from_db()
    assert accounts.reviewer.email == ""


def test_asking_for_a_free_address_retires_the_earlier_link_too(client, accounts):
    assert client.login(username="rita", password=PASSWORD)
    client.post(reverse("profile"), {"first_name": "R", "last_name": "R", "email": "rita@example.org"})
    first_link = VERIFY_LINK.search(mail.outbox[-1].body).group(1)
    client.post(reverse("profile"), {"first_name": "R", "last_name": "R", "email": "rita2@example.org"})
    assert client.get(first_link).status_code == 400


# --- the API: personal tokens only, never a username and password


@pytest.mark.parametrize("username, password", [("sam", "wrong"), ("sam", PASSWORD), ("nobody", PASSWORD)])
def test_the_api_takes_no_username_and_password(client, accounts, username, password):
    credentials = base64.b64encode(f"{username}:{password}".encode()).decode()
    response = client.get("/api/v1/courses/", HTTP_AUTHORIZATION=f"Basic {credentials}")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    unknown = Client().get("/api/v1/courses/", HTTP_AUTHORIZATION="Basic " + base64.b64encode(b"nobody:x").decode())
    assert response.content == unknown.content
