"""Sign-in throttling: wrong passwords pause one username at one address, and (at a far
higher count) one account guessed from many addresses; never a username everywhere because
of one address, nor other accounts because of failures at a shared address
(accounts/tests/test_shared_address_lockout.py)."""

import pytest
from axes.models import AccessAttempt
from django.conf import settings as django_settings
from django.urls import reverse

from attnquiz import device_trust

PASSWORD = "attention-demo"


@pytest.fixture(autouse=True)
def axes_on(settings):
    settings.AXES_ENABLED = True


def sign_in(client, username, password, *, ip="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def signed_in_as(client) -> str | None:
    from django.contrib.auth import get_user_model

    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id).username if user_id else None


def test_sixth_attempt_is_refused_even_with_the_right_password(client, demo):
    for _ in range(4):
        response = sign_in(client, "student1", "wrong")
        assert response.status_code == 200
        assert "do not match" in response.content.decode()
    # The fifth failure is the one that locks: it already answers with the lockout page.
    assert sign_in(client, "student1", "wrong").status_code == 429
    response = sign_in(client, "student1", PASSWORD)
    assert response.status_code == 429
    assert response["Retry-After"] == "900"
    text = response.content.decode()
    assert "Too many failed sign-ins (5 in a row)" in text
    assert "Try again in 15 minutes, after " in text
    assert signed_in_as(client) is None


def move_failures_back(**delta):
    from datetime import timedelta

    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(**delta)
        attempt.save()


def test_an_attacker_at_one_address_cannot_keep_the_owner_out_at_another(client, demo):
    # Far past every limit, from one address, against one account.
    for _ in range(40):
        sign_in(client, "student1", "wrong", ip="203.0.113.7")
    assert sign_in(client, "student1", PASSWORD, ip="203.0.113.7").status_code == 429
    assert sign_in(client, "student1", PASSWORD, ip="10.0.2.1").status_code == 302
    assert signed_in_as(client) == "student1"
    # Once the pause set in, the attacker's refused tries were not even counted.
    assert AccessAttempt.objects.get(ip_address="203.0.113.7").failures_since_start == 5


def test_a_refused_try_during_the_pause_does_not_restart_the_cool_off(client, demo):
    for _ in range(5):
        sign_in(client, "student1", "wrong")
    move_failures_back(minutes=10)
    # One try every few minutes used to keep the account locked for ever.
    response = sign_in(client, "student1", "wrong")
    assert response.status_code == 429
    assert 299 <= int(response["Retry-After"]) <= 300
    assert "Try again in 5 minutes" in response.content.decode()
    move_failures_back(minutes=5, seconds=1)
    assert sign_in(client, "student1", PASSWORD).status_code == 302


def test_a_password_reset_lifts_the_pause(client, demo, django_user_model):
    import re

    from django.core import mail

    django_user_model.objects.filter(username="student1").update(email="student1@example.edu")
    for typed in ("student1", "Student1@example.edu"):
        for _ in range(5):
            sign_in(client, typed, "wrong")
        assert sign_in(client, typed, PASSWORD).status_code == 429
    client.post(reverse("password_reset"), {"email": "student1@example.edu"})
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", mail.outbox[-1].body).group(1)
    form_url = client.get(link)["Location"]
    new_password = "a-fresh-attention-pass"
    done = client.post(form_url, {"new_password1": new_password, "new_password2": new_password})
    assert done.status_code == 302
    assert not AccessAttempt.objects.exists()  # under both names
    assert sign_in(client, "student1@example.edu", new_password).status_code == 302


def test_one_account_guessed_from_many_addresses_is_paused_at_a_far_higher_count(client, demo, settings):
    settings.LOGIN_USERNAME_FAILURE_LIMIT = 12
    # Each address is stopped after 5 at this account, so 12 takes three addresses.
    for address in ("10.0.7.1", "10.0.7.2"):
        for _ in range(5):
            sign_in(client, "student1", "wrong", ip=address)
    assert sign_in(client, "student1", PASSWORD, ip="10.0.7.9").status_code == 302
    client.logout()
    for _ in range(2):
        sign_in(client, "student1", "wrong", ip="10.0.7.3")
    response = sign_in(client, "student1", PASSWORD, ip="10.0.7.9")
    assert response.status_code == 429
    assert "from many networks" in response.content.decode()
    assert sign_in(client, "student2", PASSWORD, ip="10.0.7.9").status_code == 302


