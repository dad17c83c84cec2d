"""The named rules of the moment algebra, as one-step rewrites of unevaluated moments.

A derivation step is built (by ``grading.core.derivation``) into a SymPy expression whose
moments stay unevaluated: ``Ex(X)`` for E[X], ``Vr(X)`` for Var(X), ``Cv(X, Y)`` and
``RSum(term, count)`` for a sum over one index of ``count`` independent, identically
distributed terms. Random variables are SymPy symbols named ``rv:q_m``; every distinct
random symbol is independent of the others.

Each rule rewrites one moment at a time (or every moment it applies to at once, which
counts as one application). ``normal_form`` applies the rules until no moment is left and
records which rules it used; ``rules_between`` searches, a bounded number of rewrites
deep, for the rules that lead from one step to the next modulo ordinary algebra.
Nothing here imports Django.
"""

from __future__ import annotations

from functools import lru_cache

import sympy
from sympy.printing.str import StrPrinter

from grading.core.grades import AnswerFormatError


class Ex(sympy.Function):
    """E[X], left unevaluated."""

    nargs = 1


class Vr(sympy.Function):
    """Var(X), left unevaluated."""

    nargs = 1


class Cv(sympy.Function):
    """Cov(X, Y), left unevaluated."""

    nargs = 2


class RSum(sympy.Function):
    """RSum(term, count): the sum over one index of ``count`` i.i.d. copies of ``term``."""

    nargs = 2


class Unsupported(AnswerFormatError):
    """A well-formed step that uses moment algebra this checker does not evaluate."""


MOMENT_TYPES = (Ex, Vr, Cv, RSum)

LINEARITY = "linearity"
VARIANCE_SCALING = "variance_scaling"
VARIANCE_DEFINITION = "variance_definition"
INDEPENDENCE = "independence"
VARIANCE_OF_SUM = "variance_of_sum"
SQUARE_OF_SUM = "square_of_sum"
IDENTICAL_TERMS = "identical_terms"
SUBSTITUTION = "substitution"

RULE_NAMES = {
    LINEARITY: "linearity of E",
    VARIANCE_SCALING: "Var(aX + b) = a² Var(X)",
    VARIANCE_DEFINITION: "the definition Var(X) = E[X²] − E[X]²",
    INDEPENDENCE: "independence, E[XY] = E[X] E[Y]",
    VARIANCE_OF_SUM: "the variance of a sum of independent terms (the sum of their variances)",
    SQUARE_OF_SUM: "expanding the square of a sum (its cross terms factor by independence)",
    IDENTICAL_TERMS: "a sum of identical terms (their number times one term)",
    SUBSTITUTION: "substituting the declared mean or variance",
}
# The order the normal form tries them in: outer structure first, declared values last.
RULE_ORDER = (VARIANCE_SCALING, VARIANCE_OF_SUM, IDENTICAL_TERMS, LINEARITY, SQUARE_OF_SUM,
              VARIANCE_DEFINITION, INDEPENDENCE, SUBSTITUTION)
MAX_NORMAL_FORM_ROUNDS = 40
MAX_SEARCH_NODES = 400


def is_random_symbol(symbol) -> bool:
    return isinstance(symbol, sympy.Symbol) and symbol.name.startswith("rv:")


def free_random(expression) -> frozenset:
    """Random symbols not inside a moment: what makes ``expression`` itself random."""
    if isinstance(expression, (Ex, Vr, Cv)):
        return frozenset()
    if is_random_symbol(expression):
        return frozenset({expression})
    found = frozenset()
    for arg in expression.args:
        found |= free_random(arg)
    return found


def is_random(expression) -> bool:
    return bool(free_random(expression))


def has_moments(expression) -> bool:
    return expression.has(*MOMENT_TYPES)


def canonical(expression):
    """Ordinary algebra: expanded, with the arguments of every moment expanded too."""
    return sympy.expand(expression)


