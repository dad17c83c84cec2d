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
import json
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .errors import DrawFailed, DrawProblem, ExpressionError, SpecIssue
from .expressions import Expression, evaluate
from .grading import option_problems, part_options
from .reference import fill_plain, part_reference
from .source import Path, render_path
from .spec import (
    MAX_EVERY_VARIANT_WORK,
    MAX_VARIANTS_CHECKED_EVERY,
    NUMERIC_TYPES,
    PLACEHOLDER_PATTERN,
    ExerciseSpec,
    Part,
    parse_placeholder,
)


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
    unfilled = _unfilled_options(spec, params, result)
    for part in spec.parts:
        try:
            answers.checker_module(part.type)
        except ImportError:
            result.skipped.append(f"{part.key}: no checker for answer type '{part.type}'")
            continue
        expected = part_reference(part, params)
        if part.key in unfilled:
            continue  # its checker cannot be given the options it grades with on this variant
        options = part_options(spec, params, part.key)
        _check_declared_tolerance(spec, part, params, expected, options, result)
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


def declared_tolerance_problems(spec: ExerciseSpec, params: dict) -> list[str]:
    """What ``self_test_variant`` says of the parts' declared tolerances on this variant
    (one that accepts 0, or a known wrong value), without running any checker: cheap enough
    for every save and publish to try on a few seeds."""
    result = SelfTestResult()
    for part in spec.parts:
        if part.type not in NUMERIC_TYPES:
            continue
        try:
            options = part_options(spec, params, part.key)
            expected = part_reference(part, params)
        except (ExpressionError, DrawFailed):
            continue  # reported by the draws' own checks
        _check_declared_tolerance(spec, part, params, expected, options, result)
    return result.failures


def _unfilled_options(spec: ExerciseSpec, params: dict, result: SelfTestResult) -> set[str]:
    """A failure for every template of the parts' options that does not fill in on this
    variant; the keys of the parts whose checker cannot be given its options at all (a
    feedback entry that does not fill in is left out, and the part is still tested)."""
    ungradable = set()
    for feedback in (False, True):
        for problem in option_problems(spec, params, feedback=feedback):
            part = _part_of(spec, problem)
            result.checked += 1
            result.failures.append(
                f"{part.key}: {_located(problem.line, problem.field)}{problem.action} on this variant "
                f"({_variant_values(_template_names(problem.action), params)}): {problem.detail}"
            )
            if not feedback:
                ungradable.add(part.key)
    return ungradable


def _part_of(spec: ExerciseSpec, problem: DrawProblem) -> Part:
    return next(part for part in spec.parts if problem.subject == f"part `{part.key}`")


def _located(line: int | None, field_path: str) -> str:
    return f"line {line}: {field_path}: " if line is not None else f"{field_path}: "


def _template_names(text: str) -> list[str]:
    """The parameters the {{ }} placeholders of ``text`` read, in order of first use."""
    names: dict[str, None] = {}
    for match in PLACEHOLDER_PATTERN.finditer(text):
        try:
            names.update(dict.fromkeys(sorted(parse_placeholder(match.group(1), None).expression.names)))
        except ExpressionError:
            continue
    return list(names)


MAX_SHOWN_VALUE = 60  # characters of one parameter's value in a message; a longer one is named by its shape


def _variant_values(names, params: dict) -> str:
    """``r = 0, d_k = 16``: the values on this variant of the parameters ``names``."""
    shown = []
    for name in names:
        if name not in params:
            continue
        value = params[name]
        text = json.dumps(value) if isinstance(value, (list, bool)) else _number(value)
        if len(text) > MAX_SHOWN_VALUE:
            array = np.asarray(value, dtype=float)
            text = f"a {'×'.join(map(str, array.shape))} array"
        shown.append(f"{name} = {text}")
    return ", ".join(shown) or "no parameters"


# Two numbers this close (relative to the right value, at least absolutely) are one value
# computed two ways (a known wrong value that is right on this variant), not a slip.
SAME_VALUE = 1e-9


