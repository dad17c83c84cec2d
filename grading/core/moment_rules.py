"""The named rules of the moment algebra, as one-step rewrites of unevaluated moments.

A derivation step is built (by ``grading.core.derivation``) into a SymPy expression whose
moments stay unevaluated: ``Ex(X)`` for E[X], ``Vr(X)`` for Var(X), ``Cv(X, Y)`` and
``RSum(term, count)`` for a sum over one index of ``count`` independent, identically
distributed terms. Random variables are SymPy symbols named ``rv:q_m``; every distinct
random symbol is independent of the others.

Each rule rewrites one moment at a time (or every moment it applies to at once, which
counts as one application). ``normal_form`` applies the rules until no moment is left and
records which rules it used; ``rules_between`` searches, a bounded number of rewrites
deep, for the rules that lead from one step to the next modulo ordinary algebra, and on
request also with rules read backwards (``REVERSE_RULES``) and with results the student
showed on earlier lines (lemmas) as free rewrites.
Nothing here imports Django.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

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


class _SumOfTerms(sympy.Function):
    """A sum whose terms are all 0 is 0, and a constant factor of every term is a factor of the
    sum (Σ_m q_m k_m/√d_k = (Σ_m q_m k_m)/√d_k): ordinary algebra, not a rule."""

    nargs = 2

    @classmethod
    def eval(cls, term, count):
        if term == 0:
            return sympy.Integer(0)
        constant, rest = constant_factor(term)
        if constant != 1 and rest != 1:
            return constant * cls(rest, count)
        return None


def constant_factor(term) -> tuple:
    """(the factors of ``term`` free of random variables and moments, the other factors)."""
    constant, rest = [], []
    for factor in sympy.Mul.make_args(term):
        plain = not factor.has(*MOMENT_TYPES) and not any(is_random_symbol(symbol) for symbol in factor.free_symbols)
        (constant if plain else rest).append(factor)
    return sympy.Mul(*constant), sympy.Mul(*rest)


class RSum(_SumOfTerms):
    """RSum(term, count): the sum over one index of ``count`` i.i.d. copies of ``term``."""


class DSum(_SumOfTerms):
    """DSum(term, count): the double sum over indices m and n (both 1..count) of ``term``,
    whose random variables carry the index m or n and sit inside moments."""


class PSum(_SumOfTerms):
    """PSum(term, count): the sum of ``term`` over the count·(count − 1) pairs m ≠ n."""


class Unsupported(AnswerFormatError):
    """A well-formed step that uses moment algebra this checker does not evaluate."""


MOMENT_TYPES = (Ex, Vr, Cv, RSum, DSum, PSum)

LINEARITY = "linearity"
VARIANCE_SCALING = "variance_scaling"
VARIANCE_DEFINITION = "variance_definition"
INDEPENDENCE = "independence"
VARIANCE_OF_SUM = "variance_of_sum"
SQUARE_OF_SUM = "square_of_sum"
IDENTICAL_TERMS = "identical_terms"
SUBSTITUTION = "substitution"
COVARIANCE_OF_ITSELF = "covariance_of_itself"
VARIANCE_AS_COVARIANCE = "variance_as_covariance"
COVARIANCE_OF_SUMS = "covariance_of_sums"
SPLIT_DOUBLE_SUM = "split_double_sum"
SECOND_MOMENT = "second_moment"
COMBINE_INDEPENDENT = "combine_independent"
COVARIANCE_FROM_MOMENTS = "covariance_from_moments"
COMBINE_VARIANCES = "combine_variances"
BILINEARITY_BACKWARDS = "bilinearity_backwards"
JOIN_DOUBLE_SUM = "join_double_sum"
COVARIANCE_IDENTITY = "covariance_identity"
LEMMA = "lemma"

RULE_NAMES = {
    LINEARITY: "linearity of expectation",
    VARIANCE_SCALING: "Var(aX + b) = a² Var(X)",
    VARIANCE_DEFINITION: "the definition Var(X) = E[X²] − E[X]²",
    INDEPENDENCE: "independence: E[XY] = E[X]E[Y]",
    VARIANCE_OF_SUM: "the variance of a sum of independent terms (the sum of their variances)",
    SQUARE_OF_SUM: "expanding the square of a sum (its cross terms factor by independence)",
    IDENTICAL_TERMS: "a sum of identical terms (their number times one term)",
    SUBSTITUTION: "substituting the declared mean or variance",
    COVARIANCE_OF_ITSELF: "Cov(X, X) = Var(X)",
    VARIANCE_AS_COVARIANCE: "Var(X) = Cov(X, X)",
    COVARIANCE_OF_SUMS: "bilinearity: Cov(Σ_m X_m, Σ_n Y_n) = Σ_m Σ_n Cov(X_m, Y_n)",
    SPLIT_DOUBLE_SUM: "splitting a double sum into its m = n and m ≠ n terms",
    SECOND_MOMENT: "the definition of variance read backwards: E[X²] = Var(X) + E[X]²",
    COMBINE_INDEPENDENT: "independence read backwards: E[X]E[Y] = E[XY]",
    COVARIANCE_FROM_MOMENTS: "the definition of covariance read backwards: E[XY] − E[X]E[Y] = Cov(X, Y)",
    COMBINE_VARIANCES: "the variance of a sum of independent terms read backwards: Var(X) + Var(Y) = Var(X + Y)",
    BILINEARITY_BACKWARDS: "bilinearity read backwards: Σ_m Σ_n Cov(X_m, Y_n) = Cov(Σ_m X_m, Σ_n Y_n)",
    JOIN_DOUBLE_SUM: "joining the m = n and m ≠ n terms into one double sum",
    COVARIANCE_IDENTITY: "the definition of covariance: E[XY] = Cov(X, Y) + E[X]E[Y]",
    LEMMA: "a result shown on an earlier line",
}
# The order the normal form tries them in: outer structure first, declared values last.
RULE_ORDER = (COVARIANCE_OF_ITSELF, VARIANCE_SCALING, VARIANCE_OF_SUM, SPLIT_DOUBLE_SUM, IDENTICAL_TERMS,
              LINEARITY, SQUARE_OF_SUM, VARIANCE_DEFINITION, INDEPENDENCE, SUBSTITUTION)
# Rules a student may apply that the normal form never needs (they lead away from a value,
# towards another way of writing it); the search between two steps tries them too.
SEARCH_ONLY_RULES = (VARIANCE_AS_COVARIANCE, COVARIANCE_OF_SUMS)
SEARCH_ORDER = RULE_ORDER + SEARCH_ONLY_RULES
# A rule used the other way round (E[X²] -> Var(X) + E[X]², E[X]E[Y] -> E[XY],
# E[XY] − E[X]E[Y] -> Cov(X, Y), Var(X) + Var(Y) -> Var(X + Y) for independent X and Y,
# Σ_m Σ_n Cov(X_m, Y_n) -> Cov(Σ_m X_m, Σ_n Y_n), Σ_m T_mm + Σ_{m≠n} T_mn -> Σ_m Σ_n T_mn) is a
# step too, but only searched when the rules forwards do not reach it: what the forward search
# decides stays as it was. The covariance definition is read backwards whole (E[XY] − E[X]E[Y]
# -> Cov(X, Y)) and, for E[XY] alone, only towards a step that writes the identity out
# (E[XY] -> Cov(X, Y) + E[X]E[Y] where the next step shows Cov(X, Y), E[X] and E[Y]:
# ``_covariance_identity_sites``): offered for any E[XY] it would make "E[XY] = Cov(X, Y)" (true
# only for zero means) a two-rule step. Cov(X, Y) = 0 for independent X and Y has no backwards:
# it would invent a covariance out of nothing.
REVERSE_RULES = (SECOND_MOMENT, COMBINE_INDEPENDENT, COVARIANCE_FROM_MOMENTS, COVARIANCE_IDENTITY, COMBINE_VARIANCES,
                 BILINEARITY_BACKWARDS, JOIN_DOUBLE_SUM)
MAX_NORMAL_FORM_ROUNDS = 40
MAX_SEARCH_NODES = 400
# Whether named rules reach a step at all (beyond the per-step limit) is searched deeper.
REACH_DEPTH = 6
MAX_REACH_NODES = 300


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
    parts, changed = [], len(terms) > 1  # added up once: a running total costs time quadratic in the terms
    for term in terms:
        constant, random_part = _split_constant(term)
        if random_part == 1:
            parts.append(constant)
            changed = True
            continue
        if constant != 1:
            changed = True
        if isinstance(random_part, RSum) and is_random(random_part.args[0]):
            parts.append(constant * RSum(Ex(random_part.args[0]), random_part.args[1]))
            changed = True
        else:
            parts.append(constant * Ex(random_part))
    return sympy.Add(*parts) if changed else None


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


def _scaled_sum(expression):
    """(c, RSum) for c·Σ_m X_m, a constant multiple of a sum of random terms; None otherwise."""
    constant, rest = constant_factor(expression)
    if isinstance(rest, RSum) and is_random(rest.args[0]):
        return constant, rest
    return None


def _variance_of_sum(moment, model: Model):
    if not isinstance(moment, Vr):
        return None
    (argument,) = moment.args
    scaled = _scaled_sum(argument)
    if scaled is not None:  # Var(c Σ_m X_m) = Σ_m Var(c X_m)
        constant, (inner, count) = scaled[0], scaled[1].args
        return RSum(Vr(sympy.expand(constant * inner)), count)
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
    if isinstance(moment, PSum):
        term, count = moment.args
        return None if is_random(term) else count * (count - 1) * term
    if not isinstance(moment, RSum):
        return None
    term, count = moment.args
    if is_random(term):
        return None
    return count * term


SECOND_INDEX = "n"


def rename_index(expression, old: str, new: str):
    """``expression`` with every random symbol ``rv:<base>_<old>`` renamed to ``rv:<base>_<new>``."""
    renamed = {}
    for symbol in expression.free_symbols:
        if is_random_symbol(symbol):
            base, _, index = symbol.name[3:].partition("_")
            if index == old:
                renamed[symbol] = sympy.Symbol(f"rv:{base}_{new}", real=True)
    return expression.xreplace(renamed)


def _covariance_of_itself(moment, model: Model):
    if isinstance(moment, Cv) and sympy.expand(moment.args[0] - moment.args[1]) == 0:
        return Vr(moment.args[0])
    return None


def _variance_as_covariance(moment, model: Model):
    if isinstance(moment, Vr) and is_random(moment.args[0]):
        return Cv(moment.args[0], moment.args[0])
    return None


def _covariance_of_sums(moment, model: Model):
    if not isinstance(moment, Cv):
        return None
    first, second = (_scaled_sum(argument) for argument in moment.args)
    if first is None or second is None or first[1].args[1] != second[1].args[1]:
        return None
    (first_constant, first_sum), (second_constant, second_sum) = first, second
    first_term, count = first_sum.args
    second_term = rename_index(sympy.expand(second_constant * second_sum.args[0]), "m", SECOND_INDEX)
    return DSum(Cv(sympy.expand(first_constant * first_term), second_term), count)


def _split_double_sum(moment, model: Model):
    if not isinstance(moment, DSum):
        return None
    term, count = moment.args
    if is_random(term):
        return None
    return RSum(rename_index(term, SECOND_INDEX, "m"), count) + PSum(term, count)


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


def _square_root(argument):
    """X for an argument X² (every random factor to an even power, no constant), else None."""
    argument = sympy.expand(argument)
    if argument.is_Add or not is_random(argument):
        return None
    root = sympy.Integer(1)
    for factor in sympy.Mul.make_args(argument):
        base, exponent = factor.as_base_exp()
        if not is_random(base) or not (exponent.is_Integer and exponent > 0 and exponent % 2 == 0):
            return None
        root *= base ** (exponent // 2)
    return root


def _second_moment(moment, model: Model):
    """E[X²] = Var(X) + E[X]²: the definition of variance read the other way."""
    if not isinstance(moment, Ex):
        return None
    root = _square_root(moment.args[0])
    if root is None:
        return None
    return Vr(root) + Ex(root) ** 2


def _combine_sites(expression) -> list:
    """(product, replacement) for every product of expectations of independent quantities
    with the same power, E[X]^p E[Y]^p -> E[XY]^p, outside double sums (whose m and n may
    coincide)."""
    excluded = set()
    for double in expression.atoms(DSum):
        excluded |= double.args[0].atoms(sympy.Mul) | {double.args[0]}
    sites = []
    for product in sorted(expression.atoms(sympy.Mul), key=sympy.default_sort_key):
        if product in excluded:
            continue
        by_power: dict = {}
        for factor in product.args:
            base, exponent = factor.as_base_exp()
            if isinstance(base, Ex) and is_random(base.args[0]) and exponent.is_Integer and exponent > 0:
                by_power.setdefault(exponent, []).append((factor, base.args[0]))
        for exponent, group in sorted(by_power.items()):
            if len(group) < 2:
                continue
            symbols = [free_random(argument) for _, argument in group]
            if any(symbols[i] & symbols[j] for i in range(len(symbols)) for j in range(i + 1, len(symbols))):
                continue
            rest = sympy.Mul(*[factor for factor in product.args if factor not in {item for item, _ in group}])
            combined = Ex(sympy.expand(sympy.Mul(*[argument for _, argument in group]))) ** exponent
            sites.append((product, rest * combined))
    return sites


# The rules below read a rule of a sum backwards: each rewrites terms of one sum (or one moment
# of a sum), given as (the sum, the sum rewritten).


def _sums_in(expression, outside_double_sums: bool = False) -> list:
    """The sums (Add nodes) of ``expression``; with ``outside_double_sums``, not those inside
    Σ_m Σ_n, whose m and n may coincide."""
    sums = expression.atoms(sympy.Add)
    if outside_double_sums:
        for double in expression.atoms(DSum):
            sums -= double.args[0].atoms(sympy.Add) | {double.args[0]}
    return sorted(sums, key=sympy.default_sort_key)


def _factor_of_type(term, kind):
    """(the rest, the factor) of a product term with exactly one factor of type ``kind`` (to the
    power 1) and a rest that is a constant (no moment, nothing random); None otherwise."""
    factors = sympy.Mul.make_args(term)
    found = [factor for factor in factors if isinstance(factor, kind)]
    if len(found) != 1:
        return None
    rest = sympy.Mul(*[factor for factor in factors if factor is not found[0]])
    if has_moments(rest) or is_random(rest):
        return None
    return rest, found[0]


def _rewritten_sum(total, removed: tuple, added):
    return sympy.Add(*[term for term in total.args if term not in removed], added)


def _only_index(expression, index: str) -> bool:
    """Whether every random variable of ``expression`` carries ``index`` (and it has one)."""
    symbols = [symbol for symbol in expression.free_symbols if is_random_symbol(symbol)]
    return bool(symbols) and all(symbol.name[3:].partition("_")[2] == index for symbol in symbols)


def _covariance_sites(expression) -> list:
    """c E[XY] − c E[X]E[Y] -> c Cov(X, Y) in a sum, with Cov(X, Y) and Cov(Y, X) both offered.
    The definition holds for any X and Y; E[X²] − E[X]² is SECOND_MOMENT's (Var(X))."""
    sites = []
    for total in _sums_in(expression):
        terms = set(total.args)
        for term in total.args:
            factors = sympy.Mul.make_args(term)
            means = [factor for factor in factors if isinstance(factor, Ex) and is_random(factor.args[0])]
            for first, second in combinations(means, 2):
                rest = sympy.Mul(*[factor for factor in factors if factor is not first and factor is not second])
                if is_random(rest):
                    continue
                joint = canonical(-rest * Ex(canonical(first.args[0] * second.args[0])))
                if joint == term or joint not in terms:
                    continue
                for pair in ((first.args[0], second.args[0]), (second.args[0], first.args[0])):
                    sites.append((total, _rewritten_sum(total, (term, joint), -rest * Cv(*pair))))
    return sites