class Model:
    """What the rules need to know about the declared random variables."""

    def __init__(self, moments: dict, normal: dict, base_of: dict):
        self.moments = moments  # base name -> (mean, variance)
        self.normal = normal  # base name -> bool
        self.base_of = base_of  # random symbol -> base name

    def base(self, symbol) -> str:
        name = symbol.name[3:]
        return self.base_of.get(symbol) or name.partition("_")[0]

    def moment(self, symbol, power: int):
        base = self.base(symbol)
        mean, variance = self.moments[base]
        if power == 0:
            return sympy.Integer(1)
        if power == 1:
            return mean
        if power == 2:
            return variance + mean**2
        if self.normal.get(base) and mean == 0:
            if power % 2:
                return sympy.Integer(0)
            return variance ** (power // 2) * sympy.factorial2(power - 1)
        raise Unsupported(f"the exercise does not give E[{base}^{power}] (only the mean and variance of {base})")


# --------------------------------------------------------------------------- one rule, one moment


def _split_constant(term):
    """(constant factor, random factor) of one product term."""
    constant, random_part = sympy.Integer(1), sympy.Integer(1)
    for factor in sympy.Mul.make_args(term):
        if is_random(factor):
            random_part *= factor
        else:
            constant *= factor
    return constant, random_part


def _linearity(moment, model: Model):
    if not isinstance(moment, Ex):
        return None
    (argument,) = moment.args
    if isinstance(argument, RSum) and is_random(argument.args[0]):
        inner, count = argument.args
        return RSum(Ex(inner), count)
    terms = sympy.Add.make_args(sympy.expand(argument))
    total, changed = sympy.Integer(0), len(terms) > 1
    for term in terms:
        constant, random_part = _split_constant(term)
        if random_part == 1:
            total += constant
            changed = True
            continue
        if constant != 1:
            changed = True
        if isinstance(random_part, RSum) and is_random(random_part.args[0]):
            total += constant * RSum(Ex(random_part.args[0]), random_part.args[1])
            changed = True
        else:
            total += constant * Ex(random_part)
    return total if changed else None


def _variance_scaling(moment, model: Model):
    if not isinstance(moment, Vr):
        return None
    terms = sympy.Add.make_args(sympy.expand(moment.args[0]))
    random_terms = [term for term in terms if is_random(term)]
    if not random_terms:
        return sympy.Integer(0)
    if len(random_terms) != 1:
        return None
    constant, random_part = _split_constant(random_terms[0])
    if constant == 1 and len(terms) == 1:
        return None
    return constant**2 * Vr(random_part)


def _variance_definition(moment, model: Model):
    if isinstance(moment, Vr):
        (argument,) = moment.args
        return Ex(argument**2) - Ex(argument) ** 2
    if isinstance(moment, Cv):
        first, second = moment.args
        return Ex(first * second) - Ex(first) * Ex(second)
    return None


def _independent_groups(factors) -> list:
    """Group the factors of a product so that no two groups share a random symbol."""
    groups: list[tuple[set, object]] = []
    for factor in factors:
        symbols = set(free_random(factor))
        merged = [group for group in groups if group[0] & symbols]
        for group in merged:
            groups.remove(group)
            symbols |= group[0]
            factor = factor * group[1]
        groups.append((symbols, factor))
    return groups


def _independence(moment, model: Model):
    if isinstance(moment, Cv):
        first, second = moment.args
        return sympy.Integer(0) if not (free_random(first) & free_random(second)) else None
    if not isinstance(moment, Ex):
        return None
    argument = sympy.expand(moment.args[0])
    if argument.is_Add:
        return None
    constant, random_part = _split_constant(argument)
    if random_part.has(RSum):
        return None
    groups = _independent_groups(sympy.Mul.make_args(random_part))
    if len(groups) < 2:
        return None
    product = constant
    for _, factor in groups:
        product *= Ex(factor)
    return product


def _variance_of_sum(moment, model: Model):
    if not isinstance(moment, Vr):
        return None
    (argument,) = moment.args
    if isinstance(argument, RSum) and is_random(argument.args[0]):
        inner, count = argument.args
        return RSum(Vr(inner), count)
    terms = [term for term in sympy.Add.make_args(sympy.expand(argument)) if is_random(term)]
    if len(terms) < 2 or any(term.has(RSum) for term in terms):
        return None
    groups = _independent_groups(terms)
    if len(groups) < 2:
        return None
    # _independent_groups multiplies merged factors; rebuild the sums of each group instead.
    total = sympy.Integer(0)
    for symbols, _ in groups:
        total += Vr(sympy.Add(*[term for term in terms if set(free_random(term)) & symbols]))
    return total


def _square_of_sum(moment, model: Model):
    if not isinstance(moment, Ex):
        return None
    (argument,) = moment.args
    base, exponent = argument.as_base_exp()
    if exponent != 2 or not isinstance(base, RSum) or not is_random(base.args[0]):
        return None
    inner, count = base.args
    return count * Ex(inner**2) + count * (count - 1) * Ex(inner) ** 2


def _identical_terms(moment, model: Model):
    if not isinstance(moment, RSum):
        return None
    term, count = moment.args
    if is_random(term):
        return None
    return count * term


def _substitution(moment, model: Model):
    (argument, *_rest) = moment.args
    if isinstance(moment, Ex):
        base, exponent = argument.as_base_exp()
        if not is_random_symbol(base):
            return None
        if not (exponent.is_Integer and exponent >= 0):
            raise Unsupported("only whole powers of random variables can be averaged here")
        return model.moment(base, int(exponent))
    if isinstance(moment, Vr) and is_random_symbol(argument):
        return model.moment(argument, 2) - model.moment(argument, 1) ** 2
    return None


RULES = {
    LINEARITY: _linearity,
    VARIANCE_SCALING: _variance_scaling,
    VARIANCE_DEFINITION: _variance_definition,
    INDEPENDENCE: _independence,
    VARIANCE_OF_SUM: _variance_of_sum,
    SQUARE_OF_SUM: _square_of_sum,
    IDENTICAL_TERMS: _identical_terms,
    SUBSTITUTION: _substitution,
}


# --------------------------------------------------------------------------- applying rules


def _moments_in(expression) -> list:
    found = expression.atoms(*MOMENT_TYPES)
    return sorted(found, key=sympy.default_sort_key)


def rewrites(expression, rule: str, model: Model) -> list:
    """Every (moment, replacement) the rule allows in ``expression``."""
    function = RULES[rule]
    result = []
    for moment in _moments_in(expression):
        replacement = function(moment, model)
        if replacement is not None:
            result.append((moment, replacement))
    return result


def apply_everywhere(expression, rule: str, model: Model):
    """(new expression, first (moment, replacement)) with the rule applied at every site, or None."""
    sites = rewrites(expression, rule, model)
    if not sites:
        return None
    # Innermost sites first would be rewritten away by outer ones; replace the outermost.
    outer = [site for site in sites if not any(other[0] != site[0] and other[0].has(site[0]) for other in sites)]
    return canonical(expression.xreplace(dict(outer))), outer[0]


@lru_cache(maxsize=2048)
def normal_form(expression, model_key) -> tuple:
    """(value with no moment left, rule names used in order). Raises Unsupported."""
    model = _MODELS[model_key]
    current, used = canonical(expression), []
    for _ in range(MAX_NORMAL_FORM_ROUNDS):
        if not has_moments(current):
            return current, tuple(used)
        for rule in RULE_ORDER:
            applied = apply_everywhere(current, rule, model)
            if applied is not None:
                current = applied[0]
                used.append(rule)
                break
        else:
            leftover = _moments_in(current)[0]
            raise Unsupported(f"{describe(leftover)} cannot be evaluated with the rules of this exercise")
    raise Unsupported("the step is too involved to evaluate")


_MODELS: dict = {}


def register_model(model: Model):
    """A hashable key for ``model`` so results can be cached per exercise."""
    key = (tuple(sorted((base, str(mean), str(variance)) for base, (mean, variance) in model.moments.items())),
           tuple(sorted(model.normal.items())))
    _MODELS.setdefault(key, model)
    return key


def _same(left, right) -> bool:
    return left == right or sympy.expand(left - right) == 0


@lru_cache(maxsize=2048)
def rules_between(previous, following, model_key, depth: int) -> tuple | None:
    """The shortest list of (rule, moment, replacement) turning ``previous`` into ``following``
    modulo ordinary algebra, searching at most ``depth`` applications; None if not found.
    An empty tuple means the two are the same up to algebra (a restatement)."""
    model = _MODELS[model_key]
    start, goal = canonical(previous), canonical(following)
    if _same(start, goal):
        return ()
    frontier, seen, visited = [(start, ())], {start}, 0
    for _ in range(depth):
        next_frontier = []
        for expression, path in frontier:
            for rule in RULE_ORDER:
                for new, site in _neighbours(expression, rule, model):
                    visited += 1
                    if new in seen:
                        continue
                    seen.add(new)
                    step_path = path + ((rule, *site),)
                    if _same(new, goal):
                        return step_path
                    next_frontier.append((new, step_path))
                    if visited > MAX_SEARCH_NODES:
                        return None
        frontier = next_frontier
    return None


def _neighbours(expression, rule: str, model: Model) -> list:
    try:
        sites = rewrites(expression, rule, model)
    except Unsupported:
        return []
    result = [(canonical(expression.xreplace({moment: replacement})), (moment, replacement)) for moment, replacement in sites]
    if len(sites) > 1:
        everywhere = apply_everywhere(expression, rule, model)
        if everywhere is not None:
            result.append(everywhere)
    return result


def rules_needed(previous, following, model_key) -> list[str]:
    """Rule names the normal form of ``previous`` uses that ``following`` does not: what a
    too-big step skipped."""
    _, before = normal_form(previous, model_key)
    _, after = normal_form(following, model_key)
    remaining = list(after)
    needed = []
    for rule in before:
        if rule in remaining:
            remaining.remove(rule)
        elif rule not in needed:
            needed.append(rule)
    return needed or list(dict.fromkeys(before))


# --------------------------------------------------------------------------- printing


class _StepPrinter(StrPrinter):
    def _print_Symbol(self, expr):
        return expr.name[3:] if expr.name.startswith("rv:") else expr.name

    def _print_Ex(self, expr):
        return f"E[{self._print(expr.args[0])}]"

    def _print_Vr(self, expr):
        return f"Var({self._print(expr.args[0])})"

    def _print_Cv(self, expr):
        return f"Cov({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_RSum(self, expr):
        term, count = expr.args
        return f"Sum({self._print(term)}, m, 1, {self._print(count)})"


def describe(expression) -> str:
    """Plain text of a structure, in the syntax students type (``E[q_m^2]``)."""
    return _StepPrinter({"order": "none"}).doprint(expression).replace("**", "^")


@lru_cache(maxsize=4096)
def rule_phrase(rule: str, moment=None, replacement=None) -> str:
    words = RULE_NAMES[rule]
    if moment is None:
        return words
    return f"{words}: {describe(moment)} = {describe(replacement)}"
