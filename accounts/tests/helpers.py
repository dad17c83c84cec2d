"""Scenes for tests: an account whose e-mail address is confirmed (accounts.models)."""

from accounts.models import EmailTrust
from accounts.services import email_trust_record


def email_confirmed(user, email: str):
    """Give ``user`` the address ``email``, confirmed as if its link had been followed."""
    user.email = email
    user.save(update_fields=["email"])
    assert email_trust_record(user=user, email=email, trust=EmailTrust.CONFIRMED_BY_LINK)
    return user
