"""Markdown for students: the prompt of a variant, its hints and its worked solution; and what
the author is told of it: text that does not fill in (``text_problems``), images that will not
be shown (``image_warnings``)."""

from __future__ import annotations

import bisect
import html
import math
import re
from dataclasses import dataclass
from fractions import Fraction

from .errors import DrawProblem, ExpressionError, SpecIssue
from .reference import FilledTextTooLong, fill_markdown, fill_plain
from .source import render_path
from .spec import PLACEHOLDER_PATTERN, ExerciseSpec

PART_LABELS = "abcdefghijklmnopqrstuvwxyz"


def render_prompt(spec: ExerciseSpec, params: dict, *, part_points: dict[str, float] | None = None) -> str:
    """The whole question: shared prompt, then one labelled paragraph per part.

    ``part_points`` (part key -> points) labels each part with what it is worth where it
    is graded; without it no points are printed (a part's ``points`` in the spec is only
    its weight within the exercise, not a number of assignment points).
    """
    lead, parts = render_prompt_sections(spec, params, part_points=part_points)
    return f"{lead}\n\n{parts}" if spec.parts else f"{lead}\n"


def render_prompt_sections(spec: ExerciseSpec, params: dict, *, part_points: dict[str, float] | None = None
                           ) -> tuple[str, str]:
    """``render_prompt`` in two: the shared prompt, and the labelled parts' paragraphs (a
    page shows an exercise's figures between them, next to the text that introduces them)."""
    sections = []
    for label, part in zip(PART_LABELS, spec.parts):
        text = fill_markdown(part.prompt, params).strip() if part.prompt else ""
        suffix = ""
        if part_points is not None and part.key in part_points:
            suffix = f" *({points_text(part_points[part.key])})*"
        sections.append(f"**({label})** {text}{suffix}".replace("  ", " "))
    return fill_markdown(spec.prompt, params).strip(), "\n\n".join(sections) + "\n"


def points_text(points: float) -> str:
    """1 -> "1 point", 0.5 -> "0.5 points", 1/6 -> "1/6 point", 4/3 -> "4/3 points",
    1/7 -> "0.14 points".

    A share that two decimals cannot hold exactly but a small fraction can is printed as
    that fraction: six parts of "0.17 points" would visibly add up to 1.02."""
    fraction = _small_fraction(points)
    if fraction is not None:
        return f"{fraction.numerator}/{fraction.denominator} point{'s' if fraction > 1 else ''}"
    value = round(points, 2)
    return f"{value:g} point{'' if value == 1 else 's'}"


_LARGEST_SHOWN_DENOMINATOR = 12


def _small_fraction(points: float) -> Fraction | None:
    """The fraction with denominator at most 12 that ``points`` is, when two decimals would
    round it (1/3, 1/6, 5/12); None when two decimals are exact or no such fraction fits."""
    if not math.isfinite(points) or math.isclose(points, round(points, 2), rel_tol=0, abs_tol=1e-9):
        return None
    fraction = Fraction(points).limit_denominator(_LARGEST_SHOWN_DENOMINATOR)
    return fraction if math.isclose(float(fraction), points, rel_tol=0, abs_tol=1e-9) else None


def part_points(spec: ExerciseSpec, exercise_points: float) -> dict[str, float]:
    """An exercise's points split over its parts in proportion to the parts' weights
    (the gradebook's model: a part's share of the exercise is its weight / all weights)."""
    total = sum(part.points for part in spec.parts) or 1.0
    return {part.key: exercise_points * part.points / total for part in spec.parts}


def render_part_prompt(spec: ExerciseSpec, params: dict, part_key: str) -> str:
    return fill_markdown(spec.part(part_key).prompt, params).strip()


def render_hints(spec: ExerciseSpec, params: dict, part_key: str, *, tries: int) -> list[str]:
    """The hints unlocked after ``tries`` attempts at the part, in order."""
    return [
        fill_markdown(hint.text, params).strip()
        for hint in spec.part(part_key).hints
        if tries >= hint.after_tries
    ]


def render_solution(spec: ExerciseSpec, params: dict, part_key: str | None = None) -> str:
    parts = [spec.part(part_key)] if part_key else spec.parts
    sections = []
    for label, part in zip(PART_LABELS, spec.parts):
        if part in parts:
            prefix = "" if part_key else f"**({label})** "
            sections.append(prefix + fill_markdown(part.solution, params).strip())
    return "\n\n".join(sections) + "\n"


