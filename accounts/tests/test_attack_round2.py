"""Set-password links that do not work (altered, unknown account, used already, huge or
non-ASCII parts) are refused with 400 and their page's message, sign no one in and change
no password; a working link still leads to the form and sets the password."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from authoring.tests.factories import PASSWORD

NEW_PASSWORD = "a-long-new-pass-42"
RESET_REFUSED = "That link did not work"
INVITATION_REFUSED = "That invitation link did not work"


def uid_of(user) -> str:
    return urlsafe_base64_encode(force_bytes(user.pk))


def signed_in_as(client):
    return client.session.get("_auth_user_id")


@pytest.fixture
def sam(people):
    return people.student


def bad_links(user) -> list[tuple[str, str]]:
    """(uidb64, token) pairs no link ever carried."""
    token = default_token_generator.make_token(user)
    return [
        (uid_of(user), "abc-0123456789abcdef"),  # altered token
        (urlsafe_base64_encode(b"424242"), token),  # no such account
        (urlsafe_base64_encode(b"99999999999999999999"), token),  # beyond any id
        ("\u00fc\u00e9\u4e2d", token),  # not base 64
        ("a" * 3000, "b" * 3000),
        ("0", "0"),
    ]


@pytest.mark.parametrize("prefix,message", [
    ("/accounts/password/reset", RESET_REFUSED),
    ("/accounts/invitation", INVITATION_REFUSED),
])
@pytest.mark.parametrize("which", range(6))
def test_a_link_that_does_not_work_is_400_with_its_message(client, sam, prefix, message, which):
    uidb64, token = bad_links(sam)[which]
    url = f"{prefix}/{uidb64}/{token}/"
    shown = client.get(url)
    assert shown.status_code == 400
    assert message in shown.content.decode()
    posted = client.post(url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert posted.status_code == 400
    assert message in posted.content.decode()
    sam.refresh_from_db()
    assert sam.check_password(PASSWORD) and signed_in_as(client) is None


@pytest.mark.parametrize("prefix", ["/accounts/password/reset", "/accounts/invitation"])
def test_a_working_link_still_sets_the_password_once(client, sam, prefix):
    link = f"{prefix}/{uid_of(sam)}/{default_token_generator.make_token(sam)}/"
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200
    set_url = form_page.redirect_chain[-1][0]
    done = client.post(set_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302
    assert get_user_model().objects.get(pk=sam.pk).check_password(NEW_PASSWORD)
    client.logout()
    spent = client.get(link)
    assert spent.status_code == 400
    again = client.post(link, {"new_password1": "other-long-pass-77", "new_password2": "other-long-pass-77"})
    assert again.status_code == 400
    assert get_user_model().objects.get(pk=sam.pk).check_password(NEW_PASSWORD)
