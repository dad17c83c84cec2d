"""Per-student variants: stable seeds, parameter generation, quality gates, redraws.

Randomness comes from SHA-256 in counter mode rather than NumPy's generators, so a
seed gives the same variant on every machine and under every NumPy version — a
student's matrices must never change because a dependency was upgraded.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import itertools
import json
import math
import secrets
from dataclasses import dataclass, field
from time import thread_time

import numpy as np

from .errors import CountedDrawProblem, DrawFailed, DrawProblem, ExpressionError, VariantError, count_draw_problems
from .expressions import MAX_ARRAY_ELEMENTS, MAX_DRAW_WORK, Expression, evaluate, to_json_value, work_budget
from .figures import figure_problems
from .grading import option_problems
from .reference import part_reference
from .source import render_path
from .spec import DEFAULT_MAX_WEIGHT, MAX_MATRIX_SIDE, NUMERIC_TYPES, ExerciseSpec, Gate, Parameter, Part

SEED_BITS = 63
# The CPU time one seed's draw, with its redraws, may take: a page draws a student's variant
# on its first visit, so a source whose gates refuse most draws of heavy parameters must not
# hold a web process for max_attempts of them. This thread's own CPU, not the clock: a busy
# machine, whose other threads hold the GIL, does not end a draw early.
DRAW_BUDGET_SECONDS = 2.0
# Numbers all the parameters of one variant may hold together: they are stored with each
# student's variant (a 316 × 316 derived matrix in each of 40 parameters was 80 MB of JSON
# per student, and seconds of converting it on every draw): the largest array an expression
# may make, and room for the small parameters beside it.
MAX_VARIANT_ENTRIES = MAX_ARRAY_ELEMENTS + 10_000


@dataclass(frozen=True)
class VariantDraw:
    params: dict
    seed: int
    attempts: int
    rejections: list[str] = field(default_factory=list)
    name: str | None = None  # a named variant such as "chapter", else None
    problems: list[DrawProblem] = field(default_factory=list)  # why each redraw was needed


def _keyed_seed(secret: str, key: list) -> int:
    if not secret:
        raise ValueError("a keyed seed needs a non-empty secret")
    digest = hmac.new(secret.encode(), json.dumps(key).encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def variant_seed(*, secret: str, course: str, assignment: str, student: str, slug: str, version: int) -> int:
    """A keyed hash of who gets what: stable everywhere, unguessable without the secret."""
    return _keyed_seed(secret, [str(course), str(assignment), str(student), str(slug), int(version)])


def pool_pick(*, secret: str, course: str, assignment: str, student: str, pool: str, size: int) -> int:
    """Which of a pool's ``size`` items (0-based, in the pool's order) a student is given.

    The same keyed hash as the variants, with the pool's name in the key (and a leading
    tag, so no pool key can equal a variant key); uniform, without modulo bias."""
    if size < 1:
        raise ValueError("a pool needs at least one item")
    seed = _keyed_seed(secret, ["pool", str(course), str(assignment), str(student), str(pool)])
    return DrawStream(seed, 0).integer(0, size - 1)


def shuffled_slots(*, secret: str, course: str, assignment: str, student: str, slots: list[str]) -> list[str]:
    """The student's own order of an assignment's slots (an item or a pool, by key).

    Each slot is placed by its own keyed hash, so the order needs no storage, is the same
    on every reload and regrade, and adding or removing a slot leaves the order of the
    others unchanged."""
    return sorted(
        slots,
        key=lambda slot: (
            _keyed_seed(secret, ["order", str(course), str(assignment), str(student), str(slot)]),
            slot,
        ),
    )


def practice_seed() -> int:
    """A fresh random seed for practice mode."""
    return secrets.randbits(SEED_BITS)


class DrawStream:
    """Deterministic uniform integers for one (seed, attempt) pair."""

    def __init__(self, seed: int, attempt: int):
        self._prefix = f"{int(seed)}:{int(attempt)}:".encode()
        self._counter = 0

    def _next_word(self) -> int:
        digest = hashlib.sha256(self._prefix + str(self._counter).encode()).digest()
        self._counter += 1
        return int.from_bytes(digest[:8], "big")

    def integer(self, low: int, high: int) -> int:
        """Uniform on low..high inclusive (rejection sampling avoids modulo bias)."""
        span = high - low + 1
        limit = (2**64 // span) * span
        while True:
            word = self._next_word()
            if word < limit:
                return low + word % span


def draw_variant(spec: ExerciseSpec, seed: int, *, name: str | None = None) -> VariantDraw:
    """Draw the parameters for ``seed``, redrawing (deterministically) past failed gates.

    With ``name`` the author's fixed values of that named variant are used and no gate
    is applied: a hand-picked variant is what it is.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
        raise ValueError(f"seed must be a whole number in [0, 2^{SEED_BITS}), got {seed!r}")
    if name is not None:
        return _named_variant(spec, seed, name)
    problems: list[DrawProblem] = []
    started = thread_time()
    for attempt in range(spec.max_attempts):
        if attempt and thread_time() - started > DRAW_BUDGET_SECONDS:
            raise VariantError(
                f"'{spec.slug}': no acceptable variant for seed {seed} within {DRAW_BUDGET_SECONDS:g} s "
                f"({attempt} attempts); last rejection: {problems[-1].reason}",
                [p.reason for p in problems],
                problems,
            )
        try:
            with work_budget(MAX_DRAW_WORK, "this draw (all its expressions together)"):
                params = generate_params(spec, DrawStream(seed, attempt))
                problem = first_failed_check(spec, params)
        except DrawFailed as failed:
            problem = failed.problem
        except ExpressionError as exc:  # not tied to one field (should not happen)
            problem = DrawProblem("evaluation error", f"evaluation error: {exc}", "the draw", "", None, "evaluation failed", str(exc))
        if problem is None:
            return VariantDraw(
                params=params, seed=seed, attempts=attempt + 1,
                rejections=[p.reason for p in problems], problems=problems,
            )
        problems.append(problem)
    raise VariantError(
        f"'{spec.slug}': no acceptable variant for seed {seed} in {spec.max_attempts} attempts; "
        f"last rejection: {problems[-1].reason}",
        [p.reason for p in problems],
        problems,
    )