def _covariance_identity_sites(expression, goal) -> list:
    """E[XY] -> Cov(X, Y) + E[X]E[Y]: the definition of covariance, true for any X and Y,
    dependent or not (E[q_m q_m] = Cov(q_m, q_m) + E[q_m]E[q_m]). The split of the product into
    X and Y is the one ``goal`` (the step the student wrote) shows: a Cov(X, Y) next to both E[X]
    and E[Y]. Without them the identity is not written out, and is not offered: E[XY] = Cov(X, Y)
    would follow from it by substituting a zero mean. No split leads to E[XY] = E[X]E[Y] for
    dependent X and Y, nor to a sign changed."""
    if goal is None:
        return []
    means = goal.atoms(Ex)
    by_product: dict = {}
    for covariance in sorted(goal.atoms(Cv), key=sympy.default_sort_key):
        first, second = covariance.args
        if is_random(first) and is_random(second) and Ex(first) in means and Ex(second) in means:
            by_product.setdefault(canonical(first * second), []).append(covariance)
    if not by_product:
        return []
    sites = []
    for moment in _moments_in(expression):
        if isinstance(moment, Ex):
            for covariance in by_product.get(moment.args[0], ()):
                first, second = covariance.args
                sites.append((moment, covariance + Ex(first) * Ex(second)))
    return sites


