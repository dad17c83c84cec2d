"""Reads for the API: finding a token by its secret, and the shapes the student endpoints
return, assembled from the same selectors the pages use."""

from __future__ import annotations

import hmac

from django.http import Http404
from django.utils import timezone

from courses.models import AssignmentItem
from exams.selectors import EVERYTHING
from exercises.models import Variant
from exercises.selectors import exercise_page_context
from exercises.specs import version_spec

from .models import ApiToken
from .services import PREFIX_LENGTH, TOKEN_PREFIX, token_digest

UNKNOWN_TOKEN = "Unknown API token."


def api_token_find(*, secret: str) -> tuple[ApiToken | None, str]:
    """The live token with this secret, or (None, why not). Compares in constant time."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None, UNKNOWN_TOKEN
    digest = token_digest(secret)
    token = next(
        (
            candidate
            for candidate in ApiToken.objects.select_related("user").filter(prefix=secret[:PREFIX_LENGTH])
            if hmac.compare_digest(candidate.key_hash, digest)
        ),
        None,
    )
    if token is None or not token.user.is_active:
        return None, UNKNOWN_TOKEN
    if token.revoked_at is not None:
        return None, "This API token was revoked."
    if token.expires_at <= timezone.now():
        return None, "This API token has expired; create a new one."
    return token, ""


def api_tokens_for_user(*, user):
    return ApiToken.objects.filter(user=user)


def access_api_token(*, user, token_id: int) -> ApiToken:
    token = ApiToken.objects.filter(pk=token_id, user=user).first()
    if token is None:
        raise Http404("No such token.")
    return token


def variant_inputs(*, variant: Variant) -> dict:
    """The student's own randomised inputs (matrices, sizes): every drawn parameter except
    derived ones, which may be intermediate results of the answer."""
    spec = version_spec(variant.exercise_version)
    return {
        parameter.name: variant.params[parameter.name]
        for parameter in spec.parameters
        if parameter.generator != "derived" and parameter.name in variant.params
    }


def exercise_for_student(*, item: AssignmentItem, variant: Variant, visibility=EVERYTHING, window=None) -> dict:
    """What the exercise page shows, as data: prompts, parts with progress, and inputs
    (masked by the review policy's ``visibility``). With the student's ``window``: whether
    the assignment takes their answers now (``takes_answers``, else ``refusal``: why), and
    once it does not (an ended exam attempt, a closed assignment, time up) no part has
    attempts left and every part is finished, as the page shows no form."""
    context = exercise_page_context(variant=variant, visibility=visibility)
    refusal = window.refusal if window is not None else None
    if refusal is not None:
        for part in context["parts"]:
            part["attempts_left"], part["finished"] = None, True
    return {
        **context,
        "item": item,
        "inputs": variant_inputs(variant=variant),
        "takes_answers": refusal is None,
        "refusal": refusal[1] if refusal is not None else None,
    }