def _check_declared_tolerance(spec: ExerciseSpec, part: Part, params: dict, expected, options: dict,
                              result: SelfTestResult) -> None:
    """A failure when a declared tolerance (not a number of decimals) accepts, on this
    variant, 0 for a right value that is not 0 (for a matrix: 0 in every entry), or one of
    the part's known wrong values that is not the right value itself. An absolute tolerance
    says nothing of the answer's size, which depends on the variant; a relative one below 1
    never accepts 0 alone, but with an absolute one added may."""
    from grading.core import numeric
    from grading.core.grades import InvalidRequest

    if part.type not in NUMERIC_TYPES or options.get("shape") or "decimals" in options or "sigfigs" in options:
        return
    if "atol" not in options and "rtol" not in options:
        return
    try:
        values = [Fraction(repr(float(value))) for value in np.asarray(expected, dtype=float).ravel()]
        tolerances = [numeric.exact_tolerance(value, options) for value in values]
        zero_accepted = any(values) and all(numeric.numbers_match(value, 0, options) for value in values)
        known = _known_wrong_values(part, params) if part.type == "numeric" and values else []
        accepted = [(index, wrong) for index, wrong in known
                    if numeric.numbers_match(values[0], wrong, options) and not _same_value(values[0], wrong)]
    except (InvalidRequest, ValueError, OverflowError):
        return  # the self-test's answers report a tolerance or value the checker cannot use
    path = _tolerance_path(part)
    where = _located(spec.line_of(path), render_path(path))
    variant = _variant_values(sorted(part.answer_expression.names), params)
    if zero_accepted:
        result.checked += 1
        if part.type == "numeric":
            accepts = (f"accepts 0 for the right value {_number(values[0])} on this variant ({variant}): 0 is "
                       f"{_number(abs(values[0]))} from it, within the tolerance {_number(tolerances[0])} there")
        else:
            accepts = (f"accepts 0 in every entry of the right value {_numbers(values)} on this variant ({variant}): "
                       f"each entry is within its tolerance of 0 (at most {_number(max(tolerances))} there)")
        result.failures.append(f"{part.key}: {where}the tolerance {accepts}; a tolerance must be smaller than the "
                               "right value's distance to 0, or 0 is graded right")
    for index, wrong in accepted:
        result.checked += 1
        entry_path = ("parts", part.index, "options", "value_feedback", index, "value")
        entry_line = spec.line_of(entry_path)
        entry = render_path(entry_path[2:]) + (f", line {entry_line}" if entry_line is not None else "")
        result.failures.append(
            f"{part.key}: {where}the tolerance accepts the known wrong value {_number(wrong)} ({entry}) for the "
            f"right value {_number(values[0])} on this variant ({variant}): they are "
            f"{_number(abs(wrong - values[0]))} apart, within the tolerance {_number(tolerances[0])} there; a tolerance must be smaller than the "
            "distance from the right value to every known wrong value, or that slip is graded right"
        )


def _tolerance_path(part: Part) -> Path:
    """Where the tolerance that grades the part is written: ``options.atol`` / ``rtol``
    override the part's ``tolerance``."""
    for name in ("atol", "rtol"):
        if name in part.options:
            return ("parts", part.index, "options", name)
    return ("parts", part.index, "tolerance")


def _known_wrong_values(part: Part, params: dict) -> list[tuple[int, Fraction]]:
    """(index, value) of every known wrong value of the part that fills in to a number on
    this variant, read as the numeric checker reads it."""
    from grading.core import numeric
    from grading.core.grades import InvalidRequest

    entries = part.options.get("value_feedback")
    known = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or "value" not in entry:
            continue
        try:
            value = fill_plain(entry["value"], params)
            read = numeric.known_wrong_values({"value_feedback": [{"value": value, "feedback": "-"}]}, strict=True)
        except (ExpressionError, InvalidRequest, ValueError):
            continue  # reported by the options' own check, or when the file was read
        known.append((index, read[0][0]))
    return known


