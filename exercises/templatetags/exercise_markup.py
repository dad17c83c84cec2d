"""Template filters of the exercise page: ``markdown_math`` (exercise text, Markdown + LaTeX,
as safe HTML), ``answer_as_text`` and ``earlier_attempts`` (a part's history without what its
result block already shows)."""

from django import template
from django.utils.safestring import mark_safe

from exercises.markdown_math import render_markdown_math
from grading.answer_input import answer_line

register = template.Library()


@register.filter
def markdown_math(text: str) -> str:
    return mark_safe(render_markdown_math(text))  # its last step is the allow-list sanitiser


@register.filter
def answer_as_text(raw_answer) -> str:
    """A stored answer as the student entered it, on one line (a matrix as [a, b; c, d])."""
    return answer_line(raw_answer)


def _feedback_parts(feedback: dict | None) -> tuple[str, str]:
    """(the slip's message, the checker's message without it), as the result block splits
    them: the checker's message repeats the slip it diagnosed."""
    feedback = feedback or {}
    slip = str(feedback.get("misconception_message") or "").strip()
    message = str(feedback.get("message") or "")
    if slip:
        message = message.replace(slip, "")
    return slip, " ".join(message.split())


@register.filter
def earlier_attempts(history, shown) -> list[dict]:
    """The entries of ``history`` (grading.results.attempt_history, oldest first) but the
    submission ``shown``, whose grade and feedback the part's result block shows. Each
    entry gains ``misconception`` and ``message`` (split as the result block splits them)
    and ``same_as``: the number of the latest later attempt, shown or listed, whose feedback
    reads the same, or None. The page writes each message out once and points to it."""
    entries = list(history or [])
    shown_pk = getattr(shown, "pk", None)
    texts = [_feedback_parts(entry.get("feedback")) for entry in entries]
    earlier = []
    for index, entry in enumerate(entries):
        if shown_pk is not None and entry["submission"].pk == shown_pk:
            continue
        same_as = None
        if any(texts[index]):
            same_as = next(
                (entries[later]["submission"].attempt for later in range(len(entries) - 1, index, -1)
                 if texts[later] == texts[index]),
                None,
            )
        slip, message = texts[index]
        earlier.append({**entry, "misconception": slip, "message": message, "same_as": same_as})
    return earlier
