"""The exercise-format reference (``docs/exercise-format.md``) as a page for authors.

The file ships with the code, so it is rendered once per process (again only if the file
changes) rather than on every request. It goes through the same Markdown library and the
one sanitiser as prompts, with fenced code blocks turned on: the prompt pipeline escapes
its source before Markdown (raw HTML shown as text), which would print ``<course>`` in a
code span as ``&lt;course&gt;``; here raw HTML is left to the sanitiser instead.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import markdown
from django.conf import settings
from django.utils.html import strip_tags
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify

from exercises.html_sanitiser import sanitise_html
from exercises.markdown_math import markdown_with_math

FORMAT_REFERENCE_PATH = Path("docs") / "exercise-format.md"
# The sanitiser strips every id, so headings get theirs back afterwards. The pattern only
# meets the sanitiser's own output, where a heading never has attributes.
SANITISED_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.DOTALL)


@dataclass(frozen=True)
class Heading:
    anchor: str
    text: str
    subheadings: list[Heading] = field(default_factory=list)


@dataclass(frozen=True)
class FormatReference:
    html: SafeString  # sanitised, then headings anchored
    contents: tuple[Heading, ...]  # the h2 headings in order, each with its h3s


def format_reference_path() -> Path:
    return Path(settings.BASE_DIR) / FORMAT_REFERENCE_PATH


def format_reference() -> FormatReference | None:
    """The rendered reference, or None when the file is not where the app runs."""
    path = format_reference_path()
    try:
        return _format_reference_rendered(str(path), path.stat().st_mtime_ns)
    except (FileNotFoundError, NotADirectoryError):
        return None


@functools.lru_cache(maxsize=4)
def _format_reference_rendered(path: str, mtime_ns: int) -> FormatReference:
    # mtime_ns is only part of the cache key: an edited file is rendered again.
    text = Path(path).read_text(encoding="utf-8")
    return _anchor_headings(sanitise_html(_markdown_to_html(text)))


def _markdown_to_html(text: str) -> str:
    """Markdown to (unsanitised) HTML, maths set aside for KaTeX as in prompts; unlike a
    prompt, the reference has fenced code blocks."""
    converter = markdown.Markdown(
        extensions=["fenced_code", "tables"],
        extension_configs={"tables": {"use_align_attribute": True}},  # never style=
    )
    return markdown_with_math(converter, text)


def _anchor_headings(sanitised: str) -> FormatReference:
    contents: list[Heading] = []
    used: set[str] = set()

    def anchor(match: re.Match) -> str:
        level, inner = int(match.group(1)), match.group(2)
        text = html.unescape(strip_tags(inner)).strip()
        slug = _unique_slug(slugify(text) or "section", used)
        if level == 2 or (level == 3 and not contents):
            contents.append(Heading(anchor=slug, text=text))
        elif level == 3:
            contents[-1].subheadings.append(Heading(anchor=slug, text=text))
        # slugify leaves only letters, digits, "-" and "_": safe inside the attribute.
        return f'<h{level} id="{slug}">{inner}</h{level}>'

    anchored = SANITISED_HEADING.sub(anchor, sanitised)
    # `sanitised` left the sanitiser; the only change since is the slug ids.
    return FormatReference(html=mark_safe(anchored), contents=tuple(contents))  # noqa: S308


def _unique_slug(slug: str, used: set[str]) -> str:
    candidate, number = slug, 1
    while candidate in used:
        number += 1
        candidate = f"{slug}-{number}"
    used.add(candidate)
    return candidate
