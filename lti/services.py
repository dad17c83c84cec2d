"""Writes for LTI 1.3: our keys, registrations, the OIDC login and the launch.

A launch is checked completely (``launch_validate``) before anything is written; every
refusal is a ``LtiRefused`` with the HTTP status and the sentence the person sees.

The login and launch checks are attnquiz's own on purpose (pylti1p3next's
``MessageLaunch`` does not verify ``aud``/``azp``, does not consume the nonce, does not
require ``exp``/``iat`` and refuses a token without ``kid``); the platform's services
(AGS, NRPS), deep-linking responses and dynamic registration go through pylti1p3next
(see ``connector``, ``passback``, ``roster``, ``deep_linking``, ``registration``).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import urllib.parse
from dataclasses import dataclass, field
from datetime import timedelta

import jwt
import requests
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from accounts.identifiers import email_normalise, name_normalise
from accounts.models import EmailTrust
from accounts.services import email_trust_record
from attnquiz.enqueue import registered_task, task_send
from attnquiz.input_limits import unstorable_reason
from courses.models import Assignment, Course, EnrolmentSource, Role
from courses.services import enrolment_ensure

from . import selectors
from .keys import tool_key_create, tool_key_ensure  # noqa: F401  (callers use them from here)
from .models import (
    Deployment,
    LoginState,
    LtiContext,
    LtiIdentity,
    Platform,
    ResourceLink,
)

logger = logging.getLogger(__name__)

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
CLAIM_MESSAGE_TYPE = CLAIM + "message_type"
CLAIM_VERSION = CLAIM + "version"
CLAIM_DEPLOYMENT_ID = CLAIM + "deployment_id"
CLAIM_RESOURCE_LINK = CLAIM + "resource_link"
CLAIM_CONTEXT = CLAIM + "context"
CLAIM_ROLES = CLAIM + "roles"
CLAIM_CUSTOM = CLAIM + "custom"
CLAIM_AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
CLAIM_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
CLAIM_DEEP_LINKING_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
RESOURCE_LINK_REQUEST = "LtiResourceLinkRequest"
DEEP_LINKING_REQUEST = "LtiDeepLinkingRequest"

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
LOGIN_STATE_SECONDS = 600
CLOCK_LEEWAY_SECONDS = 60
MAX_TOKEN_LIFETIME_SECONDS = 3600  # exp at most this long after iat
ROSTER_SYNC_EVERY_SECONDS = 600  # an instructor launch re-syncs a roster at most this often


class LtiRefused(Exception):
    """A login or launch we will not accept; ``message`` is shown to the person."""

    def __init__(self, message: str, *, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


# --- Our keys ---------------------------------------------------------------------------


# --- Registration -----------------------------------------------------------------------


@transaction.atomic
def platform_register(
    *,
    name: str,
    issuer: str,
    client_id: str,
    auth_login_url: str,
    auth_token_url: str,
    deployment_ids: list[str],
    jwks: dict | None = None,
    keyset_url: str = "",
) -> Platform:
    """Create or update a platform registration and add its deployments. Idempotent."""
    if jwks is not None and not isinstance(jwks.get("keys"), list):
        raise LtiRefused('The keyset must be a JSON object {"keys": [...]}.')
    platform, _ = Platform.objects.update_or_create(
        issuer=issuer,
        client_id=client_id,
        defaults={
            "name": name,
            "auth_login_url": auth_login_url,
            "auth_token_url": auth_token_url,
            "keyset_url": keyset_url,
            **({"jwks": jwks} if jwks is not None else {}),
        },
    )
    for deployment_id in deployment_ids:
        Deployment.objects.get_or_create(platform=platform, deployment_id=deployment_id)
    return platform


# --- OIDC login initiation --------------------------------------------------------------


@dataclass(frozen=True)
class LoginRedirect:
    url: str
    state: str


def login_initiate(*, params: dict, redirect_uri: str, host: str) -> LoginRedirect:
    """Check a third-party login initiation and build the authorisation redirect.

    ``params`` are the GET or POST parameters the platform sent; ``host`` is this site's
    host, which ``target_link_uri`` must point at.
    """
    issuer = params.get("iss", "").strip()
    login_hint = params.get("login_hint", "")
    target_link_uri = params.get("target_link_uri", "")
    client_id = params.get("client_id", "").strip()
    deployment_hint = params.get("lti_deployment_id", "").strip()
    for name, value in (
        ("iss", issuer),
        ("login_hint", login_hint),
        ("target_link_uri", target_link_uri),
    ):
        if not value:
            raise LtiRefused(f"The login request has no '{name}'; start it from the LMS.")
    if urllib.parse.urlsplit(target_link_uri).netloc != host:
        raise LtiRefused(f"target_link_uri '{target_link_uri}' is not an address of this tool.")
    platforms = selectors.platforms_for_issuer(issuer=issuer, client_id=client_id)
    if not platforms:
        which = f"issuer '{issuer}'" + (f" with client_id '{client_id}'" if client_id else "")
        raise LtiRefused(f"No LMS is registered here for {which}. Ask the site admin to add it.")
    if len(platforms) > 1:
        raise LtiRefused(
            f"Several registrations share issuer '{issuer}'; the LMS must send its client_id."
        )
    platform = platforms[0]
    if deployment_hint and not platform.deployments.filter(deployment_id=deployment_hint).exists():
        raise LtiRefused(f"Deployment '{deployment_hint}' is not registered for this LMS.")

    LoginState.objects.filter(
        created_at__lt=timezone.now() - timedelta(seconds=6 * LOGIN_STATE_SECONDS)
    ).delete()
    login = LoginState.objects.create(
        state=secrets.token_urlsafe(32), nonce=secrets.token_urlsafe(32), platform=platform
    )
    query = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": redirect_uri,
        "login_hint": login_hint,
        "state": login.state,
        "nonce": login.nonce,
    }
    if "lti_message_hint" in params:
        query["lti_message_hint"] = params["lti_message_hint"]
    separator = "&" if urllib.parse.urlsplit(platform.auth_login_url).query else "?"
    return LoginRedirect(
        url=platform.auth_login_url + separator + urllib.parse.urlencode(query),
        state=login.state,
    )


# --- Launch -----------------------------------------------------------------------------


@dataclass
class Launch:
    """A verified resource link launch: the platform and the claims that matter here."""

    platform: Platform
    claims: dict
    sub: str = ""
    roles: list[str] = field(default_factory=list)
    context: dict = field(default_factory=dict)
    resource_link: dict = field(default_factory=dict)
    custom: dict = field(default_factory=dict)
    ags: dict = field(default_factory=dict)
    nrps: dict = field(default_factory=dict)
    message_type: str = RESOURCE_LINK_REQUEST
    deployment_id: str = ""
    deep_linking: dict = field(default_factory=dict)

    @property
    def is_deep_linking(self) -> bool:
        return self.message_type == DEEP_LINKING_REQUEST


def _platform_signing_key(*, platform: Platform, kid: str | None) -> jwt.PyJWK:
    def find(jwks: dict):
        keys = [k for k in (jwks or {}).get("keys", []) if isinstance(k, dict)]
        if kid is None and len(keys) == 1:
            return keys[0]
        return next((k for k in keys if k.get("kid") == kid), None)

    jwk = find(platform.jwks)
    if jwk is None and platform.keyset_url:
        platform.jwks = _fetch_keyset(platform.keyset_url)
        platform.save(update_fields=["jwks"])
        jwk = find(platform.jwks)
    if jwk is None:
        raise LtiRefused(
            f"The LMS signed this launch with key '{kid}', which its keyset does not have."
        )
    try:
        return jwt.PyJWK(jwk, algorithm="RS256")
    except jwt.PyJWTError:
        raise LtiRefused(f"The LMS's key '{kid}' is not a usable RSA key.") from None


def _fetch_keyset(url: str) -> dict:
    from .connector import http_session

    try:
        response = http_session().get(url, headers={"Accept": "application/json"})
        keyset = response.json() if response.status_code == 200 else None
    except (requests.RequestException, ValueError):
        keyset = None
    if not isinstance(keyset, dict) or not isinstance(keyset.get("keys"), list):
        raise LtiRefused("The LMS's keyset could not be fetched; try the launch again later.")
    return keyset


def launch_validate(*, state: str, id_token: str, browser_states: set[str]) -> Launch:
    """Verify a launch completely and consume its login state. Raises ``LtiRefused``.

    ``browser_states`` are the states this browser started (from its session or the
    state cookie): a state started elsewhere is refused.
    """
    if not state:
        raise LtiRefused("The launch has no state; open the link from the LMS again.")
    if unstorable_reason(state):  # no state we issued holds one; PostgreSQL refuses it in a query
        raise LtiRefused("This launch's login is unknown; open the link from the LMS again.")
    login = LoginState.objects.select_related("platform").filter(state=state).first()
    too_old = timezone.now() - timedelta(seconds=LOGIN_STATE_SECONDS)
    if login is None or login.created_at < too_old:
        raise LtiRefused(
            "This launch's login has expired or is unknown; open the link from the LMS again."
        )
    if state not in browser_states:
        raise LtiRefused(
            "This launch was started in another browser; open the link from the LMS again."
        )
    if not id_token:
        raise LtiRefused("The launch has no id_token.")
    try:
        header = jwt.get_unverified_header(id_token)
        unverified = jwt.decode(id_token, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise LtiRefused("The id_token is not a valid JWT.") from None
    if header.get("alg") != "RS256":
        raise LtiRefused(f"The id_token must be signed with RS256, not {header.get('alg')}.")
    issuer = unverified.get("iss")
    # Read before the signature is checked: anyone who starts a login may send it.
    if isinstance(issuer, str) and unstorable_reason(issuer):
        raise LtiRefused(f"The id_token's issuer {unstorable_reason(issuer)}.")
    if not isinstance(issuer, str) or not Platform.objects.filter(issuer=issuer).exists():
        raise LtiRefused(f"Unknown issuer '{issuer}': this LMS is not registered here.")
    platform = login.platform
    if issuer != platform.issuer:
        raise LtiRefused("The id_token's issuer is not the LMS this login started with.")
    key = _platform_signing_key(platform=platform, kid=header.get("kid"))
    claims = _decode_verified(id_token, key=key, platform=platform)

    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if (len(audiences) > 1 or "azp" in claims) and claims.get("azp") != platform.client_id:
        raise LtiRefused("The id_token's authorised party (azp) is not this tool.")
    if claims["nonce"] != login.nonce:
        raise LtiRefused("The id_token's nonce does not belong to this login.")
    consumed = LoginState.objects.filter(pk=login.pk, consumed_at__isnull=True).update(
        consumed_at=timezone.now()
    )
    if not consumed:
        raise LtiRefused("This launch was already used: its nonce has been seen before.")

    deployment_id = claims.get(CLAIM_DEPLOYMENT_ID)
    if unstorable_reason(str(deployment_id)) or not platform.deployments.filter(
        deployment_id=str(deployment_id)
    ).exists():
        raise LtiRefused(f"Deployment '{deployment_id}' is not registered for this LMS.")
    return launch_from_claims(platform=platform, claims=claims)


def launch_from_claims(*, platform: Platform, claims: dict) -> Launch:
    """Check the message claims of a verified id_token and pick out what attnquiz uses."""
    message_type = claims.get(CLAIM_MESSAGE_TYPE)
    if message_type not in (RESOURCE_LINK_REQUEST, DEEP_LINKING_REQUEST):
        raise LtiRefused(
            "Only resource link and deep linking launches are supported, "
            f"not '{message_type}'."
        )
    version = claims.get(CLAIM_VERSION)
    if version != "1.3.0":
        raise LtiRefused(f"Only LTI 1.3.0 is supported, not version '{version}'.")
    resource_link = claims.get(CLAIM_RESOURCE_LINK)
    deep_linking = claims.get(CLAIM_DEEP_LINKING_SETTINGS)
    if message_type == RESOURCE_LINK_REQUEST:
        if not isinstance(resource_link, dict) or not resource_link.get("id"):
            raise LtiRefused("The launch names no resource link.")
    else:
        resource_link = {}
        return_url = deep_linking.get("deep_link_return_url") if isinstance(deep_linking, dict) else None
        if not isinstance(return_url, str) or not return_url.startswith(("https://", "http://")):
            raise LtiRefused("The deep linking request has no deep_link_return_url.")
        accepted = deep_linking.get("accept_types")
        if not isinstance(accepted, list) or "ltiResourceLink" not in accepted:
            raise LtiRefused(
                "The LMS asks for content attnquiz cannot give: it offers only LTI resource links."
            )
    context = claims.get(CLAIM_CONTEXT)
    if not isinstance(context, dict) or not context.get("id"):
        raise LtiRefused("The launch has no course context; add attnquiz to a course in the LMS.")
    # Only text names a course: a title or label of another JSON type is left out.
    context = {
        **{key: value for key, value in context.items()
           if key not in ("title", "label") or isinstance(value, str)},
        "id": _claim_identifier(context["id"], what="course context id"),
    }
    if message_type == RESOURCE_LINK_REQUEST:
        link_id = _claim_identifier(resource_link["id"], what="resource link id")
        resource_link = {**resource_link, "id": link_id}
    roles = claims.get(CLAIM_ROLES)
    if not isinstance(roles, list):
        raise LtiRefused("The launch has no roles claim.")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise LtiRefused("The launch is anonymous (no 'sub'); attnquiz needs to know the user.")
    _claim_identifier(claims["sub"], what="user id (sub)")
    custom = claims.get(CLAIM_CUSTOM)
    ags = claims.get(CLAIM_AGS_ENDPOINT)
    nrps = claims.get(CLAIM_NRPS)
    return Launch(
        platform=platform,
        claims=claims,
        sub=claims["sub"],
        roles=[r for r in roles if isinstance(r, str)],
        context=context,
        resource_link=resource_link,
        custom=custom if isinstance(custom, dict) else {},
        ags=ags if isinstance(ags, dict) else {},
        nrps=nrps if isinstance(nrps, dict) else {},
        message_type=message_type,
        deployment_id=str(claims.get(CLAIM_DEPLOYMENT_ID)),
        deep_linking=deep_linking if isinstance(deep_linking, dict) else {},
    )


# LTI 1.3: a context, resource link and user id are at most 255 characters.
MAX_IDENTIFIER_LENGTH = 255


def _claim_identifier(value, *, what: str) -> str:
    """An identifier claim as stored: text (a number is read as its digits) of at most 255
    characters that PostgreSQL can store. Raises ``LtiRefused`` (400) otherwise."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise LtiRefused(f"The launch's {what} is not a text.")
    text = str(value)
    if len(text) > MAX_IDENTIFIER_LENGTH:
        raise LtiRefused(f"The launch's {what} is longer than {MAX_IDENTIFIER_LENGTH} characters.")
    reason = unstorable_reason(text)
    if reason:
        raise LtiRefused(f"The launch's {what} {reason}.")
    return text


