"""Markdown for students: the prompt of a variant, its hints and its worked solution; and what
the author is told of it: text that does not fill in (``text_problems``). Every text a page
renders is named by ``text_fields``."""

from __future__ import annotations

import math
from fractions import Fraction

from .errors import DrawProblem, ExpressionError
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
    for path, text, subject in text_fields(spec):
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


def text_fields(spec: ExerciseSpec):
    """Each text of the exercise a page renders as Markdown: (its path, the text as written,
    who it belongs to: "the prompt" or a part)."""
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