@dataclass(frozen=True)
class DrawCheck:
    """Seeds drawn as students get them: which found no acceptable variant, and every
    reason a draw was refused, each told once with how many of the draws it refused."""

    seeds: list[int]
    failed_seeds: list[int]
    draws: int
    problems: list[CountedDrawProblem]
    params: dict[int, dict]  # seed -> the variant it gave, for each seed that gave one


def check_draws(spec: ExerciseSpec, seeds) -> DrawCheck:
    """Draw every seed of ``seeds`` (with its redraws) and count the refused draws by cause."""
    seeds = list(seeds)
    failed, problems, draws, params = [], [], 0, {}
    for seed in seeds:
        try:
            draw = draw_variant(spec, seed)
        except VariantError as error:
            failed.append(seed)
            draws += len(error.problems)
            problems += error.problems
        else:
            draws += draw.attempts
            problems += draw.problems
            params[seed] = draw.params
    return DrawCheck(seeds=seeds, failed_seeds=failed, draws=draws, problems=count_draw_problems(problems, draws),
                     params=params)


def _named_variant(spec: ExerciseSpec, seed: int, name: str) -> VariantDraw:
    if name not in spec.variants:
        known = ", ".join(spec.variants) or "none"
        raise ValueError(f"'{spec.slug}' has no variant named '{name}'; known: {known}")
    with work_budget(MAX_DRAW_WORK, "this draw (all its expressions together)"):
        params = generate_params(spec, DrawStream(seed, 0), fixed=spec.variants[name])
        # No gate applies to a hand-picked variant, but one its checkers cannot grade is refused:
        # it is never redrawn, so it would be given as it is.
        ungradable = option_problems(spec, params, feedback=False)
    if ungradable:
        raise VariantError(
            f"'{spec.slug}': the named variant '{name}' cannot be graded: {ungradable[0]}",
            [problem.reason for problem in ungradable], ungradable,
        )
    return VariantDraw(params=params, seed=seed, attempts=1, rejections=[], name=name)


