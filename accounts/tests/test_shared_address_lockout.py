"""A lecture hall behind one public address: failed sign-ins are counted per (username,
address), so others' failures there, whatever names they typed, never pause a student
signing in to their own account from a fresh browser. Failures against one account pause
only sign-ins to that account from browsers without its device cookie, for the cool-off; a
browser with the account's cookie keeps its own count (attnquiz.lockout, device_trust)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from attnquiz import device_trust
from authoring.tests.factories import PASSWORD, user_create

HALL = "198.51.100.7"  # one lecture hall, one public address
ELSEWHERE = "203.0.113.40"
CLASS = [f"learner{number:02}" for number in range(12)]


@pytest.fixture(autouse=True)
def axes_on(settings):
    settings.AXES_ENABLED = True


@pytest.fixture
def lecture(people):
    for username in CLASS:
        user_create(username)
    return people


def sign_in(browser, username: str, password: str, *, ip: str = HALL):
    return browser.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


def signed_in_as(browser) -> str | None:
    from django.contrib.auth import get_user_model

    user_id = browser.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).username if user_id else None


def browser_with_cookie(username: str) -> Client:
    """A browser that signed in to ``username`` from the hall earlier and signed out: it
    holds the account's device cookie."""
    browser = Client()
    assert sign_in(browser, username, PASSWORD).status_code == 302
    assert device_trust.COOKIE in browser.cookies
    del browser.cookies[django_settings.SESSION_COOKIE_NAME]
    return browser


def fail(username: str, times: int, *, ip: str = HALL) -> list[int]:
    """``times`` wrong passwords for ``username`` from a browser with no cookie."""
    browser = Client()
    return [sign_in(browser, username, "wrong", ip=ip).status_code for _ in range(times)]


def move_failures_back(**delta):
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(**delta)
        attempt.save()


def test_a_hall_full_of_failures_over_many_names_pauses_no_fresh_browser(lecture):
    # 4 wrong passwords for each of 11 names: 44 failures from one address.
    for username in CLASS[1:]:
        assert fail(username, 4) == [200, 200, 200, 200]
    for username in (CLASS[0], "sam", "sue"):
        fresh = Client()
        assert sign_in(fresh, username, PASSWORD).status_code == 302
        assert signed_in_as(fresh) == username
    # Each of those names still has its fifth try, then is paused; the others are not.
    assert fail(CLASS[1], 1) == [429]
    assert sign_in(Client(), CLASS[2], PASSWORD).status_code == 302


def test_typos_of_a_whole_class_pause_nobody(lecture):
    for username in CLASS:
        assert fail(username, 2) == [200, 200]
    for username in CLASS:
        assert sign_in(Client(), username, PASSWORD).status_code == 302


def test_failures_are_recorded_per_username_and_address_only(lecture):
    fail("sam", 3)
    fail("sue", 2)
    fail("sam", 1, ip=ELSEWHERE)
    assert sorted(AccessAttempt.objects.values_list("username", "ip_address", "failures_since_start")) == [
        ("sam", HALL, 3), ("sam", ELSEWHERE, 1), ("sue", HALL, 2),
    ]


@pytest.mark.parametrize("attacker_types", ["sam", "sam@example.org", "SAM@Example.org"])
def test_an_attacker_failing_against_one_account_pauses_only_that_account_from_fresh_browsers(lecture, attacker_types):
    from accounts.tests.helpers import email_confirmed

    email_confirmed(lecture.student, "sam@example.org")
    own_browser = browser_with_cookie("sam")
    other_name = "sam@example.org" if attacker_types == "sam" else "sam"
    assert fail(attacker_types, 5) == [200, 200, 200, 200, 429]
    # Paused for sam under the name typed (in any case), from the hall, for browsers
    # without sam's cookie; under the other name it is not (else the pause would tell
    # which username an address belongs to).
    assert sign_in(Client(), attacker_types.lower(), PASSWORD).status_code == 429
    assert sign_in(browser_with_cookie("sue"), attacker_types, PASSWORD).status_code == 429  # another account's cookie
    # Nobody else in the hall, and not sam elsewhere.
    assert sign_in(Client(), "sue", PASSWORD).status_code == 302
    assert sign_in(Client(), CLASS[0], PASSWORD).status_code == 302
    assert sign_in(Client(), attacker_types, PASSWORD, ip=ELSEWHERE).status_code == 302
    # sam's own browser signs in under either name; doing so leaves the attacker paused.
    assert sign_in(own_browser, attacker_types, PASSWORD).status_code == 302
    assert signed_in_as(own_browser) == "sam"
    assert sign_in(Client(), attacker_types, PASSWORD).status_code == 429
    assert sign_in(Client(), other_name, PASSWORD).status_code == 302


def test_the_browser_with_the_cookie_keeps_its_own_count_while_the_account_is_paused(lecture):
    own_browser = browser_with_cookie("sam")
    assert fail("sam", 5)[-1] == 429
    for _ in range(4):
        assert sign_in(own_browser, "sam", "wrong").status_code == 200
    # Its own fifth wrong password uses up its trust, as a fresh browser's would.
    assert sign_in(own_browser, "sam", "wrong").status_code == 429
    assert sign_in(own_browser, "sam", PASSWORD).status_code == 429


def test_the_pause_on_one_account_ends_with_the_cool_off(lecture):
    assert fail("sam", 5)[-1] == 429
    move_failures_back(minutes=14, seconds=50)
    assert sign_in(Client(), "sam", PASSWORD).status_code == 429
    move_failures_back(seconds=11)
    assert sign_in(Client(), "sam", PASSWORD).status_code == 302


def test_an_account_guessed_from_many_addresses_is_paused_for_fresh_browsers_only(lecture, settings):
    settings.LOGIN_USERNAME_FAILURE_LIMIT = 12
    own_browser = browser_with_cookie("sam")
    assert fail("sam", 4, ip="10.8.0.1") == fail("sam", 4, ip="10.8.0.2") == [200, 200, 200, 200]
    # The twelfth failure, from a third address, reaches the account's limit.
    assert fail("sam", 4, ip="10.8.0.3") == [200, 200, 200, 429]
    response = sign_in(Client(), "sam", PASSWORD, ip=ELSEWHERE)
    assert response.status_code == 429
    assert "Too many failed sign-ins to this account from many networks." in response.content.decode()
    assert sign_in(Client(), "sue", PASSWORD).status_code == 302
    assert sign_in(own_browser, "sam", PASSWORD).status_code == 302


def test_a_sign_in_in_the_hall_clears_only_its_own_count(lecture):
    fail("sue", 4)
    fail("sam", 4)
    assert sign_in(Client(), "sam", PASSWORD).status_code == 302
    assert list(AccessAttempt.objects.values_list("username", "failures_since_start")) == [("sue", 4)]
    assert fail("sue", 1) == [429]
