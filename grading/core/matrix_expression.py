"""Matrix-expression answers such as ``softmax(Q K^T / sqrt(d_k)) V``.

Options:
    matrices  {name: [rows, cols]}; sizes are numbers or names from ``scalars``
    scalars   {name: value}; ``d_k`` defaults to the width of K (or Q) when not given

Syntax: products by juxtaposition, ``*`` or ``@`` (matrix products do not commute),
``K^T`` / ``K^{\\top}`` / ``Kᵀ`` / ``transpose(K)`` for a transpose, ``/`` by a scalar,
functions ``softmax`` (row-wise), ``sqrt``, ``exp`` (element-wise), ``transpose``.
The text goes through the same safe reader as symbolic answers (no eval).
Grading evaluates both expressions with NumPy at three shape assignments (the declared
sizes and two redraws in which every dimension -- n, d_k, d_v, ... -- takes a new value,
scalars named for a dimension following it) with seeded random entries, and compares
with a tolerance relative to the size of the result (1e-12), far below any slip. An
answer right only at the declared sizes (``sqrt(32)`` for ``sqrt(d_k)``) is told to write
the size in terms of its name. Known slips (no scaling, d_k for √d_k, softmax over
columns, transposed weights, scaling after the softmax, K Qᵀ, V on the left, √d_model for a
head's scale, a transposed result) are named. A product of incompatible shapes is explained,
with a transpose hint. A right answer is checked once more at sizes and entries keyed by a
secret (``keyed_draw``), so one fitted to the seeded sizes is wrong; and once more with every
scalar (d_k, n, ...) given a value of its own that is not whole (``keyed_scalar_draw``), so a term
that vanishes at every whole size, (d_k-2)(d_k-3)...(d_k-24) X, is wrong too. There every part
of the answer must be 0 or between 1e-6 and 1e6 in size (``PART_RANGE``): a term such as
``10^-20 V``, lost in rounding, is named rather than passed. A number with more digits than are
computed with (1.0000000000000001, computed as 1.0) is refused when read. A power of a matrix
(``Q^-1``, ``(Q K^T)^2``) is not part of the format: it is refused when the answer is read,
so it uses no attempt.
"""

from __future__ import annotations

import ast
import json
import random
from decimal import Decimal, InvalidOperation
from functools import lru_cache

import numpy as np

from grading.core import attention, misconceptions, safe_expr, symbolic
from grading.core.grades import AnswerFormatError, Grade, InvalidRequest, Parsed, invalid, right, wrong

GRAMMAR = safe_expr.Grammar(
    functions=frozenset({"softmax", "sqrt", "exp", "transpose"}),
    transpose=True,
    matmul=True,
)
TRIALS = 3
SEED = 20240611
MAX_SIZE = 64


class ShapeMismatch(Exception):
    """The expression is well formed but multiplies or adds incompatible shapes."""

    def __init__(self, message: str, misconception: str | None = None):
        super().__init__(message)
        self.misconception = misconception


DIMENSION_NAMES = frozenset({"n", "m", "d_k", "d_q", "d_v", "n_q", "n_k"})
SHAPE_ASSIGNMENTS = 3  # the declared shapes and two more, so every dimension takes three values
RESULT_RTOL = 1e-12  # relative to the largest entry of the result: far below any slip


def _shapes_and_scalars(options: dict) -> tuple[dict, dict]:
    shapes, scalars, _ = _declared(options)
    return shapes, scalars


def _declared(options: dict) -> tuple[dict, dict, dict]:
    """(shapes, scalar values, dimensions): each dimension maps to the (matrix, axis) pairs
    and scalar names that carry it, so it can be varied consistently."""
    scalars = options.get("scalars") or {}
    matrices = options.get("matrices")
    if not isinstance(matrices, dict) or not matrices:
        raise InvalidRequest("option 'matrices' must map matrix names to [rows, cols]")
    if not isinstance(scalars, dict):
        raise InvalidRequest("option 'scalars' must map names to numbers")
    try:
        scalar_values = {str(name): float(value) for name, value in scalars.items()}
    except (TypeError, ValueError, OverflowError):
        raise InvalidRequest("every value in option 'scalars' must be a number") from None
    shapes, dimensions = {}, {}
    for name, shape in matrices.items():
        if not isinstance(shape, (list, tuple)) or len(shape) != 2:
            raise InvalidRequest(f"shape of {name!r} must be [rows, cols]")
        sizes = tuple(_size(size, scalar_values, name) for size in shape)
        shapes[str(name)] = sizes
        for axis, (size, value) in enumerate(zip(shape, sizes)):
            label = size if isinstance(size, str) else f"#{value}"
            dimension = dimensions.setdefault(label, {"value": value, "axes": [], "scalars": set()})
            dimension["axes"].append((str(name), axis))
            if isinstance(size, str):
                dimension["scalars"].add(size)
    if "d_k" not in scalar_values:
        source = shapes.get("K") or shapes.get("Q")
        if source:
            scalar_values["d_k"] = float(source[1])
    for name, value in scalar_values.items():
        anonymous = dimensions.get(f"#{int(value)}") if float(value).is_integer() else None
        if name in DIMENSION_NAMES and anonymous is not None and not any(name in d["scalars"] for d in dimensions.values()):
            anonymous["scalars"].add(name)  # d_k = 16 with K declared [4, 16]: the same dimension
    return shapes, scalar_values, dimensions


