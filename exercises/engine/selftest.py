"""Self-test of an exercise variant: does the exercise grade its own answers correctly?

For every part we ask the answer checker for right, wrong and malformed answers built
from the reference answer (and, for derivations, hollow ones that apply no rule and must
score exactly 0), feed them back through grading, and collect every case the exercise
gets wrong. Attention parts also check that their own reference answer is none of the
mistakes they diagnose (an answer written without the √d_k would mark the students who
leave it out right), and that unscaled weights (and the output built from them) are
diagnosed as the matching misconception, so the diagnosis wiring is tested with the content.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from .expressions import evaluate
from .grading import part_options
from .reference import part_reference
from .spec import NUMERIC_TYPES, ExerciseSpec, Part


UNSCALED_MISCONCEPTION = {"weights": "no_scaling", "output": "raw_weights_used"}


@dataclass
class SelfTestResult:
    checked: int = 0
    failures: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # parts whose checker is not available

    @property
    def passed(self) -> bool:
        return not self.failures


def self_test_variant(spec: ExerciseSpec, params: dict) -> SelfTestResult:
    from grading.core import answers

    result = SelfTestResult()
    for part in spec.parts:
        try:
            answers.checker_module(part.type)
        except ImportError:
            result.skipped.append(f"{part.key}: no checker for answer type '{part.type}'")
            continue
        expected = part_reference(part, params)
        options = part_options(spec, params, part.key)
        try:
            samples = answers.self_test_answers(part.type, expected, options)
        except answers.InvalidRequest as exc:  # the exercise's own fault: say which, plainly
            result.failures.append(f"{part.key}: the part cannot be graded as written: {exc}")
            continue
        except Exception as exc:  # the report must name the broken part, not stop
            result.failures.append(f"{part.key}: the checker could not build test answers: {exc!r}")
            continue
        for kind in ("right", "wrong", "hollow", "invalid"):
            for answer in samples.get(kind, []):
                result.checked += 1
                problem = _graded_problem(answers, part, expected, answer, options, kind)
                if problem:
                    result.failures.append(f"{part.key}: {kind} answer {answer!r} {problem}")
        _check_no_tied_extreme(part, params, result)
        if not _check_reference_is_no_misconception(part, expected, options, result):
            continue  # the unscaled check below would compare against a wrong reference
        _check_unscaled_diagnosis(part, expected, options, result, answers)
    return result


INDEX_FUNCTIONS = {"argmax": max, "argmin": min}
TIE_TOLERANCE = 1e-9


def _check_no_tied_extreme(part: Part, params: dict, result: SelfTestResult) -> None:
    """A failure for every argmax(...) / argmin(...) in the part's answer whose largest
    (smallest) value is shared on this variant: the answer names one index, a student who
    names another tied one is marked wrong (weights of 0.33, 0.33, 0, 0.33 have three
    "largest" keys). A gate (kind: unique_max) keeps such variants out."""
    for expression in (part.answer_expression, part.answer_index):
        if expression is None:
            continue
        for name, argument in _index_calls(expression):
            try:
                values = np.asarray(evaluate(argument, params), dtype=float).ravel()
            except Exception:  # the reference itself reports an expression that cannot run
                continue
            if values.size < 2 or not np.all(np.isfinite(values)):
                continue
            extreme = INDEX_FUNCTIONS[name](values)
            tied = [index for index, value in enumerate(values) if abs(value - extreme) <= TIE_TOLERANCE * max(1.0, abs(extreme))]
            if len(tied) > 1:
                result.checked += 1
                result.failures.append(
                    f"{part.key}: {name}({argument}) is tied on this variant (indices {', '.join(map(str, tied))} "
                    f"share the value {extreme:.6g}): a student who names another of them is marked wrong; "
                    "add a gate with kind: unique_max"
                )


def _index_calls(expression) -> list[tuple[str, str]]:
    """(function, argument text) of every argmax / argmin call in the expression."""
    calls = []
    for node in ast.walk(expression.tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in INDEX_FUNCTIONS
                and len(node.args) == 1):
            calls.append((node.func.id, ast.get_source_segment(expression.text, node.args[0]) or ast.unparse(node.args[0])))
    return calls


def _graded_problem(answers, part: Part, expected, answer, options: dict, kind: str) -> str | None:
    try:
        grade = answers.check(part.type, expected, answer, options)
    except Exception as exc:
        return f"made the checker raise {exc!r}"
    return _mismatch(kind, grade)


def _mismatch(kind: str, grade) -> str | None:
    if kind == "right" and not (grade.correct and grade.error is None):
        return f"was not accepted ({grade.feedback})"
    if kind == "wrong" and (grade.correct or grade.error is not None):
        return "was accepted" if grade.correct else f"was called malformed ({grade.error})"
    if kind == "invalid" and grade.error is None:
        return "was not reported as malformed"
    if kind == "hollow" and (grade.correct or grade.error is not None or grade.score != 0):
        # A derivation that applies no rule must earn nothing, whatever the part's options.
        if grade.error is not None:
            return f"was called malformed ({grade.error})"
        return f"scored {grade.score:g}: with these options an answer that applies no rule earns credit"
    return None


def _check_reference_is_no_misconception(part: Part, expected, options: dict, result: SelfTestResult) -> bool:
    """False, with a failure, when the part's reference answer is what one of the mistakes
    the part diagnoses gives on this variant (the diagnosis recomputes the right answer
    from the part's Q, K and V, independently of the reference). The reference counts as
    one answer checked: it takes the place of the unscaled answer, which can no longer be
    told apart from it, so a report's "answers checked" does not silently drop."""
    diagnose = options.get("diagnose")
    if not diagnose or part.type not in NUMERIC_TYPES:
        return True
    from grading.core.grades import InvalidRequest
    from grading.core.misconceptions import MISCONCEPTION_LABELS, diagnose_from_spec

    try:
        code = diagnose_from_spec(diagnose, np.asarray(expected, dtype=float), options)
    except (InvalidRequest, ValueError, TypeError) as exc:
        result.failures.append(f"{part.key}: the diagnosis could not run on the reference answer: {exc}")
        return False
    if code is None:
        return True
    result.checked += 1
    result.failures.append(
        f"the reference answer of part {part.key} matches the misconception '{code}' "
        f"({MISCONCEPTION_LABELS.get(code, code)}) the part diagnoses: students who make that mistake "
        "would be marked right, and the right answer wrong; check the part's answer expression"
    )
    return False


def _check_unscaled_diagnosis(part: Part, expected, options: dict, result: SelfTestResult, answers) -> None:
    diagnose = options.get("diagnose")
    if not diagnose or diagnose["quantity"] not in ("weights", "output"):
        return
    from grading.core.attention import attention

    unscaled = attention(diagnose["Q"], diagnose["K"], diagnose["V"], scale=1.0, causal=diagnose.get("mask") == "causal")
    row = getattr(unscaled, diagnose["quantity"])[diagnose["query_index"]]
    if np.allclose(row, expected, atol=1e-3):
        return  # scaling happens not to matter for this variant; nothing to diagnose
    result.checked += 1
    answer = [round(float(v), part.decimals) for v in row]
    wanted = UNSCALED_MISCONCEPTION[diagnose["quantity"]]
    try:
        grade = answers.check(part.type, expected, answer, options)
    except Exception as exc:
        result.failures.append(f"{part.key}: unscaled {diagnose['quantity']} made the checker raise {exc!r}")
        return
    if grade.correct or grade.misconception != wanted:
        result.failures.append(
            f"{part.key}: unscaled {diagnose['quantity']} {answer} got misconception "
            f"{grade.misconception!r}, expected {wanted!r}"
        )