MAX_COMBINED_PAIRS = 4  # beyond this many variances with one factor, only all of them at once


def _variance_sum_sites(expression) -> list:
    """c Var(X) + c Var(Y) -> c Var(X + Y) for X and Y with no random variable in common (the
    forward rule's independence), never inside Σ_m Σ_n; also each pair, and all of them at once
    when they are independent of each other. Σ_m c Var(X_m) -> c Var(Σ_m X_m) when every random
    variable of X_m carries the index m (the terms are then independent and identically
    distributed)."""
    sites = []
    inside = _inside_double_sums(expression) if expression.has(DSum) else set()
    for moment in _moments_in(expression):
        if not isinstance(moment, RSum) or moment in inside:
            continue
        split = _factor_of_type(moment.args[0], Vr)
        if split is None:
            continue
        rest, variance = split
        inner = variance.args[0]
        if _only_index(inner, "m") and not inner.has(*MOMENT_TYPES):
            sites.append((moment, rest * Vr(RSum(inner, moment.args[1]))))
    for total in _sums_in(expression, outside_double_sums=True):
        by_factor: dict = {}
        for term in total.args:
            split = _factor_of_type(term, Vr)
            if split is None or not is_random(split[1].args[0]) or split[1].args[0].has(*MOMENT_TYPES):
                continue
            by_factor.setdefault(split[0], []).append((term, split[1].args[0]))
        for rest, group in sorted(by_factor.items(), key=lambda item: sympy.default_sort_key(item[0])):
            independent = [not (free_random(first[1]) & free_random(second[1]))
                           for first, second in combinations(group, 2)]
            if len(group) <= MAX_COMBINED_PAIRS:
                for (first, second), apart in zip(combinations(group, 2), independent):
                    if apart:
                        sites.append((total, _rewritten_sum(total, (first[0], second[0]),
                                                            rest * Vr(canonical(first[1] + second[1])))))
            if len(group) > 2 and all(independent):
                combined = rest * Vr(canonical(sympy.Add(*[argument for _, argument in group])))
                sites.append((total, _rewritten_sum(total, tuple(term for term, _ in group), combined)))
    return sites


