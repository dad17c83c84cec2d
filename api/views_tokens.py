"""The page where a signed-in user creates, reads and revokes their personal API tokens.

A new token's secret is shown once, in the response to the request that created it; it is
never stored, so it cannot be shown again.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from . import selectors, services
from .models import TokenScope


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request):
    created, secret, problem = None, None, None
    if request.method == "POST":
        try:
            lifetime = int(request.POST.get("lifetime_days", ""))
        except ValueError:
            lifetime = 0
        try:
            created, secret = services.api_token_create(
                user=request.user, name=request.POST.get("name", ""),
                scope=request.POST.get("scope", ""), lifetime_days=lifetime,
            )
        except services.TokenRefused as refused:
            problem = refused.message
    return render(
        request,
        "api/tokens.html",
        {
            "tokens": selectors.api_tokens_for_user(user=request.user),
            "created": created,
            "secret": secret,
            "problem": problem,
            "scopes": TokenScope.choices,
            "lifetimes": services.ALLOWED_LIFETIMES_DAYS,
        },
        status=201 if created else (422 if problem else 200),
    )


@login_required
@require_POST
def token_revoke(request, token_id: int):
    token = selectors.access_api_token(user=request.user, token_id=token_id)
    services.api_token_revoke(token=token)
    messages.success(request, f"Revoked the token “{token.name}”. Programs using it are refused from now on.")
    return redirect("api:tokens")