def _size(size, scalars: dict, name: str) -> int:
    value = scalars.get(size) if isinstance(size, str) else size
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        raise InvalidRequest(f"size {size!r} of {name!r} must be a whole number from 1 to {MAX_SIZE}")
    return value


def shape_assignments(shapes: dict, scalars: dict, dimensions: dict, count: int = SHAPE_ASSIGNMENTS,
                      seed: int = SEED) -> list[tuple[dict, dict]]:
    """(shapes, scalars) for the declared sizes and ``count - 1`` redraws in which every
    dimension takes a new value, different from its others and from the other dimensions'."""
    return [(shapes, scalars)] + [
        _assigned(shapes, scalars, dimensions, values) for values in _redrawn_sizes(dimensions, count - 1, seed)
    ]


def _redrawn_sizes(dimensions: dict, count: int, seed: int = SEED) -> list[dict]:
    """``count`` sets of sizes by dimension label, each size new for its dimension and
    different from the other dimensions' in the same set (``shape_assignments``)."""
    rng = np.random.default_rng(seed + 1)
    used = {label: {dimension["value"]} for label, dimension in dimensions.items()}
    redraws = []
    for _ in range(count):
        values, taken = {}, set()
        for label in sorted(dimensions):
            candidates = [size for size in range(2, 13) if size not in used[label] and size not in taken]
            value = int(rng.choice(candidates)) if candidates else dimensions[label]["value"]
            values[label] = value
            taken.add(value)
            used[label].add(value)
        redraws.append(values)
    return redraws


def _seeded_sizes(dimensions: dict) -> dict[str, set[int]]:
    """Every size each dimension takes in ``shape_assignments``: the declared one and the
    redraws."""
    seeded = {label: {dimension["value"]} for label, dimension in dimensions.items()}
    for values in _redrawn_sizes(dimensions, SHAPE_ASSIGNMENTS - 1):
        for label, value in values.items():
            seeded[label].add(value)
    return seeded


def _assigned(shapes: dict, scalars: dict, dimensions: dict, values: dict) -> tuple[dict, dict]:
    """(shapes, scalars) with every dimension set to ``values[label]``."""
    new_shapes = {name: list(shape) for name, shape in shapes.items()}
    new_scalars = dict(scalars)
    for label, dimension in dimensions.items():
        for matrix, axis in dimension["axes"]:
            new_shapes[matrix][axis] = values[label]
        for scalar in dimension["scalars"]:
            new_scalars[scalar] = float(values[label])
    return {name: tuple(shape) for name, shape in new_shapes.items()}, new_scalars


# The sizes and entries above are seeded in the source, so an answer could be built to agree
# with the result only at them: softmax(Q Kᵀ / (a d_k² + b d_k + c)) V with a quadratic through
# √d_k at the three values d_k takes. A right answer is checked once more at sizes and entries
# drawn from a keyed hash of the two expressions (``symbolic.unpredictable_rng``): a formula that
# is right for every size agrees there too, and one fitted to the seeded sizes cannot know them.
KEYED_SIZES = range(2, 25)
ONLY_AT_SOME_SIZES = ("Not quite: your expression gives the right values only for some sizes of the matrices, "
                      "not for every size; write it in terms of the matrices and their dimensions.")


def keyed_draw(expected_checked, checked, shapes: dict, scalars: dict, dimensions: dict) -> dict:
    """Matrices and scalars at sizes and entries no answer can be written against."""
    rng = symbolic.unpredictable_rng(expected_checked.text, checked.text)
    new_shapes, new_scalars = _assigned(shapes, scalars, dimensions, _keyed_sizes(rng, dimensions))
    generator = np.random.default_rng(rng.randrange(2**63))
    draw = {name: generator.standard_normal(shape) for name, shape in sorted(new_shapes.items())}
    return {**draw, **new_scalars}


