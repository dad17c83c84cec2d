"""Join-code guesses are slowed per address: every look-up (found or not) takes a token, so
a refusal tells nothing about the code, and a class behind one address still gets in."""

from __future__ import annotations

import secrets

import pytest
from django.urls import reverse

from authoring.tests.factories import PASSWORD


@pytest.fixture
def address(settings):
    settings.JOIN_RATE_BURST = 3
    settings.JOIN_RATE_PER_SECOND = 0.01  # one more every 100 s
    return f"10.{secrets.randbelow(250)}.{secrets.randbelow(250)}.{secrets.randbelow(250)}"


def test_guessing_codes_from_one_address_is_refused_after_the_burst(client, people, address):
    people.course.join_code, people.course.join_open = "JQK23456", True
    people.course.save()
    guesses = [client.get(reverse("courses:join", args=[f"WRONG{n}"]), REMOTE_ADDR=address) for n in range(3)]
    assert [g.status_code for g in guesses] == [404, 404, 404]
    # Even the right code is refused now, so the answer says nothing about it.
    refused = client.get(reverse("courses:join", args=[people.course.join_code]), REMOTE_ADDR=address)
    assert refused.status_code == 429
    assert 99 <= int(refused["Retry-After"]) <= 100
    assert "This network tried many join codes" in refused.content.decode()
    other = client.get(reverse("courses:join", args=[people.course.join_code]), REMOTE_ADDR="10.255.255.1")
    assert other.status_code == 200


def test_the_dashboard_box_and_sign_up_share_the_budget(client, people, address):
    assert client.login(username=people.outsider.username, password=PASSWORD)
    for n in range(3):
        client.post(reverse("courses:join_enter"), {"code": f"WRONG{n}"}, REMOTE_ADDR=address)
    assert client.post(reverse("courses:join_enter"), {"code": "X"}, REMOTE_ADDR=address).status_code == 429
    client.logout()
    assert client.get(reverse("signup") + "?join=ABC", REMOTE_ADDR=address).status_code == 429
    assert client.get(reverse("signup"), REMOTE_ADDR=address).status_code == 200  # no code, no count


def test_the_default_lets_a_class_of_thirty_join_at_once():
    from django.conf import settings

    from attnquiz import settings as production

    assert (production.JOIN_RATE_BURST, production.JOIN_RATE_PER_SECOND) == (30, 1.0)
    assert settings.JOIN_RATE_BURST == 0  # the test suite switches it off unless a test asks
