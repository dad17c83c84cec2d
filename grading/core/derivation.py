"""Derivation answers: a chain of expressions, each following from the previous one by a
named rule of the moment algebra, the last equal to the target.

An answer is a list of strings or one string with one step per line; a line may also
chain steps with ``=`` (``Var(q_m k_m) = E[(q_m k_m)^2] - E[q_m k_m]^2 = ...``).

Each step is read into a structure whose moments stay unevaluated
(``grading.core.moment_rules``). Two checks run on every pair of consecutive steps:

1. values: both are evaluated by the rules and compared with the symbolic checker;
   the first pair that differs is "step N does not follow";
2. rules: a bounded search of one-step rewrites finds the named rules that lead from
   one to the next modulo ordinary algebra; a step that needs more than
   ``max_rules_per_step`` (default 2; 0 means no limit) is "too big a step", naming the
   rules it skips, and earns ``big_step_credit`` (default 0.5).

A chain with no step, only restatements (``+ 0``), or a last step that still contains
E/Var is not a derivation; ``min_steps`` counts only steps that apply a rule.
Notation (square or round brackets):
    E[X], Var[X], Cov(X, Y)       expectation, variance, covariance
    Sum(term, m, 1, d_k), Σ_m …   sum over m = 1..d_k (also \\sum_{m=1}^{d_k})
    dot(q, k), q·k                shorthand for Sum(q_m k_m, m, 1, <dimension>)
Random variables are declared in options ``random_variables``:
    {"q": {"mean": 0, "variance": "sigma_q**2"}, "k": {...}}
plus optional "distribution": "normal" (gives higher moments). ``q`` and its components
``q_m``, ``q_1``, ... are identically distributed; all distinct names are independent.
Other options: ``symbols`` (constants, as for symbolic), ``start`` (the expression the
derivation starts from), ``dimension`` (for dot, default "d_k"), ``min_steps``,
``max_rules_per_step``, ``big_step_credit``, ``partial_credit``, ``examples`` (extra
right/wrong derivations for the exercise self-test).
"""

from __future__ import annotations

import ast
import re

import sympy

from grading.core import moment_rules, safe_expr, symbolic
from grading.core.moment_rules import Unsupported  # noqa: F401  (raised by the rules, named here)
from grading.core.grades import AnswerFormatError, Grade, InvalidRequest, Parsed, could_not_grade, invalid, right, wrong
from grading.core.latex_as_read import latex_as_read

GRAMMAR = safe_expr.Grammar(
    functions=safe_expr.SCALAR_FUNCTIONS | {"E", "Var", "Cov", "Sum", "dot"},
    bracket_functions=frozenset({"E", "Var", "Cov"}),
)
MAX_STEPS = 30
DEFAULT_MAX_RULES_PER_STEP = 2
DEFAULT_BIG_STEP_CREDIT = 0.5
SEARCH_DEPTH_WITHOUT_LIMIT = 3


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
        self.rules = moment_rules.Model(self.moments, self.normal, {})
        self.key = moment_rules.register_model(self.rules)

    def symbol_for(self, name: str):
        """The random symbol for ``q`` or ``q_<index>``, or None if the name is not random."""
        base, _, index = name.partition("_")
        if base not in self.moments or (index and not re.fullmatch(r"[A-Za-z0-9]+", index)):
            return None
        symbol = sympy.Symbol(f"rv:{name}", real=True)
        self.symbol_to_base[symbol] = (base, index or None)
        return symbol


def _constant(value, symbols: dict, what: str):
    text = repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if not isinstance(text, str):
        raise InvalidRequest(f"{what} must be a number or an expression")
    try:
        checked = safe_expr.read_expression(text, safe_expr.SCALAR_GRAMMAR, frozenset(symbols))
        return symbolic.SympyBuilder(symbols, allow_any_symbols=False, literals=checked.literals).build(checked.body)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"{what} cannot be read: {problem}") from None