def _keyed_sizes(rng, dimensions: dict) -> dict[str, int]:
    """A size for each dimension from ``KEYED_SIZES``, none that the dimension takes in
    ``shape_assignments`` (there a formula fitted to the seeded sizes agrees by construction)
    and, while there are enough, none shared with another dimension."""
    seeded = _seeded_sizes(dimensions)
    picked: dict[str, int] = {}
    for label in sorted(dimensions):
        fresh = [size for size in KEYED_SIZES if size not in seeded[label]]
        unshared = [size for size in fresh if size not in picked.values()]
        picked[label] = rng.choice(unshared or fresh or list(KEYED_SIZES))
    return picked


def _differs_at_keyed_sizes(expected_checked, checked, shapes: dict, scalars: dict, dimensions: dict) -> bool:
    draw = keyed_draw(expected_checked, checked, shapes, scalars, dimensions)
    try:
        expected_value = evaluate(expected_checked, draw)
    except (ShapeMismatch, AnswerFormatError):
        return False  # the expected expression itself cannot be evaluated there: no evidence
    if not np.all(np.isfinite(expected_value)):
        return False
    try:
        answer_value = evaluate(checked, draw)
    except (ShapeMismatch, AnswerFormatError):
        return True
    return not (np.shape(answer_value) == np.shape(expected_value) and _close(answer_value, expected_value))


# The keyed sizes are whole numbers from KEYED_SIZES, and so are the values the scalars take with
# them: a term such as (d_k-2)(d_k-3)...(d_k-24)(d_k-32) X vanishes at every size the matrices
# can take there. The sizes stay whole, but the scalars are then given values of their own, drawn
# from the key and never whole (a right answer holds as a formula in them: no part of the format
# reads a size off a matrix), so an answer that agrees only where such a polynomial vanishes is
# wrong. At the same draw every part of the answer must stay within PART_RANGE or be exactly 0:
# a part far smaller than that (``10^-20 V`` added, ``V / exp(exp(exp(d_k)))``) is lost in the
# rounding of the result and would pass unseen; one far larger swamps the rest in rounding. A part
# that is 0 only up to rounding (Q K^T/√d_k - (Q/√d_k) K^T) is named too: numbers cannot tell it
# from a difference that is tiny but not 0, ((10^6 + 10^-6)^(1/16) - 10^(3/8)). This is not asked
# of an answer when the expected expression itself has such a part.
SCALAR_FRACTIONS = (0.1, 0.9)  # the fractional part of a keyed scalar value: far from whole
PART_RANGE = (1e-6, 1e6)  # the sizes a nonzero part of an answer may take; 1e12 apart, far below 1/eps
ONLY_AT_SOME_VALUES = ("Not quite: your expression agrees with the answer only at particular values of {names} "
                       "(whole-number sizes, for instance), not for every value; write it as a formula that "
                       "holds for every value, without factors or terms that vanish only at some sizes.")
EXTREME_PART = ("Not quite: part of your expression, {part}, is about {size:.0e} for these matrices: a part "
                "that {effect} is lost in the rounding of the computed result, so it cannot be checked. "
                "Write the expression without it (every part of a right answer is 0 or between "
                "1e-6 and 1e6 in size).")
UNDEFINED_PART = ("Not quite: part of your expression, {part}, overflows or is undefined for these matrices "
                  "(a value too large to compute, 0/0 or the root of a negative number); a right answer is "
                  "defined wherever the answer is.")


def keyed_scalar_draw(expected_checked, checked, shapes: dict, scalars: dict, dimensions: dict) -> dict:
    """``keyed_draw`` with every scalar (d_k, n, ...) set to a value of its own, not whole, from
    the key: a term that vanishes at whole-number sizes does not vanish there."""
    draw = keyed_draw(expected_checked, checked, shapes, scalars, dimensions)
    rng = random.Random(symbolic.unpredictable_rng(expected_checked.text, f"{checked.text}\x00scalars").randrange(2**63))
    low, high = SCALAR_FRACTIONS
    for name in sorted(scalars):
        draw[name] = float(rng.randrange(KEYED_SIZES.start, KEYED_SIZES.stop - 1) + rng.uniform(low, high))
    return draw


