"""Per-student variants: stable seeds, parameter generation, quality gates, redraws.

Randomness comes from SHA-256 in counter mode rather than NumPy's generators, so a
seed gives the same variant on every machine and under every NumPy version — a
student's matrices must never change because a dependency was upgraded.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
from dataclasses import dataclass, field

import numpy as np

from .errors import ExpressionError, VariantError
from .expressions import evaluate, to_json_value
from .reference import reference_answers
from .spec import DEFAULT_MAX_WEIGHT, MAX_MATRIX_SIDE, NUMERIC_TYPES, ExerciseSpec, Gate, Parameter

SEED_BITS = 63


@dataclass(frozen=True)
class VariantDraw:
    params: dict
    seed: int
    attempts: int
    rejections: list[str] = field(default_factory=list)
    name: str | None = None  # a named variant such as "chapter", else None


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
    rejections: list[str] = []
    for attempt in range(spec.max_attempts):
        try:
            params = generate_params(spec, DrawStream(seed, attempt))
            reason = first_failed_gate(spec, params)
        except ExpressionError as exc:
            reason = f"evaluation error: {exc}"
        if reason is None:
            return VariantDraw(params=params, seed=seed, attempts=attempt + 1, rejections=rejections)
        rejections.append(reason)
    raise VariantError(
        f"'{spec.slug}': no acceptable variant for seed {seed} in {spec.max_attempts} attempts; "
        f"last rejection: {rejections[-1]}",
        rejections,
    )


def _named_variant(spec: ExerciseSpec, seed: int, name: str) -> VariantDraw:
    if name not in spec.variants:
        known = ", ".join(spec.variants) or "none"
        raise ValueError(f"'{spec.slug}' has no variant named '{name}'; known: {known}")
    params = generate_params(spec, DrawStream(seed, 0), fixed=spec.variants[name])
    return VariantDraw(params=params, seed=seed, attempts=1, rejections=[], name=name)


def generate_params(spec: ExerciseSpec, stream: DrawStream, *, fixed: dict | None = None) -> dict:
    """All parameter values, in declaration order, as JSON-able data."""
    fixed = fixed or {}
    params: dict = {}
    for parameter in spec.parameters:
        if parameter.name in fixed:
            params[parameter.name] = fixed[parameter.name]
        else:
            params[parameter.name] = to_json_value(_generate(parameter, params, stream))
    return params


def _generate(parameter: Parameter, params: dict, stream: DrawStream):
    settings = parameter.settings
    if parameter.generator == "fixed":
        return settings["value"]
    if parameter.generator == "derived":
        return evaluate(settings["expr"], params)
    if parameter.generator == "choice":
        options = settings["from"]
        return options[stream.integer(0, len(options) - 1)]
    low, high = _whole(settings["min"], params, "min"), _whole(settings["max"], params, "max")
    if low > high:
        raise ExpressionError(f"parameter '{parameter.name}': min {low} is above max {high}")
    if parameter.generator == "int_range":
        return stream.integer(low, high)
    shape = [_whole(size, params, "shape") for size in settings["shape"]]
    if not all(1 <= size <= MAX_MATRIX_SIDE for size in shape):
        raise ExpressionError(f"parameter '{parameter.name}': shape {shape} outside 1..{MAX_MATRIX_SIDE}")
    values = [stream.integer(low, high) for _ in range(math.prod(shape))]
    return np.asarray(values, dtype=float).reshape(shape)


def _whole(expression, params: dict, what: str) -> int:
    value = evaluate(expression, params)
    if isinstance(value, np.ndarray) or float(value) != int(value):
        raise ExpressionError(f"{what} '{expression.text}' must be a whole number, got {value}")
    return int(value)


# ---------------------------------------------------------------------------
# Quality gates
# ---------------------------------------------------------------------------


def first_failed_gate(spec: ExerciseSpec, params: dict) -> str | None:
    """The reason this variant is unfit to be shown, or None if it passes every gate."""
    references = reference_answers(spec, params)
    for part in spec.parts:
        if part.type in NUMERIC_TYPES:
            reason = _numeric_reference_problem(part.key, references[part.key], part.decimals, spec.rounding_margin)
            if reason:
                return reason
        if part.diagnose and part.diagnose["quantity"] in ("weights", "output"):
            reason = _saturated_query(part.diagnose, params)
            if reason:
                return reason
    for gate in spec.gates:
        reason = _gate_problem(gate, evaluate(gate.expression, params))
        if reason:
            return reason
    return None


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
    weights = attention(Q, K, V).weights[query]
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
