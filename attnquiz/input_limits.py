"""Limits every untrusted request body and text passes before anything reads or stores it.

- ``json_loads_bounded``: JSON, refused (``UnreadableJson``, a ``ValueError``) when nested
  deeper than ``MAX_JSON_DEPTH`` — checked by an iterative scan of the raw text *before*
  the recursive decoder runs — or when it holds a number that is not finite or a string
  that cannot be stored. The API's parser and every view reading a JSON body use it.
- ``validate_storable_text``: the one validator for text that is stored: PostgreSQL cannot
  store NUL, and a lone UTF-16 surrogate cannot be encoded at all. It backs the request
  check below, the JSON loader, and the guard every model save passes
  (``refuse_unstorable_text_on_save``), whichever path wrote the value: a form, the API, an
  import file, LTI claims, a task. (Django's form fields and DRF's serializer fields refuse
  NUL themselves, with a message beside the field; the save guard covers everything else.)
- ``StorableTextMiddleware``: ``UnstorableText`` raised from a save in any page's view is
  a 400 page instead of a 500 (the API answers a 422 problem document).
"""

from __future__ import annotations

import json
import math
import re

from django.core.exceptions import ValidationError

MAX_JSON_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_STRUCTURE = re.compile(rb'["\\\[\]{}]')


class UnreadableJson(ValueError):
    """The body is not JSON this service will read; the message says why."""


class UnstorableText(ValidationError):
    """A text (or a text inside JSON) that holds NUL or a lone surrogate."""

    def __init__(self, *, reason: str, field: str = ""):
        self.field, self.reason = field, reason
        message = f"This text {reason}; remove it and send it again."
        super().__init__({field: [message]} if field else message, code="unstorable_text")


def unstorable_reason(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    if _SURROGATE.search(text):
        return "contains a lone UTF-16 surrogate, which is not a character"
    return None


def validate_storable_text(value) -> None:
    """Django/DRF validator: refuse NUL and lone surrogates, in a text or anywhere in JSON."""
    for text in _texts_in(value):
        reason = unstorable_reason(text)
        if reason:
            raise UnstorableText(reason=reason)


def _texts_in(value):
    """Every string in a value, JSON keys included, without recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)


def json_depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when brackets outside strings nest deeper than ``limit``. One pass, no recursion."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth, in_string, skip_to = 0, False, -1
    for match in _JSON_STRUCTURE.finditer(raw):
        position = match.start()
        if position < skip_to:
            continue  # the character after a backslash
        char = raw[position]
        if in_string:
            if char == 0x5C:  # backslash
                skip_to = position + 2
            elif char == 0x22:
                in_string = False
        elif char == 0x22:
            in_string = True
        elif char in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif char in (0x5D, 0x7D):
            depth -= 1
    return False


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnreadableJson(f"The number {text[:40]} is too large.")
    return value


def _no_constant(name: str):
    raise UnreadableJson(f"{name} is not a JSON number.")


def json_loads_bounded(raw: bytes | str):
    """Parse a JSON request body, or raise ``UnreadableJson`` with a reason for the client."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if json_depth_exceeds(data):
        raise UnreadableJson(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
    try:
        value = json.loads(data.decode("utf-8"), parse_float=_finite_float, parse_constant=_no_constant)
    except UnreadableJson:
        raise
    except (ValueError, RecursionError, MemoryError) as error:
        raise UnreadableJson(f"The body is not valid JSON: {str(error)[:200]}") from None
    try:
        validate_storable_text(value)
    except UnstorableText as error:
        raise UnreadableJson(error.messages[0]) from None
    return value


# --- Models: every save of a text or JSON field passes the validator ---

def _checked_fields(model) -> list[str]:
    from django.db import models

    fields = model.__dict__.get("_storable_text_fields")
    if fields is None:
        fields = [
            field.attname
            for field in model._meta.concrete_fields
            if isinstance(field, models.CharField | models.TextField | models.JSONField)
        ]
        model._storable_text_fields = fields
    return fields


def refuse_unstorable_text_on_save(sender, instance, raw=False, **kwargs) -> None:
    """pre_save: no model stores NUL or a lone surrogate, whichever path wrote it
    (a form, the API, an import file, LTI claims, a task)."""
    if raw:
        return
    for attname in _checked_fields(sender):
        value = getattr(instance, attname, None)
        if value is None or isinstance(value, int | float | bool):
            continue
        try:
            validate_storable_text(value)
        except UnstorableText as error:
            raise UnstorableText(reason=error.reason, field=attname) from None


def connect_model_guard() -> None:
    from django.db.models.signals import pre_save

    pre_save.connect(refuse_unstorable_text_on_save, dispatch_uid="attnquiz.input_limits.storable_text")


# --- Requests: a refused save is a 400 with a message, not a 500 ---
# (Under /api/, api.middleware answers it first, as a problem document.)


def unstorable_text_response(request, *, field: str, reason: str):
    from django.http import HttpResponse
    from django.template.loader import render_to_string

    message = f"The field “{field}” {reason}. Nothing was saved; remove it and send it again."
    return HttpResponse(
        render_to_string("400.html", {"status": 400, "title": "That request could not be stored", "message": message}),
        status=400,
    )


class StorableTextMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, UnstorableText):
            return unstorable_text_response(request, field=exception.field or "text", reason=exception.reason)
        return None