def _wrong_at_keyed_scalars(expected_checked, checked, shapes: dict, scalars: dict, dimensions: dict) -> str | None:
    """Feedback for an answer right at every whole-number size but not as a formula (or right
    only through rounding); None when it agrees with the answer at the keyed scalar values too."""
    draw = keyed_scalar_draw(expected_checked, checked, shapes, scalars, dimensions)
    expected_parts = _PartSizes(expected_checked, draw)
    try:
        with np.errstate(all="ignore"):
            expected_value = expected_parts.value(expected_checked.body)
    except (ShapeMismatch, AnswerFormatError):
        return None  # the expected expression itself cannot be evaluated there: no evidence
    if not np.all(np.isfinite(expected_value)):
        return None
    parts = _PartSizes(checked, draw)
    try:
        with np.errstate(all="ignore"):
            answer_value = parts.value(checked.body)
    except (ShapeMismatch, AnswerFormatError):
        answer_value = None
    if answer_value is None or not (np.shape(answer_value) == np.shape(expected_value)
                                    and _close(answer_value, expected_value)):
        used = sorted(checked.names & frozenset(scalars)) or sorted(scalars)
        return ONLY_AT_SOME_VALUES.format(names=_listed(used))
    return parts.problem if expected_parts.problem is None else None


def _listed(names: list) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _known_names(shapes: dict, scalars: dict) -> frozenset:
    return frozenset(shapes) | frozenset(scalars)


@lru_cache(maxsize=512)
def _read_cached(text: str, known: frozenset) -> safe_expr.CheckedExpression:
    return safe_expr.read_expression(text, GRAMMAR, known)


def read(text, shapes: dict, scalars: dict) -> safe_expr.CheckedExpression:
    known = _known_names(shapes, scalars)
    checked = _read_cached(text, known) if isinstance(text, str) else safe_expr.read_expression(text, GRAMMAR, known)
    unknown = sorted(checked.names - known - {safe_expr.TRANSPOSE_MARKER})
    if unknown:
        hint = safe_expr.did_you_mean(unknown[0], known)
        raise AnswerFormatError(f"unknown name {unknown[0]!r}{hint}; this answer may use {', '.join(sorted(known))}")
    _refuse_matrix_powers(checked.body, frozenset(shapes))
    _refuse_numbers_past_precision(checked.literals)
    return checked


def _refuse_numbers_past_precision(literals: dict) -> None:
    """AnswerFormatError for a number with more digits than a float keeps (1.0000000000000001 is
    computed as 1.0): what is typed would not be what is checked. A float's shortest form, as
    Python prints it (0.30000000000000004), is kept whole and read."""
    for text in literals.values():
        try:
            typed, computed = Decimal(text), float(text)
        except (InvalidOperation, ValueError, TypeError):
            continue
        if typed != Decimal(repr(computed)):
            raise AnswerFormatError(
                f"the number {text} has more digits than are computed with (about 16 significant digits): "
                f"it would be read as {computed!r}; type it with fewer digits"
            )


def _refuse_matrix_powers(body: ast.AST, matrices: frozenset) -> None:
    """AnswerFormatError for a power with a matrix in it (``Q^-1``, ``(Q K^T)^2``, ``2^Q``):
    after a matrix, ``^`` only marks a transpose. Every operation of the format keeps a
    matrix a matrix, so a part that names a matrix is matrix-valued."""
    for node in ast.walk(body):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)):
            continue
        if isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
            continue
        if _names_a_matrix(node.left, matrices):
            base = describe(node.left)
            raise AnswerFormatError(
                f"{'a matrix expression' if base == '(...)' else base} is raised to a power: powers and inverses of matrices are not part of "
                "this answer. After a matrix, ^ only marks a transpose (K^T); write products out, e.g. Q K^T, "
                "and divide only by numbers."
            )
        if _names_a_matrix(node.right, matrices):
            exponent = describe(node.right)
            raise AnswerFormatError(
                f"{'a matrix expression' if exponent == '(...)' else exponent} is used as an exponent: a matrix cannot be a power here. "
                "After a matrix, ^ only marks a transpose (K^T)."
            )


def _names_a_matrix(node: ast.AST, matrices: frozenset) -> bool:
    return any(isinstance(inner, ast.Name) and inner.id in matrices for inner in ast.walk(node))


def random_draws(shapes: dict, trials: int = TRIALS, seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{name: rng.standard_normal(shape) for name, shape in sorted(shapes.items())} for _ in range(trials)]