def _bilinearity_backwards(moment, model: Model):
    """Σ_m Σ_n c Cov(X_m, Y_n) = c Cov(Σ_m X_m, Σ_n Y_n), when every random variable of X
    carries the index m and every one of Y the index n."""
    if not isinstance(moment, DSum):
        return None
    term, count = moment.args
    split = _factor_of_type(term, Cv)
    if split is None:
        return None
    rest, covariance = split
    first, second = covariance.args
    if first.has(*MOMENT_TYPES) or second.has(*MOMENT_TYPES):
        return None
    if not (_only_index(first, "m") and _only_index(second, SECOND_INDEX)):
        return None
    return rest * Cv(RSum(first, count), RSum(rename_index(second, SECOND_INDEX, "m"), count))


def _join_sites(expression) -> list:
    """c Σ_m T_mm + c Σ_{m≠n} T_mn -> c Σ_m Σ_n T_mn: splitting a double sum read backwards."""
    sites = []
    for total in _sums_in(expression):
        terms = set(total.args)
        for term in total.args:
            split = _factor_of_type(term, PSum)
            if split is None:
                continue
            rest, pairs = split
            pair_term, count = pairs.args
            diagonal = canonical(rest * RSum(rename_index(pair_term, SECOND_INDEX, "m"), count))
            if diagonal in terms:
                sites.append((total, _rewritten_sum(total, (term, diagonal), rest * DSum(pair_term, count))))
    return sites


