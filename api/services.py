"""Writes for the API: creating, using and revoking personal API tokens."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from attnquiz.input_limits import unstorable_reason

from .models import ApiToken, TokenScope

TOKEN_PREFIX = "aq_"
PREFIX_LENGTH = 12  # "aq_" and 9 characters of the secret: enough to find it, too few to guess it
ALLOWED_LIFETIMES_DAYS = (7, 30, 90, 365)
LAST_USED_RESOLUTION = timedelta(minutes=1)  # write last_used_at at most once a minute


class TokenRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def api_token_create(*, user, name: str, scope: str, lifetime_days: int) -> tuple[ApiToken, str]:
    """A new token and its secret; the secret is not stored and cannot be shown again."""
    name = name.strip()
    if not name or len(name) > 100:
        raise TokenRefused("Give the token a name of 1 to 100 characters.")
    if unstorable := unstorable_reason(name):
        raise TokenRefused(f"The token's name {unstorable}; choose another.")
    if scope not in TokenScope.values:
        raise TokenRefused(f"Unknown scope '{scope}'; choose read or write.")
    if lifetime_days not in ALLOWED_LIFETIMES_DAYS:
        raise TokenRefused(
            f"A token lives {', '.join(map(str, ALLOWED_LIFETIMES_DAYS))} days; not {lifetime_days}."
        )
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=secret[:PREFIX_LENGTH],
        key_hash=token_digest(secret),
        scope=scope,
        expires_at=timezone.now() + timedelta(days=lifetime_days),
    )
    return token, secret


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_touch(*, token: ApiToken) -> None:
    """Record that the token was used (at minute resolution, so reads stay reads)."""
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def exercise_push(*, course, actor, source: str):
    """Import an exercise file unless the exercise's latest version already has exactly this
    source (a sync that pushes an unchanged file must not start a new draft).

    Returns (version, changed). Raises SpecError or AuthoringRefused as exercise_import does.
    """
    from authoring.services import exercise_import, source_hash
    from exercises.models import ExerciseVersion

    digest = source_hash(source)
    latest = (
        ExerciseVersion.objects.filter(exercise__owner__course=course, content_hash=digest)
        .select_related("exercise")
        .order_by("-number")
        .first()
    )
    if latest is not None and latest == latest.exercise.versions.order_by("-number").first():
        return latest, False
    return exercise_import(course=course, actor=actor, data=source.encode("utf-8")), True