class _Evaluator:
    def __init__(self, checked: safe_expr.CheckedExpression, values: dict):
        self.literals = checked.literals
        self.values = values

    def value(self, node: ast.AST):
        if isinstance(node, ast.Constant):
            return np.float64(self.literals.get(node.col_offset, node.value))
        if isinstance(node, ast.Name):
            if node.id not in self.values:
                raise AnswerFormatError("a transpose ^T must follow a matrix, e.g. K^T")
            return self.values[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise AnswerFormatError(f"{type(node).__name__} is not allowed in an answer")

    def binary(self, node: ast.BinOp):
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
            return _transposed(self.value(node.left), node.left)
        left, right = self.value(node.left), self.value(node.right)
        if isinstance(node.op, (ast.Mult, ast.MatMult)):
            return _product(left, right, node)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            _check_same_shape(left, right, node)
            return left + right if isinstance(node.op, ast.Add) else left - right
        if isinstance(node.op, ast.Div):
            if np.ndim(right):
                raise ShapeMismatch(f"{describe(node.right)} is a matrix: dividing by a matrix is not defined")
            return left / right
        if np.ndim(left) or np.ndim(right):
            raise ShapeMismatch("powers of matrices are not used here; write products out, e.g. Q K^T")
        return left**right

    def call(self, node: ast.Call):
        name = node.func.id
        if len(node.args) != 1:
            raise AnswerFormatError(f"{name}(...) takes one argument")
        argument = self.value(node.args[0])
        if name == "transpose":
            return _transposed(argument, node.args[0])
        if name == "softmax":
            if not np.ndim(argument):
                raise ShapeMismatch("softmax is applied to a matrix of scores, not to a single number")
            return attention.softmax(argument, axis=-1)
        return np.sqrt(argument) if name == "sqrt" else np.exp(argument)


class _PartSizes(_Evaluator):
    """Evaluates an answer and keeps the first part (innermost first) that is not finite, or
    nonzero and outside PART_RANGE: ``problem`` is its feedback, None when there is none."""

    def __init__(self, checked, values: dict):
        super().__init__(checked, {name: np.float64(value) if isinstance(value, float) else value
                                   for name, value in values.items()})
        self.problem: str | None = None

    def value(self, node: ast.AST):
        result = super().value(node)
        if self.problem is None:
            magnitudes = np.abs(np.asarray(result, dtype=float))
            self.problem = self._problem(node, float(np.max(magnitudes)) if magnitudes.size else 0.0)
        return result

    def _problem(self, node: ast.AST, size: float) -> str | None:
        if not np.isfinite(size):
            return UNDEFINED_PART.format(part=_part_text(node))
        if size == 0 or PART_RANGE[0] <= size <= PART_RANGE[1]:
            return None
        return EXTREME_PART.format(part=_part_text(node), size=size,
                                   effect="small" if size < PART_RANGE[0] else "large")


MAX_PART_CHARS = 60


def _part_text(node: ast.AST) -> str:
    """The part as the student could have typed it, shortened: ``10^(-20)``, ``exp(exp(d_k))``."""
    text = ast.unparse(node).replace(f" ** {safe_expr.TRANSPOSE_MARKER}", "^T").replace(" ** ", "^")
    return text if len(text) <= MAX_PART_CHARS else text[:MAX_PART_CHARS - 1] + "…"


class _SlipEvaluator(_Evaluator):
    """Evaluates the *expected* expression the way a known slip would (for diagnosis)."""

    def __init__(self, checked, values: dict, slip: str):
        if slip == "keys_queries_swapped":
            if "Q" not in values or "K" not in values:
                raise ShapeMismatch("no Q and K to swap")
            values = {**values, "Q": values["K"], "K": values["Q"]}
        if slip.startswith("projections_swapped:"):  # e.g. projections_swapped:W_Q>W_K, W_K used for W_Q
            meant, used = slip.partition(":")[2].split(">")
            if meant not in values or used not in values:
                raise ShapeMismatch("no projections to swap")
            values = {**values, meant: values[used]}
        super().__init__(checked, values)
        self.slip = slip

    def value(self, node: ast.AST):
        if (self.slip == "d_model_scale" and isinstance(node, ast.Name) and node.id == "d_k"
                and "d_model" in self.values and self.values["d_model"] != self.values["d_k"]):
            return self.values["d_model"]
        return super().value(node)

    def call(self, node: ast.Call):
        name = node.func.id
        if name == "sqrt" and self.slip in ("no_scaling", "divided_by_d_k"):
            argument = self.value(node.args[0])
            if not np.ndim(argument):
                return 1.0 if self.slip == "no_scaling" else argument
        if name == "softmax" and self.slip == "softmax_wrong_axis":
            argument = self.value(node.args[0])
            if np.ndim(argument):
                return attention.softmax(argument, axis=-2)
        if name == "softmax" and self.slip == "weights_transposed":
            weights = super().call(node)
            # (n_q, n_k) -> (n_k, n_q): with n_q != n_k the product with V then fails, no slip
            return _transposed(weights, node)
        if name == "softmax" and self.slip == "scale_after_softmax":
            inner = node.args[0]
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div):
                scale = self.value(inner.right)
                if not np.ndim(scale):
                    return attention.softmax(self.value(inner.left), axis=-1) / scale
        return super().call(node)


