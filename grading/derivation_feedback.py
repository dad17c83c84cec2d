"""The steps of a graded derivation as the student reads them: one item per line of the
answer box, by its number; a line with one step shows it typeset, a line chained with = shows
the line as typed with its steps typeset under it. A step is ``<code data-tex="LaTeX">typed
text</code>``: the page script (a static file) puts KaTeX's rendering of ``data-tex`` in place
of the text, so a reader without JavaScript reads the step as it was typed, not LaTeX source.
Each step says in words how it follows from the step before, and the first step that does not
follow is marked. A side result (a line that does not go on from the one before but is true by
itself) says so, and whether a later step uses it; the steps of one that no step uses count for
nothing and are never marked. The HTML passes the one sanitiser (``exercises.html_sanitiser``).

The instance of a rule (``E[k_m q_m] = E[k_m] E[q_m]``) is the checker's own canonical
form: it is shown only when the review policy shows solutions.
"""

from __future__ import annotations

from django.utils.html import escape

from exercises.html_sanitiser import sanitise_html

PROBLEM_KINDS = ("not_justified", "wrong", "too_big")


def derivation_steps_html(feedback: dict | None, *, show_verdicts: bool, show_instances: bool) -> str:
    """Sanitised HTML of a list of the answer's lines with their steps, or "" when there is none to show."""
    details = (feedback or {}).get("details") or {}
    steps = details.get("steps") or []
    if not show_verdicts or not steps or not all(isinstance(step, dict) and "text" in step for step in steps):
        return ""
    marked = _first_problem(details, steps)
    items = [_line_item(line, members, marked, show_instances) for line, members in _typed_lines(steps)]
    return sanitise_html("<ul>" + "".join(items) + "</ul>")


def _typed_lines(steps: list[dict]) -> list[tuple[object, list[dict]]]:
    """The steps grouped by the line they were typed on, in order (feedback stored without
    line numbers: one step per line)."""
    lines: list[tuple[object, list[dict]]] = []
    for step in steps:
        line = step.get("line")
        if line is not None and lines and lines[-1][0] == line:
            lines[-1][1].append(step)
        else:
            lines.append((line, [step]))
    return lines


def _first_problem(details: dict, steps: list[dict]) -> int | None:
    for key in ("first_unjustified_step", "first_wrong_step", "too_big_step"):
        if details.get(key):
            return int(details[key])
    return next((step["step"] for step in steps if step.get("kind") in PROBLEM_KINDS and _counted(step)), None)


def _counted(step: dict) -> bool:
    """False for the steps of a side result no later step uses: they earn and cost nothing."""
    return not (step.get("side_result") and step.get("used") is False)


def _line_item(line, members: list[dict], marked: int | None, show_instances: bool) -> str:
    label = f"Line {escape(line)}: " if line is not None else ""
    if len(members) == 1:
        return f"<li>{label}{_step_body(members[0], marked, show_instances, chained=False)}</li>"
    typed = members[0].get("line_text") or " = ".join(str(step["text"]) for step in members)
    steps = "".join(f"<li>{_step_body(step, marked, show_instances, chained=index > 0)}</li>"
                    for index, step in enumerate(members))
    return f"<li>{label}<code>{escape(typed)}</code><ol>{steps}</ol></li>"


def _step_body(step: dict, marked: int | None, show_instances: bool, *, chained: bool) -> str:
    written = _written_step(step)
    mark = "<strong>✗ The first step that does not follow.</strong> " if step.get("step") == marked else ""
    reason = escape(step_reason_words(step, after="the expression before it" if chained else "the line before"))
    instances = ""
    if show_instances and step.get("instances"):
        instances = "<br>Here: <code>" + "; ".join(escape(text) for text in step["instances"]) + "</code>"
    return f"{written}<br>{mark}<em>{reason}</em>{instances}"


def _written_step(step: dict) -> str:
    """The step as typed, with its LaTeX (when the checker read it) in ``data-tex`` for the page
    script to typeset in its place; both escaped."""
    typed = escape(step["text"])
    latex = str(step.get("latex") or "")
    return f'<code data-tex="{escape(latex)}">{typed}</code>' if latex else f"<code>{typed}</code>"


def step_reason_words(step: dict, *, after: str = "the line before") -> str:
    """How a step follows from the one before (``after``: "the line before", or on a chained
    line "the expression before it"), in words."""
    words = _reason_words(step, after)
    if step.get("kind") not in ("lemma", "side") and not _counted(step):
        return f"{words} (Part of a side result no later step uses: it does not count.)"
    return words


def _reason_words(step: dict, after: str) -> str:
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
        return f"Restates {after} (ordinary algebra): no rule applied."
    if kind == "not_justified":
        return f"Not justified: the value agrees, but no rule leads here from {after}."
    if kind == "wrong":
        return f"Does not follow: not equal to {after}."
    if kind == "start":
        return "Where the derivation starts."
    if kind == "statement":
        return "A statement of a result (the question and its answer, or a result on the way): not a step, and not counted."
    if kind == "lemma":
        if step.get("used"):
            return "A side result: it does not go on from the line before, and need not; a later step uses it."
        if step.get("used") is False:
            return "A side result: it does not go on from the line before; no later step uses it, so it earns nothing."
        return "A side result: it does not go on from the line before, so it is checked by itself."
    if kind == "side":
        if step.get("used") is False:
            return "Part of a side result no later step uses: equal to the expression before it, and not counted."
        return "Equal to the expression before it (part of a side result)."
    return "Not checked: an earlier step does not follow."