RULES = {
    LINEARITY: _linearity,
    VARIANCE_SCALING: _variance_scaling,
    VARIANCE_DEFINITION: _variance_definition,
    INDEPENDENCE: _independence,
    VARIANCE_OF_SUM: _variance_of_sum,
    SQUARE_OF_SUM: _square_of_sum,
    IDENTICAL_TERMS: _identical_terms,
    SUBSTITUTION: _substitution,
    COVARIANCE_OF_ITSELF: _covariance_of_itself,
    VARIANCE_AS_COVARIANCE: _variance_as_covariance,
    COVARIANCE_OF_SUMS: _covariance_of_sums,
    SPLIT_DOUBLE_SUM: _split_double_sum,
    SECOND_MOMENT: _second_moment,
    BILINEARITY_BACKWARDS: _bilinearity_backwards,
}
# Rules that rewrite a product or a sum of moments, not one moment.
SITE_RULES = {
    COMBINE_INDEPENDENT: _combine_sites,
    COVARIANCE_FROM_MOMENTS: _covariance_sites,
    COMBINE_VARIANCES: _variance_sum_sites,
    JOIN_DOUBLE_SUM: _join_sites,
}
# Rules whose sites depend on the step searched for (``goal``), not on the expression alone.
GOAL_RULES = {
    COVARIANCE_IDENTITY: _covariance_identity_sites,
}


# --------------------------------------------------------------------------- applying rules


@lru_cache(maxsize=8192)
def _moments_in(expression) -> tuple:
    found = expression.atoms(*MOMENT_TYPES)
    return tuple(sorted(found, key=sympy.default_sort_key))


# Inside Σ_m Σ_n the indices may coincide, so q_m and q_n there are not independent.
_NOT_INSIDE_DOUBLE_SUMS = (INDEPENDENCE, VARIANCE_OF_SUM)


def _inside_double_sums(expression) -> set:
    inside = set()
    for double in expression.atoms(DSum):
        inside |= double.args[0].atoms(*MOMENT_TYPES) | {double.args[0]}
    return inside


def rewrites(expression, rule: str, model: Model, goal=None) -> list:
    """Every (moment, replacement) the rule allows in ``expression`` (towards ``goal``, for the
    rules of ``GOAL_RULES``)."""
    if rule in GOAL_RULES:
        return GOAL_RULES[rule](expression, goal)
    if rule in SITE_RULES:
        return SITE_RULES[rule](expression)
    function = RULES[rule]
    excluded = _inside_double_sums(expression) if rule in _NOT_INSIDE_DOUBLE_SUMS and expression.has(DSum) else set()
    result = []
    for moment in _moments_in(expression):
        if moment in excluded:
            continue
        replacement = function(moment, model)
        if replacement is not None:
            result.append((moment, replacement))
    return result


def apply_everywhere(expression, rule: str, model: Model, goal=None):
    """(new expression, first (moment, replacement)) with the rule applied at every site, or None."""
    sites = rewrites(expression, rule, model, goal)
    if not sites:
        return None
    # Innermost sites first would be rewritten away by outer ones; replace the outermost.
    outer = _outermost(sites)
    return canonical(expression.xreplace(dict(outer))), outer[0]


def _outermost(sites: list) -> list:
    """The sites whose moment is not inside another site's moment. Each moment is walked
    once: comparing every pair of sites took time quadratic in their number."""
    moments = {moment for moment, _ in sites}
    inner = set()
    for moment in moments:
        walk = sympy.preorder_traversal(moment)
        next(walk)  # the moment itself
        inner.update(node for node in walk if node in moments)
    return [site for site in sites if site[0] not in inner]


@lru_cache(maxsize=2048)
def normal_form(expression, model_key) -> tuple:
    """(value with no moment left, rule names used in order). Raises Unsupported."""
    value, path = normal_form_path(expression, model_key)
    return value, tuple(rule for rule, _, _ in path)


@lru_cache(maxsize=2048)
def normal_form_path(expression, model_key) -> tuple:
    """(value with no moment left, ((rule, moment, replacement), ...)): the rules the normal
    form applies, each with its first site. Raises Unsupported."""
    value, trajectory = _normal_form_trajectory(expression, model_key)
    return value, tuple(site for _, site in trajectory)


@lru_cache(maxsize=2048)
def _normal_form_trajectory(expression, model_key) -> tuple:
    """(value, ((expression after the rule, (rule, moment, replacement)), ...))."""
    model = _MODELS[model_key]
    current, used = canonical(expression), []
    for _ in range(MAX_NORMAL_FORM_ROUNDS):
        if not has_moments(current):
            return current, tuple(used)
        for rule in RULE_ORDER:
            applied = apply_everywhere(current, rule, model)
            if applied is not None:
                current = applied[0]
                used.append((current, (rule, *applied[1])))
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
    """Equal up to ordinary algebra. Precondition: both are canonical (expanded), so a moment
    in one and not the other cannot cancel away: that saves an expansion for almost every
    node of a search."""
    if left == right:
        return True
    if left.atoms(*MOMENT_TYPES) != right.atoms(*MOMENT_TYPES):
        return False
    return sympy.expand(left - right) == 0


def same_up_to_algebra(left, right) -> bool:
    """Whether two structures are the same up to ordinary algebra."""
    return _same(canonical(left), canonical(right))


def _never_produced(previous, following) -> bool:
    """A moment of ``following`` that no rule produces: one of a quantity that is not random
    (Var(0), E[σ_q]), not already in ``previous``. Rules only take randomness apart."""
    for moment in following.atoms(Ex, Vr, Cv):
        if not any(is_random(argument) for argument in moment.args) and not previous.has(moment):
            return True
    return False


