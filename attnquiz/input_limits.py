"""Limits every untrusted request body and text passes before anything reads or stores it.

- ``json_loads_bounded``: JSON, refused (``UnreadableJson``, a ``ValueError``) when nested
  deeper than ``MAX_JSON_DEPTH`` — checked by an iterative scan of the raw text *before*
  the recursive decoder runs — or when it holds a number that is not finite or a string
  that cannot be stored. The API's parser and every view reading a JSON body use it.
- ``validate_storable_text``: the one validator for text that is stored: PostgreSQL cannot
  store NUL, and a lone UTF-16 surrogate cannot be encoded at all. It backs the request
  check below, the JSON loader, and the guard every model save passes
  (``refuse_unstorable_values_on_save``), whichever path wrote the value: a form, the API, an
  import file, LTI claims, a task. (Django's form fields and DRF's serializer fields refuse
  NUL themselves, with a message beside the field; the save guard covers everything else.)
- ``validate_storable_date``: the one validator for a stored date: between 1 January 1900
  and 31 December 2999 in UTC. PostgreSQL keeps a later one, but Python cannot read a
  timestamp past year 9999 back (9999-12-31 23:59 in a UTC−12 course is 10000-01-01 in
  UTC): one such deadline made every page that lists its assignment fail for everyone
  enrolled, and a deadline near the end of the range overflows once an extension is added.
  The date form fields use it; the model guard checks every date and time field too.
- ``StorableTextMiddleware``: a request whose address or query holds a NUL (no page reads
  one; PostgreSQL refuses it in a query) is answered 400 before any view runs,
  and ``UnstorableValue`` raised from a save in any page's view is a 400 page instead of a
  500 (the API answers problem documents: 400 and 422).
- ``RequestSizeMiddleware``: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (a multipart
  form's fields, its files apart) is answered 413 with ``request_too_large_message``, the
  same for pages, htmx and the API (a problem document), under DEBUG=1 and DEBUG=0, and
  logged as one line: before it, Django's ``RequestDataTooBig`` surfaced from the CSRF
  check as a 400 with a traceback (DEBUG=1) and the API's as "The request was malformed."
"""

from __future__ import annotations

import datetime
import json
import math
import re

from django.core.exceptions import ValidationError

MAX_JSON_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_STRUCTURE = re.compile(rb'["\\\[\]{}]')


class UnreadableJson(ValueError):
    """The body is not JSON this service will read; the message says why."""


class UnstorableValue(ValidationError):
    """A value no model may store; ``reason`` says why, ``field`` names it when known."""

    noun = "value"
    code_name = "unstorable_value"
    remedy = "change it and send it again"

    def __init__(self, *, reason: str, field: str = ""):
        self.field, self.reason = field, reason
        message = f"This {self.noun} {reason}; {self.remedy}."
        super().__init__({field: [message]} if field else message, code=self.code_name)


class UnstorableText(UnstorableValue):
    """A text (or a text inside JSON) that holds NUL or a lone surrogate."""

    noun = "text"
    code_name = "unstorable_text"
    remedy = "remove it and send it again"


class UnstorableDate(UnstorableValue):
    """A date or time outside STORED_YEARS (in UTC)."""

    noun = "date"
    code_name = "unstorable_date"
    remedy = "give a date between 1 January 1900 and 31 December 2999"


STORED_YEARS = (1900, 2999)


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


def unstorable_date_reason(value) -> str | None:
    """Why a date or datetime cannot be stored (outside STORED_YEARS once in UTC), or None."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        try:
            value = value.astimezone(datetime.timezone.utc)
        except OverflowError:
            return "is outside the years this site can store"
    if isinstance(value, datetime.date) and not STORED_YEARS[0] <= value.year <= STORED_YEARS[1]:
        return "is outside the years this site can store"
    return None


def validate_storable_date(value) -> None:
    """Django form validator: a date the site can store and read back (see STORED_YEARS)."""
    if value is not None and unstorable_date_reason(value):
        raise ValidationError(
            "Give a date between 1 January 1900 and 31 December 2999.", code=UnstorableDate.code_name
        )


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


MAX_JSON_INTEGER_DIGITS = 300  # as a float's ±1e300: no count, id or points is longer


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_JSON_INTEGER_DIGITS:
        raise UnreadableJson(f"A number in the JSON has more than {MAX_JSON_INTEGER_DIGITS} digits.")
    return int(text)


def _object_without_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    """An object whose keys are all different: {"answer": "a", "answer": "b"} is refused,
    not read as its last value (which a client that sent it did not mean)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise UnreadableJson(f"The JSON gives the key {repeated[:40]!r} more than once in one object.")
    return value


def json_loads_bounded(raw: bytes | str):
    """Parse a JSON request body, or raise ``UnreadableJson`` with a reason for the client."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if json_depth_exceeds(data):
        raise UnreadableJson(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
    try:
        value = json.loads(
            data.decode("utf-8"), parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant,
            object_pairs_hook=_object_without_repeated_keys,
        )
    except UnreadableJson:
        raise
    except (ValueError, RecursionError, MemoryError) as error:
        raise UnreadableJson(f"The body is not valid JSON: {str(error)[:200]}") from None
    try:
        validate_storable_text(value)
    except UnstorableText as error:
        raise UnreadableJson(error.messages[0]) from None
    return value


# --- Models: every save of a text, JSON or date field passes the validators ---

def _checked_fields(model) -> tuple[list[str], list[str]]:
    """The model's (text and JSON fields, date and datetime fields), by attribute name."""
    from django.db import models

    fields = model.__dict__.get("_storable_fields")
    if fields is None:
        concrete = model._meta.concrete_fields
        fields = (
            [field.attname for field in concrete
             if isinstance(field, models.CharField | models.TextField | models.JSONField)],
            [field.attname for field in concrete if isinstance(field, models.DateField)],  # DateTimeField too
        )
        model._storable_fields = fields
    return fields


