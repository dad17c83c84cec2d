"""Markdown for students: the prompt of a variant, its hints and its worked solution."""

from __future__ import annotations

from .reference import fill_markdown
from .spec import ExerciseSpec

PART_LABELS = "abcdefghijklmnopqrstuvwxyz"


def render_prompt(spec: ExerciseSpec, params: dict) -> str:
    """The whole question: shared prompt, then one labelled paragraph per part."""
    sections = [fill_markdown(spec.prompt, params).strip()]
    for label, part in zip(PART_LABELS, spec.parts):
        points = f"{part.points:g} point{'s' if part.points != 1 else ''}"
        text = fill_markdown(part.prompt, params).strip() if part.prompt else ""
        sections.append(f"**({label})** {text} *({points})*".replace("  ", " "))
    return "\n\n".join(sections) + "\n"


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
