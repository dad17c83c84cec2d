"""Reads of accounts: finding a person by what they typed (a username or an e-mail)."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from .identifiers import email_normalise, identifier_normalise


def user_by_identifier(*, identifier: str):
    """The account with this username, else the one with this e-mail (case-insensitive).

    None when there is none, or when several accounts share the e-mail (ambiguous)."""
    User = get_user_model()
    identifier = identifier_normalise(identifier)
    if not identifier or len(identifier) > 254:
        return None
    user = User._default_manager.filter(username=identifier).first()
    if user is not None:
        return user
    if "@" in identifier:
        matches = list(User._default_manager.filter(email__iexact=email_normalise(identifier))[:2])
        if len(matches) == 1:
            return matches[0]
    return None


def email_in_use(*, email: str, exclude_user=None) -> bool:
    accounts = get_user_model()._default_manager.filter(email__iexact=email_normalise(email))
    if exclude_user is not None:
        accounts = accounts.exclude(pk=exclude_user.pk)
    return accounts.exists()