def sub_storable(sub: str) -> bool:
    """Whether a user id (a launch's ``sub``, a roster member's ``user_id``) can be stored."""
    return len(sub) <= MAX_IDENTIFIER_LENGTH and unstorable_reason(sub) is None


def _decode_verified(id_token: str, *, key: jwt.PyJWK, platform: Platform) -> dict:
    claims = _decode_signed(id_token, key=key, platform=platform)
    # A token that "expires" ages after it was issued is a replayable credential.
    if claims["exp"] - claims["iat"] > MAX_TOKEN_LIFETIME_SECONDS:
        raise LtiRefused(
            "The id_token is valid for more than an hour after it was issued (its exp is too "
            "far past its iat); open the link from the LMS again."
        )
    return claims


def _decode_signed(id_token: str, *, key: jwt.PyJWK, platform: Platform) -> dict:
    try:
        return jwt.decode(
            id_token,
            key=key,
            algorithms=["RS256"],
            audience=platform.client_id,
            issuer=platform.issuer,
            leeway=CLOCK_LEEWAY_SECONDS,
            options={"require": ["iss", "aud", "exp", "iat", "nonce"]},
        )
    except jwt.InvalidSignatureError:
        raise LtiRefused("The id_token's signature does not verify with the LMS's keys.") from None
    except jwt.ExpiredSignatureError:
        raise LtiRefused("The id_token has expired; open the link from the LMS again.") from None
    except jwt.InvalidAudienceError:
        raise LtiRefused(
            f"The id_token is not addressed to this tool (aud lacks client_id '{platform.client_id}')."
        ) from None
    except jwt.ImmatureSignatureError:
        raise LtiRefused("The id_token was issued in the future; check the LMS's clock.") from None
    except jwt.MissingRequiredClaimError as error:
        raise LtiRefused(f"The id_token has no '{error.claim}' claim.") from None
    except jwt.PyJWTError:
        raise LtiRefused("The id_token is not a valid JWT.") from None


