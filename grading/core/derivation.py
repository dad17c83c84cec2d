"""Derivation answers: an ordered chain of expressions, each of which must equal the
previous one, the last equal to the target.

An answer is a list of strings or one string with one step per line; a line may also
chain steps with ``=`` (``Var(q_m k_m) = E[(q_m k_m)^2] - E[q_m k_m]^2 = ...``).

Moment algebra: each step is rewritten by a canonicaliser into a plain expression in the
exercise's constants, then consecutive steps are compared with the symbolic checker.
Notation (square or round brackets):
    E[X], Var[X], Cov(X, Y)       expectation, variance, covariance
    Sum(term, m, 1, d_k)          sum over m = 1..d_k (the chapter's Σ_m q_m k_m)
    dot(q, k)                     shorthand for Sum(q_m k_m, m, 1, <dimension>)
Random variables are declared in options ``random_variables``:
    {"q": {"mean": 0, "variance": "sigma_q**2"}, "k": {...}}
plus optional "distribution": "normal" (gives higher moments). ``q`` and its components
``q_m``, ``q_1``, ... are identically distributed; all distinct names are independent.
Other options: ``symbols`` (constants, as for symbolic), ``start`` (the expression the
derivation starts from), ``dimension`` (for dot, default "d_k"), ``min_steps``,
``partial_credit``.
"""

from __future__ import annotations

import ast
import re

import sympy

from grading.core import safe_expr, symbolic
from grading.core.grades import AnswerFormatError, Grade, InvalidRequest, Parsed, could_not_grade, invalid, right, wrong
from grading.core.latex_as_read import latex_as_read

GRAMMAR = safe_expr.Grammar(
    functions=safe_expr.SCALAR_FUNCTIONS | {"E", "Var", "Cov", "Sum", "dot"},
    bracket_functions=frozenset({"E", "Var", "Cov"}),
)
MAX_STEPS = 30
RandomSum = sympy.Function("RandomSum")  # RandomSum(term, count): a sum of count i.i.d. terms


class Unsupported(AnswerFormatError):
    """A well-formed step that uses moment algebra this checker does not evaluate."""


class RandomModel:
    """Declared random variables: names, moments and which symbols stand for them."""

    def __init__(self, options: dict, symbols: dict):
        declared = options.get("random_variables") or {}
        if not isinstance(declared, dict):
            raise InvalidRequest("option 'random_variables' must map names to {mean, variance}")
        self.moments = {}
        self.normal = {}
        for base, spec in declared.items():
            if not isinstance(spec, dict) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", str(base)):
                raise InvalidRequest(f"random variable {base!r} needs a plain name and {{mean, variance}}")
            if base in symbols:
                raise InvalidRequest(f"{base!r} is declared both as a constant and a random variable")
            mean = _constant(spec.get("mean", 0), symbols, f"mean of {base}")
            variance = _constant(spec.get("variance", 1), symbols, f"variance of {base}")
            self.moments[base] = (mean, variance)
            self.normal[base] = spec.get("distribution") == "normal"
        self.symbol_to_base: dict = {}

    def symbol_for(self, name: str):
        """The random symbol for ``q`` or ``q_<index>``, or None if the name is not random."""
        base, _, index = name.partition("_")
        if base not in self.moments or (index and not re.fullmatch(r"[A-Za-z0-9]+", index)):
            return None
        symbol = sympy.Symbol(f"rv:{name}", real=True)
        self.symbol_to_base[symbol] = (base, index or None)
        return symbol

    def is_random(self, expression) -> bool:
        return bool(expression.free_symbols & set(self.symbol_to_base)) or expression.has(RandomSum)

    def moment(self, symbol, power: int):
        base, _ = self.symbol_to_base[symbol]
        mean, variance = self.moments[base]
        if power == 0:
            return sympy.Integer(1)
        if power == 1:
            return mean
        if power == 2:
            return variance + mean**2
        if self.normal[base] and mean == 0:
            if power % 2:
                return sympy.Integer(0)
            return variance ** (power // 2) * sympy.factorial2(power - 1)
        raise Unsupported(f"the exercise does not give E[{base}^{power}] (only the mean and variance of {base})")


def _constant(value, symbols: dict, what: str):
    text = repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if not isinstance(text, str):
        raise InvalidRequest(f"{what} must be a number or an expression")
    try:
        checked = safe_expr.read_expression(text, safe_expr.SCALAR_GRAMMAR, frozenset(symbols))
        return symbolic.SympyBuilder(symbols, allow_any_symbols=False, literals=checked.literals).build(checked.body)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"{what} cannot be read: {problem}") from None


