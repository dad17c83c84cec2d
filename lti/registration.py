"""LTI Dynamic Registration 1.0 (as Moodle 4 and Canvas offer it), on pylti1p3next.

The LMS admin pastes attnquiz's registration URL (``registration_url``, signed so only a
URL an attnquiz admin handed out works) into the LMS. The LMS opens it with
``openid_configuration`` and ``registration_token``; attnquiz reads the platform's
configuration, posts its own tool configuration to the registration endpoint, stores
the platform and deployment it is given, and the page tells the LMS to close.
"""

from __future__ import annotations

import secrets
import urllib.parse

from django.core import signing
from django.db import IntegrityError, transaction
from django.urls import reverse
from pylti1p3.dynamic_registration import DynamicRegistration
from pylti1p3.exception import LtiException

from .connector import ServiceRefused, ServiceTemporaryError, call_service, http_session
from .models import Platform, RegistrationLinkUse
from .services import LtiRefused, platform_register

SIGNING_SALT = "lti.registration"
TOKEN_MAX_AGE_SECONDS = 7 * 24 * 3600
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
]


LINK_USED = "This registration link has been used already; ask the attnquiz admin for a new one."


def registration_token_create(*, note: str = "") -> str:
    """A signed link token, good for one registration (its ``id``) within TOKEN_MAX_AGE_SECONDS."""
    return signing.dumps({"note": note[:100], "id": secrets.token_urlsafe(16)}, salt=SIGNING_SALT)


def registration_token_check(token: str) -> str:
    """The link's id, when the token is one we signed, in time, and not used; else LtiRefused."""
    try:
        payload = signing.loads(token or "", salt=SIGNING_SALT, max_age=TOKEN_MAX_AGE_SECONDS)
    except signing.SignatureExpired:
        raise LtiRefused(
            "This registration link has expired; ask the attnquiz admin for a new one.",
            status=403,
        ) from None
    except signing.BadSignature:
        raise LtiRefused(
            "This is not a registration link handed out by attnquiz's admin "
            "(run `manage.py lti_registration_url`).",
            status=403,
        ) from None
    link_id = str(payload.get("id", ""))[:32] if isinstance(payload, dict) else ""
    if not link_id:  # a link signed before links were single-use: it still expires
        return ""
    if RegistrationLinkUse.objects.filter(link_id=link_id).exists():
        raise LtiRefused(LINK_USED, status=403)
    return link_id


def _registration_link_claim(link_id: str) -> RegistrationLinkUse | None:
    if not link_id:
        return None
    try:
        with transaction.atomic():
            return RegistrationLinkUse.objects.create(link_id=link_id)
    except IntegrityError:  # another registration with this link got there first
        raise LtiRefused(LINK_USED, status=403) from None


def registration_url(*, base_url: str, token: str) -> str:
    return base_url.rstrip("/") + reverse("lti:register") + "?" + urllib.parse.urlencode({"t": token})