def role_from_lti_roles(roles: list[str]) -> str | None:
    """The attnquiz role for an LTI roles claim, or None when no role maps.

    Instructor (or any membership Administrator role) wins over teaching assistant,
    which wins over learner. Short names ("Instructor") are accepted as the spec allows
    for context roles. Institution and system roles are ignored: they say who someone
    is at the university, not in this course.
    """
    found = set()
    for role in roles:
        if role.startswith(MEMBERSHIP):
            rest = role[len(MEMBERSHIP) :]  # "#Instructor" or "/Instructor#TeachingAssistant"
        elif "/" in role or ":" in role:
            continue
        else:
            rest = "#" + role
        principal, _, sub_role = rest.lstrip("/#").partition("#")
        if (
            principal == "Instructor"
            and sub_role == "TeachingAssistant"
            or principal == "TeachingAssistant"
        ):
            found.add(Role.TEACHING_ASSISTANT)
        elif principal in ("Instructor", "Administrator"):
            found.add(Role.INSTRUCTOR)
        elif principal == "Learner":
            found.add(Role.STUDENT)
    for role in (Role.INSTRUCTOR, Role.TEACHING_ASSISTANT, Role.STUDENT):
        if role in found:
            return role.value
    return None


@dataclass(frozen=True)
class LaunchResult:
    """Where a verified launch leads. ``assignment`` is None when the link is not mapped.

    ``choose_course`` is set when an instructor opens an LMS course attnquiz has not seen
    (a new course, or a course copied in the LMS) while teaching other attnquiz courses:
    they pick a new or an existing course first. ``context`` is set for deep linking.
    """

    user: object
    role: str
    course: Course | None
    link: ResourceLink | None
    assignment: Assignment | None
    problem: str = ""  # set when the person cannot go on (e.g. course not set up yet)
    status: int = 200
    choose_course: bool = False
    context: LtiContext | None = None