class MomentBuilder(symbolic.SympyBuilder):
    """Builds a step and applies E / Var / Cov / Sum as it goes, leaving plain algebra."""

    def __init__(self, symbols: dict, model: RandomModel, literals: dict, dimension: str):
        super().__init__(symbols, allow_any_symbols=False, literals=literals)
        self.model = model
        self.dimension = dimension

    def name(self, name: str):
        if name in self.symbols:
            return self.symbols[name]
        random_symbol = self.model.symbol_for(name)
        if random_symbol is not None:
            return random_symbol
        if name in ("pi", "e"):
            return super().name(name)
        allowed = sorted(self.symbols) + [f"{base}, {base}_m" for base in sorted(self.model.moments)]
        raise AnswerFormatError(f"unknown symbol {name!r}; this answer may use {', '.join(allowed) or 'numbers only'}")

    def call(self, node: ast.Call):
        name = node.func.id
        if name == "Sum":
            return self.random_sum(node)
        if name == "dot":
            return self.dot(node)
        if name in ("E", "Var"):
            if len(node.args) != 1:
                raise AnswerFormatError(f"{name}[...] takes one argument")
            inner = self.build(node.args[0])
            return self.expectation(inner) if name == "E" else self.variance(inner)
        if name == "Cov":
            if len(node.args) != 2:
                raise AnswerFormatError("Cov(X, Y) takes two arguments")
            first, second = (self.build(arg) for arg in node.args)
            return self.expectation(first * second) - self.expectation(first) * self.expectation(second)
        value = super().call(node)
        if self.model.is_random(value):
            raise Unsupported(f"{name}(...) of a random quantity cannot be evaluated here")
        return value

    def random_sum(self, node: ast.Call):
        if len(node.args) != 4 or not isinstance(node.args[1], ast.Name):
            raise AnswerFormatError("write a sum as Sum(term, m, 1, d_k)")
        index = node.args[1].id
        lower, upper = self.build(node.args[2]), self.build(node.args[3])
        count = sympy.expand(upper - lower + 1)
        term = self.build(node.args[0])
        if not self.model.is_random(term):
            return count * term
        foreign = [name for symbol, (_, idx) in self.model.symbol_to_base.items()
                   if symbol in term.free_symbols and idx != index for name in [symbol.name[3:]]]
        if foreign:
            raise Unsupported(f"inside Sum over {index}, every random variable must carry the index {index} (found {foreign[0]})")
        return RandomSum(term, count)

    def dot(self, node: ast.Call):
        if len(node.args) != 2 or not all(isinstance(arg, ast.Name) and arg.id in self.model.moments for arg in node.args):
            raise AnswerFormatError("dot(q, k) takes two declared random vectors")
        first, second = (self.model.symbol_for(f"{arg.id}_m") for arg in node.args)
        return RandomSum(first * second, self.symbols.get(self.dimension, sympy.Symbol(self.dimension, positive=True)))

    def expectation(self, value):
        total = sympy.Integer(0)
        for term in sympy.Add.make_args(sympy.expand(value)):
            total += self.term_expectation(term)
        return sympy.expand(total)

    def term_expectation(self, term):
        coefficient, factors = sympy.Integer(1), {}
        for factor in sympy.Mul.make_args(term):
            base, power = factor.as_base_exp()
            if isinstance(base, RandomSum):
                factors.setdefault("sums", []).append((base, power))
            elif base in self.model.symbol_to_base:
                if not (power.is_Integer and power >= 0):
                    raise Unsupported("only whole powers of random variables can be averaged here")
                factors[base] = factors.get(base, 0) + int(power)
            elif self.model.is_random(factor):
                raise Unsupported("E[...] of this expression cannot be evaluated here")
            else:
                coefficient *= factor
        sums = factors.pop("sums", [])
        if sums:
            if len(sums) > 1 or sums[0][1] != 1 or factors:
                raise Unsupported("E[...] of a product or power of a sum is not evaluated here; use Var(...) of the sum")
            inner, count = sums[0][0].args
            return coefficient * count * self.expectation(inner)
        for symbol, power in factors.items():
            coefficient *= self.model.moment(symbol, power)
        return coefficient

    def variance(self, value):
        expanded = sympy.expand(value)
        random_terms = [term for term in sympy.Add.make_args(expanded) if self.model.is_random(term)]
        if any(term.has(RandomSum) for term in random_terms):
            if len(random_terms) != 1:
                raise Unsupported("Var(...) of a sum plus other random terms is not evaluated here")
            coefficient, random_sum = random_terms[0].as_independent(RandomSum, as_Add=False)
            if not isinstance(random_sum, RandomSum):
                raise Unsupported("Var(...) of a power of a sum is not evaluated here")
            inner, count = random_sum.args
            # The terms of one Sum involve only that index's components, so they are independent.
            return sympy.expand(coefficient**2 * count * self.variance(inner))
        return sympy.expand(self.expectation(expanded**2) - self.expectation(expanded) ** 2)


def split_steps(answer) -> list[str]:
    if isinstance(answer, str):
        lines = answer.splitlines()
    elif isinstance(answer, (list, tuple)) and all(isinstance(step, str) for step in answer):
        lines = list(answer)
    else:
        raise AnswerFormatError("a derivation is a list of steps (text), or one step per line")
    steps = [piece.strip() for line in lines for piece in line.split("=") if piece.strip()]
    if not steps:
        raise AnswerFormatError("the derivation is empty: write one step per line")
    if len(steps) > MAX_STEPS:
        raise AnswerFormatError(f"too many steps ({len(steps)}; the limit is {MAX_STEPS})")
    return steps


