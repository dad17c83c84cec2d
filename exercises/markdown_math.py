"""Markdown with LaTeX for prompts, hints and solutions, rendered to safe HTML.

Math segments (``$$…$$``, ``$…$``) are set aside before Markdown runs, so that
underscores and backslashes inside them are not read as emphasis or escapes, and put
back afterwards (HTML-escaped) for KaTeX to typeset in the browser. Raw HTML in the
source is escaped as text, never passed through, and the finished HTML — maths included — goes
through ``sanitise_html`` last, so no link, attribute or element outside its allow-list
(a ``javascript:`` link, a maths segment placed inside a link destination) survives.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import threading

import markdown
from markdown.extensions.tables import TableProcessor

from exercises.html_sanitiser import DroppedImage, dropped_images, sanitise_html

MATH_SEGMENT = re.compile(r"\$\$.+?\$\$|\$(?!\s)[^$\n]+?\$", re.DOTALL)
PLACEHOLDER = "\x00MATH{}\x00"
PLACEHOLDER_PATTERN = re.compile("\x00MATH([0-9]+)\x00")
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
        _read_tables_in_linear_time(converter)
        _converters.markdown = converter
    return converter


def _escape_raw_html(converter: markdown.Markdown) -> None:
    """Raw HTML in a source becomes text: without its block and inline readers Markdown
    escapes ``<b>`` like any other character. (Escaping the whole source before Markdown
    ran escaped code spans twice: `x < 3` showed as ``x &lt; 3``.)"""
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")


def _read_tables_in_linear_time(converter: markdown.Markdown) -> None:
    """The tables extension's reader, with its test and row splitting made linear: they
    decide the same, in time proportional to the text (see ``LinearTableProcessor``)."""
    tables = converter.parser.blockprocessors
    config = tables["table"].config
    tables.register(LinearTableProcessor(converter.parser, config), "table", 75)  # the extension's priority


class LinearTableProcessor(TableProcessor):
    """Python-Markdown's table reader, deciding exactly as it does in linear time.

    The original test split the whole block into rows for every block it was asked about,
    and a heading, a rule or a list item hands the rest of its block back to be asked
    about again: 2,500 lines of ``# heading`` took 23 s. Here only the first two rows are
    split, the separator row is checked before the single-column rows are walked (the
    answer is the same: both must hold), and the walk reads rows one at a time. Splitting a
    row paired its backtick runs and placed its pipes by rescanning lists (the square of
    the number of backticks on one line); here both use bisection."""

    def test(self, parent, block: str) -> bool:
        rows = block.split("\n", 2)
        if len(rows) < 2:
            return False
        header = rows[0].strip(" ")
        self.border = self._border_of(header)
        columns = len(self._split_row(header))
        if columns < 2 and not (columns == 1 and self.border):
            return False
        separator = self._split_row(rows[1].strip(" "))
        if len(separator) != columns or not set("".join(separator)) <= set("|:- "):
            return False
        if columns == 1 and not self._every_row_has_a_pipe(block):
            return False
        self.separator = separator
        return True

    def _border_of(self, header: str) -> int:
        border = 0
        if header.startswith("|"):
            border |= 1  # tables.PIPE_LEFT
        if self.RE_END_BORDER.search(header) is not None:
            border |= 2  # tables.PIPE_RIGHT
        return border

    def _every_row_has_a_pipe(self, block: str) -> bool:
        """The original's single-column rule: every row after the header starts or ends
        with a pipe. (Read one row at a time: the walk stops at the first without.)"""
        start = block.find("\n") + 1
        while True:
            end = block.find("\n", start)
            row = (block[start:] if end < 0 else block[start:end]).strip(" ")
            if not (row.startswith("|") or self.RE_END_BORDER.search(row) is not None):
                return False
            if end < 0:
                return True
            start = end + 1

    def _split(self, row: str) -> list[str]:
        """The cells of ``row``: split at its pipes, except those inside a code span."""
        tics, tic_points, pipes = [], [], []
        for match in self.RE_CODE_PIPES.finditer(row):
            if match.group(2):  # \`+ : an escaped run, one shorter as an opening
                tics.append(len(match.group(2)) - 1)
                tic_points.append((match.start(2), match.end(2) - 1, 1))
            elif match.group(3):  # `+
                tics.append(len(match.group(3)))
                tic_points.append((match.start(3), match.end(3) - 1, 0))
            elif match.group(5):
                pipes.append(match.start(5))
        regions = _code_regions(tics, tic_points)
        starts = [start for start, _ in regions]
        cells, position = [], 0
        for pipe in pipes:
            inside = bisect.bisect_right(starts, pipe) - 1
            if inside >= 0 and pipe <= regions[inside][1]:
                continue  # a pipe inside a code span
            cells.append(row[position:pipe])
            position = pipe + 1
        cells.append(row[position:])
        return cells


def _code_regions(tics: list[int], tic_points: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The tables extension's pairing of backtick runs into code spans: each opening run
    (less its escape) is closed by the next later run of the same length; found with
    bisection over each length's positions instead of a rescan per run."""
    positions: dict[int, list[int]] = {}
    for index, size in enumerate(tics):
        positions.setdefault(size, []).append(index)
    regions, index = [], 0
    while index < len(tics):
        size = tics[index] - tic_points[index][2]
        later = positions.get(size, []) if size else []
        found = bisect.bisect_right(later, index)
        if found == len(later):
            index += 1
            continue
        closing = later[found]
        regions.append((tic_points[index][0], tic_points[closing][1]))
        index = closing + 1
    return regions


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


def images_dropped(text: str) -> list[DroppedImage]:
    """The images of ``text`` the page will not show: rendered exactly as
    ``render_markdown_math`` renders it, up to the sanitiser, which would drop these."""
    return dropped_images(markdown_with_math(_converter().reset(), text or ""))


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
    return _put_back(body, segments)


def _put_back(body: str, segments: list[str]) -> str:
    """``body`` with each maths placeholder replaced by its segment, HTML-escaped, in one
    pass (one ``replace`` per segment over the whole body cost the square of the length:
    3 s for 100 KB of ``$x_1$``)."""
    def segment(match: re.Match) -> str:
        index = int(match.group(1))
        return html.escape(segments[index], quote=False) if index < len(segments) else match.group(0)

    return PLACEHOLDER_PATTERN.sub(segment, body)