NEW_COURSE = "new"


@transaction.atomic
def launch_accept(*, launch: Launch, course_choice: str | None = None) -> LaunchResult:
    """Provision the user, course, enrolment and link for a verified launch.

    ``course_choice`` answers ``choose_course``: ``NEW_COURSE`` or the slug of a course
    the instructor teaches.
    """
    role = role_from_lti_roles(launch.roles)
    if role is None:
        raise LtiRefused(
            "Your role in this LMS course has no counterpart in attnquiz "
            "(it knows instructors, teaching assistants and learners).",
            status=403,
        )
    if launch.is_deep_linking and role != Role.INSTRUCTOR:
        raise LtiRefused("Only the course's instructors can add attnquiz content.", status=403)
    user = lti_user_ensure(platform=launch.platform, sub=launch.sub, claims=launch.claims)
    lti_email_vouch(platform=launch.platform, user=user, claims=launch.claims)
    context = (
        LtiContext.objects.select_related("course")
        .filter(platform=launch.platform, context_id=str(launch.context["id"]))
        .first()
    )
    if context is None:
        if role != Role.INSTRUCTOR:
            return LaunchResult(
                user=user,
                role=role,
                course=None,
                link=None,
                assignment=None,
                status=409,
                problem="This course is not set up in attnquiz yet. Ask your instructor to "
                "open this link from the LMS first, then try again.",
            )
        if course_choice is None and courses_taught(user=user):
            return LaunchResult(
                user=user, role=role, course=None, link=None, assignment=None, choose_course=True
            )
        context = lti_context_create(
            platform=launch.platform, context=launch.context, user=user, choice=course_choice
        )
    lti_context_refresh(context=context, launch=launch)
    course = context.course
    enrolment_ensure(course=course, user=user, role=role, source=EnrolmentSource.LMS)
    if role == Role.INSTRUCTOR:
        roster_sync_schedule(context=context)
    if launch.is_deep_linking:
        return LaunchResult(
            user=user, role=role, course=course, link=None, assignment=None, context=context
        )
    link = resource_link_record(launch=launch, context=context)
    assignment, problem = _assignment_for_launch(launch=launch, link=link, role=role)
    return LaunchResult(
        user=user,
        role=role,
        course=course,
        link=link,
        assignment=assignment,
        problem=problem,
        status=200 if assignment or role == Role.INSTRUCTOR else 409,
        context=context,
    )


