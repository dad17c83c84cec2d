"""A confirmation that holds only for what it said.

A change that reaches people in a way they may not expect (reopening an attempt whose
student has seen its worked solutions, archiving a course while an exam runs) is refused
until confirmed: the service raises ``ConfirmationNeeded`` with the sentence the page shows,
in numbers, and a token, a short signed hash of that sentence and of what it is about
(``scope``: the action and its arguments). The page's confirm button sends the token back
(``confirmed_of``); the service computes the sentence again inside the transaction that
makes the change and applies it only while it reads the same. Other numbers, another
change or a forged token: it asks again, and nothing is changed.

The teaching pages' edits of an assignment (instructor.services) use it too, scoped to
the assignment.
"""

from __future__ import annotations

import hashlib

from django.core import signing
from django.utils.crypto import constant_time_compare

SALT = "attnquiz.confirmation"
CONFIRM_FIELD = "confirm"
TOKEN_FIELD = "impact"

# ``confirmed`` of a service that asks: True applies the change whoever it reaches (scripts,
# the shell); False asks whenever there is something to ask; a string is the token of the
# confirmation the person answered, which applies the change only while what it said holds.
Confirmed = bool | str


class ConfirmationNeeded(Exception):
    """Nothing was changed: ``message`` says what the change would do, in numbers. Repeat it
    with ``confirmed=token`` to apply it while the message stays the same; ``stale``: the
    token given was one we made, but for another message (the numbers moved meanwhile)."""

    def __init__(self, message: str, *, token: str, stale: bool = False):
        super().__init__(message)
        self.message = message
        self.token = token
        self.stale = stale


def _digest(*, scope: str, message: str) -> str:
    return hashlib.sha256(f"{scope}\n{message}".encode()).hexdigest()[:16]


def confirmation_token(*, scope: str, message: str) -> str:
    """The token a confirm button carries for ``message`` about ``scope``."""
    return signing.Signer(salt=SALT).sign(_digest(scope=scope, message=message))


def confirmation_require(*, scope: str, message: str, confirmed: Confirmed) -> None:
    """Refuse (ConfirmationNeeded) a change whose ``message`` was not confirmed for ``scope``.
    An empty message has nothing to ask. Call where the change is decided, after computing
    the message from what is stored now."""
    if not message or confirmed is True:
        return
    token = confirmed if isinstance(confirmed, str) else ""
    try:
        digest = signing.Signer(salt=SALT).unsign(token)
    except signing.BadSignature:
        digest = None
    if digest is not None and constant_time_compare(digest, _digest(scope=scope, message=message)):
        return
    raise ConfirmationNeeded(
        message, token=confirmation_token(scope=scope, message=message), stale=digest is not None
    )


def confirmed_of(data) -> Confirmed:
    """What a posted form confirmed: the token of the confirmation answered (its confirm
    button sends ``confirm=yes``), or False. The token is checked by the service, never
    trusted here."""
    if data.get(CONFIRM_FIELD) != "yes":
        return False
    return str(data.get(TOKEN_FIELD, "")).strip()[:200] or False