class StructureBuilder(symbolic.SympyBuilder):
    """Builds a step with its moments left unevaluated (E[X] -> Ex(X), Sum -> RSum)."""

    def __init__(self, symbols: dict, model: RandomModel, literals: dict, dimension: str):
        super().__init__(symbols, allow_any_symbols=False, literals=literals)
        self.model = model
        self.dimension = dimension

    def build(self, node: ast.AST):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
                and all(isinstance(side, ast.Name) and side.id in self.model.moments for side in (node.left, node.right))):
            return self.dot_product(node.left.id, node.right.id)  # q·k of two declared vectors
        return super().build(node)

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
            if len(node.args) != 2 or not all(isinstance(arg, ast.Name) and arg.id in self.model.moments for arg in node.args):
                raise AnswerFormatError("dot(q, k) takes two declared random vectors")
            return self.dot_product(node.args[0].id, node.args[1].id)
        if name in ("E", "Var"):
            if len(node.args) != 1:
                raise AnswerFormatError(f"{name}[...] takes one argument")
            inner = self.build(node.args[0])
            return moment_rules.Ex(inner) if name == "E" else moment_rules.Vr(inner)
        if name == "Cov":
            if len(node.args) != 2:
                raise AnswerFormatError("Cov(X, Y) takes two arguments")
            return moment_rules.Cv(*(self.build(arg) for arg in node.args))
        value = super().call(node)
        if moment_rules.is_random(value):
            raise Unsupported(f"{name}(...) of a random quantity cannot be evaluated here")
        return value

    def random_sum(self, node: ast.Call):
        if len(node.args) != 4 or not isinstance(node.args[1], ast.Name):
            raise AnswerFormatError("write a sum as Sum(term, m, 1, d_k)")
        index = node.args[1].id
        lower, upper = self.build(node.args[2]), self.build(node.args[3])
        count = sympy.expand(upper - lower + 1)
        term = self.build(node.args[0])
        foreign = [symbol.name[3:] for symbol in moment_rules.free_random(term)
                   if self.model.symbol_to_base.get(symbol, (None, None))[1] != index]
        if foreign:
            raise Unsupported(f"inside Sum over {index}, every random variable must carry the index {index} (found {foreign[0]})")
        return moment_rules.RSum(term, count)

    def dot_product(self, first: str, second: str):
        terms = self.model.symbol_for(f"{first}_m") * self.model.symbol_for(f"{second}_m")
        return moment_rules.RSum(terms, self.symbols.get(self.dimension, sympy.Symbol(self.dimension, positive=True)))


_SUM_OPENER = re.compile(
    r"(?:Σ|∑|\\sum(?:\\limits)?|\\Sigma)\s*_\s*(?:\{\s*(?P<braced>[A-Za-z])\s*(?:=\s*(?P<lower>[^{}]*?))?\s*\}|(?P<plain>[A-Za-z]))"
    r"(?:\s*\^\s*(?:\{(?P<upper>[^{}]*)\}|(?P<upper_plain>[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?)))?"
)
_VECTOR_WRAPPER = re.compile(r"\\(?:mathbf|vec|boldsymbol|mathbfit|bm)\s*\{\s*([A-Za-z])\s*\}")
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def rewrite_notation(text: str, bases, dimension: str) -> str:
    """Σ_m term -> Sum(term, m, 1, d_k) and q·k -> dot(q, k), before the safe reader sees the text."""
    if bases:
        text = _VECTOR_WRAPPER.sub(lambda match: match.group(1) if match.group(1) in bases else match.group(0), text)
        names = "|".join(sorted(map(re.escape, bases)))
        text = re.sub(rf"(?<![A-Za-z0-9_])({names})\s*(?:·|⋅|∙|\\cdot|\\bullet)\s*({names})(?![A-Za-z0-9_])",
                      r" dot(\1, \2) ", text)
    for _ in range(20):
        match = _SUM_OPENER.search(text)
        if not match:
            return text
        index = match.group("braced") or match.group("plain")
        lower = (match.group("lower") or "1").strip() or "1"
        upper = (match.group("upper") or match.group("upper_plain") or dimension).strip()
        end = _term_end(text, match.end())
        term = text[match.end():end].strip()
        if not term:
            raise AnswerFormatError("a sum Σ needs a term after it, e.g. Σ_m q_m k_m")
        text = f"{text[:match.start()]} Sum({term}, {index}, {lower}, {upper}) {text[end:]}"
    raise AnswerFormatError("too many sums in one step")


def _term_end(text: str, position: int) -> int:
    """Where the term of a Σ ends: at a +, - or = outside brackets, or at the closing bracket."""
    depth, start = 0, position
    while position < len(text):
        char = text[position]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return position
            depth -= 1
        elif depth == 0 and char in "+-=−" and text[start:position].strip():
            return position
        elif depth == 0 and text.startswith("\\right", position):
            return position
        position += 1
    return position