RENAMED_INDICES = ("m", SECOND_INDEX)


def _random_in_moments(expression) -> set:
    """The random symbols inside the moments of ``expression``."""
    found = set()
    for moment in expression.atoms(*MOMENT_TYPES):
        found.update(symbol for symbol in moment.free_symbols if is_random_symbol(symbol))
    return found


def _invents_random(start, goal, lemmas: tuple) -> bool:
    """Whether a moment of ``goal`` holds a random variable that neither ``start`` nor a side
    result's sides have. No rule, forwards or backwards, brings in a random variable: each
    takes randomness apart or regroups it, and only the indices m and n of a double sum are
    renamed. Two expressions equal up to algebra have the same moments, so the search could
    not reach ``goal``: ten variances of q_1 … q_10 followed by those of q_2 … q_11 spent
    most of a second of the checker's time finding that out."""
    available = set(start.free_symbols)
    for left, right in lemmas:
        available |= left.free_symbols | right.free_symbols
    return any(symbol not in available and symbol.name[3:].partition("_")[2] not in RENAMED_INDICES
               for symbol in _random_in_moments(goal))


@lru_cache(maxsize=2048)
def rules_between(previous, following, model_key, depth: int, max_nodes: int = MAX_SEARCH_NODES,
                  lemmas: tuple = (), reverse: bool = False, exclude: tuple = ()) -> tuple | None:
    """The shortest list of (rule, moment, replacement) turning ``previous`` into ``following``
    modulo ordinary algebra, searching at most ``depth`` applications (and ``max_nodes``
    expressions); None if not found. An empty tuple means the two are the same up to
    algebra (a restatement).

    ``reverse`` adds the rules read backwards (``REVERSE_RULES``). ``lemmas`` are results
    (left, right) the student showed on earlier lines, true under the exercise's assumptions:
    after every rule (and before the first) each is substituted wherever its left side
    occurs, as a free step recorded as (LEMMA, left, right) that does not count towards
    ``depth``. ``exclude`` names rules not to try."""
    model = _MODELS[model_key]
    start, goal = canonical(previous), canonical(following)
    if _same(start, goal):
        return ()
    if _invents_random(start, goal, lemmas):
        return None
    # Writing a variance as a covariance only leads somewhere the next step shows a covariance.
    order = SEARCH_ORDER if goal.has(Cv, DSum, PSum) else RULE_ORDER
    if reverse:
        order = order + _reverse_rules_for(start, goal)
    order = tuple(rule for rule in order if rule not in exclude)
    if reverse and not lemmas and not set(order) & set(REVERSE_RULES):
        return None  # nothing a forward search has not tried already
    frontier, seen, visited = [(start, ())], {start}, 0
    for closed in _with_lemmas(start, (), lemmas):
        if closed[0] in seen:
            continue
        if _same(closed[0], goal):
            return closed[1]
        seen.add(closed[0])
        frontier.append(closed)
    for _ in range(depth):
        next_frontier = []
        for expression, path in frontier:
            for rule in order:
                for new, site in _neighbours(expression, rule, model, goal):
                    visited += _node_cost(new)
                    if new in seen:
                        continue
                    seen.add(new)
                    step_path = path + ((rule, *site),)
                    if _same(new, goal):
                        return step_path
                    next_frontier.append((new, step_path))
                    for closed, closed_path in _with_lemmas(new, step_path, lemmas):
                        if closed in seen:
                            continue
                        seen.add(closed)
                        if _same(closed, goal):
                            return closed_path
                        next_frontier.append((closed, closed_path))
                    if visited > max_nodes:
                        return None
        frontier = next_frontier
    return None


MAX_LEMMA_ROUNDS = 3


def _reverse_rules_for(start, goal) -> tuple:
    """The rules read backwards that can lead from ``start`` to ``goal``, each only towards a
    moment ``start`` does not have: E[X²] -> Var(X) + E[X]² towards a variance, E[X]E[Y] ->
    E[XY] towards an expectation of a product of independent quantities, E[XY] − E[X]E[Y] ->
    Cov(X, Y) towards a covariance, E[XY] -> Cov(X, Y) + E[X]E[Y] towards a covariance shown
    with E[X] and E[Y], Var(X) + Var(Y) -> Var(X + Y) towards a variance of a sum,
    bilinearity towards a covariance of sums, joining towards a double sum."""
    new = goal.atoms(Ex, Vr, Cv, DSum) - start.atoms(Ex, Vr, Cv, DSum)
    rules = []
    if any(isinstance(moment, Vr) for moment in new):
        rules.append(SECOND_MOMENT)
    if any(isinstance(moment, Ex) and len(_independent_groups(sympy.Mul.make_args(sympy.expand(moment.args[0])))) > 1
           for moment in new):
        rules.append(COMBINE_INDEPENDENT)
    if any(isinstance(moment, Cv) for moment in new):
        rules.append(COVARIANCE_FROM_MOMENTS)
    means = goal.atoms(Ex)
    if any(isinstance(moment, Cv) and all(Ex(argument) in means for argument in moment.args) for moment in new):
        rules.append(COVARIANCE_IDENTITY)
    if any(isinstance(moment, Vr) and (isinstance(moment.args[0], RSum) or moment.args[0].is_Add) for moment in new):
        rules.append(COMBINE_VARIANCES)
    if any(isinstance(moment, Cv) and any(isinstance(argument, RSum) for argument in moment.args) for moment in new):
        rules.append(BILINEARITY_BACKWARDS)
    if any(isinstance(moment, DSum) for moment in new):
        rules.append(JOIN_DOUBLE_SUM)
    return tuple(rules)


