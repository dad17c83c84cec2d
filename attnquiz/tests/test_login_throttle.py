"""Sign-in throttling: wrong passwords lock a username, and an address, out for a while."""

import pytest
from axes.models import AccessAttempt
from django.urls import reverse

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


def test_the_username_is_locked_from_every_address(client, demo):
    for attempt in range(5):
        sign_in(client, "student1", "wrong", ip=f"10.0.1.{attempt}")
    assert sign_in(client, "student1", PASSWORD, ip="10.0.2.1").status_code == 429
    # Another user from another address is not affected.
    assert sign_in(client, "student2", PASSWORD, ip="10.0.2.2").status_code == 302
    assert signed_in_as(client) == "student2"


def test_one_address_guessing_many_usernames_is_locked_out(client, demo):
    for username in ["student1", "student2", "student3", "ta", "reviewer"]:
        sign_in(client, username, "wrong", ip="10.0.3.1")
    assert sign_in(client, "instructor", PASSWORD, ip="10.0.3.1").status_code == 429
    assert sign_in(client, "instructor", PASSWORD, ip="10.0.3.2").status_code == 302


def test_a_right_password_before_the_limit_starts_the_count_again(client, demo):
    for _ in range(4):
        sign_in(client, "student1", "wrong")
    assert sign_in(client, "student1", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        assert sign_in(client, "student1", "wrong").status_code == 200
    assert sign_in(client, "student1", PASSWORD).status_code == 302


def test_lockout_ends_after_the_cool_off(client, demo, settings):
    from datetime import timedelta

    for _ in range(5):
        sign_in(client, "student1", "wrong")
    assert sign_in(client, "student1", PASSWORD).status_code == 429
    # The cool-off counts from the latest failure: move every failure back past it.
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(minutes=16)
        attempt.save()
    assert sign_in(client, "student1", PASSWORD).status_code == 302


def test_failures_by_username_and_by_e_mail_count_against_one_account(client, demo, django_user_model):
    django_user_model.objects.filter(username="student1").update(email="student1@example.edu")
    for attempt in range(3):
        sign_in(client, "student1", "wrong", ip=f"10.0.4.{attempt}")
    for attempt in range(2):
        sign_in(client, "Student1@Example.edu", "wrong", ip=f"10.0.5.{attempt}")
    assert sign_in(client, "student1@example.edu", PASSWORD, ip="10.0.6.1").status_code == 429
    assert sign_in(client, "student1", PASSWORD, ip="10.0.6.2").status_code == 429