def generate_params(spec: ExerciseSpec, stream: DrawStream, *, fixed: dict | None = None) -> dict:
    """All parameter values, in declaration order, as JSON-able data.

    Raises DrawFailed naming the parameter, field and line of whatever failed."""
    fixed = fixed or {}
    params: dict = {}
    used = 0
    for parameter in spec.parameters:
        if parameter.name in fixed:
            params[parameter.name] = fixed[parameter.name]
        else:
            value = _generate(spec, parameter, params, stream, room=MAX_VARIANT_ENTRIES - used)
            used += _entries(value)
            # A derived value comes stored already; converting it again costs a call per entry.
            params[parameter.name] = value if parameter.generator == "derived" else to_json_value(value)
    return params


def _entries(value) -> int:
    """How many numbers ``value`` holds: the product of its sizes, read down its first
    entries (a stored matrix is regular; a fixed value, at most MAX_LITERAL_ELEMENTS, need
    not be counted exactly), or 1 for a number."""
    if isinstance(value, np.ndarray):
        return int(value.size)
    count = 1
    while isinstance(value, list):
        count *= len(value)
        if not value:
            break
        value = value[0]
    return count


class _ParameterFields:
    """Evaluates a parameter's fields; a failure becomes a DrawFailed naming the field."""

    def __init__(self, spec: ExerciseSpec, parameter: Parameter, params: dict, room: int = MAX_VARIANT_ENTRIES):
        self.spec, self.parameter, self.params, self.room = spec, parameter, params, room

    def fail(self, field_path: tuple, message: str, action: str, detail: str):
        path = ("parameters", self.parameter.name) + field_path
        raise DrawFailed(message, DrawProblem(
            kind="evaluation error", reason=f"evaluation error: {message}",
            subject=f"parameter `{self.parameter.name}`", field=render_path(path),
            line=self.spec.line_of(path), action=action, detail=detail,
        ))

    def value(self, expression: Expression, field_path: tuple, *, stored: bool = False):
        """The expression's value (as a parameter stores it, when ``stored``)."""
        try:
            value = evaluate(expression, self.params)
        except ExpressionError as exc:
            self.fail(field_path, str(exc), f"expression `{expression.text}` failed", exc.detail)
        if not stored:
            return value
        entries = int(np.size(value)) if isinstance(value, np.ndarray) else 1
        if entries > self.room:
            detail = (f"the parameters of a variant hold at most {MAX_VARIANT_ENTRIES} numbers together "
                      f"(they are stored with every student's variant); this one would make "
                      f"{MAX_VARIANT_ENTRIES - self.room + entries}")
            self.fail(field_path, detail, f"expression `{expression.text}` failed", detail)
        try:
            return to_json_value(value)
        except ExpressionError as exc:
            self.fail(field_path, str(exc), f"expression `{expression.text}` failed", exc.detail)

    def whole(self, expression: Expression, field_path: tuple, what: str) -> int:
        value = self.value(expression, field_path)
        if isinstance(value, np.ndarray) or float(value) != int(value):
            shown = _shown(value)
            self.fail(field_path, f"{what} '{expression.text}' must be a whole number, got {shown}",
                      f"{what} `{expression.text}` is not a whole number", f"it is {shown}")
        return int(value)


