"""Grading one part of a variant: the options the answer checkers need, and the call.

The checkers themselves live in ``grading.core.answers``; this module only translates
the exercise's declarations (tolerances, symbols, choices, diagnosis inputs) into the
``options`` they take, so the grading pipeline's sandbox can rebuild the same call.
"""

from __future__ import annotations

import numpy as np

from .expressions import evaluate, to_json_value
from .reference import fill_plain, part_reference
from .spec import NUMERIC_TYPES, ExerciseSpec


def part_options(spec: ExerciseSpec, params: dict, part_key: str) -> dict:
    part = spec.part(part_key)
    options: dict = {}
    if part.type in NUMERIC_TYPES:
        options.update(part.tolerance or {"decimals": part.decimals})
    if part.symbols:
        options["symbols"] = part.symbols
    if part.type == "choice":
        options["choices"] = list(part.choice_keys)
        feedback = {choice["key"]: fill_plain(choice["feedback"], params) for choice in part.choices if choice.get("feedback")}
        if feedback:
            options["choice_feedback"] = feedback
    if part.diagnose:
        options["diagnose"] = _diagnose_options(part.diagnose, params)
    options.update(fill_plain(part.options, params))
    return options


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
