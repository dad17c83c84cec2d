"""pylti1p3next, configured from our database: registrations, the service connector, errors.

attnquiz calls the platform's services (tokens, AGS, NRPS) and builds deep-linking
responses through pylti1p3next. This module is the one place that turns a ``Platform``
row and our ``ToolKey`` into the library's ``Registration`` and gives its HTTP calls a
timeout, an access-token cache shared by processes, and errors attnquiz can act on.
"""

from __future__ import annotations

import hashlib
import typing as t

import requests
from django.conf import settings
from django.core.cache import cache
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector

from .models import Platform

TOKEN_EXPIRY_MARGIN_SECONDS = 60
USER_AGENT = "attnquiz-lti"


class ServiceTemporaryError(Exception):
    """The platform could not be reached or failed (5xx, 429): worth retrying later."""


class ServiceRefused(Exception):
    """The platform refused the request (4xx): retrying the same request will not help."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


class TimeoutSession(requests.Session):
    """A requests session whose every call has a timeout (the library sets none)."""

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", getattr(settings, "LTI_HTTP_TIMEOUT_SECONDS", 10))
        return super().request(*args, **kwargs)


def http_session() -> requests.Session:
    session = TimeoutSession()
    session.headers["User-Agent"] = USER_AGENT
    return session


class ToolRegistration(Registration):
    """A registration whose ``kid`` is our key's id as /lti/jwks/ publishes it (the
    library would derive one from a public key it is given)."""

    _tool_kid: str | None = None

    def set_kid(self, kid: str) -> "ToolRegistration":
        self._tool_kid = kid
        return self

    def get_kid(self) -> str | None:
        return self._tool_kid


def registration_for(*, platform: Platform) -> Registration:
    """The library's view of a platform registration, signing with our newest active key."""
    from .keys import tool_key_ensure

    key = tool_key_ensure()
    return (
        ToolRegistration()
        .set_issuer(platform.issuer)
        .set_client_id(platform.client_id)
        .set_auth_login_url(platform.auth_login_url)
        .set_auth_token_url(platform.auth_token_url)
        .set_key_set(platform.jwks or None)
        .set_key_set_url(platform.keyset_url or None)
        .set_tool_private_key(key.private_key_pem)
        .set_kid(key.kid)
    )


class CachedServiceConnector(ServiceConnector):
    """Access tokens cached in Django's cache until a minute before they expire.

    The library's own Django connector keys tokens by issuer and scopes only; hosted
    Canvas gives every institution the same issuer, so two registrations would share a
    token. The key here is the token endpoint, the client id and the scopes.
    """

    def _scope_key(self, scopes: t.Iterable[str]) -> str:
        registration = self._registration
        source = " ".join(
            [registration.get_auth_token_url() or "", registration.get_client_id() or ""]
            + sorted(scopes)
        )
        return "lti:token:" + hashlib.sha256(source.encode()).hexdigest()[:32]

    def _get_cached_access_token(self, scope_key: str) -> str | None:
        return cache.get(scope_key)

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float):
        lifetime = int(expires_in or 0) - TOKEN_EXPIRY_MARGIN_SECONDS
        if lifetime > 0:
            cache.set(scope_key, access_token, timeout=lifetime)

    def forget_access_token(self, scopes: t.Sequence[str]) -> None:
        cache.delete(self._scope_key(sorted(scopes)))


def service_connector(*, platform: Platform) -> CachedServiceConnector:
    return CachedServiceConnector(registration_for(platform=platform), http_session())


def call_service(connector: CachedServiceConnector, scopes: t.Sequence[str], call):
    """Run ``call()`` (a library service call), mapping failures to attnquiz's two errors.

    A 401 may mean the platform revoked the token before its stated expiry: the token is
    dropped and the call made once more.
    """
    for attempt in (1, 2):
        try:
            return call()
        except LtiServiceException as error:
            status = error.response.status_code
            what = "token endpoint" if "access token" in str(error) else "service"
            if status == 401 and attempt == 1 and what == "service":
                connector.forget_access_token(scopes)
                continue
            body = (error.response.text or "")[:300]
            if status >= 500 or status == 429:
                raise ServiceTemporaryError(f"{what} answered {status}") from None
            raise ServiceRefused(f"{what} answered {status}: {body}", status=status) from None
        except requests.RequestException as error:
            raise ServiceTemporaryError(f"platform unreachable: {error}") from None
        except (LtiException, KeyError, ValueError, TypeError) as error:
            raise ServiceRefused(f"unusable answer from the platform: {error}") from None
    raise AssertionError("unreachable")
