"""A variant's exercise body as sanitised HTML, rendered once and stored on the variant.

A version's text never changes once published and a variant's numbers are fixed, so its
prompt, part prompts, hints and worked solutions are the same HTML on every view. They
are rendered (placeholders filled, Markdown converted, sanitised) when the variant is
drawn and kept in ``Variant.rendered``; a page only chooses which hints and solutions
the policies show. A body stored for other content (the version's hash, or the item's
points that label the parts) is rendered again and stored over it, once.

Stored shape::

    {"format": 3, "version": "<content hash>", "points": "<repr of the part points>",
     "prompt": "<html>",
     "figures": [<engine.render_figures' data>, ...],
     "prompt_sections": ["<html>", "<html>"] or null (with figures: the shared prompt, the parts),
     "parts": {"<key>": {"prompt": "<html>", "solution": "<html>",
                         "hints": [[<after tries>, "<html>"], ...]}}}

``figures`` holds data, not HTML: the page draws each with the heatmap table tag (this
module may not import the presentation layer), and the API sends it as it is. A body of
format 1 (before figures) is not current and is rendered again when next read.
"""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe

from . import engine
from .markdown_math import render_markdown_math
from .models import Variant

BODY_FORMAT = 3  # 2: raw HTML escaped once (code spans showed &amp;lt;), shares printed as fractions; 3: images only from static files
EVERY_HINT = 10**9  # tries after which every hint of a part is unlocked


def _points_key(part_points: dict[str, float] | None) -> str:
    return repr(sorted(part_points.items())) if part_points is not None else "none"


def body_render(*, spec: engine.ExerciseSpec, params: dict, content_hash: str,
                part_points: dict[str, float] | None) -> dict:
    """The whole body of a variant as HTML (the shape in the module docstring). Its
    placeholders share one work budget: a text of ten thousand ``{{sum(X @ X)}}`` is a
    VariantError (as any placeholder that cannot be filled in on this variant), not
    minutes of a student's request."""
    try:
        with engine.work_budget(engine.MAX_DRAW_WORK, "filling in this variant's texts"):
            return _body_render(spec=spec, params=params, content_hash=content_hash, part_points=part_points)
    except engine.ExpressionError as error:  # a placeholder fails on this variant only: say so, never a 500
        raise engine.VariantError(f"'{spec.slug}': this variant's text cannot be filled in: {error}", [str(error)]) from None


def _body_render(*, spec: engine.ExerciseSpec, params: dict, content_hash: str,
                 part_points: dict[str, float] | None) -> dict:
    parts = {}
    for part in spec.parts:
        hints = engine.render_hints(spec, params, part.key, tries=EVERY_HINT)  # in the spec's order
        parts[part.key] = {
            "prompt": render_markdown_math(engine.render_part_prompt(spec, params, part.key)),
            "solution": render_markdown_math(engine.render_solution(spec, params, part.key)),
            "hints": [[hint.after_tries, render_markdown_math(text)] for hint, text in zip(part.hints, hints)],
        }
    figures = engine.render_figures(spec, params)
    return {
        "format": BODY_FORMAT,
        "version": content_hash,
        "points": _points_key(part_points),
        "prompt": render_markdown_math(engine.render_prompt(spec, params, part_points=part_points)),
        "figures": figures,
        "prompt_sections": _prompt_sections(spec, params, part_points) if figures else None,
        "parts": parts,
    }


def _prompt_sections(spec, params: dict, part_points) -> list[str]:
    """The shared prompt and the parts' paragraphs as two HTML blocks, for an exercise with
    figures: the page shows them between the two, under the text that introduces them."""
    lead, parts = engine.render_prompt_sections(spec, params, part_points=part_points)
    return [render_markdown_math(lead), render_markdown_math(parts)]


def _is_current(body: dict, *, content_hash: str, part_points, check_points: bool) -> bool:
    return bool(
        body
        and body.get("format") == BODY_FORMAT
        and body.get("version") == content_hash
        and (not check_points or body.get("points") == _points_key(part_points))
    )


def variant_body(*, variant: Variant, spec: engine.ExerciseSpec, part_points=None, check_points: bool = True) -> dict:
    """The variant's stored body, rendering and storing it first when it is missing or
    was stored for other content (one UPDATE, once). ``check_points``: False when the
    caller reads only the parts (their text does not depend on the points)."""
    content_hash = variant.exercise_version.content_hash
    body = variant.rendered
    if _is_current(body, content_hash=content_hash, part_points=part_points, check_points=check_points):
        return body
    body = body_render(spec=spec, params=variant.params, content_hash=content_hash, part_points=part_points)
    variant.rendered = body
    if variant.pk is not None:
        Variant.objects.filter(pk=variant.pk).update(rendered=body)
    return body


def html(text: str) -> SafeString:
    """Stored body HTML for a template: it left the sanitiser before it was stored."""
    return mark_safe(text)  # noqa: S308 - rendered by render_markdown_math, sanitised last


def body_prompt_sections(body: dict) -> list[SafeString] | None:
    """[shared prompt, parts' paragraphs] as HTML when the exercise has figures, else None."""
    sections = body.get("prompt_sections")
    return [html(section) for section in sections] if sections else None


def body_figures(body: dict) -> list[dict]:
    """The figures shown after the prompt (``engine.render_figures``' data)."""
    return body.get("figures", [])


def part_prompt_html(body: dict, part_key: str) -> SafeString:
    return html(body["parts"][part_key]["prompt"])


def part_hints_html(body: dict, part_key: str, *, tries: int) -> list[SafeString]:
    """The hints unlocked after ``tries`` attempts at the part, in order."""
    return [html(text) for after_tries, text in body["parts"][part_key]["hints"] if tries >= after_tries]


def part_solution_html(body: dict, part_key: str) -> SafeString:
    return html(body["parts"][part_key]["solution"])
