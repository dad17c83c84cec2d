"""A confirmation that holds only for what it said, about the change it was asked for.

A change that reaches people in a way they may not expect (reopening an attempt whose
student has seen its worked solutions, archiving a course while an exam runs) is refused
until confirmed: the service raises ``ConfirmationNeeded`` with the sentence the page shows,
in numbers, and a token: signed and dated, it carries a digest of what it is about
(``scope``: the action, its target and the change itself, see ``scope_of``) and a digest of
the sentence. The page's confirm button sends the token back (``confirmed_of``); the service
computes the sentence again inside the transaction that makes the change and applies it
only while the token is younger than CONFIRMATION_MAX_AGE_SECONDS, was made for this very
change and its sentence reads the same. Anything else asks again and changes nothing:
``stale`` when the token was made for this change but its numbers moved meanwhile,
``expired`` when it is too old; a token of another change (the same wording about other
items, another target) or a forged one is simply asked again.

The teaching pages' edits of an assignment (instructor.services) use it too, scoped to
the assignment and the edit.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core import signing
from django.utils.crypto import constant_time_compare, salted_hmac

# A new salt for the dated tokens: a token of the former undated form fails its signature.
SALT = "attnquiz.confirmation.v2"
CONFIRM_FIELD = "confirm"
TOKEN_FIELD = "impact"
# How long a confirmation holds, unless settings.CONFIRMATION_MAX_AGE_SECONDS says otherwise.
DEFAULT_MAX_AGE_SECONDS = 30 * 60
EXPIRED_NOTICE = "This confirmation expired; check the numbers again."

# ``confirmed`` of a service that asks: True applies the change whoever it reaches (scripts,
# the shell); False asks whenever there is something to ask; a string is the token of the
# confirmation the person answered, which applies the change only while what it said holds.
Confirmed = bool | str


class ConfirmationNeeded(Exception):
    """Nothing was changed: ``message`` says what the change would do, in numbers (after
    EXPIRED_NOTICE when ``expired``). Repeat it with ``confirmed=token`` to apply it while
    the message stays the same; ``stale``: the token given was one we made for this same
    change, but for another message (the numbers moved meanwhile); ``expired``: the token
    given was one we made for this change, too long ago."""

    def __init__(self, message: str, *, token: str, stale: bool = False, expired: bool = False):
        super().__init__(message)
        self.message = message
        self.token = token
        self.stale = stale
        self.expired = expired


def _digest(text: str) -> str:
    # Keyed: the token shows its digests, and a scope may hold what the person typed.
    return salted_hmac(SALT, text, algorithm="sha256").hexdigest()[:16]


def _canonical(value):
    """``value`` as JSON-ready data that reads the same whatever order it was built in:
    mappings become lists of [key, value] pairs sorted by key, sets sorted lists."""
    if isinstance(value, dict):
        pairs = [[_canonical(key), _canonical(item)] for key, item in value.items()]
        return sorted(pairs, key=lambda pair: json.dumps(pair[0], sort_keys=True, default=str))
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(item) for item in value), key=lambda item: json.dumps(item, default=str))
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def scope_of(action: str, *target, change=None) -> str:
    """The scope of a confirmation: ``action`` on ``target`` (ids), and, when given, a digest
    of ``change`` (its parameters: which items go to which pool, the new points, the new
    settings), so that a confirmation of one change never confirms another whose sentence
    happens to read the same."""
    scope = ":".join([action, *(str(part) for part in target)])
    if change is not None:
        scope += ":" + _digest(json.dumps(_canonical(change), separators=(",", ":"), default=str))
    return scope


def _max_age() -> int:
    return int(getattr(settings, "CONFIRMATION_MAX_AGE_SECONDS", DEFAULT_MAX_AGE_SECONDS))


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def confirmation_token(*, scope: str, message: str) -> str:
    """The token a confirm button carries for ``message`` about ``scope``, dated now."""
    return _signer().sign(f"{_digest(scope)}:{_digest(message)}")


def _token_parts(token: str) -> tuple[str, str, bool] | None:
    """(scope digest, message digest, expired) of a token we made, or None."""
    try:
        payload, expired = _signer().unsign(token, max_age=_max_age()), False
    except signing.SignatureExpired:
        try:
            payload, expired = _signer().unsign(token), True
        except (signing.BadSignature, ValueError):
            return None
    except (signing.BadSignature, ValueError):
        return None
    scope_digest, sep, message_digest = payload.partition(":")
    return (scope_digest, message_digest, expired) if sep else None


def confirmation_require(*, scope: str, message: str, confirmed: Confirmed) -> None:
    """Refuse (ConfirmationNeeded) a change whose ``message`` was not confirmed for ``scope``
    (see scope_of) within CONFIRMATION_MAX_AGE_SECONDS. An empty message has nothing to ask.
    Call where the change is decided, after computing the message from what is stored now."""
    if not message or confirmed is True:
        return
    parts = _token_parts(confirmed) if isinstance(confirmed, str) else None
    same_scope = parts is not None and constant_time_compare(parts[0], _digest(scope))
    same_message = same_scope and constant_time_compare(parts[1], _digest(message))
    expired = same_scope and parts[2]
    if same_message and not expired:
        return
    token = confirmation_token(scope=scope, message=message)
    if expired:
        raise ConfirmationNeeded(f"{EXPIRED_NOTICE} {message}", token=token, expired=True)
    raise ConfirmationNeeded(message, token=token, stale=same_scope)


def confirmed_of(data) -> Confirmed:
    """What a posted form confirmed: the token of the confirmation answered (its confirm
    button sends ``confirm=yes``), or False. The token is checked by the service, never
    trusted here."""
    if data.get(CONFIRM_FIELD) != "yes":
        return False
    return str(data.get(TOKEN_FIELD, "")).strip()[:200] or False


def confirmation_shown(needed) -> dict:
    """What a page shows of a ConfirmationNeeded (this module's or a service's own): the
    message, the token its confirm button sends back, and whether the numbers changed
    since the confirmation answered."""
    return {"message": needed.message, "token": needed.token, "stale": needed.stale}
