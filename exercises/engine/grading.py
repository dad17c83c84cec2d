"""Grading one part of a variant: the options the answer checkers need, and the call.

The checkers themselves live in ``grading.core.answers``; this module only translates
the exercise's declarations (tolerances, symbols, choices, diagnosis inputs) into the
``options`` they take, so the grading pipeline's sandbox can rebuild the same call.

Options may hold ``{{ }}`` templates, filled per variant. What one fills to is known only
on a variant, so two kinds of failure are told apart (``option_problems``):

* a known wrong value, a known wrong expression or a choice's feedback that cannot be
  filled in is extra: the part grades right without it, so it is left out of the
  options (as the checkers leave out an entry they cannot read), and said nothing;
* any other option (a matrix expression's ``scalars``, a derivation's ``start``) is what
  the checker grades with: a variant on which it cannot be filled in cannot be graded,
  so it is never given (``variants.first_failed_check`` redraws it).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from .errors import DrawProblem, ExpressionError
from .expressions import evaluate, to_json_value
from .reference import fill_plain, part_reference
from .source import Path, render_path
from .spec import MAX_EXPRESSION_SIZE, NUMERIC_TYPES, PLACEHOLDER_PATTERN, ExerciseSpec, Part

logger = logging.getLogger(__name__)

# Option lists whose entries are extra feedback (one that cannot be filled in is left out),
# with the field of an entry its checker compares answers with.
FEEDBACK_OPTIONS = {"value_feedback": "value", "expression_feedback": "expression"}


def part_options(spec: ExerciseSpec, params: dict, part_key: str) -> dict:
    """The checker's options of one part on this variant. A feedback entry whose templates
    cannot be filled in is left out; an option the checker grades with that cannot be
    raises ExpressionError (a drawn variant never has one: it is redrawn)."""
    part = spec.part(part_key)
    options: dict = {}
    if part.type in NUMERIC_TYPES:
        options.update(part.tolerance or {"decimals": part.decimals})
    if part.symbols:
        options["symbols"] = part.symbols
    if part.type == "choice":
        options["choices"] = list(part.choice_keys)
        feedback = {}
        for index, choice in enumerate(part.choices):
            if choice.get("feedback"):
                filled = _filled_feedback(part, ("choices", index, "feedback"), choice["feedback"], params)
                if filled is not None:
                    feedback[choice["key"]] = filled
        if feedback:
            options["choice_feedback"] = feedback
    if part.diagnose:
        options["diagnose"] = _diagnose_options(part.diagnose, params)
    for name, value in part.options.items():
        if name in FEEDBACK_OPTIONS and isinstance(value, list):
            options[name] = _filled_entries(part, name, value, params)
        else:
            options[name] = fill_plain(value, params)
    return options


def _filled_entries(part: Part, name: str, entries: list, params: dict) -> list:
    filled_entries = []
    for index, entry in enumerate(entries):
        filled = _filled_feedback(part, ("options", name, index), entry, params)
        if filled is not None:
            filled_entries.append(filled)
    return filled_entries


def _filled_feedback(part: Part, path: Path, entry, params: dict):
    """The feedback entry filled in, or None (with a warning logged) when it cannot be."""
    problems = _entry_problems(path, entry, params)
    for where, template, why in problems:
        logger.warning("part %s: %s `%s` cannot be filled in on this variant (%s); left out, the answer "
                       "is graded without it", part.key, render_path(where), template, why)
    return None if problems else fill_plain(entry, params)


def _entry_problems(path: Path, entry, params: dict) -> list[tuple[Path, str, str]]:
    """(path, template, why) of each template of the feedback entry at ``path`` (a choice's
    feedback, or an entry of a FEEDBACK_OPTIONS list) that does not fill in on this variant
    to what its checker reads: a known wrong value to a number, an expression to one text."""
    compared = FEEDBACK_OPTIONS.get(path[1]) if path[0] == "options" else None
    problems = []
    for where, template in _templates(entry, path):
        try:
            filled = fill_plain(template, params)
        except ExpressionError as exc:
            problems.append((where, template, exc.detail))
            continue
        why = _not_finite(filled)
        if why is None and where == path + (compared,):
            why = _not_a_number(filled) if compared == "value" else _not_an_expression(filled)
        if why is not None:
            problems.append((where, template, why))
    return problems


def _templates(value, path: Path):
    """(path, text) of every text with {{ }} placeholders in ``value``, at any depth."""
    if isinstance(value, str):
        if PLACEHOLDER_PATTERN.search(value):
            yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _templates(item, path + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _templates(item, path + (key,))


def _not_finite(value) -> str | None:
    """Why ``value`` (filled in) holds a number no checker can compare with: NaN or infinite."""
    numbers = value if isinstance(value, list) else [value]
    for number in numbers:
        if isinstance(number, list):
            why = _not_finite(number)
            if why:
                return why
        elif isinstance(number, float) and not math.isfinite(number):
            return f"it fills to {number!r}, not a finite number"
    return None


def _not_an_expression(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return f"it fills to {value!r}, not one expression"
    return None


def _not_a_number(value) -> str | None:
    from grading.core.grades import AnswerFormatError  # late, as the engine's other uses of the checkers
    from grading.core.numeric import parse_number

    if isinstance(value, (bool, list, dict)) or value is None:
        return f"it fills to {value!r}, not one number"
    if isinstance(value, (int, float)):
        return None  # read as it is (``grading.core.numeric``); a NaN or infinity was refused above
    try:
        parse_number(value)
    except AnswerFormatError as problem:
        return str(problem)
    return None


def option_problems(spec: ExerciseSpec, params: dict, *, feedback: bool) -> list[DrawProblem]:
    """Every ``{{ }}`` template of the parts' options that does not fill in on this variant
    to what its checker reads: with ``feedback``, the feedback entries grading leaves out
    (known wrong values and expressions, a choice's feedback); without, the options a
    checker grades with (a variant with one of these cannot be graded)."""
    problems = []
    for part in spec.parts:
        found = _feedback_problems if feedback else _graded_option_problems
        problems += found(spec, part, params)
    return problems


def _feedback_problems(spec: ExerciseSpec, part: Part, params: dict) -> list[DrawProblem]:
    entries = [(("choices", index, "feedback"), choice["feedback"])
               for index, choice in enumerate(part.choices) if choice.get("feedback")]
    for name in FEEDBACK_OPTIONS:
        if isinstance(part.options.get(name), list):
            entries += [(("options", name, index), entry) for index, entry in enumerate(part.options[name])]
    problems = []
    for path, entry in entries:
        for where, template, why in _entry_problems(path, entry, params):
            problems.append(_option_problem(spec, part, where, f"{_feedback_kind(where)} `{template.strip()}`", why,
                                            kind="feedback"))
    return problems


def _feedback_kind(where: Path) -> str:
    if where[0] == "choices":
        return "choice feedback"
    return {"value": "known wrong value", "expression": "known wrong expression"}.get(where[-1], "feedback")


def _graded_option_problems(spec: ExerciseSpec, part: Part, params: dict) -> list[DrawProblem]:
    sizes = _matrix_size_names(part.options)
    problems = []
    for name, value in part.options.items():
        if name in FEEDBACK_OPTIONS and isinstance(value, list):
            continue
        for where, template in _templates(value, ("options", name)):
            try:
                filled = fill_plain(template, params)
            except ExpressionError as exc:
                problems.append(_option_problem(spec, part, where, _option_named(where, template), exc.detail,
                                                kind="option"))
                continue
            why = _not_finite(filled)
            if why is None and where[:2] == ("options", "scalars") and len(where) == 3:
                why = _scalar_problem(filled, is_size=where[2] in sizes)
            if why is not None:
                problems.append(_option_problem(spec, part, where, _option_named(where, template), why,
                                                kind="option"))
    return problems


def _option_named(where: Path, template: str) -> str:
    return f"option {render_path(where[1:])} `{template.strip()}`"


def _matrix_size_names(options: dict) -> set:
    matrices = options.get("matrices")
    if not isinstance(matrices, dict):
        return set()
    return {size for shape in matrices.values() if isinstance(shape, list) for size in shape if isinstance(size, str)}


def _scalar_problem(value, *, is_size: bool) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"it fills to {value!r}, not one number"
    if is_size and not (value == int(value) and 1 <= value <= MAX_EXPRESSION_SIZE):
        return (f"it fills to {value!r}, and the size of a matrix must be a whole number from 1 to "
                f"{MAX_EXPRESSION_SIZE}")
    return None


def _option_problem(spec: ExerciseSpec, part: Part, where: Path, what: str, why: str, *, kind: str) -> DrawProblem:
    path = ("parts", part.index) + where
    return DrawProblem(
        kind=kind, reason=f"{kind}: {why}", subject=f"part `{part.key}`", field=render_path(path),
        line=spec.line_of(path), action=f"{what} cannot be filled in", detail=why,
    )


def _diagnose_options(diagnose: dict, params: dict) -> dict:
    resolved = {"kind": diagnose["kind"], "quantity": diagnose["quantity"]}
    for name in ("Q", "K", "V"):
        resolved[name] = to_json_value(np.asarray(evaluate(diagnose[name], params), dtype=float))
    resolved["query_index"] = int(evaluate(diagnose["query_index"], params))
    if diagnose.get("mask"):
        resolved["mask"] = diagnose["mask"]
    return resolved


def grade_part(spec: ExerciseSpec, params: dict, part_key: str, answer):
    """Grade ``answer`` to one part; returns grading.core.answers.Grade."""
    from grading.core import answers  # imported late: the engine loads without the checkers

    part = spec.part(part_key)
    expected = part_reference(part, params)
    return answers.check(part.type, expected, answer, part_options(spec, params, part_key))