def courses_taught(*, user) -> list[Course]:
    return list(
        Course.objects.filter(
            enrolments__user=user, enrolments__role=Role.INSTRUCTOR, enrolments__status="active"
        ).order_by("title")
    )


def lti_context_refresh(*, context: LtiContext, launch: Launch) -> None:
    """Keep the context's roster service URL and deployment as the latest launch gives them."""
    url = launch.nrps.get("context_memberships_url")
    values = {}
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        if context.memberships_url != url[:500]:
            values["memberships_url"] = url[:500]
    if launch.deployment_id and context.deployment_id != launch.deployment_id[:255]:
        values["deployment_id"] = launch.deployment_id[:255]
    if values:
        LtiContext.objects.filter(pk=context.pk).update(**values)
        for name, value in values.items():
            setattr(context, name, value)


def roster_sync_schedule(*, context: LtiContext, force: bool = False) -> bool:
    """Sync the roster after the commit (in the worker, or here in inline mode).

    An instructor's launch syncs at most every ``ROSTER_SYNC_EVERY_SECONDS``; ``force``
    (the "sync now" button) always does. Never raises.
    """
    from django.conf import settings

    if not context.memberships_url:
        return False
    recent = context.roster_synced_at and (
        timezone.now() - context.roster_synced_at < timedelta(seconds=ROSTER_SYNC_EVERY_SECONDS)
    )
    if recent and not force:
        return False

    def run():
        try:
            if settings.GRADING_MODE == "inline":
                registered_task("lti.tasks.sync_roster")(context.pk)  # the task's body, here
            else:
                task_send("lti.tasks.sync_roster", args=[context.pk])
        except Exception:
            logger.warning("roster sync of context %s not started", context.pk, exc_info=True)

    transaction.on_commit(run)
    return True