_PROJECTIONS = ("W_Q", "W_K", "W_V")
SLIPS = ("no_scaling", "divided_by_d_k", "softmax_wrong_axis", "weights_transposed", "scale_after_softmax",
         "keys_queries_swapped",
         "d_model_scale") + tuple(f"projections_swapped:{meant}>{used}" for meant in _PROJECTIONS
                                  for used in _PROJECTIONS if used != meant)


def diagnose_slip(expected_checked, answer_values: list, draws: list, expected_values: list | None = None) -> str | None:
    """The known slip whose version of the expected expression the answer matches, if any."""
    if expected_values is None:
        expected_values = draws_expected(expected_checked, draws)
    for slip in SLIPS:
        try:
            with np.errstate(all="ignore"):
                slipped = [_SlipEvaluator(expected_checked, draw, slip).value(expected_checked.body) for draw in draws]
        except (ShapeMismatch, AnswerFormatError):
            continue
        if all(np.shape(s) == np.shape(a) and _close(a, s) for s, a in zip(slipped, answer_values)):
            if not all(np.shape(s) == np.shape(e) and _close(s, e) for s, e in zip(slipped, expected_values)):
                return slip.partition(":")[0]
    return None


def draws_expected(expected_checked, draws: list) -> list:
    return [evaluate(expected_checked, draw) for draw in draws]


def _close(answer_value, expected_value, rtol: float = RESULT_RTOL) -> bool:
    """Equal up to rounding, relative to the size of the result (not per entry)."""
    with np.errstate(all="ignore"):
        answer_value, expected_value = np.asarray(answer_value, dtype=float), np.asarray(expected_value, dtype=float)
        if not (np.all(np.isfinite(answer_value)) and np.all(np.isfinite(expected_value))):
            return False
        scale = float(np.max(np.abs(expected_value))) if expected_value.size else 0.0
        return bool(np.all(np.abs(answer_value - expected_value) <= rtol * scale + 1e-300))


def describe(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.BinOp) and isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
        return describe(node.left) + "^T"
    if isinstance(node, ast.Call):
        return f"{node.func.id}(...)"
    return "(...)"


def _shape_text(value) -> str:
    return "×".join(str(size) for size in np.shape(value)) or "a number"


def _transposed(value, node):
    if not np.ndim(value):
        return value
    return np.swapaxes(value, -1, -2)


def _check_same_shape(left, right, node: ast.BinOp) -> None:
    if np.ndim(left) and np.ndim(right) and np.shape(left) != np.shape(right):
        raise ShapeMismatch(
            f"{describe(node.left)} and {describe(node.right)} have shapes {_shape_text(left)} and "
            f"{_shape_text(right)}: only matrices of the same shape can be added"
        )


def _product(left, right, node: ast.BinOp):
    if not np.ndim(left) or not np.ndim(right):
        return left * right
    if left.shape[-1] == right.shape[-2]:
        return left @ right  # (a, b) x (b, c) -> (a, c)
    left_text, right_text = describe(node.left), describe(node.right)
    message = f"{left_text} {right_text} has shapes {_shape_text(left)} and {_shape_text(right)}: the inner sizes do not match"
    if left.shape[-1] == right.shape[-1]:
        suggestion = right_text[:-2] if right_text.endswith("^T") else right_text + "^T"
        code = "k_not_transposed" if right_text == "K" else None
        raise ShapeMismatch(f"{message}; did you mean {suggestion}?", code)
    raise ShapeMismatch(message)


def evaluate(checked: safe_expr.CheckedExpression, values: dict):
    with np.errstate(all="ignore"):
        values = {name: np.float64(value) if isinstance(value, float) else value for name, value in values.items()}
        return _Evaluator(checked, values).value(checked.body)


def _draws(options: dict) -> tuple[list, list, dict, dict]:
    """Random values at every shape assignment: (draws, declared-shape flags, shapes, dimensions)."""
    shapes, scalars, dimensions = _declared(options)
    draws, declared = [], []
    for index, (assignment, assignment_scalars) in enumerate(shape_assignments(shapes, scalars, dimensions)):
        trials = 2 if index == 0 else 1
        for draw in random_draws(assignment, trials=trials, seed=SEED + index):
            draws.append({**draw, **assignment_scalars})
            declared.append(index == 0)
    return draws, declared, shapes, dimensions