def split_steps(answer) -> list[str]:
    if isinstance(answer, str):
        lines = answer.splitlines()
    elif isinstance(answer, (list, tuple)) and all(isinstance(step, str) for step in answer):
        lines = list(answer)
    else:
        raise AnswerFormatError("a derivation is a list of steps (text), or one step per line")
    steps = [piece.strip() for line in lines for piece in _split_equals(line) if piece.strip()]
    if not steps:
        raise AnswerFormatError("the derivation is empty: write one step per line")
    if len(steps) > MAX_STEPS:
        raise AnswerFormatError(f"too many steps ({len(steps)}; the limit is {MAX_STEPS})")
    return steps


def _split_equals(line: str) -> list[str]:
    """Split a chained line at its = signs, but not inside braces (Σ_{m=1}^{d_k})."""
    pieces, depth, current = [], 0, []
    for char in line:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == "=" and depth <= 0:
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
    pieces.append("".join(current))
    return pieces


class Canonicaliser:
    """Reads steps into moment structures (``structure``) and their values (``value``)."""

    def __init__(self, options: dict):
        self.key = symbolic.symbols_key(options)
        self.symbols = symbolic.symbol_table(self.key)
        self.model = RandomModel(options, self.symbols)
        self.dimension = str(options.get("dimension", "d_k"))
        self.known = frozenset(self.symbols) | frozenset(self.model.moments) | {"dot"}

    def read(self, text: str) -> safe_expr.CheckedExpression:
        if not isinstance(text, str):
            raise AnswerFormatError("each step must be text")
        rewritten = rewrite_notation(text, frozenset(self.model.moments), self.dimension)
        return safe_expr.read_expression(rewritten, GRAMMAR, self.known | self._component_names(rewritten))

    def structure(self, text: str):
        """The step with its moments unevaluated, indices named m when only one is used."""
        if not isinstance(text, str):
            raise AnswerFormatError("each step must be text")
        return _cached_structure(self, text)

    def _cache_key(self) -> tuple:
        return (self.key, self.model.key, self.dimension)

    def build_structure(self, text: str):
        checked = self.read(text)
        builder = StructureBuilder(self.symbols, self.model, checked.literals, self.dimension)
        built = builder.build(checked.body)
        if built.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise AnswerFormatError("the step is undefined (it divides by zero)")
        return moment_rules.canonical(self._one_index_named_m(built))

    def value(self, text: str):
        return self.value_of(self.structure(text))

    def value_of(self, structure):
        result, _ = moment_rules.normal_form(structure, self.model.key)
        leftover = sorted(symbol.name[3:] for symbol in moment_rules.free_random(result))
        if leftover:
            raise AnswerFormatError(f"{leftover[0]} is random: keep it inside E[...] or Var[...]")
        if result.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise AnswerFormatError("the step is undefined (it divides by zero)")
        return result

    def latex_as_read(self, text: str) -> str:
        checked = self.read(text)
        return latex_as_read(checked.body, checked.literals)

    def _component_names(self, text: str) -> frozenset:
        # q_m, k_1 ... are names only when their base is a declared random variable.
        found = re.findall(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9]+", text)
        return frozenset(name for name in found if name.partition("_")[0] in self.model.moments)

    def _one_index_named_m(self, built):
        indexed = [symbol for symbol in built.free_symbols if moment_rules.is_random_symbol(symbol)]
        letters = {symbol.name.partition("_")[2] for symbol in indexed} - {""}
        letters = {letter for letter in letters if not letter.isdigit()}
        if len(letters) != 1 or letters == {"m"}:
            return built
        (letter,) = letters
        renamed = {symbol: self.model.symbol_for(symbol.name[3:].partition("_")[0] + "_m")
                   for symbol in indexed if symbol.name.endswith("_" + letter)}
        return built.xreplace(renamed)


_STRUCTURES: dict = {}
MAX_CACHED_STRUCTURES = 4096


def _cached_structure(canonicaliser: Canonicaliser, text: str):
    """Steps repeat across students and attempts: read each (exercise, text) once."""
    key = (canonicaliser._cache_key(), text)
    if key not in _STRUCTURES:
        if len(_STRUCTURES) >= MAX_CACHED_STRUCTURES:
            _STRUCTURES.clear()
        _STRUCTURES[key] = canonicaliser.build_structure(text)
    return _STRUCTURES[key]


def _target_structure(canonicaliser: Canonicaliser, text, what: str):
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = repr(text)
    if not isinstance(text, str):
        raise InvalidRequest(f"{what} must be an expression as text")
    try:
        structure = canonicaliser.structure(text)
        return structure, canonicaliser.value_of(structure)
    except AnswerFormatError as problem:
        raise InvalidRequest(f"{what} cannot be read: {problem}") from None