def _same_value(right: Fraction, other: Fraction) -> bool:
    return abs(float(other) - float(right)) <= SAME_VALUE * max(1.0, abs(float(right)))


def _number(value) -> str:
    return f"{float(value):.6g}"


def _numbers(values) -> str:
    return "[" + ", ".join(_number(value) for value in values) + "]"


def options_on_every_variant(spec: ExerciseSpec, *, limit: int = MAX_VARIANTS_CHECKED_EVERY) -> list[SpecIssue]:
    """Every feedback template of the parts' options (a known wrong value or expression, a
    choice's feedback) that does not fill in on some of the variants students can be given,
    when the parameters can take at most ``limit`` sets of values: then every variant is
    filled in, not a sample, and each such template is one issue naming its line, how many
    variants it fails on and the values of one ([] for a larger space). Grading leaves such
    an entry out, so its feedback would silently not be said on those variants.

    A template that fills in on none of them is left to the drawn variants' check, which
    every drawn variant fails (``rendering.text_problems``); an option a checker grades with
    needs no issue here, as a variant it does not fill in on is redrawn."""
    if not any(_feedback_templates(part) for part in spec.parts):
        return []
    from .variants import every_variant

    variants = every_variant(spec, limit, budget=MAX_EVERY_VARIANT_WORK, per_variant=_variant_check_size(spec))
    if variants is None:
        return []
    failed: dict[str, list[tuple[DrawProblem, int]]] = {}
    for index, params in enumerate(variants):
        for problem in option_problems(spec, params, feedback=True):
            failed.setdefault(problem.field, []).append((problem, index))
    if not failed:
        return []
    shown = {index for index, params in enumerate(variants) if _can_be_given(spec, params)}
    failed = {field_path: [(problem, index) for problem, index in failures if index in shown]
              for field_path, failures in failed.items()}
    issues = []
    for field_path, failures in failed.items():
        if not failures or len(failures) == len(shown):
            continue
        problem, index = failures[0]
        params = variants[index]
        count = f"{len(failures)} of the {len(shown)} variants students can be given"
        example = _variant_values(_template_names(problem.action), params)
        issues.append(SpecIssue(problem.line, field_path, (
            f"{problem.subject}: {problem.action} on {count}, e.g. {example}: {problem.detail}; "
            "it must fill in on every variant (a gate with kind: require can rule the others out)"
        )))
    return issues


def _can_be_given(spec: ExerciseSpec, params: dict) -> bool:
    """Whether a draw of these parameters is kept (passes every check and gate), not redrawn."""
    from .variants import first_failed_check

    try:
        return first_failed_check(spec, params) is None
    except (DrawFailed, ExpressionError):
        return False


def _variant_check_size(spec: ExerciseSpec) -> int:
    """The syntax-tree nodes evaluated to check one variant: its answers, diagnoses, gates,
    figures and the templates of its options (feedback, then whether it can be given)."""
    from .variants import expression_size

    expressions = [gate.expression for gate in spec.gates] + [figure.expression for figure in spec.figures]
    templates = []
    for part in spec.parts:
        expressions += [part.answer_expression, part.answer_index]
        expressions += [value for value in part.diagnose.values() if isinstance(value, Expression)]
        templates += [choice.get("feedback") or "" for choice in part.choices]
        templates.append(json.dumps(part.options))
    for text in templates:
        for match in PLACEHOLDER_PATTERN.finditer(text):
            try:
                expressions.append(parse_placeholder(match.group(1), None).expression)
            except ExpressionError:
                continue
    return 1 + sum(expression_size(expression) for expression in expressions if expression is not None)


def _feedback_templates(part: Part) -> bool:
    """Whether a feedback entry of the part (known wrong values or expressions, a choice's
    feedback) has a {{ }} template."""
    texts = [choice.get("feedback") or "" for choice in part.choices]
    for name in ("value_feedback", "expression_feedback"):
        entries = part.options.get(name)
        if isinstance(entries, list):
            texts += [json.dumps(entry) for entry in entries]
    return any(PLACEHOLDER_PATTERN.search(text) for text in texts)


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