def _claim_text(claims: dict, name: str, limit: int) -> str:
    """A text claim as names are stored from every source (``accounts.identifiers.
    name_normalise``: invisible bidi, zero-width and filler characters dropped, controls and
    runs of white space made one space), at most ``limit`` characters."""
    value = claims.get(name)
    if not isinstance(value, str):
        return ""
    return name_normalise(value[: limit * 4]).strip()[:limit]


def names_from_claims(claims: dict) -> dict[str, str]:
    """The person's names and e-mail from the OpenID Connect standard claims an LTI 1.3
    launch (or a names-and-roles member) carries: ``given_name`` and ``family_name``; else
    ``name`` (the full name), split at its last space; else ``preferred_username`` as the
    first name, so nobody is shown without a name; and ``email`` when it is an address.
    Only what the claims say is returned: a claim left out changes nothing."""
    names = {}
    given, family = _claim_text(claims, "given_name", 150), _claim_text(claims, "family_name", 150)
    full = _claim_text(claims, "name", 301)
    if given or family:
        if given:
            names["first_name"] = given
        if family:
            names["last_name"] = family
    elif full:
        first, _, last = full.rpartition(" ")
        names["first_name"], names["last_name"] = (first[:150], last[:150]) if first else (last[:150], "")
    elif preferred := _claim_text(claims, "preferred_username", 150):
        names["first_name"] = preferred
    email = _claim_text(claims, "email", 254)
    if email:
        try:
            validate_email(email)
        except ValidationError:
            pass
        else:
            names["email"] = email_normalise(email)  # the one form every uniqueness check compares
    return names


def lti_user_ensure(*, platform: Platform, sub: str, claims: dict):
    """The Django user for an LTI user; created on first launch, names and e-mail updated
    from the claims on every launch and roster sync (``names_from_claims``)."""
    User = get_user_model()
    identity = LtiIdentity.objects.select_related("user").filter(platform=platform, sub=sub).first()
    if identity is None:
        digest = hashlib.sha256(f"{platform.pk}:{sub}".encode()).hexdigest()[:24]
        user = User.objects.create(username=f"lti-{digest}")
        user.set_unusable_password()
        user.save(update_fields=["password"])
        identity = LtiIdentity.objects.create(platform=platform, sub=sub, user=user)
    user = identity.user
    changed = []
    for attribute, value in names_from_claims(claims).items():
        if getattr(user, attribute) != value:
            setattr(user, attribute, value)
            changed.append(attribute)
    if changed:
        user.save(update_fields=changed)
    return user


