"""Sign-in throttling on django-axes' database handler, in two tiers nobody can aim at others.

A wrong password is recorded per (username, address). Two counts over the cool-off window
are then compared, each with its own limit:

- the username *from this address* (``LOGIN_FAILURE_LIMIT``, 5): the ordinary lock;
- the username over every address (``LOGIN_USERNAME_FAILURE_LIMIT``, 100): a distributed
  guess at one account. One address can add at most 5 failures to it before its own
  (username, address) lock stops it, so reaching it takes twenty addresses — nobody at one
  address can lock another person out.

There is no count of an address over every username. A lecture hall, a campus NAT or a
mobile carrier puts hundreds of people behind one public address: such a count let
classmates' typos, or one person spraying names, pause every browser there that had no
device cookie (attnquiz.device_trust), for accounts nobody had guessed at. Failures against
account X therefore pause only sign-ins to X: from the failures' address, or everywhere
past the far higher account limit, and in each case only for browsers without X's device
cookie, which keep their own count.

A refused try during a lockout is not recorded, so it neither restarts the cool-off nor
adds to the other count; the lock ends one cool-off after the failure that set it. A
successful sign-in clears its own (username, address) count only, and a password reset
clears every count against the account, under both its names
(``accounts.services.sign_in_failures_clear``).
Everything lives in the database (axes' database handler, no cache), so the lockout holds
while Redis is down.

What was typed is counted under the name it was typed as (``typed_name``): the account's
username when the username was typed, else the text in the form a lookup would give it (an
e-mail address case-folded, invisible characters gone), so case or invisible characters buy
no extra tries. An e-mail address is counted as itself whether or not an account gives it,
and apart from that account's username: five failures as ``a@x.org`` pause ``a@x.org`` there
and never the username, so the pause cannot tell which username an address belongs to, nor
whether it belongs to any. The account's count over every address adds up both its names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Sum
from django.shortcuts import render
from django.utils import timezone

from attnquiz.device_trust import device_failure_record, device_failures, trusted_device
from exams.access import client_address

PAIR, USERNAME = "username and address", "username"


def tier_limits() -> dict[str, int]:
    return {
        PAIR: settings.AXES_FAILURE_LIMIT,
        USERNAME: settings.LOGIN_USERNAME_FAILURE_LIMIT,
    }


def lockout_address(request) -> str | None:
    """The address failures are counted at (``AXES_CLIENT_IP_CALLABLE``): the client's, as the
    exam's network check reads it (``EXAM_TRUSTED_PROXIES`` hops of X-Forwarded-For behind
    the proxy, counted from the right so a client cannot choose it), else REMOTE_ADDR.
    Behind a proxy REMOTE_ADDR is the proxy's, the same for every client: counting there made
    five wrong passwords from anywhere pause the account for everyone."""
    address = client_address(request)
    return str(address) if address is not None else request.META.get("REMOTE_ADDR")


class TieredLockoutHandler(AxesDatabaseHandler):
    """axes' database handler, with a limit per tier instead of one for all."""

    def tier_failures(self, request, credentials=None) -> dict[str, tuple[int, datetime | None]]:
        """Per tier: (failures in the cool-off window, time of the latest one)."""
        name = typed_name(request, credentials)
        address = request.axes_ip_address
        recent = AccessAttempt.objects.filter(attempt_time__gte=get_cool_off_threshold(request))
        tiers = {
            PAIR: recent.filter(username=name.counted_as, ip_address=address),
            USERNAME: recent.filter(username__in=name.account_names),
        }
        counts = {}
        for tier, attempts in tiers.items():
            totals = attempts.aggregate(failures=Sum("failures_since_start"), latest=Max("attempt_time"))
            counts[tier] = (totals["failures"] or 0, totals["latest"])
        return counts

    def locked_tiers(self, request, credentials=None) -> dict[str, datetime]:
        """The tiers at their limit, each with the moment its lock ends."""
        cool_off = get_cool_off(request)
        limits = tier_limits()
        return {
            tier: latest + cool_off
            for tier, (failures, latest) in self.tier_failures(request, credentials).items()
            if failures >= limits[tier] and latest is not None
        }

    def get_failures(self, request, credentials=None) -> int:
        # axes compares this one number with AXES_FAILURE_LIMIT. A browser holding the
        # account's device cookie is judged by the cookie's own count (attnquiz.device_trust);
        # any other: the limit itself when any tier is locked, else the count of the ordinary
        # (username, address) tier.
        device_id = trusted_device(request, username=typed_name(request, credentials).account)
        if device_id is not None:
            return device_failures(device_id) or 0
        if self.locked_tiers(request, credentials):
            return settings.AXES_FAILURE_LIMIT
        return self.tier_failures(request, credentials)[PAIR][0]

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        # A wrong password typed with the account's device cookie counts against the cookie
        # too, before axes asks get_failures whether this failure locks.
        if request is not None and not getattr(request, "axes_locked_out", False):
            device_id = trusted_device(request, username=typed_name(request, credentials).account)
            if device_id is not None:
                device_failure_record(device_id)
        return super().user_login_failed(sender, credentials, request=request, **kwargs)

    def user_logged_in(self, sender, request, user, **kwargs):
        # Signing in with the device cookie leaves the (username, address) count alone:
        # clearing it would give whoever there guesses at this account five more tries.
        if request is not None:
            request.axes_device_trusted = trusted_device(request, username=user.get_username()) is not None
        return super().user_logged_in(sender, request, user, **kwargs)

    def reset_user_attempts(self, request, credentials=None) -> int:
        if getattr(request, "axes_device_trusted", False):
            return 0
        return super().reset_user_attempts(request, credentials)


