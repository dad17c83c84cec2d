"""Personal API tokens: shown once, stored hashed, scoped, expiring, revocable, last use recorded."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from api import selectors, services
from api.models import ApiToken, TokenScope
from api.tests.conftest import api_client
from authoring.tests.factories import PASSWORD


def test_a_token_is_stored_only_as_the_sha256_of_its_secret(world):
    token, secret = services.api_token_create(
        user=world.people.student, name="laptop", scope=TokenScope.READ, lifetime_days=7
    )
    stored = ApiToken.objects.get(pk=token.pk)
    assert secret.startswith("aq_") and len(secret) == 46
    assert stored.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert stored.prefix == secret[:12]
    assert secret not in {v for v in ApiToken.objects.filter(pk=token.pk).values_list("name", "prefix", "key_hash")[0]}
    assert timedelta(days=7) - (stored.expires_at - timezone.now()) < timedelta(seconds=5)


@pytest.mark.parametrize(
    ("name", "scope", "days", "message"),
    [
        ("", "read", 7, "Give the token a name of 1 to 100 characters."),
        ("x" * 101, "read", 7, "Give the token a name of 1 to 100 characters."),
        ("ci", "admin", 7, "Unknown scope 'admin'; choose read or write."),
        ("ci", "read", 3650, "A token lives 7, 30, 90, 365 days; not 3650."),
    ],
)
def test_bad_token_requests_are_refused(world, name, scope, days, message):
    with pytest.raises(services.TokenRefused) as refused:
        services.api_token_create(user=world.people.student, name=name, scope=scope, lifetime_days=days)
    assert refused.value.message == message


def test_find_tells_unknown_revoked_and_expired_apart(world):
    token, secret = services.api_token_create(user=world.people.ta, name="t", scope="read", lifetime_days=30)
    assert selectors.api_token_find(secret=secret) == (token, "")
    assert selectors.api_token_find(secret=secret[:-1] + ("A" if secret[-1] != "A" else "B")) == (None, "Unknown API token.")
    assert selectors.api_token_find(secret="not-a-token") == (None, "Unknown API token.")
    assert selectors.api_token_find(secret=world.tokens["expired"]) == (
        None, "This API token has expired; create a new one.",
    )
    services.api_token_revoke(token=token)
    assert selectors.api_token_find(secret=secret) == (None, "This API token was revoked.")
    assert api_client(secret).get("/api/v1/courses/").json()["detail"] == "This API token was revoked."


def test_use_records_last_used_once_a_minute(world):
    token = ApiToken.objects.get(name="student")
    assert token.last_used_at is None
    client = api_client(world.tokens["student"])
    assert client.get("/api/v1/courses/").status_code == 200
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    assert client.get("/api/v1/courses/").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    client.get("/api/v1/courses/")
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first


def test_a_malformed_authorization_header_is_a_401_problem(world):
    response = api_client(None).get("/api/v1/courses/", HTTP_AUTHORIZATION="Bearer two parts")
    assert response.status_code == 401
    assert response.json()["detail"] == "Send the token as 'Authorization: Bearer <token>'."
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_token_page_shows_the_secret_once_and_revokes(world, client):
    client.login(username="sam", password=PASSWORD)
    page = client.get("/api/tokens/")
    assert page.status_code == 200 and b"No tokens yet." not in page.content  # the fixture made two
    created = client.post("/api/tokens/", {"name": "my script", "scope": "write", "lifetime_days": "90"})
    assert created.status_code == 201
    secret = created.content.decode().split("data-token-secret>")[1].split("<")[0]
    token = ApiToken.objects.get(name="my script")
    assert (token.user, token.scope, token.key_hash) == (
        world.people.student, "write", hashlib.sha256(secret.encode()).hexdigest(),
    )
    again = client.get("/api/tokens/")
    assert secret.encode() not in again.content and token.prefix.encode() in again.content
    assert api_client(secret).get("/api/v1/courses/").status_code == 200
    assert client.post(f"/api/tokens/{token.pk}/revoke/").status_code == 302
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    assert api_client(secret).get("/api/v1/courses/").status_code == 401


def test_token_page_refuses_bad_input_and_other_peoples_tokens(world, client):
    client.login(username="sam", password=PASSWORD)
    bad = client.post("/api/tokens/", {"name": "x", "scope": "read", "lifetime_days": "forever"})
    assert bad.status_code == 422 and b"A token lives 7, 30, 90, 365 days; not 0." in bad.content
    others = ApiToken.objects.get(name="ta")
    response = client.post(f"/api/tokens/{others.pk}/revoke/")
    assert response.status_code == 404
    assert ApiToken.objects.get(pk=others.pk).revoked_at is None


def test_token_page_needs_a_login(client, db):
    response = client.get("/api/tokens/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_profile_page_links_to_the_token_page(world, client):
    client.login(username="sam", password=PASSWORD)
    page = client.get("/accounts/profile/").content.decode()
    assert '<a href="/api/tokens/" data-api-tokens>create or revoke your API tokens</a>' in page


def test_the_token_table_scrolls_in_its_own_box_and_each_revoke_names_its_token(world, client):
    import re

    client.login(username="sam", password=PASSWORD)
    page = client.get("/api/tokens/").content.decode()
    assert ('<div class="aq-table-scroll" role="region" aria-label="Your tokens" tabindex="0">'
            '<table class="tokens">') in page
    assert page.index("</table></div>") > page.index('<table class="tokens">')
    assert '<th scope="col"><span class="aq-visually-hidden">Revocation</span></th></tr></thead>' in page
    buttons = re.findall(r'<button type="submit">(Revoke.*?)</button>', page)
    assert buttons == [  # newest first
        'Revoke<span class="aq-visually-hidden"> the token “student read”</span>',
        'Revoke<span class="aq-visually-hidden"> the token “student”</span>',
    ]
    assert '<th scope="col"></th>' not in page