def test_one_address_guessing_many_usernames_pauses_only_the_names_it_failed_five_times(client, demo):
    for username in ["student1", "student2", "student3", "ta"]:
        for _ in range(4):
            assert sign_in(client, username, "wrong", ip="10.0.3.1").status_code == 200
    assert sign_in(client, "student1", "wrong", ip="10.0.3.1").status_code == 429
    assert sign_in(client, "student1", PASSWORD, ip="10.0.3.1").status_code == 429
    assert sign_in(client, "instructor", PASSWORD, ip="10.0.3.1").status_code == 302


def test_the_pair_limit_defaults_to_five_and_the_account_limit_to_a_hundred(settings):
    assert (settings.AXES_FAILURE_LIMIT, settings.LOGIN_USERNAME_FAILURE_LIMIT) == (5, 100)
    assert not hasattr(settings, "LOGIN_ADDRESS_FAILURE_LIMIT")


def test_the_lockout_holds_with_the_cache_unreachable(client, demo, settings):
    # The counts live in the database (axes' database handler), never in Redis.
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
    }}
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    for _ in range(5):
        sign_in(client, "student1", "wrong")
    assert sign_in(client, "student1", PASSWORD).status_code == 429
    assert sign_in(client, "student1", PASSWORD, ip="10.0.9.9").status_code == 302