@lru_cache(maxsize=256)
def _prepared(expected: str, options_key: str):
    """Draws and expected values for one exercise variant, computed once."""
    options = json.loads(options_key)
    shapes, scalars, dimensions = _declared(options)
    draws, declared, _, _ = _draws(options)
    try:
        expected_checked = read(expected, shapes, scalars)
        expected_values = [evaluate(expected_checked, draw) for draw in draws]
    except (AnswerFormatError, ShapeMismatch) as problem:
        raise InvalidRequest(f"expected expression is not usable: {problem}") from None
    return shapes, scalars, dimensions, draws, declared, expected_checked, expected_values


def check(expected, answer, options: dict) -> Grade:
    if not isinstance(expected, str):
        raise InvalidRequest("expected must be a matrix expression as text")
    try:
        options_key = json.dumps(options, sort_keys=True)
    except (TypeError, ValueError):
        raise InvalidRequest("options must be plain JSON values") from None
    shapes, scalars, dimensions, draws, declared, expected_checked, expected_values = _prepared(expected, options_key)
    try:
        checked = read(answer, shapes, scalars)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    side = _values_on_the_wrong_side(expected_checked, checked)
    try:
        answer_values = [evaluate(checked, draw) for draw in draws]
    except ShapeMismatch as mismatch:
        if side:
            return wrong(side, misconception="values_on_left")
        return wrong(f"Not quite: {mismatch}", misconception=mismatch.misconception)
    except AnswerFormatError as problem:
        return invalid(str(problem))
    grade = _compare(expected_values, answer_values)
    if grade.correct:
        if _differs_at_keyed_sizes(expected_checked, checked, shapes, scalars, dimensions):
            return wrong(ONLY_AT_SOME_SIZES)
        problem = _wrong_at_keyed_scalars(expected_checked, checked, shapes, scalars, dimensions)
        return wrong(problem) if problem else grade
    if _bare_fraction_power_meant(checked, shapes, scalars, draws, expected_values):
        return wrong(f"Not quite. {safe_expr.BARE_FRACTION_POWER_ADVICE}")
    if side:
        return wrong(side, misconception="values_on_left")
    slip = diagnose_slip(expected_checked, answer_values, draws, expected_values)
    if slip is not None:
        return wrong(f"Not quite. {misconceptions.MISCONCEPTIONS[slip]}", misconception=slip)
    if _transposed_result(expected_values, answer_values):
        return wrong(f"Not quite. {misconceptions.MISCONCEPTIONS['transposed_result']}", misconception="transposed_result")
    only_here = _matches_only_at_declared_sizes(expected_values, answer_values, declared)
    if only_here:
        return _dimension_as_number(checked, expected_checked, options, dimensions, shapes, scalars)
    return grade


def _bare_fraction_power_meant(checked, shapes: dict, scalars: dict, draws: list, expected_values: list) -> bool:
    """Whether ``d_k^1/2`` (read (d_k^1)/2) bracketed as d_k^(1/2) is the right answer."""
    bracketed = safe_expr.bracketed_fraction_powers(checked.text)
    if bracketed is None:
        return False
    try:
        meant = read(bracketed, shapes, scalars)
        return _compare(expected_values, [evaluate(meant, draw) for draw in draws]).correct
    except (AnswerFormatError, ShapeMismatch):
        return False


def _values_on_the_wrong_side(expected_checked, checked) -> str | None:
    """``V softmax(...)`` for ``softmax(...) V``: the same factors, V on the left."""
    expected, answer = expected_checked.body, checked.body
    if not (_is_product(expected) and _is_product(answer)):
        return None
    if isinstance(expected.right, ast.Name) and isinstance(answer.left, ast.Name) and expected.right.id == answer.left.id:
        if ast.dump(answer.right) == ast.dump(expected.left):
            name = answer.left.id
            return (f"Not quite: {name} belongs on the right. The weights (one row per query) multiply {name}; "
                    f"{name} times the weights does not give one output row per query.")
    return None


def _is_product(node) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.MatMult))


def _transposed_result(expected_values: list, answer_values: list) -> bool:
    return all(np.ndim(e) == 2 and np.shape(a) == np.shape(e)[::-1] and _close(np.swapaxes(a, -1, -2), e)
               for e, a in zip(expected_values, answer_values)) and any(np.shape(e)[0] != np.shape(e)[1] for e in expected_values)


def _matches_only_at_declared_sizes(expected_values: list, answer_values: list, declared: list) -> bool:
    pairs = list(zip(expected_values, answer_values, declared))
    # At the declared sizes a rounded constant (5.656854249 for √32) counts as matching.
    return all(np.shape(e) == np.shape(a) and _close(a, e, 1e-6) for e, a, here in pairs if here) and not all(
        np.shape(e) == np.shape(a) and _close(a, e, 1e-6) for e, a, here in pairs if not here)