class Canonicaliser:
    def __init__(self, options: dict):
        self.key = symbolic.symbols_key(options)
        self.symbols = symbolic.symbol_table(self.key)
        self.model = RandomModel(options, self.symbols)
        self.dimension = str(options.get("dimension", "d_k"))
        self.known = frozenset(self.symbols) | frozenset(self.model.moments)

    def value(self, text: str):
        checked = safe_expr.read_expression(text, GRAMMAR, self.known | self._component_names(text))
        builder = MomentBuilder(self.symbols, self.model, checked.literals, self.dimension)
        result = sympy.expand(builder.build(checked.body))
        leftover = sorted(symbol.name[3:] for symbol in result.free_symbols if symbol in self.model.symbol_to_base)
        if leftover or result.has(RandomSum):
            what = leftover[0] if leftover else "a sum of random terms"
            raise AnswerFormatError(f"{what} is random: keep it inside E[...] or Var[...]")
        if result.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise AnswerFormatError("the step is undefined (it divides by zero)")
        return result

    def latex_as_read(self, text: str) -> str:
        checked = safe_expr.read_expression(text, GRAMMAR, self.known | self._component_names(text))
        return latex_as_read(checked.body, checked.literals)

    def _component_names(self, text: str) -> frozenset:
        # q_m, k_1 ... are names only when their base is a declared random variable.
        found = re.findall(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9]+", text)
        return frozenset(name for name in found if name.partition("_")[0] in self.model.moments)


def _target_value(canonicaliser: Canonicaliser, text, what: str):
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = repr(text)
    if not isinstance(text, str):
        raise InvalidRequest(f"{what} must be an expression as text")
    try:
        return canonicaliser.value(text)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"{what} cannot be read: {problem}") from None


def check(expected, answer, options: dict) -> Grade:
    canonicaliser = Canonicaliser(options)
    target = _target_value(canonicaliser, expected, "expected")
    start = _target_value(canonicaliser, options["start"], "option 'start'") if options.get("start") else None
    try:
        steps = split_steps(answer)
        values = [_step_value(canonicaliser, number, step) for number, step in enumerate(steps, start=1)]
    except AnswerFormatError as problem:
        return invalid(str(problem))
    min_steps = int(options.get("min_steps", 1))
    if len(steps) < min_steps:
        return invalid(f"show at least {min_steps} steps (one per line)")
    seconds = symbolic.option_float(options, "time_limit", symbolic.DEFAULT_TIME_LIMIT)
    chain = ([("the starting expression", start)] if start is not None else []) + [
        (f"step {number}", value) for number, value in enumerate(values, start=1)
    ]
    for (previous_name, previous), (name, value) in zip(chain, chain[1:]):
        verdict = symbolic.decide_equivalent(previous, value, seconds)
        if verdict is None:
            return could_not_grade(f"Could not decide in time whether {name} follows from {previous_name}; passed on for review.")
        if not verdict:
            return _broken_chain(name, previous_name, values, options)
    verdict = symbolic.decide_equivalent(target, values[-1], seconds)
    if verdict is None:
        return could_not_grade("Could not decide in time whether the last step is the result; passed on for review.")
    if not verdict:
        return wrong(f"Every step follows, but the last step (step {len(values)}) is not the required result.",
                     score=0.5 if options.get("partial_credit") else 0.0)
    return right(f"Correct: all {len(values)} steps follow and the last is the result.")


def _step_value(canonicaliser: Canonicaliser, number: int, step: str):
    try:
        return canonicaliser.value(step)
    except AnswerFormatError as problem:
        raise AnswerFormatError(f"Step {number}: {problem}") from None


def _broken_chain(name: str, previous_name: str, values: list, options: dict) -> Grade:
    feedback = (f"{name[0].upper()}{name[1:]} does not follow from {previous_name}: "
                f"under the exercise's assumptions the two are not equal.")
    step_number = int(name.split()[-1]) if name.startswith("step") else 1
    score = 0.5 * (step_number - 1) / len(values) if options.get("partial_credit") else 0.0
    return wrong(feedback, score=score, first_wrong_step=step_number)


def parse_answer(answer, options: dict) -> Parsed:
    try:
        canonicaliser = Canonicaliser(options)
        steps = split_steps(answer)
        values = [_step_value(canonicaliser, number, step) for number, step in enumerate(steps, start=1)]
    except (AnswerFormatError, InvalidRequest) as problem:
        return Parsed(None, str(problem), None)
    # The preview shows each step as typed: its simplified value would give the answer away.
    as_read = [canonicaliser.latex_as_read(step) for step in steps]
    return Parsed([str(value) for value in values], None, r" \\ ".join(as_read))


def self_test(expected, options: dict) -> dict[str, list]:
    text = expected if isinstance(expected, str) else repr(expected)
    chain = [options["start"]] if options.get("start") else []
    right_answers = [chain + [text], "\n".join(chain + [f"({text})", text])]
    wrong_answers = [chain + [f"2*({text})"], chain + [text, f"({text}) + 1"]]
    invalid_answers = ["", [], chain + ["E[("], ["__import__('os')"]]
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}
