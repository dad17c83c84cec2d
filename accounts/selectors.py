"""Reads of accounts: finding a person by what they typed (a username or an e-mail), and
whether an address is trusted to find its account (accounts.models explains why only a
confirmed address, or one staff gave, may)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import F, Q

from .identifiers import email_normalise, identifier_normalise, username_skeleton
from .models import EmailTrust, TrustedEmail


def users_with_trusted_email(*, email: str):
    """The account (zero or one) whose trusted address this is, and still its e-mail."""
    email = email_normalise(email)
    return get_user_model()._default_manager.filter(trusted_email__email=email, email__iexact=email)


def user_by_trusted_email(*, email: str):
    return users_with_trusted_email(email=email).first() if email else None


def awaits_first_password(*, user) -> bool:
    """The account was made by a course's staff for its address (roster import, "add by
    e-mail") and has had no password since: "Forgot your password?" and the invitation's
    link are how its owner sets the first one. Such an account has no usable password, as
    an LMS's accounts have none; only this one is sent a reset link."""
    if user.has_usable_password() or not user.email:
        return False
    trusted = TrustedEmail.objects.filter(user=user).first()
    return (
        trusted is not None and trusted.trust == EmailTrust.GIVEN_BY_STAFF
        and trusted.email == email_normalise(user.email)
    )


def users_by_trusted_email(*, emails) -> dict[str, object]:
    """``user_by_trusted_email`` for many addresses in one query: address -> account."""
    emails = {email_normalise(email) for email in emails} - {""}
    users = (
        get_user_model()._default_manager
        .filter(trusted_email__email__in=emails, email__iexact=F("trusted_email__email"))
        .select_related("trusted_email")
    )
    return {user.trusted_email.email: user for user in users}


def trusted_emails_recorded(*, emails) -> set[str]:
    """Of these addresses, those a trust record holds, still its account's e-mail or not."""
    emails = {email_normalise(email) for email in emails} - {""}
    return set(TrustedEmail.objects.filter(email__in=emails).values_list("email", flat=True))


def usernames_claiming_emails(*, emails, chunk: int = 500) -> dict[str, list[str]]:
    """``usernames_claiming_email`` for many addresses (one query per ``chunk`` of them):
    address -> the accounts giving it without its being trusted for them (the first five)."""
    emails = sorted({email_normalise(email) for email in emails} - {""})
    claims: dict[str, list[str]] = {}
    for start in range(0, len(emails), chunk):
        wanted = Q()
        for email in emails[start:start + chunk]:
            wanted |= Q(email__iexact=email)
        rows = get_user_model()._default_manager.filter(wanted).values_list("username", "email", "trusted_email__email")
        for username, email, trusted in rows:
            email = email_normalise(email)
            if trusted != email:
                claims.setdefault(email, []).append(username)
    return {email: sorted(usernames)[:5] for email, usernames in claims.items()}


def user_by_username_or_trusted_email(*, identifier: str):
    """The account a member of staff names: by its username, or by an address it has
    confirmed (or staff gave it). None for anything else: an unconfirmed address finds no one."""
    User = get_user_model()
    identifier = identifier_normalise(identifier)
    if not identifier or len(identifier) > 254:
        return None
    user = User._default_manager.filter(username=identifier).first()
    if user is None and "@" in identifier:
        user = user_by_trusted_email(email=identifier)
    return user


def user_by_identifier(*, identifier: str):
    """The account a person signs in to: the one with this username, else the one whose
    trusted address this is, else the only one giving this address (its password is
    asked for all the same).

    None when there is none, or when several accounts give the address and none has
    confirmed it (ambiguous)."""
    User = get_user_model()
    identifier = identifier_normalise(identifier)
    if not identifier or len(identifier) > 254:
        return None
    user = User._default_manager.filter(username=identifier).first()
    if user is not None or "@" not in identifier:
        return user
    trusted = user_by_trusted_email(email=identifier)
    if trusted is not None:
        return trusted
    matches = list(User._default_manager.filter(email__iexact=email_normalise(identifier))[:2])
    return matches[0] if len(matches) == 1 else None


def email_in_use(*, email: str, exclude_user=None) -> bool:
    """Another account has confirmed this address (or staff gave it to one). An address
    that accounts merely give does not count: a claim must not keep its owner out."""
    accounts = users_with_trusted_email(email=email)
    if exclude_user is not None:
        accounts = accounts.exclude(pk=exclude_user.pk)
    return accounts.exists()


def usernames_claiming_email(*, email: str, exclude_user=None) -> list[str]:
    """Accounts that give this address without it being trusted for them (a note for staff)."""
    email = email_normalise(email)
    accounts = get_user_model()._default_manager.filter(email__iexact=email).exclude(trusted_email__email=email)
    if exclude_user is not None:
        accounts = accounts.exclude(pk=exclude_user.pk)
    return sorted(accounts.values_list("username", flat=True)[:5])


def email_trust(*, user) -> TrustedEmail | None:
    """The trust of the account's current address; None when it is only claimed."""
    if not user.email:
        return None
    trusted = TrustedEmail.objects.filter(user=user).first()
    return trusted if trusted is not None and trusted.email == email_normalise(user.email) else None


def email_trust_of_users(*, users) -> dict[int, TrustedEmail]:
    """user id -> the trust of their current address, for those whose address is trusted
    (one query; the people page)."""
    by_id = {user.pk: user for user in users}
    return {
        trusted.user_id: trusted
        for trusted in TrustedEmail.objects.filter(user_id__in=by_id)
        if trusted.email == email_normalise(by_id[trusted.user_id].email)
    }


class LookalikeUsernames:
    """The existing usernames by what they look like (``username_skeleton``), read once:
    a roster import asks for each row. ``taken_by`` names the account a new username would
    be mistaken for."""

    def __init__(self):
        self._by_skeleton: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._by_skeleton is None:
            self._by_skeleton = {}
            names = get_user_model()._default_manager.order_by("pk").values_list("username", flat=True)
            for name in names.iterator(chunk_size=5000):
                self._by_skeleton.setdefault(username_skeleton(name), name)
        return self._by_skeleton

    def load(self) -> "LookalikeUsernames":
        """Read them now (before a lock is taken, say) rather than at the first question."""
        self._load()
        return self

    def taken_by(self, username: str) -> str | None:
        return self._load().get(username_skeleton(username))

    def add(self, username: str) -> None:
        self._load().setdefault(username_skeleton(username), username)


def username_lookalike(*, username: str) -> str | None:
    """The existing username this one would be mistaken for (the same one included)."""
    return LookalikeUsernames().taken_by(username)
