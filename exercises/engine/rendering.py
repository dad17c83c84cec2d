"""Markdown for students: the prompt of a variant, its hints and its worked solution."""

from __future__ import annotations

from .reference import fill_markdown
from .spec import ExerciseSpec

PART_LABELS = "abcdefghijklmnopqrstuvwxyz"


def render_prompt(spec: ExerciseSpec, params: dict, *, part_points: dict[str, float] | None = None) -> str:
    """The whole question: shared prompt, then one labelled paragraph per part.

    ``part_points`` (part key -> points) labels each part with what it is worth where it
    is graded; without it no points are printed (a part's ``points`` in the spec is only
    its weight within the exercise, not a number of assignment points).
    """
    sections = [fill_markdown(spec.prompt, params).strip()]
    for label, part in zip(PART_LABELS, spec.parts):
        text = fill_markdown(part.prompt, params).strip() if part.prompt else ""
        suffix = ""
        if part_points is not None and part.key in part_points:
            suffix = f" *({points_text(part_points[part.key])})*"
        sections.append(f"**({label})** {text}{suffix}".replace("  ", " "))
    return "\n\n".join(sections) + "\n"


def points_text(points: float) -> str:
    """1 -> "1 point", 0.5 -> "0.5 points", 1/3 -> "0.33 points"."""
    value = round(points, 2)
    return f"{value:g} point{'' if value == 1 else 's'}"


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
