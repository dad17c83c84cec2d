"""Markdown with LaTeX for prompts, hints and solutions, rendered to safe HTML.

Math segments (``$$…$$``, ``$…$``) are set aside before Markdown runs, so that
underscores and backslashes inside them are not read as emphasis or escapes, and put
back afterwards (HTML-escaped) for KaTeX to typeset in the browser. Raw HTML in the
source is escaped, never passed through, and the finished HTML — maths included — goes
through ``sanitise_html`` last, so no link, attribute or element outside its allow-list
(a ``javascript:`` link, a maths segment placed inside a link destination) survives.
"""

from __future__ import annotations

import html
import re

import markdown

from exercises.html_sanitiser import sanitise_html

MATH_SEGMENT = re.compile(r"\$\$.+?\$\$|\$(?!\s)[^$\n]+?\$", re.DOTALL)
PLACEHOLDER = "\x00MATH{}\x00"


def render_markdown_math(text: str) -> str:
    segments: list[str] = []

    def set_aside(match: re.Match) -> str:
        segments.append(match.group(0))
        return PLACEHOLDER.format(len(segments) - 1)

    protected = MATH_SEGMENT.sub(set_aside, text or "")
    body = markdown.markdown(
        html.escape(protected, quote=False),
        extensions=["tables"],
        extension_configs={"tables": {"use_align_attribute": True}},  # never style=
    )
    for index, segment in enumerate(segments):
        body = body.replace(PLACEHOLDER.format(index), html.escape(segment, quote=False))
    return sanitise_html(body)
