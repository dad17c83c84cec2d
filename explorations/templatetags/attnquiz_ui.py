"""Presentation filters for the student pages (exercise, result fragment).

They only reshape values for display; nothing here grades or decides anything.
"""

from __future__ import annotations

import json
import string
from functools import lru_cache

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse

from exercises import engine
from exercises.specs import variant_part_options
from grading.core.score_rounding import percent_text

register = template.Library()


@register.simple_tag
def fixed_url(name: str) -> str:
    """``{% url name %}`` for a URL without arguments, reversed once per process (and
    script prefix): every page's header and the exercise page's links name the same few,
    and reversing was a tenth of the exercise page's samples under load."""
    return _reversed(name, get_script_prefix())


@lru_cache(maxsize=128)
def _reversed(name: str, script_prefix: str) -> str:
    return reverse(name)


@register.simple_tag
def fixed_static(path: str) -> str:
    """``{% static path %}``, resolved once per process and static URL: every page's head
    names the same seven files, and resolving them was a twentieth of the exercise page's
    CPU (0.17 ms a page with production's manifest storage, 0.03 ms now)."""
    return _static_url(path, settings.STATIC_URL)


@lru_cache(maxsize=256)
def _static_url(path: str, static_url: str) -> str:
    return static(path)


@receiver(setting_changed)
def _forget_static_urls(*, setting: str, **kwargs) -> None:
    """A test that swaps the storage (or its manifest) gets the URLs the new one gives."""
    if setting in ("STORAGES", "STATIC_ROOT", "STATICFILES_DIRS"):
        _static_url.cache_clear()


# Only what the parser needs to *read* an answer. Everything else in a part's options
# (tolerances, diagnosis inputs, form checks) stays on the server.
PREVIEW_OPTION_KEYS = (
    "symbols",
    "allow_any_symbols",
    "forbid_symbols",
    "random_variables",
    "start",
    "matrices",
    "scalars",
)


@register.filter
def preview_options(variant, part_key) -> str:
    """JSON of the parse options of one part of a variant, for data-preview-options (the
    options its grade uses, kept per process)."""
    try:
        options = variant_part_options(variant, part_key)
    except engine.ExpressionError:  # a stored variant whose options do not fill in: its answers are refused
        return "{}"
    readable = {key: options[key] for key in PREVIEW_OPTION_KEYS if key in options}
    return json.dumps(readable, separators=(",", ":"), sort_keys=True)


@register.filter
def to_json(value) -> str:
    """Compact JSON for a data-* attribute (autoescaping keeps the attribute intact)."""
    return json.dumps(value, separators=(",", ":"))


@register.filter
def part_letter(index) -> str:
    """0 -> "a", 1 -> "b", ...: parts are lettered as in the prompts."""
    try:
        return string.ascii_lowercase[int(index)]
    except (IndexError, TypeError, ValueError):
        return str(index)


@register.filter
def attempts_left_after(submission) -> int | None:
    """Attempts the student still has on this part after ``submission``; None if unlimited."""
    from exercises.selectors import variant_attempts_allowed
    from grading.selectors import part_progress

    allowed = variant_attempts_allowed(variant=submission.variant)
    if not allowed:
        return None
    used = getattr(submission, "part_attempts_used", None)  # set when progress was read
    if used is None:
        used = part_progress(variant=submission.variant, part=submission.part)["attempts_used"]
    return max(0, allowed - used)


@register.filter
def clock_text(seconds) -> str:
    """Seconds left as a clock: 59 -> "0:59", 3725 -> "1:02:05"."""
    try:
        total = max(0, int(seconds))
    except (TypeError, ValueError):
        return ""
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@register.filter
def as_sentence(text) -> str:
    """A checker's message as a sentence: "the first row's first entry is empty" -> "The first
    row's first entry is empty." (messages are written to be joined into others, lower case
    and without a full stop)."""
    text = str(text or "").strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


@register.filter
def score_percent(value) -> str:
    """A part's score (0..1) as a percent: 1 -> "100%", 0.9 -> "90%", 0.125 -> "12.5%",
    rounded by the one rule for scores (``grading.core.score_rounding``: 0.0125 -> "1.3%").

    Students see points beside each part; a bare fraction such as "score 0.90" next to
    "(0.5 points)" read as points."""
    try:
        return percent_text(value)
    except (TypeError, ValueError):
        return ""


@register.filter
def points(value) -> str:
    """1 -> "1 point", 0.5 -> "0.5 points" (the gradebook's points, rounded to 2 places)."""
    try:
        return engine.points_text(float(value))
    except (TypeError, ValueError):
        return ""