def text_problems(spec: ExerciseSpec, params: dict) -> list[DrawProblem]:
    """Every placeholder of the exercise's text that cannot be filled in for ``params``,
    naming the field and line it is written on ([] when all of the text renders), every
    known wrong value of a numeric part (``value_feedback``) that does not fill to a number, and
    every known wrong expression of a symbolic part (``expression_feedback``) that does not fill
    to one the part's symbols can read."""
    problems = _value_feedback_problems(spec, params) + _expression_feedback_problems(spec, params)
    for path, text, subject in _text_fields(spec):
        problems += _filled_text_problems(spec, path, text, subject, params)
    return problems


def _filled_text_problems(spec: ExerciseSpec, path, text: str, subject: str, params: dict) -> list[DrawProblem]:
    """The text filled as a whole, once, as a page fills it: [] when it fills in; the text
    itself when together its placeholders make it too long (the same matrix printed ten
    thousand times); else each placeholder that fails, on its own line."""
    try:
        fill_markdown(text, params)
        return []
    except FilledTextTooLong as exc:
        return [DrawProblem(
            kind="rendering", reason=f"rendering: {exc}", subject=subject, field=render_path(path),
            line=spec.line_of(path), action="the text could not be filled in", detail=exc.detail,
        )]
    except ExpressionError:
        pass
    problems = []
    for match in PLACEHOLDER_PATTERN.finditer(text):
        try:
            fill_markdown(match.group(0), params)
        except ExpressionError as exc:
            line = spec.source_map.line_within(path, text, match.start()) if spec.source_map.lines else None
            problems.append(DrawProblem(
                kind="rendering", reason=f"rendering: {exc}", subject=subject, field=render_path(path),
                line=line, action=f"placeholder `{{{{{match.group(1).strip()}}}}}` failed", detail=exc.detail,
            ))
    return problems


def _text_fields(spec: ExerciseSpec):
    yield ("prompt",), spec.prompt, "the prompt"
    for part in spec.parts:
        subject, base = f"part `{part.key}`", ("parts", part.index)
        if part.prompt:
            yield base + ("prompt",), part.prompt, subject
        yield base + ("solution",), part.solution, subject
        for index, hint in enumerate(part.hints):
            yield base + ("hints", index, "text"), hint.text, subject
        for index, choice in enumerate(part.choices):
            for name in ("text", "feedback"):
                if choice.get(name):
                    yield base + ("choices", index, name), choice[name], subject
        for index, entry in enumerate(_value_feedback(part)):
            if isinstance(entry.get("feedback"), str):
                yield base + ("options", "value_feedback", index, "feedback"), entry["feedback"], subject
        for index, entry in enumerate(_expression_feedback(part)):
            if isinstance(entry.get("feedback"), str):
                yield base + ("options", "expression_feedback", index, "feedback"), entry["feedback"], subject


def _value_feedback(part) -> list[dict]:
    """A numeric part's known wrong values as written (the spec checked their shape)."""
    entries = part.options.get("value_feedback") if part.type == "numeric" else None
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def _value_feedback_problems(spec: ExerciseSpec, params: dict) -> list[DrawProblem]:
    """Known wrong values written as text with placeholders that, filled in the way grading
    fills a part's options (``fill_plain``), are not a number on this draw ("{{a}} + 1" gives
    "3 + 1"); grading leaves such a value out, so the feedback would never be said."""
    from grading.core.grades import AnswerFormatError  # late, as the engine's other uses of the checkers
    from grading.core.numeric import parse_number

    problems = []
    for part in spec.parts:
        for index, entry in enumerate(_value_feedback(part)):
            value = entry.get("value")
            if not isinstance(value, str) or not PLACEHOLDER_PATTERN.search(value):
                continue  # a plain number or text, checked when the file was read
            path = ("parts", part.index, "options", "value_feedback", index, "value")
            try:
                filled = fill_plain(value, params)
                if isinstance(filled, (bool, list, dict)) or filled is None:
                    raise AnswerFormatError(f"it fills to {filled!r}, not one number")
                parse_number(filled)
            except (ExpressionError, AnswerFormatError) as exc:
                detail = getattr(exc, "detail", None) or str(exc)
                problems.append(DrawProblem(
                    kind="rendering", reason=f"rendering: {detail}", subject=f"part `{part.key}`",
                    field=render_path(path), line=spec.line_of(path),
                    action=f"known wrong value `{value}` is not a number",
                    detail=f"{detail}; a value must be a number or a {{{{ }}}} template that fills to a number",
                ))
    return problems