def lti_email_vouch(*, platform: Platform, user, claims: dict) -> bool:
    """Trust the launch's ``email`` to find ``user`` when ``platform`` verifies its users'
    addresses (``Platform.verifies_emails``); True when it is trusted now.

    ``user`` must be the account ``lti_user_ensure`` gave for this platform and the
    launch's ``sub``, its e-mail just set from these claims: a platform vouches only for
    the people it launches, and only from a verified launch (never from a roster sync).
    ``email_trust_record`` keeps the rule of every trusted address: an address another
    account holds stays with it (nothing is taken, whichever LMS or person gave it), and
    this account's trust moves to a new address the LMS gives. A launch whose
    ``email_verified`` claim says false trusts nothing. Call inside the launch's transaction."""
    if not platform.verifies_emails or claims.get("email_verified") in (False, "false"):
        return False
    email = names_from_claims(claims).get("email", "")
    if not email or email_normalise(user.email) != email:  # trust only the account's own e-mail
        return False
    return email_trust_record(user=user, email=email, trust=EmailTrust.GIVEN_BY_LMS)


def lti_context_create(
    *, platform: Platform, context: dict, user=None, choice: str | None = None
) -> LtiContext:
    """Map an LMS course to attnquiz: a new course named after it, or (``choice`` = a
    slug) an existing course ``user`` teaches. Call inside a transaction."""
    title = (context.get("title") or context.get("label") or "LMS course")[:200]
    if choice and choice != NEW_COURSE:
        course = next((c for c in courses_taught(user=user) if c.slug == choice), None)
        if course is None:
            raise LtiRefused("Pick one of the courses you teach, or a new course.")
    else:
        base = slugify(context.get("label") or title)[:40] or "lms-course"
        slug = base
        while Course.objects.filter(slug__iexact=slug).exists():  # a short name from before may be in capitals
            slug = f"{base}-{secrets.token_hex(3)}"
        course = Course.objects.create(slug=slug, title=title)
    return LtiContext.objects.create(
        platform=platform, context_id=str(context["id"]), course=course, title=title[:255]
    )


def resource_link_record(*, launch: Launch, context: LtiContext) -> ResourceLink:
    """Create or refresh the link, keeping the AGS line item and scopes of this launch."""
    values = {"context": context, "title": str(launch.resource_link.get("title") or "")[:255]}
    for claim, attribute in (("lineitem", "lineitem_url"), ("lineitems", "lineitems_url")):
        url = launch.ags.get(claim)
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            values[attribute] = url[:500]
    scopes = launch.ags.get("scope")
    if isinstance(scopes, list):
        values["ags_scopes"] = [s for s in scopes if isinstance(s, str)]
    link, _ = ResourceLink.objects.update_or_create(
        platform=launch.platform,
        resource_link_id=str(launch.resource_link["id"]),
        defaults=values,
    )
    return link


def _assignment_for_launch(
    *, launch: Launch, link: ResourceLink, role: str
) -> tuple[Assignment | None, str]:
    course = link.context.course
    wanted = str(launch.custom.get("assignment") or "").strip()
    if wanted:
        assignment = course.assignments.filter(slug=wanted).first()
        if assignment is not None:
            if link.assignment_id != assignment.pk:
                link.assignment = assignment
                link.save(update_fields=["assignment", "updated_at"])
            return assignment, ""
        problem = f"This link asks for assignment '{wanted}', which {course.title} does not have."
        if role == Role.INSTRUCTOR:
            return None, problem + " Pick or create the assignment it should open."
        return None, problem + " Tell your instructor."
    if link.assignment is not None and link.assignment.course_id == course.pk:
        return link.assignment, ""
    if role == Role.INSTRUCTOR:
        return None, ""
    return None, (
        "This link does not open an assignment yet. Ask your instructor to open it from "
        "the LMS and choose one, then try again."
    )


def resource_link_map(*, link: ResourceLink, assignment: Assignment) -> ResourceLink:
    if assignment.course_id != link.context.course_id:
        raise LtiRefused("That assignment belongs to another course.")
    link.assignment = assignment
    link.save(update_fields=["assignment", "updated_at"])
    return link


@transaction.atomic
def resource_link_map_new_assignment(*, link: ResourceLink, title: str) -> Assignment:
    """Create an empty assignment named ``title`` in the link's course and map the link to it."""
    from courses.services import assignment_create

    title = title.strip()[:200]
    if not title:
        raise LtiRefused("Give the new assignment a title.")
    course = link.context.course
    base = slugify(title)[:40] or "assignment"
    slug = base
    while course.assignments.filter(slug__iexact=slug).exists():  # as assignment_create refuses a case-only clash
        slug = f"{base}-{secrets.token_hex(2)}"
    assignment = assignment_create(course=course, title=title, slug=slug)
    resource_link_map(link=link, assignment=assignment)
    return assignment
