"""Why attnquiz validates launches itself: pylti1p3next's ``DjangoMessageLaunch``, fed the
same forged or replayed id_tokens the drills used, accepts them; attnquiz refuses them.

These tests pin the library's behaviour at the pinned version (if an upgrade starts
refusing them, the launch can move onto the library)."""

import time

import jwt
import pytest
from django.contrib.sessions.backends.cache import SessionStore
from django.test import RequestFactory
from pylti1p3.contrib.django import DjangoMessageLaunch
from pylti1p3.tool_config import ToolConfDict

from .conftest import CLIENT_ID, DEPLOYMENT_ID, INSTRUCTOR, ISSUER, public_jwks


def library_launch(lms, claims: dict, *, state="state-1", kid="lms-key-2025"):
    """What pylti1p3next's Django adapter decides for a launch POST in one browser."""
    config = ToolConfDict(
        {
            ISSUER: [
                {
                    "default": True,
                    "client_id": CLIENT_ID,
                    "auth_login_url": "https://lms.example.edu/auth",
                    "auth_token_url": "https://lms.example.edu/token",
                    "key_set": public_jwks(lms.private_key),
                    "deployment_ids": [DEPLOYMENT_ID],
                }
            ]
        }
    )
    session = SessionStore()
    session[f"lti1p3-nonce-{claims['nonce']}"] = True  # what its OIDC login stores
    token = lms.sign(claims, kid=kid) if kid else jwt.encode(claims, lms.private_key, "RS256")

    def post():
        request = RequestFactory().post("/launch/", {"state": state, "id_token": token})
        request.session = session
        request.COOKIES[f"lti1p3-{state}"] = state
        return DjangoMessageLaunch(request, config).validate()

    return post


def test_the_library_accepts_a_replayed_launch(db, lms):
    post = library_launch(lms, lms.claims(nonce="n-1", roles=[INSTRUCTOR]))
    post()
    post()  # the same id_token again: attnquiz answers "already used" (test_views)


def test_the_library_accepts_a_token_for_two_audiences_without_azp(db, lms):
    claims = lms.claims(nonce="n-2", aud=[CLIENT_ID, "another-tool"])
    library_launch(lms, claims)()  # attnquiz: "authorised party (azp) is not this tool"


def test_the_library_accepts_a_token_without_expiry(db, lms):
    claims = lms.claims(nonce="n-3", exp=None, iat=int(time.time()))
    library_launch(lms, claims)()  # attnquiz: "The id_token has no 'exp' claim."


def test_the_library_refuses_a_token_without_kid_from_a_one_key_set(db, lms):
    from pylti1p3.exception import LtiException

    with pytest.raises(LtiException, match="JWT KID not found"):
        library_launch(lms, lms.claims(nonce="n-4"), kid=None)()