def lockout_response(request, original_response=None, credentials=None):
    ends = TieredLockoutHandler().locked_tiers(request, credentials)
    now = timezone.now()
    retry_at = max(ends.values()) if ends else now + get_cool_off(request)
    seconds = max(1, math.ceil((retry_at - now).total_seconds()))
    response = render(
        request,
        "registration/locked_out.html",
        {
            "by_account": USERNAME in ends and PAIR not in ends,
            "failure_limit": settings.AXES_FAILURE_LIMIT,
            "minutes": math.ceil(seconds / 60),
            "retry_at": retry_at,
        },
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


@dataclass(frozen=True)
class TypedName:
    counted_as: str  # the name this try's failure is recorded under
    account: str  # the username of the account it names, or ``counted_as`` when none
    account_names: tuple[str, ...]  # every name the account's failures are recorded under


def lockout_username(request, credentials=None) -> str:
    """The name axes records a try under (``AXES_USERNAME_CALLABLE``)."""
    return typed_name(request, credentials).counted_as


def typed_name(request, credentials=None) -> TypedName:
    """Whatever was typed (a username or an e-mail address), the name it is counted under
    and the account it names; read once per request and name."""
    typed = (credentials or {}).get("username") or request.POST.get("username", "")
    # Stored by axes in a 255-character column; NUL cannot be stored by PostgreSQL at all.
    typed = str(typed).replace("\x00", "")[:254]
    known = request.__dict__.setdefault("_lockout_names", {})
    if typed not in known:
        known[typed] = _typed_name(typed)
    return known[typed]


def _typed_name(typed: str) -> TypedName:
    from accounts.identifiers import email_normalise, identifier_normalise
    from accounts.selectors import user_by_identifier

    normal = identifier_normalise(typed)
    user = user_by_identifier(identifier=typed)
    if user is not None and user.get_username() == normal:
        counted_as = user.get_username()
    else:
        counted_as = (email_normalise(typed) if "@" in typed else normal).replace("\x00", "")[:254]
    if user is None:
        return TypedName(counted_as=counted_as, account=counted_as, account_names=(counted_as,))
    names = {counted_as, user.get_username()} | ({email_normalise(user.email)[:254]} if user.email else set())
    return TypedName(counted_as=counted_as, account=user.get_username(), account_names=tuple(sorted(names)))
