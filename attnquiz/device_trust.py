"""Device cookies: a browser that has signed in to an account may sign in to it again
whatever others at its address did (OWASP's defence against lockout as denial of service).

Behind one exam room's address, five wrong passwords typed by a classmate paused a named
student's sign-in for the cool-off. A successful sign-in now leaves a signed cookie naming
the account (``COOKIE``, HttpOnly, half a year). A sign-in to that account presenting it is
judged by the cookie's own count of wrong passwords, not by the (username, address) count
nor the account's (attnquiz.lockout): ``LOGIN_FAILURE_LIMIT`` of them within the cool-off
and the cookie is trusted no more until the cool-off ends, so a stolen cookie buys no more
guesses than a fresh browser. The cookie also carries a digest of the account's password
hash, so a password change or reset retires every cookie issued before it. The count lives
in the cache; with the cache unreachable no cookie is trusted and the ordinary tiers apply
(they are kept in the database, attnquiz.lockout). A browser that never signed in to the
account gets the ordinary tiers, which only failures against that same account can reach.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.cache import cache
from django.utils.crypto import constant_time_compare, salted_hmac

logger = logging.getLogger(__name__)

COOKIE = "aq_device"
SALT = "attnquiz.device-trust"
MAX_AGE = timedelta(days=182)
_FAILURES_KEY = "device-trust-failures:{}"


def _password_digest(password_hash: str) -> str:
    """Changes whenever the password does (the hash is salted afresh on every change)."""
    return salted_hmac(SALT, password_hash).hexdigest()[:20]


def device_cookie_value(*, user) -> str:
    """A new signed cookie value naming ``user`` and their current password, with a random
    id its count is kept under."""
    return signing.dumps(
        {"u": user.get_username(), "p": _password_digest(user.password), "d": secrets.token_urlsafe(12)},
        salt=SALT, compress=False,
    )


def device_cookie_set(response, *, user) -> None:
    response.set_cookie(
        COOKIE,
        device_cookie_value(user=user),
        max_age=int(MAX_AGE.total_seconds()),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def _device_id(request, *, username: str) -> str | None:
    """The id of the request's device cookie when it is genuine, unexpired and names
    ``username``; read once per request (the lockout asks up to three times per sign-in)."""
    known = request.__dict__.setdefault("_device_ids", {})
    if username not in known:
        known[username] = _device_id_read(request, username=username)
    return known[username]


def _device_id_read(request, *, username: str) -> str | None:
    value = request.COOKIES.get(COOKIE)
    if not value or not username:
        return None
    try:
        payload = signing.loads(value, salt=SALT, max_age=MAX_AGE)
    except signing.BadSignature:  # includes SignatureExpired
        return None
    if not isinstance(payload, dict) or payload.get("u") != username or not isinstance(payload.get("d"), str):
        return None
    password_hash = (
        get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: username})
        .values_list("password", flat=True).first()
    )
    if password_hash is None or not constant_time_compare(payload.get("p", ""), _password_digest(password_hash)):
        return None  # the password changed since the cookie was issued
    return payload["d"]


def _cool_off_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def device_failures(device_id: str) -> int | None:
    """Wrong passwords typed with this cookie in its current window (one cool-off from its
    first use); None when the cache is unreachable. ``add`` tells an outage (None) apart
    from a key that exists (False) or was created (True), where ``get`` cannot."""
    key = _FAILURES_KEY.format(device_id)
    try:
        created = cache.add(key, 0, timeout=_cool_off_seconds())
    except Exception:  # noqa: BLE001 - a cache that raises instead of failing open
        created = None
    if created is None:
        logger.warning("device trust: the cache is unreachable; sign-ins get the ordinary limits")
        return None
    value = cache.get(key)
    return int(value) if isinstance(value, int) else None


def trusted_device(request, *, username: str) -> str | None:
    """The id of a device cookie that may sign in to ``username`` now, or None (no cookie,
    another account's, forged, its own limit reached, or the cache unreachable)."""
    device_id = _device_id(request, username=username)
    if device_id is None:
        return None
    failures = device_failures(device_id)
    if failures is None or failures >= settings.AXES_FAILURE_LIMIT:
        return None
    return device_id


def device_failure_record(device_id: str) -> None:
    """Count one wrong password typed with this cookie. Lost in an outage, when the next
    check finds the cache unreachable and trusts no cookie anyway."""
    key = _FAILURES_KEY.format(device_id)
    try:
        if not cache.add(key, 1, timeout=_cool_off_seconds()):
            cache.incr(key)
    except ValueError:  # lapsed between add and incr: count afresh
        cache.add(key, 1, timeout=_cool_off_seconds())
    except Exception:  # noqa: BLE001 - an outage: the next check trusts no cookie
        logger.warning("device trust: could not count a failure; the cache is unreachable")