def test_a_right_password_before_the_limit_starts_the_count_again(client, demo):
    for _ in range(4):
        sign_in(client, "student1", "wrong")
    assert sign_in(client, "student1", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        assert sign_in(client, "student1", "wrong").status_code == 200
    assert sign_in(client, "student1", PASSWORD).status_code == 302


def test_lockout_ends_after_the_cool_off(client, demo, settings):
    for _ in range(5):
        sign_in(client, "student1", "wrong")
    assert sign_in(client, "student1", PASSWORD).status_code == 429
    # The cool-off counts from the latest failure: move every failure back past it.
    move_failures_back(minutes=16)
    assert sign_in(client, "student1", PASSWORD).status_code == 302


def test_failures_by_e_mail_pause_the_address_there_and_never_the_username(client, demo, django_user_model):
    # Else five failures as an address, then one sign-in as a username, would tell whose it is.
    django_user_model.objects.filter(username="student1").update(email="student1@example.edu")
    statuses = [sign_in(client, typed, "wrong", ip="10.0.4.1").status_code
                for typed in ["student1@example.edu"] * 3 + ["Student1@Example.edu"] * 2]
    assert statuses == [200, 200, 200, 200, 429]  # the fifth failure pauses
    assert sign_in(client, "STUDENT1@example.edu", PASSWORD, ip="10.0.4.1").status_code == 429
    assert sign_in(client, "student1", PASSWORD, ip="10.0.4.1").status_code == 302


def test_a_known_address_and_an_unknown_one_are_paused_alike(client, demo, django_user_model):
    django_user_model.objects.filter(username="student1").update(email="student1@example.edu")
    statuses = {}
    for typed in ("student1@example.edu", "nobody@example.edu"):
        statuses[typed] = [sign_in(client, typed, "wrong", ip="10.0.4.2").status_code for _ in range(6)]
    assert statuses == {
        "student1@example.edu": [200, 200, 200, 200, 429, 429],
        "nobody@example.edu": [200, 200, 200, 200, 429, 429],
    }
    assert sign_in(client, "student1", PASSWORD, ip="10.0.4.2").status_code == 302


def test_the_account_limit_over_every_address_adds_up_both_names(client, demo, django_user_model, settings):
    settings.LOGIN_USERNAME_FAILURE_LIMIT = 8
    django_user_model.objects.filter(username="student1").update(email="student1@example.edu")
    for _ in range(5):
        sign_in(client, "student1@example.edu", "wrong", ip="10.0.8.1")
    for _ in range(3):
        sign_in(client, "student1", "wrong", ip="10.0.8.2")
    for typed in ("student1", "student1@example.edu"):
        response = sign_in(client, typed, PASSWORD, ip="10.0.8.9")
        assert (response.status_code, "from many networks" in response.content.decode()) == (429, True)


def test_a_right_password_clears_the_name_it_was_typed_under_there(client, demo, django_user_model):
    django_user_model.objects.filter(username="student1").update(email="student1@example.edu")
    for typed in ("student1", "student1@example.edu"):
        for _ in range(4):
            sign_in(client, typed, "wrong", ip="10.0.4.3")
    assert sign_in(client, "student1", PASSWORD, ip="10.0.4.3").status_code == 302
    client.logout()
    assert list(AccessAttempt.objects.filter(ip_address="10.0.4.3").values_list("username", "failures_since_start")) \
        == [("student1@example.edu", 4)]
    assert sign_in(client, "student1@example.edu", "wrong", ip="10.0.4.3").status_code == 429


# --- device cookies: a browser that signed in before is not paused by others at its address


ROOM = "198.51.100.20"  # one exam room behind one address


def signed_in_browser(username: str):
    """A browser (its own client) that signed in to ``username`` from the room and out again:
    it holds the account's device cookie."""
    from django.test import Client

    browser = Client()
    assert sign_in(browser, username, PASSWORD, ip=ROOM).status_code == 302
    assert device_trust.COOKIE in browser.cookies
    del browser.cookies[django_settings.SESSION_COOKIE_NAME]  # signed out; Client.logout() drops every cookie
    return browser


def test_a_classmate_at_the_same_address_cannot_keep_a_student_out_of_their_own_browser(client, demo):
    own_browser = signed_in_browser("student1")
    for _ in range(40):
        sign_in(client, "student1", "wrong", ip=ROOM)  # the classmate, no cookie
    assert sign_in(client, "student1", PASSWORD, ip=ROOM).status_code == 429
    assert sign_in(own_browser, "student1", PASSWORD, ip=ROOM).status_code == 302
    assert signed_in_as(own_browser) == "student1"
    # Signing in with the cookie left the room's count alone: the classmate is still paused.
    assert sign_in(client, "student1", PASSWORD, ip=ROOM).status_code == 429


def test_a_classmate_spraying_many_names_cannot_pause_the_whole_room(client, demo):
    own_browser = signed_in_browser("student2")
    for username in ["student1", "student3", "ta", "instructor"]:
        for _ in range(4):
            sign_in(client, username, "wrong", ip=ROOM)
    # Neither a fresh browser for an account nobody guessed at, nor the student's own one.
    assert sign_in(client, "reviewer", PASSWORD, ip=ROOM).status_code == 302
    assert sign_in(own_browser, "student2", PASSWORD, ip=ROOM).status_code == 302


def test_the_cookie_has_its_own_limit_of_wrong_passwords(client, demo):
    own_browser = signed_in_browser("student1")
    for _ in range(4):
        assert sign_in(own_browser, "student1", "wrong", ip=ROOM).status_code == 200
    # The fifth wrong password with the cookie uses up its trust, as a fresh browser's would.
    assert sign_in(own_browser, "student1", "wrong", ip=ROOM).status_code == 429
    assert sign_in(own_browser, "student1", PASSWORD, ip=ROOM).status_code == 429


@pytest.mark.parametrize("cookie", ["another account's", "forged", "garbage"])
def test_only_a_genuine_cookie_for_the_account_is_trusted(client, demo, cookie):
    from django.core import signing

    other = signed_in_browser("student2")
    values = {
        "another account's": other.cookies[device_trust.COOKIE].value,
        "forged": signing.dumps({"u": "student1", "d": "x"}, salt=device_trust.SALT, key="not-the-secret-key"),
        "garbage": "abc:def",
    }
    for _ in range(5):
        sign_in(client, "student1", "wrong", ip=ROOM)
    client.cookies[device_trust.COOKIE] = values[cookie]
    assert sign_in(client, "student1", PASSWORD, ip=ROOM).status_code == 429


def test_with_the_cache_unreachable_no_cookie_is_trusted_and_the_lockout_holds(client, demo, settings):
    own_browser = signed_in_browser("student1")
    settings.CACHES = {"default": {
        "BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2},
    }}
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    for _ in range(5):
        sign_in(client, "student1", "wrong", ip=ROOM)
    assert sign_in(own_browser, "student1", PASSWORD, ip=ROOM).status_code == 429


def test_a_password_change_retires_the_cookies_issued_before_it(client, demo, django_user_model):
    own_browser = signed_in_browser("student1")
    user = django_user_model.objects.get(username="student1")
    user.set_password(PASSWORD)  # the same password, salted afresh: a reset or change
    user.save()
    for _ in range(5):
        sign_in(client, "student1", "wrong", ip=ROOM)
    assert sign_in(own_browser, "student1", PASSWORD, ip=ROOM).status_code == 429