def refuse_unstorable_values_on_save(sender, instance, raw=False, **kwargs) -> None:
    """pre_save: no model stores NUL, a lone surrogate or a date it cannot read back,
    whichever path wrote it (a form, the API, an import file, LTI claims, a task)."""
    if raw:
        return
    text_fields, date_fields = _checked_fields(sender)
    for attname in text_fields:
        value = getattr(instance, attname, None)
        if value is None or isinstance(value, int | float | bool):
            continue
        try:
            validate_storable_text(value)
        except UnstorableText as error:
            raise UnstorableText(reason=error.reason, field=attname) from None
    for attname in date_fields:
        reason = unstorable_date_reason(getattr(instance, attname, None))
        if reason:
            raise UnstorableDate(reason=reason, field=attname)


def connect_model_guard() -> None:
    from django.db.models.signals import pre_save

    pre_save.connect(refuse_unstorable_values_on_save, dispatch_uid="attnquiz.input_limits.storable_text")


# --- Requests: a refused save is a 400 with a message, not a 500 ---
# (Under /api/, api.middleware answers it first, as a problem document.)


def unstorable_text_response(request, *, field: str, reason: str, remedy: str = "remove it and send it again"):
    message = f"The field “{field}” {reason}. Nothing was saved; {remedy}."
    return _bad_request_page("That request could not be stored", message)


def _bad_request_page(title: str, message: str):
    from django.http import HttpResponse
    from django.template.loader import render_to_string

    return HttpResponse(render_to_string("400.html", {"status": 400, "title": title, "message": message}), status=400)


def unreadable_request_reason(request) -> str | None:
    """Why no view should read this request: its address or a query parameter (name or
    value) holds NUL or a lone surrogate; None for a readable one. Bodies are their forms'
    and parsers' to check: they say which field, beside it."""
    if unstorable_reason(request.path):
        return "Its address holds a character no page accepts (NUL or a lone surrogate)."
    for name, values in request.GET.lists():
        if any(unstorable_reason(text) for text in (name, *values)):
            return f"The field “{name[:40]}” holds a character no page accepts (NUL or a lone surrogate)."
    return None


class StorableTextMiddleware:
    """See the module's docstring: unreadable requests and unstorable saves are 4xx."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        reason = unreadable_request_reason(request)
        if reason:
            message = f"{reason} Nothing was done; remove it and send it again."
            if request.path.startswith("/api/"):
                from attnquiz.problems import json_problem

                return json_problem(status_code=400, code="unreadable_request", detail=message)
            return _bad_request_page("That request could not be read", message)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, UnstorableValue):
            return unstorable_text_response(request, field=exception.field or exception.noun,
                                            reason=exception.reason, remedy=exception.remedy)
        return None


# --- Requests: a body over the size limit is a 413 that says so ---


def request_too_large_message() -> str:
    """The 413's message (README: DATA_UPLOAD_MAX_MEMORY_SIZE), for pages and the API."""
    from django.conf import settings

    limit_kb = settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1000
    return (
        f"attnquiz accepts at most {limit_kb:,} kB in one form or request (files are uploaded "
        "separately). Nothing was saved; shorten it and send it again."
    )


REQUEST_TOO_LARGE_TITLE = "That request is too large"


def request_too_large_response(request):
    """413: a problem document under /api/; ``{"error": …}`` to a page's JSON request (the
    live answer preview); else the error page (which htmx's handler reads by its status:
    "Your answer is too large to send")."""
    if request.path.startswith("/api/"):
        from attnquiz.problems import json_problem

        return json_problem(status_code=413, code="too_large", detail=request_too_large_message())
    from django.http import HttpResponse, JsonResponse
    from django.template.loader import render_to_string

    wants_json = request.headers.get("Accept", "").startswith("application/json")
    if request.content_type == "application/json" or wants_json:
        message = f"{REQUEST_TOO_LARGE_TITLE}. {request_too_large_message()}"
        return JsonResponse({"error": message}, status=413)

    context = {"status": 413, "title": REQUEST_TOO_LARGE_TITLE, "message": request_too_large_message()}
    return HttpResponse(render_to_string("400.html", context), status=413)


def body_over_limit(request) -> bool:
    """Whether the declared body is larger than Django would read (``request.body`` refuses
    it). A multipart form is not judged by its length: its files do not count, and Django
    counts its fields while parsing it (see ``RequestSizeMiddleware.process_view``)."""
    from django.conf import settings

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is None or request.content_type == "multipart/form-data":
        return False
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) > limit
    except ValueError:
        return False


class RequestSizeMiddleware:
    """See the module's docstring. Placed before the CSRF check, which reads a form's body
    first: a ``RequestDataTooBig`` raised there reaches no middleware's ``process_exception``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if body_over_limit(request):
            return request_too_large_response(request)  # nothing of the body was read
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method == "POST" and request.content_type == "multipart/form-data":
            from django.core.exceptions import RequestDataTooBig

            try:
                request.POST  # parsed now rather than by the CSRF check; read once either way
            except RequestDataTooBig:
                return request_too_large_response(request)
        return None

    def process_exception(self, request, exception):
        from django.core.exceptions import RequestDataTooBig

        if isinstance(exception, RequestDataTooBig):  # read by a view (PUT, PATCH, the API's parser)
            return request_too_large_response(request)
        return None