def _expression_feedback(part) -> list[dict]:
    """A symbolic part's known wrong expressions as written (the spec checked their shape)."""
    entries = part.options.get("expression_feedback") if part.type == "symbolic" else None
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def _expression_feedback_problems(spec: ExerciseSpec, params: dict) -> list[DrawProblem]:
    """Known wrong expressions written with placeholders that, filled in the way grading fills
    a part's options, cannot be read with the part's symbols on this draw; grading leaves such
    an expression out, so its feedback would never be said."""
    from grading.core.grades import AnswerFormatError, InvalidRequest  # late, as for value_feedback
    from grading.core.symbolic import read_known_wrong_expression

    problems = []
    for part in spec.parts:
        for index, entry in enumerate(_expression_feedback(part)):
            expression = entry.get("expression")
            if not isinstance(expression, str) or not PLACEHOLDER_PATTERN.search(expression):
                continue  # read when the file was read
            path = ("parts", part.index, "options", "expression_feedback", index, "expression")
            try:
                filled = fill_plain(expression, params)
                if isinstance(filled, bool) or not isinstance(filled, (str, int, float)):
                    raise AnswerFormatError(f"it fills to {filled!r}, not one expression")
                read_known_wrong_expression(filled if isinstance(filled, str) else repr(filled),
                                            {"symbols": part.symbols, **part.options})
            except (ExpressionError, AnswerFormatError, InvalidRequest) as exc:
                detail = getattr(exc, "detail", None) or str(exc)
                problems.append(DrawProblem(
                    kind="rendering", reason=f"rendering: {detail}", subject=f"part `{part.key}`",
                    field=render_path(path), line=spec.line_of(path),
                    action=f"known wrong expression `{expression}` cannot be read",
                    detail=f"{detail}; an expression must read with the part's symbols once its "
                           "{{ }} are filled in",
                ))
    return problems


# ---------------------------------------------------------------------------
# Images: only from the site's static files
# ---------------------------------------------------------------------------
#
# A browser fetches an <img> the moment the page opens, signed in, with no click, so an
# author's ``![x](/courses/…/join?…)`` would make every student who opens the exercise
# request that page of ours. The sanitiser (``exercises.html_sanitiser``) keeps an image's
# source only when ``image_source_allowed`` says so, and shows any other image as its alt
# text; ``image_warnings`` tells the author beforehand, naming each such image.

# attnquiz.settings.STATIC_URL ("static/", served from the site's root); a test checks they agree.
IMAGE_SOURCE_PREFIX = "/static/"
# A static file's path: plain path characters only, so no query, no "%"-escape, no "\\"
# (a browser reads it as "/"), no "//"; the dot-segments "." and ".." are refused below.
_STATIC_PATH = re.compile(r"[A-Za-z0-9_.~-]+(?:/[A-Za-z0-9_.~-]+)*")


def image_source_allowed(source: str) -> bool:
    """Whether an ``<img>`` may load ``source``: a path under the static files that stays
    there (``/static/../courses/`` would leave it once the browser resolves the dots)."""
    if not source.startswith(IMAGE_SOURCE_PREFIX):
        return False
    path = source[len(IMAGE_SOURCE_PREFIX):]
    return bool(_STATIC_PATH.fullmatch(path)) and not {".", ".."} & set(path.split("/"))