class AttnquizRegistration(DynamicRegistration):
    client_name = "attnquiz"
    description = "Auto-graded exercises on the mathematics of transformer attention."

    def __init__(self, *, base_url: str, openid_configuration_url: str, registration_token: str):
        self.base_url = base_url.rstrip("/")
        self.openid_configuration_url = openid_configuration_url
        self.registration_token = registration_token
        self.platform: Platform | None = None
        self.deployment_id = ""

    def _url(self, name: str) -> str:
        return self.base_url + reverse(name)

    def get_request_session(self):
        return http_session()

    def get_initiate_login_uri(self) -> str:
        return self._url("lti:login")

    def get_jwks_uri(self) -> str:
        return self._url("lti:jwks")

    def get_redirect_uris(self) -> list[str]:
        return [self._url("lti:launch")]

    def get_target_link_uri(self) -> str:
        return self._url("lti:launch")

    def get_domain(self) -> str:
        return urllib.parse.urlsplit(self.base_url).netloc

    def get_logo_uri(self) -> str:
        return ""

    def get_scopes(self) -> list[str]:
        return SCOPES

    def get_claims(self) -> list[str]:
        return ["iss", "sub", "name", "given_name", "family_name", "preferred_username", "email"]

    def get_messages(self) -> list[dict]:
        return [
            {
                "type": "LtiDeepLinkingRequest",
                "target_link_uri": self._url("lti:launch"),
                "label": "attnquiz exercises",
                "placements": ["ContentArea", "link_selection", "assignment_selection"],
            }
        ]

    def lti_registration_data(self) -> dict:
        data = super().lti_registration_data()
        if not data.get("logo_uri"):
            data.pop("logo_uri", None)
        return data

    def get_openid_configuration_endpoint(self) -> str:
        return self.openid_configuration_url

    def get_registration_token(self) -> str:
        return self.registration_token

    def get_openid_configuration(self) -> dict:
        configuration = super().get_openid_configuration()
        if not isinstance(configuration, dict):
            raise LtiException("the OpenID configuration is not a JSON object")
        issuer = configuration.get("issuer")
        # Dynamic Registration 3.5.1: the configuration URL must live under the issuer.
        if not isinstance(issuer, str) or not self.openid_configuration_url.startswith(issuer):
            raise LtiException(
                f"the configuration at {self.openid_configuration_url} names issuer {issuer!r}, "
                "which it is not published under"
            )
        for name in ("authorization_endpoint", "token_endpoint", "jwks_uri", "registration_endpoint"):
            value = configuration.get(name)
            if not isinstance(value, str) or not value.startswith(("https://", "http://")):
                raise LtiException(f"the OpenID configuration has no {name}")
        if not isinstance(configuration.get(PLATFORM_CONFIGURATION), dict):
            raise LtiException("the OpenID configuration is not an LTI platform configuration")
        return configuration

    def complete_registration(self, openid_configuration: dict, openid_registration: dict):
        client_id = openid_registration.get("client_id")
        tool = openid_registration.get(TOOL_CONFIGURATION)
        if not isinstance(client_id, str) or not client_id or not isinstance(tool, dict):
            raise LtiException("the registration answer has no client_id or tool configuration")
        deployment_id = tool.get("deployment_id")
        product = openid_configuration[PLATFORM_CONFIGURATION].get("product_family_code") or ""
        self.platform = platform_register(
            name=f"{product or 'LMS'} at {urllib.parse.urlsplit(openid_configuration['issuer']).netloc}"[
                :200
            ],
            issuer=openid_configuration["issuer"][:255],
            client_id=client_id[:255],
            auth_login_url=openid_configuration["authorization_endpoint"][:500],
            auth_token_url=openid_configuration["token_endpoint"][:500],
            deployment_ids=[str(deployment_id)[:255]] if deployment_id else [],
            keyset_url=openid_configuration["jwks_uri"][:500],
        )
        self.deployment_id = str(deployment_id or "")
        return self.platform


def platform_register_dynamically(
    *, base_url: str, openid_configuration_url: str, registration_token: str, link_id: str = ""
) -> tuple[Platform, str]:
    """Run the registration; the platform stored and its deployment id. Raises ``LtiRefused``.
    ``link_id`` (``registration_token_check``'s) is claimed first and kept only when the
    registration succeeds, so the link registers one platform."""
    if not openid_configuration_url.startswith(("https://", "http://")):
        raise LtiRefused("The LMS sent no openid_configuration URL; start again from the LMS.")
    use = _registration_link_claim(link_id)
    try:
        platform, deployment_id = _platform_register(
            base_url=base_url, openid_configuration_url=openid_configuration_url,
            registration_token=registration_token,
        )
    except Exception:
        if use is not None:
            use.delete()  # the LMS refused (or we failed): the admin's link may be tried again
        raise
    if use is not None:
        RegistrationLinkUse.objects.filter(pk=use.pk).update(platform=platform)
    return platform, deployment_id


def _platform_register(
    *, base_url: str, openid_configuration_url: str, registration_token: str
) -> tuple[Platform, str]:
    registration = AttnquizRegistration(
        base_url=base_url,
        openid_configuration_url=openid_configuration_url,
        registration_token=registration_token,
    )
    try:
        call_service(_NoTokens(), [], registration.register)
    except (ServiceRefused, ServiceTemporaryError) as error:
        raise LtiRefused(f"The LMS did not accept the registration: {error}.", status=502) from None
    except AssertionError as error:
        raise LtiRefused(f"The LMS did not accept the registration: {error}.", status=502) from None
    platform = registration.platform
    if platform is not None and not platform.jwks:
        # Fetch the platform's keys now, so the first launch does not have to.
        from .services import _fetch_keyset

        try:
            platform.jwks = _fetch_keyset(platform.keyset_url)
            platform.save(update_fields=["jwks"])
        except LtiRefused:
            pass  # the first launch fetches the keyset_url again
    return platform, registration.deployment_id


class _NoTokens:
    """``call_service`` wants a connector to drop a token from on 401; registration has none."""

    def forget_access_token(self, scopes) -> None:
        pass