def _with_lemmas(expression, path: tuple, lemmas: tuple) -> list:
    """``expression`` with the lemmas substituted: [(new expression, path + the lemmas used)],
    empty when none applies. Never inside a double sum, whose m and n may coincide."""
    if not lemmas:
        return []
    current, used = expression, ()
    for _ in range(MAX_LEMMA_ROUNDS):
        changed = False
        for left, right in lemmas:
            replaced = _substitute_lemma(current, left, right)
            if replaced is not None and replaced != current:
                current, used, changed = replaced, used + ((LEMMA, left, right),), True
        if not changed:
            break
    return [(current, path + used)] if used else []


def _substitute_lemma(expression, left, right):
    compound = isinstance(left, (sympy.Add, sympy.Mul))  # may match part of a sum or product
    if compound and expression.has(DSum):
        return None
    if not compound and not expression.has(left):
        return None
    if any(double.args[0].has(left) for double in expression.atoms(DSum)):
        return None
    try:
        replaced = expression.subs(left, right) if compound else expression.xreplace({left: right})
    except (TypeError, ValueError, AttributeError):
        return None
    if replaced == expression:
        return None
    return canonical(replaced)


def _neighbours(expression, rule: str, model: Model, goal=None):
    """Each (expression, (moment, replacement)) that one application of ``rule`` leads to, then
    the rule applied everywhere at once: made one at a time, so that a search out of nodes
    stops making them."""
    try:
        sites = rewrites(expression, rule, model, goal)
    except Unsupported:
        return
    for moment, replacement in sites:
        yield canonical(expression.xreplace({moment: replacement})), (moment, replacement)
    if len(sites) > 1:
        everywhere = apply_everywhere(expression, rule, model, goal)
        if everywhere is not None:
            yield everywhere


# A big search node counts as several: making and comparing it takes time linear in its size,
# and a step of a few dozen terms ran out the checker's time in the search. A step of the
# chapter's size (a tree of at most 40 nodes or so) counts 1.
SIZE_PER_NODE = 48


def tree_size(expression) -> int:
    """The number of nodes of ``expression`` (each moment, symbol, number, sum, product...)."""
    return sum(1 for _ in sympy.preorder_traversal(expression))


def _node_cost(expression) -> int:
    return 1 + tree_size(expression) // SIZE_PER_NODE


@lru_cache(maxsize=2048)
def rules_reaching(previous, following, model_key) -> tuple | None:
    """Some list of (rule, moment, replacement) that leads from ``previous`` to ``following``
    however many rules it takes, or None when no rule path is found: the step is then not
    justified by the rules, whatever its value.

    Precondition: the two have the same value. A step without moments is reached by the
    normal form of ``previous``; one with moments by a deeper search, from ``previous`` and
    from each expression on the normal form's way."""
    if not has_moments(following):
        try:
            return normal_form_path(previous, model_key)[1]
        except Unsupported:
            return None
    if _never_produced(previous, following):
        return None
    found = rules_between(previous, following, model_key, REACH_DEPTH, MAX_REACH_NODES)
    if found is not None:
        return found
    try:
        _, trajectory = _normal_form_trajectory(previous, model_key)
    except Unsupported:
        return None
    for index, (expression, _) in enumerate(trajectory):
        rest = rules_between(expression, following, model_key, 3)
        if rest is not None:
            return tuple(site for _, site in trajectory[:index + 1]) + rest
    # A step that reads a definition backwards (E[X²] -> Var(X) + E[X]²) among other rules;
    # not with the declared values as well: Var(q_m k_m) -> Var(q_m) Var(k_m), true only for
    # zero means, would be "reached" through E[q_m] = 0.
    return rules_between(previous, following, model_key, REACH_DEPTH, MAX_REACH_NODES, reverse=True,
                         exclude=(SUBSTITUTION,))


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


# --------------------------------------------------------------------------- known slips
# What students commonly write instead of a rule. Never used to award anything: a step that
# only a slip explains is named (its code is a misconception of grading.core.misconceptions).


def _independent_factors_of_variance(moment) -> tuple | None:
    """(constant, [independent random factors]) of Var(c X Y ...) with two or more
    independent factors; None for any other moment."""
    if not isinstance(moment, Vr):
        return None
    argument = sympy.expand(moment.args[0])
    if argument.is_Add or argument.has(RSum):
        return None
    constant, random_part = _split_constant(argument)
    groups = _independent_groups(sympy.Mul.make_args(random_part))
    if len(groups) < 2:
        return None
    return constant, [factor for _, factor in groups]


def _slip_product_of_variances(moment, model: Model):
    split = _independent_factors_of_variance(moment)
    if split is None:
        return None
    constant, factors = split
    product = constant**2
    for factor in factors:
        product *= Vr(factor)
    return product


def _slip_sum_of_variances(moment, model: Model):
    """Var(XY) written Var(X) + Var(Y): the rule for a sum of independent variables used
    on a product."""
    split = _independent_factors_of_variance(moment)
    if split is None:
        return None
    constant, factors = split
    return constant**2 * sympy.Add(*(Vr(factor) for factor in factors))


