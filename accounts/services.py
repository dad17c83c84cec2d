"""Writes for accounts: signing up and confirming an e-mail address.

The confirmation link is a value signed by ``django.core.signing`` (time-stamped, with its
own salt), so no token is stored or hand-made. With ``ACCOUNT_EMAIL_VERIFICATION`` on,
a new account stays inactive until its address is confirmed, and a changed address only
replaces the old one once confirmed."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse

VERIFY_SALT = "accounts.verify-email"
VERIFY_MAX_AGE = 3 * 24 * 3600


class AccountRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def verification_required() -> bool:
    return bool(getattr(settings, "ACCOUNT_EMAIL_VERIFICATION", False))


@transaction.atomic
def account_create(*, form) -> object:
    """Save a valid SignUpForm; the account is inactive when e-mails must be confirmed."""
    user = form.save(commit=False)
    user.is_active = not verification_required()
    user.save()
    return user


def email_verification_token(*, user, email: str, join_code: str = "") -> str:
    return signing.dumps({"u": user.pk, "e": email, "j": join_code}, salt=VERIFY_SALT, compress=True)


def email_verification_send(*, request, user, email: str, join_code: str = "") -> None:
    token = email_verification_token(user=user, email=email, join_code=join_code)
    link = request.build_absolute_uri(reverse("verify_email", args=[token]))
    context = {"user": user, "link": link, "days": VERIFY_MAX_AGE // 86400}
    send_mail(
        subject="Confirm your e-mail address for attnquiz",
        message=render_to_string("accounts/verify_email.txt", context),
        from_email=None,
        recipient_list=[email],
    )


@transaction.atomic
def email_verify(*, token: str) -> tuple[object, str]:
    """Activate the account and set the confirmed address. Returns (user, join code)."""
    try:
        data = signing.loads(token, salt=VERIFY_SALT, max_age=VERIFY_MAX_AGE)
    except signing.SignatureExpired:
        raise AccountRefused("This confirmation link has expired; sign in or ask for a new one.") from None
    except signing.BadSignature:
        raise AccountRefused("This confirmation link is not valid.") from None
    User = get_user_model()
    user = User._default_manager.select_for_update().filter(pk=data.get("u")).first()
    email = str(data.get("e") or "")
    if user is None or not email:
        raise AccountRefused("This confirmation link is not valid.")
    taken = User._default_manager.filter(email__iexact=email).exclude(pk=user.pk).exists()
    if taken:
        raise AccountRefused("Another account has confirmed this e-mail address in the meantime.")
    user.email, user.is_active = email, True
    user.save(update_fields=["email", "is_active"])
    return user, str(data.get("j") or "")


def sign_in_failures_clear(*, username: str) -> int:
    """Forget the account's failed sign-ins from every address (after a password reset)."""
    from axes.utils import reset

    return reset(username=username)