def _max_rules(options: dict) -> int | None:
    value = options.get("max_rules_per_step", DEFAULT_MAX_RULES_PER_STEP)
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4:
        raise InvalidRequest("option 'max_rules_per_step' must be a whole number from 0 (no limit) to 4")
    return value


def check(expected, answer, options: dict) -> Grade:
    canonicaliser = Canonicaliser(options)
    _, target = _target_structure(canonicaliser, expected, "expected")
    start = _target_structure(canonicaliser, options["start"], "option 'start'") if options.get("start") else None
    max_rules = _max_rules(options)
    try:
        steps = split_steps(answer)
        structures = [_step(canonicaliser.structure, number, step) for number, step in enumerate(steps, start=1)]
        values = [_step(canonicaliser.value_of, number, structure) for number, structure in enumerate(structures, start=1)]
    except AnswerFormatError as problem:
        return invalid(str(problem))
    chain = ([("the starting expression", *start)] if start is not None else []) + [
        (f"step {number}", structure, value) for number, (structure, value) in enumerate(zip(structures, values), start=1)
    ]
    if len(chain) < 2:
        return invalid("A derivation is a chain: write the expression you start from, then one step per line.")
    seconds = symbolic.option_float(options, "time_limit", symbolic.DEFAULT_TIME_LIMIT)
    for (previous_name, _, previous), (name, _, value) in zip(chain, chain[1:]):
        verdict = symbolic.decide_equivalent(previous, value, seconds)
        if verdict is None:
            return could_not_grade(f"Deciding whether {name} follows from {previous_name} timed out; passed on for review.")
        if not verdict:
            return _broken_chain(name, previous_name, values, options)
    verdict = symbolic.decide_equivalent(target, values[-1], seconds)
    if verdict is None:
        return could_not_grade("Deciding whether the last step is the result timed out; passed on for review.")
    if not verdict:
        return wrong(f"Every step follows, but the last step (step {len(values)}) is not the required result.",
                     score=0.5 if options.get("partial_credit") else 0.0)
    reasons = [_step_rules(canonicaliser, before, after, max_rules) for before, after in zip(chain, chain[1:])]
    details = {"steps": [reason.as_dict() for reason in reasons]}
    ruled = [reason for reason in reasons if reason.rules]
    if moment_rules.has_moments(structures[-1]):
        return wrong(f"The last step still contains {moment_rules.describe(_first_moment(structures[-1]))}: "
                     "finish the derivation with a formula in the exercise's constants.", **details)
    if not ruled and not any(reason.too_big for reason in reasons):
        return wrong("This only restates the expression: a derivation must apply at least one rule "
                     "(linearity, independence, the definition of variance, ...).", **details)
    min_steps = int(options.get("min_steps", 1))
    big = next((reason for reason in reasons if reason.too_big), None)
    if big is None and len(ruled) < min_steps:
        return wrong(f"Show at least {min_steps} steps that each apply a rule; restating or padding "
                     f"(such as + 0) does not count. Yours has {len(ruled)}.", **details)
    if big is not None:
        credit = symbolic.option_float(options, "big_step_credit", DEFAULT_BIG_STEP_CREDIT)
        return wrong(big.too_big_feedback(max_rules), score=min(credit, 0.99), too_big_step=big.number, **details)
    summary = "; ".join(reason.summary() for reason in ruled)
    return right(f"Correct: every step follows by a named rule and the last is the result. {summary}.", **details)


def _first_moment(structure):
    moments = structure.atoms(*moment_rules.MOMENT_TYPES)
    outermost = [moment for moment in moments if not any(other != moment and other.has(moment) for other in moments)]
    return sorted(outermost, key=sympy.default_sort_key)[0]


class StepReason:
    """Which rules turn one step into the next (or that none within the limit does)."""

    def __init__(self, number: int, previous_name: str, path: tuple | None, needed: list[str]):
        self.number = number
        self.previous_name = previous_name
        self.path = path or ()
        self.too_big = path is None
        self.needed = needed

    @property
    def rules(self) -> list[str]:
        return list(dict.fromkeys(rule for rule, _, _ in self.path))

    def summary(self) -> str:
        phrases = [moment_rules.rule_phrase(rule, moment, replacement) for rule, moment, replacement in
                   _first_of_each_rule(self.path)]
        return f"step {self.number}: by " + " and ".join(phrases)

    def too_big_feedback(self, max_rules: int | None) -> str:
        words = [moment_rules.RULE_NAMES[rule] for rule in self.needed]
        names = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        limit = f" (this exercise allows {max_rules} rule{'s' if max_rules != 1 else ''} per step)" if max_rules else ""
        return (f"The values are right, but step {self.number} is too big a step from {self.previous_name}: "
                f"it needs {names} — show them{limit}.")

    def as_dict(self) -> dict:
        return {"step": self.number, "rules": self.rules, "too_big": self.too_big,
                "needed": self.needed if self.too_big else [],
                "because": [moment_rules.rule_phrase(rule, moment, replacement)
                            for rule, moment, replacement in _first_of_each_rule(self.path)]}


