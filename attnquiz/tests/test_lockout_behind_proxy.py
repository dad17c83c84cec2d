"""Behind the deployment's proxy (docker-compose: nginx appends X-Forwarded-For and
EXAM_TRUSTED_PROXIES=1) every request reaches the web process from the proxy's address.
Sign-in failures must be counted per client address, not per proxy: wrong passwords for
an account from one client must not lock its owner out at another client."""

import pytest
from axes.models import AccessAttempt
from django.urls import reverse

PASSWORD = "attention-demo"
PROXY = "172.18.0.5"


@pytest.fixture(autouse=True)
def axes_on(settings):
    settings.AXES_ENABLED = True
    settings.EXAM_TRUSTED_PROXIES = 1


def sign_in_through_proxy(client, username, password, *, client_ip, forwarded=None):
    chain = forwarded if forwarded is not None else client_ip
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=chain,
    )


def test_an_attacker_behind_the_proxy_cannot_lock_the_owner_out(client, demo):
    for _ in range(5):
        sign_in_through_proxy(client, "student1", "wrong", client_ip="203.0.113.7")
    assert sign_in_through_proxy(client, "student1", PASSWORD, client_ip="203.0.113.7").status_code == 429
    # The owner, at another address, through the same proxy.
    response = sign_in_through_proxy(client, "student1", PASSWORD, client_ip="198.51.100.20")
    assert response.status_code == 302
    assert AccessAttempt.objects.get().ip_address == "203.0.113.7"


def test_a_forged_forwarded_header_does_not_choose_the_address_counted(client, demo):
    # The client sends its own X-Forwarded-For; the proxy appends the real address, and
    # only that rightmost one is trusted, so the attacker cannot spread tries over
    # invented addresses nor aim them at the owner's.
    for n in range(5):
        sign_in_through_proxy(
            client, "student1", "wrong", client_ip="203.0.113.7", forwarded=f"198.51.100.{n}, 203.0.113.7"
        )
    response = sign_in_through_proxy(
        client, "student1", PASSWORD, client_ip="203.0.113.7", forwarded="10.9.9.9, 203.0.113.7"
    )
    assert response.status_code == 429
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.7"]


def test_without_a_trusted_proxy_the_forwarded_header_is_ignored(client, demo, settings):
    settings.EXAM_TRUSTED_PROXIES = 0
    for n in range(5):
        client.post(
            reverse("login"),
            {"username": "student1", "password": "wrong"},
            REMOTE_ADDR="203.0.113.7",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
        )
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.7"]