def _slip_count_squared(moment, model: Model):
    if isinstance(moment, Vr) and isinstance(moment.args[0], RSum) and is_random(moment.args[0].args[0]):
        term, count = moment.args[0].args
        return count**2 * Vr(term)
    return None


def _slip_square_of_mean(moment, model: Model):
    if not isinstance(moment, Ex):
        return None
    argument = sympy.expand(moment.args[0])
    if argument.is_Add or not is_random(argument):
        return None
    root = sympy.Integer(1)
    for factor in sympy.Mul.make_args(argument):
        base, exponent = factor.as_base_exp()
        if is_random(base) and not (exponent.is_Integer and exponent % 2 == 0):
            return None
        root *= base ** (exponent / 2) if is_random(base) else sympy.sqrt(factor)
    return Ex(root) ** 2


def _slip_dropped_mean_square(moment, model: Model):
    if isinstance(moment, Vr) and is_random(moment.args[0]):
        return Ex(sympy.expand(moment.args[0] ** 2))
    return None


def _slip_forgot_squares(moment, model: Model):
    argument = moment.args[0]
    if isinstance(moment, Ex):
        base, exponent = argument.as_base_exp()
        if is_random_symbol(base) and exponent == 2 and model.moment(base, 1) == 0:
            return sympy.sqrt(model.moment(base, 2))
    if isinstance(moment, Vr) and is_random_symbol(argument):
        return sympy.sqrt(model.moment(argument, 2) - model.moment(argument, 1) ** 2)
    return None


SLIPS = {
    "product_of_variances": _slip_product_of_variances,
    "sum_of_variances": _slip_sum_of_variances,
    "count_squared": _slip_count_squared,
    "square_of_mean": _slip_square_of_mean,
    "dropped_mean_square": _slip_dropped_mean_square,
    "forgot_squares": _slip_forgot_squares,
}


MAX_SLIP_SIZE = 100  # tree_size of either side
MAX_SLIP_SITES = 3  # one site at a time at the first few; every site at once in any case
MAX_SLIP_NODES = 60
MAX_SLIP_SEARCHES = 8


@lru_cache(maxsize=2048)
def slip_between(previous, following, model_key, same_value: bool = False) -> str | None:
    """The code of a known slip that, applied once to ``previous`` (then any rules), gives
    ``following``: for a step whose value is right but no rule reaches (``same_value``), the
    same expression up to a couple of rules; for a step that changes the value, the same value.
    The search is kept small (steps of a few moments, a few sites each, at most
    MAX_SLIP_SEARCHES searches of MAX_SLIP_NODES): trying every slip at every site of a step of
    ten moments took many seconds."""
    if max(tree_size(canonical(previous)), tree_size(canonical(following))) > MAX_SLIP_SIZE:
        return None
    try:
        goal_value = normal_form(following, model_key)[0]
    except Unsupported:
        goal_value = None
    try:  # the slip may come after a few right rules in the same step
        on_the_way = [expression for expression, _ in _normal_form_trajectory(previous, model_key)[1]]
    except Unsupported:
        on_the_way = []
    searches = 0
    for code in SLIPS:
        for expression in [canonical(previous)] + on_the_way:
            for slipped in _slipped(expression, code, _MODELS[model_key]):
                if same_value:
                    if _same(slipped, following):
                        return code
                    if searches < MAX_SLIP_SEARCHES:
                        searches += 1
                        if rules_between(slipped, following, model_key, 2, MAX_SLIP_NODES) is not None:
                            return code
                    continue
                try:
                    if goal_value is not None and _same(normal_form(slipped, model_key)[0], goal_value):
                        return code
                except Unsupported:
                    continue
    return None


def _slipped(expression, code: str, model: Model) -> list:
    """``expression`` with the slip made at one site, for each of the first MAX_SLIP_SITES
    sites, and at every site at once."""
    sites = {}
    for moment in _moments_in(expression):
        try:
            replacement = SLIPS[code](moment, model)
        except Unsupported:
            continue
        if replacement is not None:
            sites[moment] = replacement
    results = [canonical(expression.xreplace({moment: replacement}))
               for moment, replacement in list(sites.items())[:MAX_SLIP_SITES]]
    if len(sites) > 1:
        results.append(canonical(expression.xreplace(sites)))
    return results


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

    def _print_DSum(self, expr):
        term, count = expr.args
        return f"Sum(Sum({self._print(term)}, n, 1, {self._print(count)}), m, 1, {self._print(count)})"

    def _print_PSum(self, expr):
        term, count = expr.args
        return f"Σ_{{m≠n}} {self._print(term)}"


def describe(expression) -> str:
    """Plain text of a structure, in the syntax students type (``E[q_m^2]``)."""
    return _StepPrinter({"order": "none"}).doprint(expression).replace("**", "^")


@lru_cache(maxsize=4096)
def instance_text(moment, replacement) -> str:
    return f"{describe(moment)} = {describe(replacement)}"


@lru_cache(maxsize=4096)
def rule_phrase(rule: str, moment=None, replacement=None) -> str:
    words = RULE_NAMES[rule]
    if moment is None:
        return words
    return f"{words}: {describe(moment)} = {describe(replacement)}"