def _shown(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a {'×'.join(str(size) for size in value.shape)} array"
    return f"{float(value):g}"


def _generate(spec: ExerciseSpec, parameter: Parameter, params: dict, stream: DrawStream, *,
              room: int = MAX_VARIANT_ENTRIES):
    settings = parameter.settings
    fields = _ParameterFields(spec, parameter, params, room)
    if parameter.generator == "fixed":
        return settings["value"]
    if parameter.generator == "derived":
        return fields.value(settings["expr"], ("expr",), stored=True)
    if parameter.generator == "choice":
        options = settings["from"]
        return options[stream.integer(0, len(options) - 1)]
    low = fields.whole(settings["min"], ("min",), "min")
    high = fields.whole(settings["max"], ("max",), "max")
    if low > high:
        fields.fail(("min",), f"parameter '{parameter.name}': min {low} is above max {high}",
                    "the bounds leave nothing to draw", f"min {low} is above max {high}")
    if parameter.generator == "int_range":
        return stream.integer(low, high)
    shape = [fields.whole(size, ("shape", i), "shape") for i, size in enumerate(settings["shape"])]
    if not all(1 <= size <= MAX_MATRIX_SIDE for size in shape):
        fields.fail(("shape",), f"parameter '{parameter.name}': shape {shape} outside 1..{MAX_MATRIX_SIDE}",
                    "the shape is impossible", f"shape {shape} is outside 1..{MAX_MATRIX_SIDE}")
    values = [stream.integer(low, high) for _ in range(math.prod(shape))]
    return np.asarray(values, dtype=float).reshape(shape)


def every_variant(spec: ExerciseSpec, limit: int, *, budget: int | None = None, per_variant: int = 0
                  ) -> list[dict] | None:
    """Every parameter set the generators can give, in declaration order (each parameter
    over every value its generator can take given the ones above), before any gate; None
    when there are more than ``limit`` at any step, or when evaluating them (counted in
    syntax-tree nodes) and ``per_variant`` more nodes for each would pass ``budget``. A
    branch on which a field cannot be evaluated gives no variant (a draw there is redrawn).
    Values are stored as ``generate_params`` stores them."""
    partial: list[dict] = [{}]
    work = 0
    for parameter in spec.parameters:
        work += len(partial) * _evaluation_size(parameter)
        if budget is not None and work > budget:
            return None
        extended: list[dict] = []
        for params in partial:
            values = _possible_values(spec, parameter, params, room=limit - len(extended))
            if values is None:
                return None
            extended += [{**params, parameter.name: value} for value in values]
        partial = extended
    if budget is not None and work + len(partial) * per_variant > budget:
        return None
    return partial


def _evaluation_size(parameter: Parameter) -> int:
    """The syntax-tree nodes evaluated to draw ``parameter`` once (at least 1)."""
    expressions = [value for value in parameter.settings.values() if isinstance(value, Expression)]
    expressions += [size for size in parameter.settings.get("shape", []) if isinstance(size, Expression)]
    return 1 + sum(expression_size(expression) for expression in expressions)


def expression_size(expression: Expression) -> int:
    """The nodes of ``expression``'s syntax tree: what evaluating it once costs."""
    return sum(1 for _ in ast.walk(expression.tree))


def _possible_values(spec: ExerciseSpec, parameter: Parameter, params: dict, *, room: int) -> list | None:
    """Every value ``parameter`` can be drawn as after ``params`` ([] when none can), or
    None when there are more than ``room``."""
    settings = parameter.settings
    fields = _ParameterFields(spec, parameter, params)
    try:
        if parameter.generator == "fixed":
            values = [to_json_value(settings["value"])]
        elif parameter.generator == "derived":
            values = [fields.value(settings["expr"], ("expr",), stored=True)]
        elif parameter.generator == "choice":
            stored = (to_json_value(option) for option in settings["from"])
            values = list({json.dumps(option): option for option in stored}.values())
        else:
            low = fields.whole(settings["min"], ("min",), "min")
            high = fields.whole(settings["max"], ("max",), "max")
            if low > high:
                return []
            if parameter.generator == "int_range":
                values = range(low, high + 1)
            else:
                shape = [fields.whole(size, ("shape", i), "shape") for i, size in enumerate(settings["shape"])]
                if not all(1 <= size <= MAX_MATRIX_SIDE for size in shape):
                    return []
                if (high - low + 1) ** math.prod(shape) > room:
                    return None
                values = [to_json_value(np.asarray(entries, dtype=float).reshape(shape))
                          for entries in itertools.product(range(low, high + 1), repeat=math.prod(shape))]
    except (DrawFailed, ValueError, OverflowError):  # a bound of NaN or infinity: that draw fails too
        return []
    return list(values) if len(values) <= room else None


# ---------------------------------------------------------------------------
# Quality gates
# ---------------------------------------------------------------------------


def first_failed_gate(spec: ExerciseSpec, params: dict) -> str | None:
    """The reason this variant is unfit to be shown, or None if it passes every gate."""
    problem = first_failed_check(spec, params)
    return problem.reason if problem else None


def first_failed_check(spec: ExerciseSpec, params: dict) -> DrawProblem | None:
    """Why this variant is unfit to be shown, naming the part, figure, gate or option, or
    None if it passes every gate. Raises DrawFailed when a part's answer or a gate cannot
    be evaluated (a figure that cannot be is returned as its problem, and so is an option
    its checker grades with that does not fill in on this variant: ``grading.option_problems``)."""
    references = {part.key: _part_reference(spec, part, params) for part in spec.parts}
    for part in spec.parts:
        if part.type in NUMERIC_TYPES:
            reason = _numeric_reference_problem(part.key, references[part.key], part.decimals, spec.rounding_margin)
            if reason:
                return _part_problem(spec, part, "answer", reason)
        if part.diagnose and part.diagnose["quantity"] in ("weights", "output"):
            reason = _diagnosed_query_problem(spec, part, params)
            if reason:
                return _part_problem(spec, part, "diagnose", reason)
    unshowable = figure_problems(spec, params)
    if unshowable:
        return unshowable[0]
    for gate in spec.gates:
        reason = _gate_problem(gate, _gate_value(spec, gate, params))
        if reason:
            path = ("gates", "checks", gate.index)
            return DrawProblem(
                kind=reason.split(":", 1)[0], reason=reason, subject=_gate_subject(gate),
                field=render_path(path), line=spec.line_of(path), action="rejected the draw",
                detail=gate.reason if gate.kind == "require" else reason.split(": ", 1)[-1],
            )
    ungradable = option_problems(spec, params, feedback=False)
    return ungradable[0] if ungradable else None


PART_PROBLEM_ACTIONS = {
    "non-finite": "the reference answer is not a finite number",
    "rounding boundary": "the reference answer sits on a rounding boundary",
    "saturated": "the attention weights are saturated",
}


def _part_problem(spec: ExerciseSpec, part: Part, field_name: str, reason: str) -> DrawProblem:
    kind, _, detail = reason.partition(": ")
    path = ("parts", part.index, field_name)
    return DrawProblem(
        kind=kind, reason=reason, subject=f"part `{part.key}`", field=render_path(path),
        line=spec.line_of(path), action=PART_PROBLEM_ACTIONS.get(kind, kind), detail=detail,
    )


def _part_reference(spec: ExerciseSpec, part: Part, params: dict):
    try:
        return part_reference(part, params)
    except ExpressionError as exc:
        field_name = "answer_index" if part.answer_index is not None else "answer"
        expression = part.answer_index or part.answer_expression
        action = f"expression `{expression.text}` failed" if expression is not None else "the answer could not be filled in"
        path = ("parts", part.index, field_name)
        raise DrawFailed(str(exc), DrawProblem(
            kind="evaluation error", reason=f"evaluation error: {exc}", subject=f"part `{part.key}`",
            field=render_path(path), line=spec.line_of(path), action=action, detail=exc.detail,
        )) from None


def _diagnosed_query_problem(spec: ExerciseSpec, part: Part, params: dict) -> str | None:
    try:
        return _saturated_query(part.diagnose, params)
    except ExpressionError as exc:
        path = ("parts", part.index, "diagnose")
        raise DrawFailed(str(exc), DrawProblem(
            kind="evaluation error", reason=f"evaluation error: {exc}", subject=f"part `{part.key}`",
            field=render_path(path), line=spec.line_of(path), action="the diagnosis could not be evaluated",
            detail=exc.detail,
        )) from None


def _gate_subject(gate: Gate) -> str:
    return f"gate `{gate.kind}: {gate.expression.text}`"


def _gate_value(spec: ExerciseSpec, gate: Gate, params: dict):
    try:
        return evaluate(gate.expression, params)
    except ExpressionError as exc:
        path = ("gates", "checks", gate.index, "expr")
        raise DrawFailed(str(exc), DrawProblem(
            kind="evaluation error", reason=f"evaluation error: {exc}", subject=_gate_subject(gate),
            field=render_path(path), line=spec.line_of(path),
            action=f"expression `{gate.expression.text}` failed", detail=exc.detail,
        )) from None


def _numeric_reference_problem(key: str, value, decimals: int, margin: float) -> str | None:
    values = np.asarray(value, dtype=float).ravel()
    if not np.all(np.isfinite(values)):
        return f"non-finite: part {key} has a non-finite reference answer"
    if margin <= 0:
        return None
    for number in values:
        # An exact half at the displayed decimals could round either way in print.
        scaled = abs(number) * 10**decimals
        if abs(scaled - math.floor(scaled) - 0.5) < margin:
            return f"rounding boundary: part {key} value {number:.{decimals + 3}f} is within {margin} of a half-unit at {decimals} decimals"
    return None


def _saturated_query(diagnose: dict, params: dict) -> str | None:
    from grading.core.attention import attention

    Q, K, V = (np.asarray(evaluate(diagnose[name], params), dtype=float) for name in ("Q", "K", "V"))
    query = int(evaluate(diagnose["query_index"], params))
    weights = attention(Q, K, V, causal=diagnose.get("mask") == "causal").weights[query]
    top = float(np.max(weights))
    if top > DEFAULT_MAX_WEIGHT:
        return f"saturated: top weight {top:.4f} > {DEFAULT_MAX_WEIGHT} for query {query}"
    return None


def _gate_problem(gate: Gate, value) -> str | None:
    if gate.kind == "require":
        return None if bool(np.all(value)) else f"require: {gate.reason}"
    values = np.asarray(value, dtype=float)
    if gate.kind == "max_weight":
        top = float(np.max(values))
        return f"saturated: top weight {top:.4f} > {gate.limit} ({gate.expression.text})" if top > gate.limit else None
    if gate.kind == "entry_range":
        low, high = gate.limit
        if np.any(values < low) or np.any(values > high):
            return f"out of range: entries of {gate.expression.text} outside [{low}, {high}]"
        return None
    if gate.kind == "unique_max":
        rows = np.atleast_2d(values)
        gap_needed = gate.limit if gate.limit is not None else 1e-9
        for row in rows:
            ordered = np.sort(row)[::-1]
            if ordered.size > 1 and ordered[0] - ordered[1] <= gap_needed:
                return f"tie: no unique maximum in {gate.expression.text}"
        return None
    if gate.kind == "not_constant":
        rows = np.atleast_2d(values)
        if any(np.ptp(row) <= 1e-12 for row in rows):
            return f"constant: all entries equal in a row of {gate.expression.text}"
        return None
    raise ValueError(f"unknown gate kind {gate.kind}")  # refused at load time
