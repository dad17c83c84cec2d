"""What the author is told, when previewing a variant, of every image its page will not show.

An image may load only from the site's static files (``exercises.html_sanitiser``); any other
becomes its alt text. Each text of the exercise is filled for the variant and rendered by the
page's own Markdown (``exercises.markdown_math.images_dropped``), so the warnings name exactly
the images the sanitiser drops: an image inside code or maths is not an image, a reference image
is one, and a hostile text costs what it costs the page.
"""

from __future__ import annotations

import re

from exercises.engine import ExerciseSpec, ExpressionError
from exercises.engine.errors import SpecIssue
from exercises.engine.reference import fill_markdown
from exercises.engine.rendering import text_fields
from exercises.engine.source import render_path
from exercises.html_sanitiser import IMAGE_SOURCE_PREFIX, DroppedImage
from exercises.markdown_math import images_dropped

MAX_SHOWN = 80  # characters of an image's alt text or source in a warning


def image_warnings(spec: ExerciseSpec, params: dict) -> list[SpecIssue]:
    """A warning for every image of the variant's texts that the page drops, naming the image,
    its field and line, and why, and what students see in its place. A text that does not
    fill in for ``params`` is skipped: that is reported on its own (``text_problems``)."""
    warnings = []
    for path, text, _subject in text_fields(spec):
        try:
            filled = fill_markdown(text, params)
        except ExpressionError:
            continue
        images = images_dropped(filled)
        for image, line in zip(images, _lines(spec, path, text, filled, images)):
            warnings.append(SpecIssue(line, render_path(path), _warning(image)))
    return sorted(warnings, key=lambda warning: (warning.line is None, warning.line or 0))


def _lines(spec: ExerciseSpec, path, text: str, filled: str, images: list[DroppedImage]) -> list[int | None]:
    """The source line of each dropped image. Every ``![`` of the filled text is marked with
    its position and the text rendered again: a dropped image's mark is the text just before
    it. Exact when the marked text drops the same images and filling in kept the text's lines
    (a placeholder may fill to several); else each is placed on the field's first line."""
    first_line = spec.line_of(path)
    if not spec.source_map.lines:
        return [None] * len(images)
    marked = images_dropped(_MARK_BEFORE_IMAGE.sub(_mark, filled))
    positions = [_marked_position(image.text_before) for image in marked]
    same = [_MARKS.sub("", image.alt) for image in marked] == [image.alt for image in images]
    if not same or None in positions or filled.count("\n") != text.count("\n"):
        return [first_line] * len(images)
    return [spec.source_map.line_within(path, filled, position) for position in positions]


# Before each "![", and before the backslashes just before it (so an escaped "!" stays
# escaped): a mark Markdown reads as text, naming the position of the "![".
_MARK_BEFORE_IMAGE = re.compile(r"\\*!\[")
_MARKS = re.compile("\ue000([0-9]+)\ue001")


def _mark(match: re.Match) -> str:
    return f"\ue000{match.end() - 2}\ue001{match.group(0)}"


def _marked_position(text_before: str) -> int | None:
    marks = _MARKS.findall(text_before)
    return int(marks[-1]) if marks and text_before.endswith("\ue001") else None


def _warning(image: DroppedImage) -> str:
    alt = " ".join(image.alt.split())
    shown = f"its alt text “{_shortened(alt)}” in its place" if alt else "nothing in its place, as it has no alt text"
    return (f"the image ![{_shortened(alt)}]({_shortened(image.source)}) will not be shown: its source "
            f"{_why_dropped(image.source)}, and only plain {IMAGE_SOURCE_PREFIX}… paths (the site's static files) "
            f"are kept. Students see {shown}.")


def _why_dropped(source: str) -> str:
    if not source:
        return "is empty"
    if source.lower().startswith("data:"):
        return "is a data: URL"
    if source.startswith("//") or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", source):
        return "is on another site"
    if not source.startswith(IMAGE_SOURCE_PREFIX):
        return f"is not under {IMAGE_SOURCE_PREFIX}"
    return 'is not a plain path (it has a query, "#", "%", space, backslash, "//", "." or ".." segment)'


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 1] + "…"
