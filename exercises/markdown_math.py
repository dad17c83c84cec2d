"""Markdown with LaTeX for prompts, hints and solutions, rendered to safe HTML.

Math segments (``$$…$$``, ``$…$``) are set aside before Markdown runs, so that
underscores and backslashes inside them are not read as emphasis or escapes, and put
back afterwards (HTML-escaped) for KaTeX to typeset in the browser. Raw HTML in the
source is escaped as text, never passed through, and the finished HTML — maths included — goes
through ``sanitise_html`` last, so no link, attribute or element outside its allow-list
(a ``javascript:`` link, a maths segment placed inside a link destination) survives.
"""

from __future__ import annotations

import functools
import html
import re
import threading

import markdown

from exercises.html_sanitiser import sanitise_html

MATH_SEGMENT = re.compile(r"\$\$.+?\$\$|\$(?!\s)[^$\n]+?\$", re.DOTALL)
PLACEHOLDER = "\x00MATH{}\x00"
# Python-Markdown looks for the end of a link at every "[" it meets, so a text of many
# unclosed brackets costs the square of its length ("[a " 100,000 times: hours of one
# request). Past this many "[" outside maths a text has no links: every bracket is shown
# as a bracket. (No prompt needs more; a bracket inside maths does not count.)
MAX_LINK_BRACKETS = 100
BRACKET_STANDIN = "\x01"  # YAML refuses this character, so no source holds it
RENDERED_TEXTS_KEPT = 2048
LONGEST_TEXT_KEPT = 8000  # characters: at most ~16 MB of kept HTML per process

_converters = threading.local()


def _converter() -> markdown.Markdown:
    """This thread's Markdown converter, built once (building one costs more than using
    it; one instance must not serve two threads at once)."""
    converter = getattr(_converters, "markdown", None)
    if converter is None:
        converter = markdown.Markdown(
            extensions=["tables"],
            extension_configs={"tables": {"use_align_attribute": True}},  # never style=
        )
        _escape_raw_html(converter)
        _converters.markdown = converter
    return converter


def _escape_raw_html(converter: markdown.Markdown) -> None:
    """Raw HTML in a source becomes text: without its block and inline readers Markdown
    escapes ``<b>`` like any other character. (Escaping the whole source before Markdown
    ran escaped code spans twice: `x < 3` showed as ``x &lt; 3``.)"""
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")


def render_markdown_math(text: str) -> str:
    """``text`` as sanitised HTML. The same text always gives the same HTML, so a recent
    short one is answered from memory (a long one, an author's whole draft, is not kept)."""
    text = text or ""
    if len(text) <= LONGEST_TEXT_KEPT:
        return _render_kept(text)
    return _render(text)


@functools.lru_cache(maxsize=RENDERED_TEXTS_KEPT)
def _render_kept(text: str) -> str:
    return _render(text)


def _render(text: str) -> str:
    return sanitise_html(markdown_with_math(_converter().reset(), text))


def markdown_with_math(converter: markdown.Markdown, text: str) -> str:
    """``text`` through ``converter`` with its maths set aside and put back HTML-escaped for
    KaTeX: unsanitised HTML, for the caller to sanitise."""
    segments: list[str] = []

    def set_aside(match: re.Match) -> str:
        segments.append(match.group(0))
        return PLACEHOLDER.format(len(segments) - 1)

    outside_maths = MATH_SEGMENT.sub(set_aside, text)
    many_brackets = outside_maths.count("[") > MAX_LINK_BRACKETS
    if many_brackets:
        outside_maths = outside_maths.replace(BRACKET_STANDIN, "").replace("[", BRACKET_STANDIN)
    body = converter.convert(outside_maths)
    if many_brackets:
        body = body.replace(BRACKET_STANDIN, "[")
    for index, segment in enumerate(segments):
        body = body.replace(PLACEHOLDER.format(index), html.escape(segment, quote=False))
    return body