def _first_of_each_rule(path: tuple) -> list:
    seen, result = set(), []
    for rule, moment, replacement in path:
        if rule not in seen:
            seen.add(rule)
            result.append((rule, moment, replacement))
    return result


def _step_rules(canonicaliser: Canonicaliser, before: tuple, after: tuple, max_rules: int | None) -> StepReason:
    previous_name, previous, _ = before
    name, following, _ = after
    number = int(name.split()[-1])
    depth = max_rules if max_rules is not None else SEARCH_DEPTH_WITHOUT_LIMIT
    path = moment_rules.rules_between(previous, following, canonicaliser.model.key, depth)
    if path is None and max_rules is None:
        # No limit: a bigger step is fine; name the rules it used for the feedback.
        needed = moment_rules.rules_needed(previous, following, canonicaliser.model.key)
        return StepReason(number, previous_name, tuple((rule, None, None) for rule in needed), [])
    needed = moment_rules.rules_needed(previous, following, canonicaliser.model.key) if path is None else []
    return StepReason(number, previous_name, path, needed)


def _step(function, number: int, argument):
    try:
        return function(argument)
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
        values = [_step(canonicaliser.value, number, step) for number, step in enumerate(steps, start=1)]
    except (AnswerFormatError, InvalidRequest) as problem:
        return Parsed(None, str(problem), None)
    # The preview shows each step as typed: its simplified value would give the answer away.
    as_read = [canonicaliser.latex_as_read(step) for step in steps]
    return Parsed([str(value) for value in values], None, r" \\ ".join(as_read))


def self_test(expected, options: dict) -> dict[str, list]:
    """Right, wrong and invalid derivations. With a ``start``, the right ones include a
    derivation built rule by rule by the checker itself, and the wrong ones a one-line
    answer, a padded one, one that skips rules and one with a wrong step; the exercise's
    own ``examples`` ({right: [...], wrong: [...]}) are added."""
    text = expected if isinstance(expected, str) else repr(expected)
    examples = options.get("examples") or {}
    right_answers, wrong_answers = list(examples.get("right", [])), list(examples.get("wrong", []))
    invalid_answers = ["", [], ["E[("], ["__import__('os')"]]
    if not options.get("start"):
        return {"right": right_answers or [[text, f"({text})*1 + 0*{text}"][:1] + [text]],
                "wrong": wrong_answers, "invalid": invalid_answers + [[text]]}
    canonicaliser = Canonicaliser(options)
    derivation = rule_by_rule(canonicaliser, options["start"], _max_rules(options) or 1)
    right_answers.append(derivation)
    right_answers.append(" = ".join(derivation))
    wrong_answers += [
        [text],  # one line: the result without any step
        [f"{options['start']} + 0", text],  # padded, then the result
        [derivation[0], derivation[-1]] if len(derivation) > 2 else [text],  # skips rules
        derivation[:-1] + [f"2*({text})"],  # a wrong last step
        derivation[:1] + [f"2*({derivation[1]})"] + derivation[2:],  # a wrong first step
    ]
    invalid_answers.append([options["start"], "E[("])
    return {"right": right_answers, "wrong": wrong_answers, "invalid": invalid_answers}


def rule_by_rule(canonicaliser: Canonicaliser, start: str, rules_per_step: int = 1) -> list[str]:
    """A correct derivation from ``start``: the normal form written out, one rule per line."""
    model = canonicaliser.model
    current = canonicaliser.structure(start)
    lines = [moment_rules.describe(current)]
    for _ in range(moment_rules.MAX_NORMAL_FORM_ROUNDS):
        if not moment_rules.has_moments(current):
            break
        for rule in moment_rules.RULE_ORDER:
            applied = moment_rules.apply_everywhere(current, rule, model.rules)
            if applied is not None:
                current = applied[0]
                lines.append(moment_rules.describe(current))
                break
        else:
            break
    return lines