# How the page's Markdown reads a text (``exercises.markdown_math`` with Python-Markdown, which
# this module may not import): maths set aside first, then code spans; past this many "["
# outside maths a text has no links or images at all (markdown_math.MAX_LINK_BRACKETS; a test
# checks they agree, and that both find the same images in a table of texts).
MAX_IMAGE_BRACKETS = 100
_MATH_SEGMENT = re.compile(r"\$\$.+?\$\$|\$(?!\s)[^$\n]+?\$", re.DOTALL)
_BACKTICKS = re.compile(r"(\\?)(`+)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SET_ASIDE = "\x00"  # YAML refuses this character, so no source holds it
# "[id]: source 'title'" on a line of its own: a reference definition.
_REFERENCE_DEFINITION = re.compile(
    r"""^[ ]{0,3}\[([^\[\]]*)\]:[ ]*(?:\n[ ]*)?([^\s]+)[ ]*(?:\n[ ]*)?((["'])(.*)\4[ ]*|\((.*)\)[ ]*)?$""",
    re.MULTILINE,
)
_REFERENCE_ID = re.compile(r"\s?\[([^\]]*)\]", re.DOTALL)
_ANGLED_SOURCE = re.compile(r"""\(\s*(?:(<[^<>]*>)\s*(?:('[^']*'|"[^"]*")\s*)?\))?""", re.DOTALL)
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()>#+\-.!|])")
MAX_SHOWN_SOURCE = 80  # characters of an image's source in a warning


@dataclass(frozen=True)
class MarkdownImage:
    start: int  # where ``![`` is in the text
    alt: str  # as written
    source: str  # as the browser gets it: escapes removed, character references decoded
    reference: str | None = None  # the reference id of ``![alt][id]``


def markdown_images(text: str) -> list[MarkdownImage]:
    """The images Markdown makes of ``text``: ``![alt](source "title")``, ``![alt](<source>)``
    and ``![alt][id]`` / ``![id]`` with an ``[id]: source`` definition; none inside maths or a
    code span. At most MAX_IMAGE_BRACKETS "[" (else no image at all), each ``![`` read
    forwards from there, as the page's Markdown reads it: a hostile text costs no more here
    than there. (One difference: an image in an indented code block is counted too, so its
    warning is one too many, never one missing.)"""
    outside_maths = _MATH_SEGMENT.sub(_set_aside, text)
    if outside_maths.count("[") > MAX_IMAGE_BRACKETS:
        return []
    masked = _MARKDOWN_ESCAPE.sub(_set_aside, _without_code_spans(outside_maths))
    definitions = {
        match.group(1).strip().lower(): text[match.start(2):match.end(2)].lstrip("<").rstrip(">")
        for match in _REFERENCE_DEFINITION.finditer(masked)
    }
    images = []
    start = masked.find("![")
    while start != -1:
        image = _image_at(text, masked, start, definitions)
        if image is not None:
            images.append(image)
        start = masked.find("![", start + 2)
    return images


def image_warnings(spec: ExerciseSpec, params: dict | None = None) -> list[SpecIssue]:
    """A warning for every image of the exercise's texts whose source the page will drop
    (``image_source_allowed``), naming the image, its field and line, and why: students see
    its alt text instead, or nothing when it has none. ``params``: a variant, to fill in a
    source written with {{ }} placeholders (without one, such a source is not judged)."""
    warnings = []
    for path, text, _subject in _text_fields(spec):
        for image in markdown_images(text):
            source = _filled_source(image.source, params)
            if source is None or image_source_allowed(source):
                continue
            line = spec.source_map.line_within(path, text, image.start) if spec.source_map.lines else None
            warnings.append(SpecIssue(line, render_path(path), _image_warning(image, source)))
    return sorted(warnings, key=lambda warning: (warning.line is None, warning.line or 0))


def _set_aside(match: re.Match) -> str:
    """Maths, a code span or a backslash escape as as many characters Markdown reads as plain
    text (offsets stay put)."""
    return _SET_ASIDE * len(match.group(0))


def _without_code_spans(text: str) -> str:
    """``text`` with its code spans set aside: in each paragraph, a run of n backticks (one
    after a backslash: n - 1) opens a span the next run of exactly n closes. Runs are paired
    by bisection over each length's positions, so the time is linear (a regex's search took
    the cube of a text of backticks)."""
    spans, start = [], 0
    for end in [match.start() for match in _BLANK_LINE.finditer(text)] + [len(text)]:
        runs = [(match.end(2), len(match.group(2)), len(match.group(2)) - len(match.group(1)))
                for match in _BACKTICKS.finditer(text, start, end)]
        by_length: dict[int, list[int]] = {}
        for index, (_, length, _) in enumerate(runs):
            by_length.setdefault(length, []).append(index)
        index = 0
        while index < len(runs):
            opening_end, _, opening = runs[index]
            later = by_length.get(opening, []) if opening else []
            found = bisect.bisect_right(later, index)
            if found == len(later):
                index += 1
                continue
            closing = later[found]
            spans.append((opening_end - opening, runs[closing][0]))
            index = closing + 1
        start = end
    pieces, position = [], 0
    for span_start, span_end in spans:
        pieces += [text[position:span_start], _SET_ASIDE * (span_end - span_start)]
        position = span_end
    return "".join(pieces) + text[position:]


def _browser_source(written: str) -> str:
    return html.unescape(_MARKDOWN_ESCAPE.sub(r"\1", written).strip())


def _image_at(text: str, masked: str, start: int, definitions: dict[str, str]) -> MarkdownImage | None:
    """The image whose ``![`` is at ``start`` (read as Python-Markdown reads it: nested
    brackets in the alt text, nested parentheses and a title in the source), or None."""
    end = _closing_bracket(masked, start + 2)
    if end is None:
        return None
    alt = _MARKDOWN_ESCAPE.sub(r"\1", text[start + 2:end])
    source = _inline_source(masked, end + 1)
    if source is not None:
        return MarkdownImage(start, alt, _browser_source(text[source[0]:source[1]]))
    reference = _REFERENCE_ID.match(masked, end + 1)
    key = reference.group(1).lower() if reference and reference.group(1) else text[start + 2:end].lower()
    key = re.sub(r"\s+", " ", key)
    if key not in definitions:
        return None
    return MarkdownImage(start, alt, _browser_source(definitions[key]), reference=key)


_BRACKET = re.compile(r"[\[\]]")


def _closing_bracket(text: str, position: int) -> int | None:
    """The "]" that closes the "[" just before ``position`` (brackets nest; an escaped one
    was set aside). With at most MAX_IMAGE_BRACKETS "[", it is at most that many "]" away."""
    depth = 1
    for bracket in _BRACKET.finditer(text, position):
        depth += 1 if bracket.group() == "[" else -1
        if depth == 0:
            return bracket.start()
    return None


def _inline_source(text: str, position: int) -> tuple[int, int] | None:
    """Where the source of ``(source "title")`` at ``position`` is written (start, end), or
    None when there is no such parenthesis: Python-Markdown's reading (``getLink``), of
    ``<source>``, of nested parentheses, and of a title in quotes closed before the last ")"."""
    match = _ANGLED_SOURCE.match(text, position)
    if match is None:
        return None
    if match.group(1):
        return match.start(1) + 1, match.end(1) - 1
    begin = match.end()
    depth, backtrack, last_bracket = 1, 1, -1
    quote = alt_quote = None
    start_quote = exit_quote = start_alt_quote = exit_alt_quote = -1
    in_title = False
    last = ""
    index = begin
    for index in range(begin, len(text)):
        character = text[index]
        if character == "(":
            if not in_title:
                depth += 1
            elif backtrack > 0:
                backtrack -= 1
        elif character == ")":
            if (exit_quote != -1 and quote == last) or (exit_alt_quote != -1 and alt_quote == last):
                depth = 0
            elif not in_title:
                depth -= 1
            elif backtrack > 0:
                backtrack -= 1
                if backtrack == 0:
                    last_bracket = index + 1
        elif character in "'\"":
            if not quote:
                in_title, backtrack, depth, start_quote, quote = True, depth, 1, index + 1, character
            elif character != quote and not alt_quote:
                start_alt_quote, alt_quote = index + 1, character
            elif character == quote:
                exit_quote = index + 1
            elif alt_quote and character == alt_quote:
                exit_alt_quote = index + 1
        if depth == 0:
            if exit_quote >= 0 and quote == last:
                return begin, start_quote - 1
            if exit_alt_quote >= 0 and alt_quote == last:
                return begin, start_alt_quote - 1
            return begin, index
        if character != " ":
            last = character
    if depth != 0 and backtrack == 0:
        return begin, last_bracket - 1
    return None


def _filled_source(source: str, params: dict | None) -> str | None:
    if not PLACEHOLDER_PATTERN.search(source):
        return source
    if params is None:
        return None
    try:
        return fill_markdown(source, params)
    except ExpressionError:
        return None  # the placeholder's own problem is reported (``text_problems``)


def _image_warning(image: MarkdownImage, source: str) -> str:
    written = f"![{image.alt}][{image.reference}]" if image.reference else f"![{image.alt}]({image.source})"
    note = ""
    if PLACEHOLDER_PATTERN.search(image.source):
        note = f" (source “{_shortened(source)}” on this variant)"
    elif image.reference:
        note = f" (source “{_shortened(source)}”)"
    alt = " ".join(image.alt.split())
    shown = f"its alt text “{_shortened(alt)}” in its place" if alt else "nothing in its place, as it has no alt text"
    return (f"the image {_shortened(' '.join(written.split()))}{note} will not be shown: its source "
            f"{_why_dropped(source)}, and only plain /static/… paths (the site's static files) are kept. "
            f"Students see {shown}.")


def _why_dropped(source: str) -> str:
    if source.lower().startswith("data:"):
        return "is a data: URL"
    if source.startswith("//") or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", source):
        return "is on another site"
    if not source.startswith(IMAGE_SOURCE_PREFIX):
        return f"is not under {IMAGE_SOURCE_PREFIX}"
    return 'is not a plain path (it has a query, "#", "%", space, backslash, "//", "." or ".." segment)'


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_SHOWN_SOURCE else text[:MAX_SHOWN_SOURCE - 1] + "…"
