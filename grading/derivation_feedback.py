"""The steps of a graded derivation as the student reads them: each line as written,
typeset (KaTeX renders the ``\\( … \\)`` spans of a ``[data-math]`` container, from a static
file), with how it follows from the line before in words, and the first step that does
not follow marked. The HTML passes the one sanitiser (``exercises.html_sanitiser``).

The instance of a rule (``E[k_m q_m] = E[k_m] E[q_m]``) is the checker's own canonical
form: it is shown only when the review policy shows solutions.
"""

from __future__ import annotations

from django.utils.html import escape

from exercises.html_sanitiser import sanitise_html

PROBLEM_KINDS = ("not_justified", "wrong", "too_big")


def derivation_steps_html(feedback: dict | None, *, show_verdicts: bool, show_instances: bool) -> str:
    """Sanitised HTML of an ordered list of the steps, or "" when there is none to show."""
    details = (feedback or {}).get("details") or {}
    steps = details.get("steps") or []
    if not show_verdicts or not steps or not all(isinstance(step, dict) and "text" in step for step in steps):
        return ""
    marked = _first_problem(details, steps)
    items = [_step_item(step, marked, show_instances) for step in steps]
    return sanitise_html("<ol>" + "".join(items) + "</ol>")


def _first_problem(details: dict, steps: list[dict]) -> int | None:
    for key in ("first_unjustified_step", "first_wrong_step", "too_big_step"):
        if details.get(key):
            return int(details[key])
    return next((step["step"] for step in steps if step.get("kind") in PROBLEM_KINDS), None)


def _step_item(step: dict, marked: int | None, show_instances: bool) -> str:
    latex = str(step.get("latex") or "")
    written = f"\\({escape(latex)}\\)" if latex else f"<code>{escape(step['text'])}</code>"
    mark = "<strong>✗ The first step that does not follow.</strong> " if step.get("step") == marked else ""
    reason = escape(step_reason_words(step))
    instances = ""
    if show_instances and step.get("instances"):
        instances = "<br>Here: <code>" + "; ".join(escape(text) for text in step["instances"]) + "</code>"
    return f"<li>{written}<br>{mark}<em>{reason}</em>{instances}</li>"


def step_reason_words(step: dict) -> str:
    """How a step follows from the line before, in words."""
    kind = step.get("kind")
    words = [str(word) for word in step.get("rule_words") or []]
    joined = " and ".join(words)
    if kind == "rule":
        return f"By {joined}." if joined else "By a named rule."
    if kind == "too_big":
        return f"Too big a step: {step.get('rule_count', len(words))} rules at once ({joined}). Show them."
    if kind == "restatement":
        if step.get("step") == 1:
            return "Restates the question: no rule applied."
        return "Restates the line before (ordinary algebra): no rule applied."
    if kind == "not_justified":
        return "Not justified: the value agrees, but no rule leads here from the line before."
    if kind == "wrong":
        return "Does not follow: not equal to the line before."
    if kind == "start":
        return "Where the derivation starts."
    return "Not checked: an earlier step does not follow."
