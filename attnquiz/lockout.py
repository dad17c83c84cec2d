"""The page django-axes shows when sign-in is paused: it says when to try again."""

from __future__ import annotations

import math

from axes.helpers import get_cool_off, get_failure_limit
from django.shortcuts import render
from django.utils import timezone


def lockout_response(request, original_response=None, credentials=None):
    # Each refused attempt during a lockout restarts the cool-off, so "from now" is exact.
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60)
    response = render(
        request,
        "registration/locked_out.html",
        {
            "failure_limit": get_failure_limit(request, credentials),
            "minutes": minutes,
            "retry_at": timezone.now() + cool_off,
        },
        status=429,
    )
    response["Retry-After"] = str(int(cool_off.total_seconds()))
    return response


def lockout_username(request, credentials=None) -> str:
    """The account's username for whatever was typed (a username or an e-mail address), so
    failures under both names count against one account; unknown names count as typed."""
    from accounts.selectors import user_by_identifier

    typed = (credentials or {}).get("username") or request.POST.get("username", "")
    # Stored by axes in a 255-character column; NUL cannot be stored by PostgreSQL at all.
    typed = str(typed).replace("\x00", "")[:254]
    user = user_by_identifier(identifier=typed)
    return user.get_username() if user is not None else typed