def _dimension_as_number(checked, expected_checked, options: dict, dimensions: dict, shapes: dict, scalars: dict) -> Grade:
    """The answer equals the result only at the declared sizes: name the size it froze."""
    culprit = None
    for label, dimension in sorted(dimensions.items()):
        names = sorted(dimension["scalars"])
        if not names:
            continue
        varied = _one_dimension_varied(options, label)
        try:
            draws = [{**draw, **varied[1]} for draw in random_draws(varied[0], trials=1, seed=SEED + 7)]
            if not all(_close(evaluate(checked, draw), evaluate(expected_checked, draw), 1e-6) for draw in draws):
                culprit = names[0]
                break
        except (ShapeMismatch, AnswerFormatError):
            culprit = names[0]
            break
    literal = bool(checked.literals)
    if culprit is not None and literal:
        value = int(scalars.get(culprit, 0))
        feedback = (f"Not quite: your expression only gives the right result when {culprit} = {value}. "
                    f"Write it in terms of {culprit}, not as a number.")
    elif culprit is not None:
        feedback = (f"Not quite: your expression agrees with the result only when {culprit} = {int(scalars.get(culprit, 0))}; "
                    "it is not the same expression for other sizes.")
    else:
        feedback = "Not quite: your expression agrees with the result only at these sizes; write it in terms of the dimensions."
    return wrong(feedback, misconception="dimension_as_number", dimension=culprit)


def _one_dimension_varied(options: dict, label: str) -> tuple[dict, dict]:
    shapes, scalars, dimensions = _declared(options)
    dimension = dimensions[label]
    value = next(size for size in range(2, MAX_SIZE + 1) if size != dimension["value"]
                 and all(size != other["value"] for other in dimensions.values()))
    new_shapes = {name: list(shape) for name, shape in shapes.items()}
    for matrix, axis in dimension["axes"]:
        new_shapes[matrix][axis] = value
    new_scalars = {**scalars, **{name: float(value) for name in dimension["scalars"]}}
    return {name: tuple(shape) for name, shape in new_shapes.items()}, new_scalars


def _compare(expected_values: list, answer_values: list) -> Grade:
    for expected_value, answer_value in zip(expected_values, answer_values):
        if np.shape(expected_value) != np.shape(answer_value):
            return wrong(
                f"Not quite: your expression gives {_shape_text(answer_value)}, "
                f"but the answer is {_shape_text(expected_value)}."
            )
        if not np.all(np.isfinite(answer_value)):
            return wrong("Not quite: your expression overflows or is undefined for some matrices.")
        if not _close(answer_value, expected_value):
            return wrong("Not quite: your expression has the right shape but gives different values.")
    return right("Correct.")


def parse_answer(answer, options: dict) -> Parsed:
    try:
        shapes, scalars = _shapes_and_scalars(options)
        checked = read(answer, shapes, scalars)
    except (AnswerFormatError, InvalidRequest) as problem:
        return Parsed(None, str(problem), None)
    return Parsed(checked.text, None, _latex(checked.body))


def _latex(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp):
        return ("-" if isinstance(node.op, ast.USub) else "+") + _latex(node.operand)
    if isinstance(node, ast.Call):
        inner = _latex(node.args[0]) if node.args else ""
        if node.func.id == "sqrt":
            return rf"\sqrt{{{inner}}}"
        if node.func.id == "transpose":
            return rf"\left({inner}\right)^\top"
        return rf"\operatorname{{{node.func.id}}}\left({inner}\right)"
    if isinstance(node, ast.BinOp):
        if isinstance(node.right, ast.Name) and node.right.id == safe_expr.TRANSPOSE_MARKER:
            return rf"{{{_latex(node.left)}}}^\top"
        left, right = _latex(node.left), _latex(node.right)
        if isinstance(node.op, ast.Div):
            return rf"\frac{{{left}}}{{{right}}}"
        if isinstance(node.op, ast.Pow):
            return rf"{{{left}}}^{{{right}}}"
        symbol = {ast.Add: " + ", ast.Sub: " - "}.get(type(node.op), r" \, ")
        return rf"\left({left}{symbol}{right}\right)" if symbol != r" \, " else f"{left}{symbol}{right}"
    return ""


def self_test(expected, options: dict) -> dict[str, list]:
    shapes, _ = _shapes_and_scalars(options)
    first = sorted(shapes)[0]
    right_answers = [expected, f"({expected})", f"1*({expected})"]
    wrong_answers = [f"2*({expected})", f"({expected}) + ({expected})"]
    invalid_answers = ["", f"({expected}", f"{first}[0]", "unknown_matrix_name", f"{first}.T"]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
