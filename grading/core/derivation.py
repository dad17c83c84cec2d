"""Derivation answers: a chain of expressions, each following from the previous one by a
named rule of the moment algebra, the last equal to the target.

An answer is a list of strings or one string with one step per line; a line may also
chain steps with ``=`` (``Var(q_m k_m) = E[(q_m k_m)^2] - E[q_m k_m]^2 = ...``). A line that
starts with ``=`` (``= 1``) goes on from the line above, whatever that line is, as if it were
written at its end; any other line goes on from the end of the derivation's chain, never from
a side result (below), however equal their values.

Each step is read into a structure whose moments stay unevaluated
(``grading.core.moment_rules``). Two checks run on every pair of consecutive steps:

1. values: both are evaluated by the rules and compared with the symbolic checker;
   the first pair that differs is "step N does not follow";
2. rules: a bounded search of one-step rewrites finds the named rules that lead from
   one to the next modulo ordinary algebra. A step is a rule step (at most
   ``max_rules_per_step`` rules, default 2; 0 means any number), too big (rules reach it,
   but more than the limit), a restatement (ordinary algebra only) or not justified
   (no rule reaches it although the values agree: it scores 0 whatever the limit).
   The rules forwards are searched first; a step they do not reach within the limit is
   searched again with rules read backwards (E[X²] = Var(X) + E[X]², E[X]E[Y] = E[XY],
   E[XY] − E[X]E[Y] = Cov(X, Y), Var(X) + Var(Y) = Var(X + Y) for independent terms,
   bilinearity, joining a double sum: ``moment_rules.REVERSE_RULES``) and with the side
   results above. A step that lands on an expression the chain already had (not by
   restating the one before) goes back, and is not justified. After the first step that is
   not justified, only the next few are looked up, with the rules forwards.

Side results (lemmas). A line, other than the last, whose first expression is not equal to
the end of the chain so far but which chains expressions of its own (``Var(q_m k_m) = … = 1``)
is a side result when its own chain is true under the assumptions, and an error naming the
line ("is not true") when it is not; lines below it that start with ``=`` extend its chain.
Equal values alone do not make such a line a step either: one whose first expression has the
value of the chain's end but is another quantity (``E[(q·k)^2] = … = d_k`` below
``Var(q·k) = E[(q·k)^2] - E[q·k]^2``) is a side result too when its own chain is true and the
derivation comes back to the chain's end later, starting from it again or from it with side
results written in (``d_k - 0``) when no rule step leads from the chain's end to the line.
It earns nothing by itself. A later step may use it: its first expression is replaced by its
last wherever it occurs (never inside Σ_m Σ_n, whose indices may coincide), as a free
rewrite within the same rule limit; then the side result's own steps are classified and
counted like the derivation's (a leap written as a side result is too big or not justified
exactly as it would be in the chain), and one no step uses is never searched and never
counted. A side result whose last value merely equals the next line's first value is still
a side result (under unit variances ``Var(q_m) = 1`` and the next line may both be 1): only
when the derivation goes on from it to the last line, never coming back to the chain, was the
side result meant as a step, and it is the break. The chain itself
still starts at ``start`` and ends at the last line. Without a ``start``, a chained line
before the chain whose value is not the required result is a side result too when a later
line starts from the required value, or when the next line does not go on from it; the chain
opens at the first line that is not.
A step that multiplies out to more than ``MAX_STEP_TERMS`` terms cannot be read.
Layout is not a step (``split_steps``): LaTeX rows split by \\\\ (each a line), ``$``, ``\\[ \\]``,
``\\begin{align}`` and ``&``, labels ``1)``, ``Step 2:`` (and ``(1)``, ``1.`` when every line
has one, numbered 1, 2, 3 ...), a closing full stop, comma or semicolon, a leading ``Thus``, ``Hence``, ``⇒``, ``∴`` or heading ``Claim:``,
``Result:`` (``_leading_words_removed``), words after a step that justify it
(``... by linearity``, ``(since E[q_m] = 0)``, ``\\quad \\text{by independence}``) and lines of
words only. None of it earns anything: the formulas left are checked as if typed alone.
Nor does a statement of the result (``_statements_of_the_result``): a first line
``Var(q·k) = <result>`` above a derivation that starts from Var(q·k) again (the claim) is left
out, and so is the restated question of a last line ``Var(q·k) = …`` (the conclusion), the rest
of that line going on from the line above as if it began with =. Once the chain has reached the
result, every line after it that states a quantity (``S = …``) is a conclusion
(``_conclusions``): set aside when true, caught when false.

A hollow chain — no rule step (within the limit: a too-big step is a leap) ends at a line that
still has a moment (writing Var(X) as Cov(X, X), or back, is no such step: it renames the
moment): the bare result, the question restated or padded and then the result, leaps to a line
one substitution short of the result — scores 0. Otherwise the score is
``derivation_score``: the share of the rule path shown within the limit, too-big steps
counting ``big_step_credit`` (default and maximum 0.5) per rule. ``min_steps`` counts
only rule steps. docs/exercise-format.md explains it for authors.
Notation (square or round brackets):
    E[X], Var[X], Cov(X, Y)       expectation, variance, covariance
    Sum(term, m, 1, d_k), Σ_m …   sum over m = 1..d_k (also \\sum_{m=1}^{d_k})
    Σ_m Σ_j …, Σ_{m≠j} …          a double sum, the sum over pairs m ≠ j
    dot(q, k), q·k, q^T k, qᵀk    shorthand for Sum(q_m k_m, m, 1, <dimension>)
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
from dataclasses import dataclass, replace

import sympy
# SymPy imports this module the first time it adds two terms (Add.flatten), which every check
# does: imported with the checker, before the sandbox forks its checker processes, each of them
# no longer pays it (0.04–0.08 s of CPU, half of a right derivation's first check) itself.
import sympy.tensor.tensor  # noqa: F401

from grading.core import misconceptions, moment_rules, safe_expr, symbolic
from grading.core.moment_rules import Unsupported  # noqa: F401  (raised by the rules, named here)
from grading.core.grades import (
    AnswerFormatError, Grade, InvalidRequest, Parsed, could_not_grade, invalid, option_int, right, wrong,
)
from grading.core.latex_as_read import latex_as_read

GRAMMAR = safe_expr.Grammar(
    functions=safe_expr.SCALAR_FUNCTIONS | {"E", "Var", "Cov", "Sum", "PairSum", "dot"},
    bracket_functions=frozenset({"E", "Var", "Cov"}),
)
MAX_STEPS = 30
MAX_STEP_TERMS = 100
# What the rules make of a step's moments (Var(X) -> E[X²] - E[X]²): the variance of a sum of
# ten terms written out by its definition has 110; a thousand took the checker seconds.
MAX_TERMS_AFTER_RULES = 200
DEFAULT_MAX_RULES_PER_STEP = 2
DEFAULT_BIG_STEP_CREDIT = 0.5
MAX_BIG_STEP_CREDIT = 0.5
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
    key = (text, tuple(sorted((name, symbol.assumptions0.__repr__()) for name, symbol in symbols.items())))
    if key not in _CONSTANTS:
        try:
            checked = safe_expr.read_expression(text, safe_expr.SCALAR_GRAMMAR, frozenset(symbols))
            built = symbolic.SympyBuilder(symbols, allow_any_symbols=False, literals=checked.literals).build(checked.body)
        except AnswerFormatError as problem:
            raise InvalidRequest(f"{what} cannot be read: {problem}") from None
        if len(_CONSTANTS) >= MAX_CACHED_STRUCTURES:
            _CONSTANTS.clear()
        _CONSTANTS[key] = built
    return _CONSTANTS[key]


_CONSTANTS: dict = {}  # an exercise's declared means and variances, read once


# Σ read without its index ("Σ Var(q_m k_m)"): before, "unknown symbol 'Sigma'".
SUM_WITHOUT_INDEX = "a sum needs its index: write it under Σ, as in Σ_m x_m, or use Sum(x_m, m, 1, n)"


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
        if name == "Sigma":  # Σ with no index under it: a sum over what?
            raise AnswerFormatError(SUM_WITHOUT_INDEX)
        allowed = sorted(self.symbols) + [f"{base}, {base}_m" for base in sorted(self.model.moments)]
        raise AnswerFormatError(f"unknown symbol {name!r}; this answer may use {', '.join(allowed) or 'numbers only'}")

    def call(self, node: ast.Call):
        name = node.func.id
        if name == "Sum":
            return self.random_sum(node)
        if name == "PairSum":
            return self.pair_sum(node)
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
        inner = node.args[0]
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "Sum":
            return self.double_sum(inner, index, count)
        term = self.build(node.args[0])
        foreign = [symbol.name[3:] for symbol in moment_rules.free_random(term)
                   if self.model.symbol_to_base.get(symbol, (None, None))[1] != index]
        if foreign:
            raise Unsupported(f"inside Sum over {index}, every random variable must carry the index {index} (found {foreign[0]})")
        # The terms are identically distributed: the index letter carries no meaning.
        return moment_rules.RSum(moment_rules.rename_index(term, index, "m") if index != "m" else term, count)

    def double_sum(self, inner: ast.Call, outer_index: str, count):
        """Σ_m Σ_n term: both indices over the same range, the term's randoms inside moments."""
        if len(inner.args) != 4 or not isinstance(inner.args[1], ast.Name):
            raise AnswerFormatError("write a sum as Sum(term, m, 1, d_k)")
        inner_index = inner.args[1].id
        inner_count = sympy.expand(self.build(inner.args[3]) - self.build(inner.args[2]) + 1)
        if inner_index == outer_index:
            raise AnswerFormatError("the two sums of a double sum need different index letters")
        if sympy.expand(inner_count - count) != 0:
            raise Unsupported("both sums of a double sum must run over the same range")
        return moment_rules.DSum(self._pair_term(inner.args[0], outer_index, inner_index), count)

    def pair_sum(self, node: ast.Call):
        """PairSum(term, m, n, 1, d_k): the sum over the pairs m ≠ n."""
        if len(node.args) != 5 or not all(isinstance(arg, ast.Name) for arg in node.args[1:3]):
            raise AnswerFormatError("write a sum over pairs as Σ_{m≠n} term")
        first, second = node.args[1].id, node.args[2].id
        if first == second:
            raise AnswerFormatError("a sum over m ≠ n needs two different index letters")
        count = sympy.expand(self.build(node.args[4]) - self.build(node.args[3]) + 1)
        return moment_rules.PSum(self._pair_term(node.args[0], first, second), count)

    def _pair_term(self, node: ast.AST, first: str, second: str):
        term = self.build(node)
        if moment_rules.is_random(term):
            raise Unsupported("inside a double sum, keep the random variables inside E[...], Var(...) or Cov(...)")
        placeholder = "zz"  # the renaming m -> ... must not collide with the letters used
        term = moment_rules.rename_index(term, first, placeholder)
        term = moment_rules.rename_index(term, second, moment_rules.SECOND_INDEX)
        term = moment_rules.rename_index(term, placeholder, "m")
        for symbol in term.free_symbols:
            self.model.symbol_to_base.setdefault(symbol, (symbol.name[3:].partition("_")[0], symbol.name[3:].partition("_")[2]))
        return term

    def dot_product(self, first: str, second: str):
        terms = self.model.symbol_for(f"{first}_m") * self.model.symbol_for(f"{second}_m")
        return moment_rules.RSum(terms, self.symbols.get(self.dimension, sympy.Symbol(self.dimension, positive=True)))


_SUM_OPENER = re.compile(
    r"(?:Σ|∑|\\sum(?:\\limits)?|\\Sigma)\s*_\s*(?:\{\s*(?P<braced>[A-Za-z])\s*(?:=\s*(?P<lower>[^{}]*?))?\s*\}|(?P<plain>[A-Za-z]))"
    r"(?:\s*\^\s*(?:\{(?P<upper>[^{}]*)\}|(?P<upper_plain>[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?)))?"
)
_VECTOR_WRAPPER = re.compile(r"\\(?:mathbf|vec|boldsymbol|mathbfit|bm)\s*\{\s*([A-Za-z])\s*\}")
_NOT_EQUAL = r"(?:≠|\\neq?|!=)"
_SUM_SIGN = r"(?:Σ|∑|\\sum(?:\\limits)?|\\Sigma)"
# Σ_m Σ_{n≠m} X is the same sum as Σ_{m≠n} X.
_NESTED_PAIR_SUM = re.compile(
    _SUM_SIGN + r"\s*_\s*\{?\s*(?P<first>[A-Za-z])\s*(?:=\s*1\s*)?\}?(?:\s*\^\s*(?:\{[^{}]*\}|[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?))?\s*"
    + _SUM_SIGN + r"\s*_\s*\{\s*(?P<second>[A-Za-z])\s*" + _NOT_EQUAL + r"\s*(?P=first)\s*\}"
)
_PAIR_SUM_OPENER = re.compile(
    _SUM_SIGN + r"\s*_\s*\{\s*(?P<first>[A-Za-z])\s*" + _NOT_EQUAL + r"\s*(?P<second>[A-Za-z])\s*\}"
    r"(?:\s*\^\s*(?:\{(?P<upper>[^{}]*)\}|(?P<upper_plain>[A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?)))?"
)
_TRANSPOSE = r"\s*(?:\^\s*(?:T|\{\s*T\s*\}|\\top|\{\s*\\top\s*\}|\\intercal|\{\s*\\intercal\s*\}|\\mathsf\{T\}|\{\\mathsf\{T\}\})|ᵀ|⊤)\s*(?:·|⋅|∙|\\cdot|\*)?\s*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def rewrite_notation(text: str, bases, dimension: str) -> str:
    """Σ_m term -> Sum(term, m, 1, d_k) and q·k (or q.k) -> dot(q, k), before the safe reader sees the text."""
    if bases:
        text = _VECTOR_WRAPPER.sub(lambda match: match.group(1) if match.group(1) in bases else match.group(0), text)
        names = "|".join(sorted(map(re.escape, bases)))
        text = re.sub(rf"(?<![A-Za-z0-9_])({names})\s*(?:·|⋅|∙|\.|\\cdot|\\bullet)\s*({names})(?![A-Za-z0-9_])",
                      r" dot(\1, \2) ", text)
        text = re.sub(rf"(?<![A-Za-z0-9_\\])({names}){_TRANSPOSE}({names})(?![A-Za-z0-9_])", r" dot(\1, \2) ", text)
        text = _angle_brackets_as_dot(text, names)
    text = _NESTED_PAIR_SUM.sub(lambda match: f"Σ_{{{match.group('first')}≠{match.group('second')}}}", text)
    for _ in range(20):
        match = _PAIR_SUM_OPENER.search(text)
        if not match:
            break
        upper = (match.group("upper") or match.group("upper_plain") or dimension).strip()
        end = _term_end(text, match.end())
        term = text[match.end():end].strip()
        if not term:
            raise AnswerFormatError("a sum Σ needs a term after it, e.g. Σ_{m≠n} Cov(q_m k_m, q_n k_n)")
        text = (f"{text[:match.start()]} PairSum({term}, {match.group('first')}, {match.group('second')}, 1, {upper})"
                f" {text[end:]}")
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


_ANGLE_OPEN, _ANGLE_CLOSE = r"(?:\\left\s*)?(?:⟨|〈|\\langle)", r"(?:\\right\s*)?(?:⟩|〉|\\rangle)"


def _angle_brackets_as_dot(text: str, names: str) -> str:
    """⟨q, k⟩ (or \\langle q, k \\rangle) of two declared vectors -> dot(q, k): the inner product."""
    return re.sub(rf"{_ANGLE_OPEN}\s*({names})\s*,\s*({names})\s*{_ANGLE_CLOSE}", r" dot(\1, \2) ", text)


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
        elif depth == 0 and char == ",":  # the sum is one argument of Cov(…, …) or of an outer Sum
            return position
        elif depth == 0 and text.startswith("\\right", position):
            return position
        position += 1
    return position


@dataclass(frozen=True)
class Step:
    """One expression of the answer as the student typed it: ``line`` counts the lines of
    the answer box from 1 (a blank line is skipped but still counted, so line 3 is the third
    line of the box); a line chained with = holds several steps, ``column`` (from 0) is
    where this one starts on its line. ``number`` counts the steps, for the details only;
    ``line_text`` is the whole line as typed (the feedback shows a chained line's steps under it)."""

    number: int
    text: str
    line: int
    column: int
    alone: bool  # the only expression on its line
    line_text: str = ""
    continues: bool = False  # the line starts with =: it goes on from the line above, whatever that line is

    def subject(self) -> str:
        """This step in a sentence: "line 2", or "'B' on line 1" on a chained line."""
        return f"line {self.line}" if self.alone else f"'{_quoted(self.text)}' on line {self.line}"


def _source(previous: Step | None, step: Step) -> str:
    """The step that ``step`` should follow from: the start, the line before (which ends
    with it) or, on a chained line, the expression before it."""
    if previous is None:
        return "the starting expression"
    if previous.line != step.line:
        return f"line {previous.line}"
    return f"'{_quoted(previous.text)}'"


def _quoted(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


MAX_ANSWER_CHARS = 200_000  # the whole answer: 30 steps of at most 2000 characters fit many times over


def split_steps(answer, names=frozenset()) -> list[Step]:
    """The steps of an answer, each line read as written (``_rows``): LaTeX rows (``\\\\``),
    math delimiters, alignment marks, step numbers, connectives, prose lines and trailing
    justifications are layout, not steps. ``names`` are the names the exercise declares
    (a word among them is never read as prose)."""
    if isinstance(answer, str):
        size, lines = len(answer), None
    elif isinstance(answer, (list, tuple)) and all(isinstance(step, str) for step in answer):
        size, lines = sum(len(step) for step in answer), list(answer)
    else:
        raise AnswerFormatError("a derivation is a list of steps (text), or one step per line")
    if size > MAX_ANSWER_CHARS:  # refused before any line is looked at: 20 MB took the checker 30 s
        raise AnswerFormatError(f"the derivation is too long ({size} characters; the limit is {MAX_ANSWER_CHARS}): "
                                f"write at most {MAX_STEPS} steps, one per line")
    if lines is None:
        lines = answer.splitlines()
    rows = _rows(lines)
    numbered = _numbered(rows, names)
    read, count = [], 0  # (line number, as typed, to read, prose, pieces); past MAX_STEPS steps only counted
    for line_number, (typed, line) in enumerate(rows, start=1):
        if count > MAX_STEPS:  # only counted now, roughly: 60 000 LaTeX rows read in full took 2 s
            count += sum(1 for piece in _EQUALS_SPLIT.split(line) if piece.strip())
            continue
        line, prose = _layout_removed(line, numbered, names)
        pieces = [(column, text) for column, text in
                  ((column, _justification_removed(text, names)) for column, text in _split_equals(line)) if text]
        count += 0 if prose else len(pieces)
        read.append((line_number, typed, line, prose, pieces))
    if count > MAX_STEPS:
        raise AnswerFormatError(f"too many steps ({count}; the limit is {MAX_STEPS})")
    formulas = [index for index, (_, _, _, prose, pieces) in enumerate(read) if pieces and not prose]
    first, last = (formulas[0], formulas[-1]) if formulas else (len(read), -1)
    steps: list[Step] = []
    for index, (line_number, typed, line, prose, pieces) in enumerate(read):
        # Words before the first formula, after the last, or heading the lines below (ending in :)
        # are layout; other words between the steps are read, and refused, as a step.
        if prose and (index < first or index > last or line.rstrip().endswith(":")):
            continue
        count += len(pieces) if prose else 0
        continues = bool(steps) and _starts_with_equals(line)
        for column, text in pieces:
            steps.append(Step(len(steps) + 1, text, line_number, column, len(pieces) == 1, typed.strip(), continues))
    if not steps and count <= MAX_STEPS:
        if any(prose for _, _, _, prose, _ in read):
            raise AnswerFormatError("the derivation has no formula, only words: write one step per line, "
                                    "each a formula such as Var(q·k) or d_k Var(q_m k_m)")
        raise AnswerFormatError("the derivation is empty: write one step per line")
    if count > MAX_STEPS:
        raise AnswerFormatError(f"too many steps ({count}; the limit is {MAX_STEPS})")
    return steps


# --------------------------------------------------------------------------- layout around the steps
# A derivation typed as LaTeX (rows split by \\, aligned at &=, inside $...$ or an align
# environment), numbered (1), 2., Step 3:), or with words around its steps (Thus ..., ... by
# linearity, a closing sentence) is the same derivation: the layout is blanked out (replaced by
# spaces, so positions on the line stay where the student typed them) before the steps are read.

_ROW_BREAK = re.compile(r"\\\\(?:[ \t]*\[[^\]\n]{0,20}\])?")  # \\ or \\[2pt]
_DELIMITERS = re.compile(r"\$|\\[()\[\]]|\\(?:begin|end)[ \t]*\{[ \t]*[A-Za-z]{1,20}\*?[ \t]*\}(?:\{[^{}]{0,40}\})?|&"
                         r"|\\(?:non)?umber\b|\\notag\b|\\(?:tag|label)[ \t]*\{[^{}]{0,40}\}")
_STEP_LABEL = re.compile(r"^\s*(?:(?:step|line|eq\.?|equation)\s*\(?\d{1,2}\)?\s*[:.)\-–]?|\d{1,2}\s*[):]|\(\d{1,2}\)|\d{1,2}\.(?=\s))",
                         re.IGNORECASE)
_PLAIN_LABEL = re.compile(r"^\s*(?:\((\d{1,2})\)|(\d{1,2})\.(?=\s))")  # read as a label only when every line has one
_CONNECTIVE = re.compile(r"^\s*(?:(?:thus|so|hence|therefore|then|which gives|giving|we get|we have|i\.e\.)\b\s*[,:]?"
                         r"|=>|⇒|⟹|→|∴|\\(?:implies|Rightarrow|Longrightarrow|therefore)\b)", re.IGNORECASE)
# A heading word before a statement or a step, always with its colon: Claim: Var(q·k) = d_k.
_HEADING = re.compile(r"^\s*(?:claim|result|final result|conclusion|answer|final answer|to show|we show|proof)\s*:",
                      re.IGNORECASE)
MAX_LEADING_WORDS = 3  # "Hence, Claim: ⇒ ..." at most; each is blanked in turn
_JUSTIFYING_WORD = re.compile(r"(?<![A-Za-z0-9_\\])(by|since|using|because|from|via|as|where|with)\b", re.IGNORECASE)
_NOTE = re.compile(r"(?<![A-Za-z0-9_\\])[(\[][ \t]*(by|since|using|because|from|via|as|where|with)\b"
                   r"(?:[^()\[\]]|[(\[][^()\[\]]*[)\]])*[)\]]",
                   re.IGNORECASE)  # (since E[q_m] = 0) on a line: its = is not a step
_TEXT_NOTE = re.compile(r"\\(?:text|textrm|mbox)[ \t]*\{([^{}]*)\}[ \t]*$")
_SPACING = ("\\qquad", "\\quad", "\\,", "\\;", "\\:", "\\!", "\\ ")
_TEXT_OPENING = re.compile(r"\\(?:text|textrm|mbox|mathrm)[ \t]*\{$")
_PROSE = re.compile(r"[A-Za-z][A-Za-z\s,;:.'’!?()-]*")
_PROSE_WORDS = frozenset({"qed", "done"})
_ENDINGS = "□∎■"


def _rows(lines: list[str]) -> list[tuple[str, str]]:
    """(as typed, to read) for each row: a typed line, split where a LaTeX row ends (\\\\)
    inside it. A \\\\ at the end of a line ends that line only."""
    rows = []
    for line in lines:
        parts = _ROW_BREAK.split(line)
        if len(parts) > 1 and not parts[-1].strip():
            parts = parts[:-1]
        rows += [(part, part) for part in parts] or [(line, line)]
    return rows


def _numbered(rows: list, names) -> bool:
    """Whether every row with a formula starts with a plain label ``(1)`` or ``1.`` numbering the
    rows 1, 2, 3, ...: only then is ``2. d_k`` a label and not the number 2."""
    labels = []
    for _, line in rows:
        line = _DELIMITERS.sub(" ", line)
        if not line.strip() or _is_prose(line, names):
            continue
        match = _PLAIN_LABEL.match(line)
        if not match:
            return False
        labels.append(int(match.group(1) or match.group(2)))
    return len(labels) > 1 and labels == list(range(labels[0], labels[0] + len(labels))) and labels[0] in (0, 1)


def _blank(match) -> str:
    return " " * len(match.group(0))


def _layout_removed(line: str, numbered: bool, names) -> tuple[str, bool]:
    """The line with its layout blanked out, and whether what is left is words only (``_is_prose``)."""
    line = _DELIMITERS.sub(_blank, line)
    line = _closing_mark_removed(line.rstrip().rstrip(_ENDINGS).rstrip())
    if _PLAIN_LABEL.match(line) is None or numbered:
        line = _STEP_LABEL.sub(_blank, line, count=1)
    line = _leading_words_removed(line)
    if len(line) <= safe_expr.MAX_CHARS:  # a longer line is refused as it is; these searches would take long on it
        line = _NOTE.sub(lambda note: note.group(0) if note.group(1) in names else _blank(note), line)
    return line, _is_prose(line, names)


_CLOSING_MARKS = (".", ",", ";")


def _closing_mark_removed(line: str) -> str:
    """The line without the full stop (comma, semicolon) a sentence ends with: ``= d_k.`` is
    ``= d_k`` (a number keeps its value: ``1.`` is 1). An ellipsis is left to be refused."""
    if line.endswith(_CLOSING_MARKS) and not line.endswith(".."):
        return line[:-1].rstrip()
    return line


def _leading_words_removed(line: str) -> str:
    """The line with the words a student writes before a statement or a step blanked out: a
    connective (Thus, So, Hence, Therefore, ⇒, =>, ∴) or a heading (Claim:, Result:), a few of
    them in a row. The mathematics after them is read as if typed alone: a prefix never makes a
    step right or wrong."""
    if not line.strip():  # 100 000 empty LaTeX rows are read one by one
        return line
    for _ in range(MAX_LEADING_WORDS):
        blanked = _HEADING.sub(_blank, _CONNECTIVE.sub(_blank, line, count=1), count=1)
        if blanked == line:
            break
        line = blanked
    return line


def _is_prose(line: str, names) -> bool:
    """A line of words only (none of them a name the exercise declares or a function of the
    answer syntax), such as a closing sentence: not a step."""
    text = line.strip()
    if not text or not _PROSE.fullmatch(text):
        return False
    words = re.findall(r"[A-Za-z]+", text)
    if any(word in names or word in GRAMMAR.functions for word in words):
        return False
    return len(words) > 1 or text[-1] in ".:!" or words[0].lower() in _PROSE_WORDS


def _justification_removed(piece: str, names) -> str:
    """A step with the words that justify it after it (``d_k Var(q_m k_m) (by linearity)``,
    ``\\quad \\text{since the terms are independent}``) left out."""
    if len(piece) > safe_expr.MAX_CHARS:  # refused as it is when read
        return piece
    for match in _JUSTIFYING_WORD.finditer(piece):
        if match.group(1) in names:
            continue
        before = _without_separators(piece[:match.start()])
        if before and len(before) < match.start():  # a separator between the step and the words
            return before.strip()
    note = _TEXT_NOTE.search(piece)
    if note and len(note.group(1).split()) > 1:
        before = _without_separators(piece[:note.start()])
        if before and len(before) < note.start():
            return before.strip()
    return piece.strip()


def _without_separators(text: str) -> str:
    """``text`` without the spaces, commas, opening brackets, LaTeX spacing and ``\\text{`` at its end."""
    while True:
        shorter = text.rstrip(" \t,([")
        for command in _SPACING:
            if shorter.endswith(command):
                shorter = shorter[:-len(command)]
        opening = _TEXT_OPENING.search(shorter[-12:])
        if opening:
            shorter = shorter[:len(shorter) - 12 + opening.start()] if len(shorter) >= 12 else shorter[:opening.start()]
        if shorter == text:
            return text
        text = shorter


EQUALS_SIGNS = "=＝﹦"  # with the fullwidth and small equals signs of East Asian keyboards
_EQUALS_SPLIT = re.compile(f"[{EQUALS_SIGNS}]")


def _starts_with_equals(line: str) -> bool:
    """``= B`` on a line of its own: the explicit way to go on from the line above."""
    stripped = line.lstrip()
    return bool(stripped) and stripped[0] in EQUALS_SIGNS


def _split_equals(line: str) -> list[tuple[int, str]]:
    """Split a chained line at its = signs, but not inside braces (Σ_{m=1}^{d_k}): each
    piece stripped, with the column where it starts on the line."""
    pieces, depth, start = [], 0, 0
    for position, char in enumerate(line):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char in EQUALS_SIGNS and depth <= 0:
            pieces.append(_stripped_piece(line, start, position))
            start = position + 1
    pieces.append(_stripped_piece(line, start, len(line)))
    return pieces


def _stripped_piece(line: str, start: int, end: int) -> tuple[int, str]:
    piece = line[start:end]
    return start + len(piece) - len(piece.lstrip()), piece.strip()


_POSITION = re.compile(r" at position (\d+)")


def _typed_column(typed: str, read: str | None, position: int) -> int | None:
    """Where the character at ``position`` of the text as read sits in the text as typed,
    or None when the rewriting (q·k -> dot(q, k), LaTeX, Σ) makes that ambiguous."""
    if read is None or not 0 <= position < len(read):
        return None
    if read == typed:
        return position
    char = read[position]
    if char.isspace() or read.count(char) != typed.count(char):
        return None
    occurrence = read[:position].count(char)
    column = -1
    for _ in range(occurrence + 1):
        column = typed.index(char, column + 1)
    return column


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
        # Refused before the notation is rewritten: its patterns take time quadratic in a
        # long run of letters (100 000 of them took 15 s).
        safe_expr.require_short(text)
        rewritten = rewrite_notation(text, frozenset(self.model.moments), self.dimension)
        return safe_expr.read_expression(rewritten, GRAMMAR, self.known | self._component_names(rewritten))

    def located(self, problem: AnswerFormatError, step: Step) -> str:
        """The reader's message with its position counted on the student's line as typed
        (the reader counts in the rewritten text), or the expression quoted instead."""
        message = str(problem)
        match = _POSITION.search(message)
        if not match:
            return message
        try:
            rewritten = rewrite_notation(step.text, frozenset(self.model.moments), self.dimension)
            read = safe_expr.normalise(rewritten, self.known | self._component_names(rewritten), GRAMMAR)
        except AnswerFormatError:
            read = None
        column = _typed_column(step.text, read, int(match.group(1)) - 1)
        where = f" in '{_quoted(step.text)}'" if column is None else f" at position {step.column + column + 1}"
        return message[:match.start()] + where + message[match.end():]

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
        # Counted before multiplying out: E[(q_1 + ... + k_2)^12] has 18 564 terms, and the
        # rules took minutes over them.
        terms = symbolic.expanded_terms(built)
        if terms > MAX_STEP_TERMS:
            raise AnswerFormatError(f"the step is too big to check: multiplied out it has {terms} terms "
                                    f"(the limit is {MAX_STEP_TERMS}); write it in smaller pieces")
        after_rules = terms_after_rules(built)
        if after_rules > MAX_TERMS_AFTER_RULES:
            raise AnswerFormatError(f"the step is too big to check: its moments taken apart by the rules have "
                                    f"{after_rules} terms (the limit is {MAX_TERMS_AFTER_RULES}); write it in smaller "
                                    "pieces")
        if built.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise AnswerFormatError("the step is undefined (it divides by zero)")
        return moment_rules.canonical(self._one_index_named_m(built))

    def value(self, text: str):
        return self.value_of(self.structure(text))

    def value_of(self, structure):
        if _random_sum_outside_moments(structure):
            raise AnswerFormatError(
                "a sum of random terms (such as Sum(q_m k_m, m, 1, d_k) or q·k) is random itself: a step is "
                "a formula, so keep the sum inside E[...] or Var(...), e.g. Var(Sum(q_m k_m, m, 1, d_k))")
        result, _ = moment_rules.normal_form(structure, self.model.key)
        leftover = sorted(symbol.name[3:] for symbol in moment_rules.free_random(result))
        if leftover:
            raise AnswerFormatError(f"{leftover[0]} is random: keep it inside E[...] or Var[...]")
        if result.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise AnswerFormatError("the step is undefined (it divides by zero)")
        return result

    def latex_as_read(self, text: str) -> str:
        key = (self._cache_key(), text)
        if key not in _LATEX:
            if len(_LATEX) >= MAX_CACHED_STRUCTURES:
                _LATEX.clear()
            checked = self.read(text)
            _LATEX[key] = latex_as_read(checked.body, checked.literals)
        return _LATEX[key]

    def _component_names(self, text: str) -> frozenset:
        # q_m, k_1 ... are names only when their base is a declared random variable.
        found = re.findall(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9]+", text)
        return frozenset(name for name in found if name.partition("_")[0] in self.model.moments)

    def _one_index_named_m(self, built):
        """A step that uses one index only (q_i k_i, or a representative q_1 k_1) speaks of
        any one of the identically distributed terms: name that index m."""
        indexed = [symbol for symbol in built.free_symbols if moment_rules.is_random_symbol(symbol)]
        indices = {symbol.name.partition("_")[2] for symbol in indexed}
        if len(indices) != 1 or indices <= {"m", ""}:
            return built
        (index,) = indices
        return moment_rules.rename_index(built, index, "m")


def terms_after_rules(expression) -> int:
    """A bound on the terms the rules make anywhere in ``expression``, computed without
    expanding: a moment counts the terms its argument multiplies out to (linearity splits
    E[X] into them), Var(X) those of X² (its definition) and Cov(X, Y) those of XY. A step of
    few terms can still make thousands: Var((q_m + k_m)^50) took over a second to refuse,
    Cov((Σ q)^2, (Σ k)^2) of ten terms each took seconds to evaluate."""
    return symbolic.expanded_terms(expression, _moment_terms)


def _moment_terms(node, counts: list[int]) -> int | None:
    if isinstance(node, (moment_rules.Ex, moment_rules.RSum, moment_rules.DSum, moment_rules.PSum)):
        return counts[0]
    if isinstance(node, moment_rules.Vr):
        return symbolic.power_terms(counts[0], 2)
    if isinstance(node, moment_rules.Cv):
        return counts[0] * counts[1]
    return None


def _random_sum_outside_moments(expression) -> bool:
    if isinstance(expression, (moment_rules.Ex, moment_rules.Vr, moment_rules.Cv)):
        return False
    if isinstance(expression, moment_rules.RSum) and moment_rules.is_random(expression):
        return True
    return any(_random_sum_outside_moments(arg) for arg in expression.args)


_STRUCTURES: dict = {}
_LATEX: dict = {}
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


def big_step_credit(options: dict) -> float:
    """The credit per rule of a step that skips rules; at most MAX_BIG_STEP_CREDIT, so a
    derivation shown in too few lines never scores like one shown rule by rule."""
    credit = symbolic.option_float(options, "big_step_credit", DEFAULT_BIG_STEP_CREDIT)
    return min(max(credit, 0.0), MAX_BIG_STEP_CREDIT)


def check(expected, answer, options: dict) -> Grade:
    canonicaliser = Canonicaliser(options)
    target_structure, target = _target_structure(canonicaliser, expected, "expected")
    start = _target_structure(canonicaliser, options["start"], "option 'start'") if options.get("start") else None
    max_rules = _max_rules(options)
    try:
        steps = split_steps(answer, canonicaliser.known)
        structures = [_on_line(canonicaliser, step, canonicaliser.structure, step.text) for step in steps]
        values = [_on_line(canonicaliser, step, canonicaliser.value_of, structure)
                  for step, structure in zip(steps, structures)]
    except AnswerFormatError as problem:
        return invalid(str(problem))
    if len(steps) + (start is not None) < 2:
        return invalid("A derivation is a chain: write the expression you start from, then one step per line.")
    seconds = symbolic.option_float(options, "time_limit", symbolic.DEFAULT_TIME_LIMIT)
    statements, false_conclusions = _statements_of_the_result(steps, structures, values, start, target_structure,
                                                              seconds)
    if statements:
        steps, structures, values = _without(statements, steps, structures, values)
    read = _read_chains(canonicaliser, steps, structures, values, start, seconds, max_rules, options, target,
                        false_conclusions)
    if isinstance(read, Grade):
        return _with_statements(read, canonicaliser, statements)
    chain, lemmas = read
    reasons = _classify_chain(canonicaliser, chain, max_rules, lemmas)
    counted = _counted_reasons(canonicaliser, reasons, lemmas, max_rules)
    details = {"steps": _statement_details(canonicaliser, statements)
               + _step_details(canonicaliser, steps, reasons, lemmas=lemmas)}
    details["steps"].sort(key=lambda entry: entry["step"])
    unjustified = next((reason for reason in counted if reason.kind == UNJUSTIFIED), None)
    if unjustified is not None:
        slip = moment_rules.slip_between(unjustified.before, unjustified.after, canonicaliser.model.key, True)
        return wrong(_with_slip(unjustified.unjustified_feedback(), slip), misconception=slip,
                     first_unjustified_step=unjustified.number, **details)
    hollow = _is_hollow(counted)
    try:
        verdict = symbolic.decide_equivalent(target, values[-1], seconds)
    except symbolic.TooComplexToCheck:
        return _too_complex(steps[-1], "the required result")
    if verdict is None:
        return could_not_grade("Deciding whether the last step is the result timed out; passed on for review.")
    if not verdict:
        # Without a start a chain that is not the result never had its value: it derives another
        # quantity (Var(q_m) = E[q_m²] − E[q_m]² under any question), which earns nothing.
        credit = 0.5 if options.get("partial_credit") and not hollow and start is not None else 0.0
        slip = symbolic.diagnose_symbolic(target, values[-1])
        return wrong(_with_slip(f"Every step follows, but {_last_words(steps[-1])} is not the required result.", slip),
                     score=credit, misconception=slip, **details)
    if moment_rules.has_moments(structures[-1]):
        return wrong(f"The last step still contains {moment_rules.describe(_first_moment(structures[-1]))}: "
                     "finish the derivation with a formula in the exercise's constants.", **details)
    if hollow:
        return wrong(_hollow_feedback(counted, max_rules), hollow=True, **details)
    ruled = [reason for reason in counted if reason.kind == RULE]
    big = [reason for reason in counted if reason.kind == BIG]
    min_steps = option_int(options, "min_steps", 1)
    shown = sum(1 for reason in ruled if reason.rule_count and reason.makes_progress)
    if not big and shown < min_steps:
        return wrong(f"Show at least {min_steps} steps that each apply a rule; restating or padding "
                     f"(such as + 0) does not count. Yours has {shown}.", **details)
    score = derivation_score(counted, big_step_credit(options))
    if big:
        return wrong(big[0].too_big_feedback(max_rules), score=score, too_big_step=big[0].number, **details)
    summary = "; ".join(reason.summary() for reason in ruled)
    return right(f"Correct: every step follows by a named rule and the last is the result. {summary}.", **details)


# --------------------------------------------------------------------------- the result stated
# Students state what they prove: "Var(q·k) = d_k σ_q² σ_k²" above the derivation (the claim)
# or as its last line (the conclusion). Read as steps, such a line went back to the start and
# was "not justified" (score 0) under a right derivation. A statement earns nothing: the claim
# is left out of the chain, and the conclusion's restated question too, so the rest of its line
# goes on from the line above as if it began with =. Once the derivation has reached the result,
# the lines a student appends (the result restated twice, or Var(q·k) = d_k and then
# Var(q·k/√d_k) = 1) are conclusions (``_conclusions``): shown, not counted, when true.

def _statements_of_the_result(steps: list, structures: list, values: list, start, target,
                              seconds: float) -> tuple[list, frozenset]:
    """(the steps set aside as statements, the lines of false conclusions). The claim: a first
    line ``S = R`` where S restates the derivation's start (``start``, or without one the
    expression the next line opens with), R is the required result up to algebra and the next
    line starts from S again. The conclusions: ``_conclusions``. The derivation without them
    still has at least one line."""
    lines = _lines_of(list(zip(steps, structures, values)))
    if len(lines) < 2:
        return [], frozenset()
    statements = []
    opening = start[0] if start is not None else lines[1][0][1]
    first = lines[0]
    if (len(first) == 2 and _restates(first[0], opening) and moment_rules.same_up_to_algebra(first[1][1], target)
            and moment_rules.same_up_to_algebra(lines[1][0][1], first[0][1])):
        statements.extend(entry[0] for entry in first)
        lines = lines[1:]
    if start is None:
        opening = lines[0][0][1]
    finished = _finished_at(lines, target, opening)
    if finished is not None:
        concluded, false = _conclusions(lines, finished, opening, start is not None, seconds)
        return statements + concluded, false
    last = lines[-1]
    if len(lines) >= 2 and len(last) >= 2 and _restates(last[0], opening) and _goes_on(lines, opening):
        statements.append(last[0][0])
    return statements, frozenset()


def _finished_at(lines: list, target, opening) -> int | None:
    """Where the conclusions start: the first line after which the derivation has reached the
    required result and every line left is a statement ``S = …`` about a quantity S (it has a
    moment). The line that reaches the result is plainly the derivation's: one expression, the
    first line when it starts from the question (``opening``), or a line that starts from the end
    of the line above it (up to algebra); a side result that happens to end at the result value
    (``Var(q_m) = E[q_m²] − E[q_m]² = 1`` under Var(q_m k_m) = 1) is not where the derivation
    ends. None when there is no such line."""
    first = len(lines)
    while first > 1 and _states_a_quantity(lines[first - 1]):
        first -= 1
    for position in range(max(first, 1), len(lines)):
        end = lines[position - 1]
        if moment_rules.has_moments(end[-1][1]) or not moment_rules.same_up_to_algebra(end[-1][1], target):
            continue
        if len(end) == 1 or (_restates(end[0], opening) if position == 1
                             else moment_rules.same_up_to_algebra(end[0][1], lines[position - 2][-1][1])):
            return position
    return None


def _states_a_quantity(line: list) -> bool:
    return len(line) >= 2 and moment_rules.has_moments(line[0][1])


def _conclusions(lines: list, first: int, opening, anchored: bool, seconds: float) -> tuple[list, frozenset]:
    """(the steps set aside, the lines of false conclusions) of the conclusions ``lines[first:]``,
    written after the derivation reached the result. A conclusion ``S = R`` whose S restates the
    question and whose R only restates the result has its S set aside, the rest going on from
    the derivation's end (a restatement), as for a single conclusion. Any other true conclusion
    (``Var(q·k) = d_k`` under Var(q·k/√d_k) = 1, or the question with the derivation retold) is
    set aside whole: it earns nothing and costs nothing. Without a start (not ``anchored``) the
    derivation's first line is all that says what it derives, so a conclusion about another
    quantity is set aside only when a conclusion about that first line follows it: else it is read
    as before (a step). A false one is caught: with S the question, its rest goes on from the
    derivation's end and breaks the chain there ('does not follow'); about another quantity, it is
    read as a side result that is not true."""
    statements, false = [], set()
    end = lines[first - 1][-1][1]
    questions = [_restates(line[0], opening) for line in lines[first:]]
    for index, line in enumerate(lines[first:]):
        true = _first_false_pair(Lemma(line), seconds) is None
        if questions[index]:
            if not true or all(moment_rules.same_up_to_algebra(entry[1], end) for entry in line[1:]):
                statements.append(line[0][0])
            else:
                statements.extend(entry[0] for entry in line)
        elif not true:
            false.add(line[0][0].line)
        elif anchored or any(questions[index + 1:]):
            statements.extend(entry[0] for entry in line)
    return statements, frozenset(false)


def _restates(entry: tuple, opening) -> bool:
    return moment_rules.has_moments(opening) and moment_rules.same_up_to_algebra(entry[1], opening)


def _goes_on(lines: list, opening) -> bool:
    """Whether the last line follows the derivation, not a side result: the derivation opens at
    ``opening`` and the nearest line above the last that is the derivation's is one expression,
    the first line, or starts from the end of the line above it (up to algebra). Side results
    just above the last (``Var(q_m k_m) = … = σ_q² σ_k²``, a lemma the conclusion uses) are
    passed over: before, a conclusion under a lemma went back to the start, "not justified"."""
    if not moment_rules.same_up_to_algebra(lines[0][0][1], opening):
        return False
    position, passed_over = len(lines) - 2, 0
    while position > 0 and passed_over < MAX_SIDE_RESULTS_UNDER_A_CONCLUSION and _off_the_chain(lines, position):
        position, passed_over = position - 1, passed_over + 1
    above = lines[position]
    if passed_over and len(above) < 2:
        return False  # only the question above the side results: nothing of the derivation to go on from
    return len(above) == 1 or position == 0 or moment_rules.same_up_to_algebra(
        above[0][1], lines[position - 1][-1][1])


# Side results passed over above a conclusion (each costs a comparison up to algebra).
MAX_SIDE_RESULTS_UNDER_A_CONCLUSION = 3


def _off_the_chain(lines: list, position: int) -> bool:
    """Whether line ``position`` states another quantity than the derivation goes on with: it
    has two or more expressions, its first a moment, and it does not start from the end of
    the line above it."""
    line = lines[position]
    return _states_a_quantity(line) and not moment_rules.same_up_to_algebra(line[0][1], lines[position - 1][-1][1])


def _without(statements: list, steps: list, structures: list, values: list) -> tuple[list, list, list]:
    kept = [index for index, step in enumerate(steps) if step not in statements]
    return [steps[i] for i in kept], [structures[i] for i in kept], [values[i] for i in kept]


def _statement_details(canonicaliser, statements: list) -> list[dict]:
    details = []
    for step in statements:
        try:
            latex = canonicaliser.latex_as_read(step.text)
        except AnswerFormatError:
            latex = ""
        entry = {"step": step.number, "line": step.line, "kind": STATEMENT, "rules": [], "rule_words": [],
                 "rule_count": 0, "too_big": False, "needed": [], "because": [], "instances": [],
                 "text": step.text, "latex": latex}
        if not step.alone and step.column == min(s.column for s in statements if s.line == step.line):
            entry["line_text"] = step.line_text
        details.append(entry)
    return details


def _with_statements(grade: Grade, canonicaliser, statements: list) -> Grade:
    """A grade from the chain reading, its step details with the statements set aside."""
    steps = grade.details.get("steps")
    if not statements or not isinstance(steps, list):
        return grade
    merged = sorted(_statement_details(canonicaliser, statements) + steps, key=lambda entry: entry["step"])
    return replace(grade, details={**grade.details, "steps": merged})


class Lemma:
    """A side result: a line that does not continue the derivation (its first expression is
    not equal to the line before, or equal only in value: ``_side_result_of_equal_value``)
    but whose own chain ``A = B = …`` is true under the exercise's assumptions. It earns
    nothing by itself; a later step may use ``A = <last>`` (its ``pair``) as one more rewrite,
    and then its own steps are checked and counted like the derivation's."""

    def __init__(self, entries: list):
        self.entries = entries  # [(step, structure, value)] of the line
        self.reasons: list = []
        self.used: bool | None = None  # whether a later step uses it, once the derivation is classified

    @property
    def line(self) -> int:
        return self.entries[0][0].line

    @property
    def pair(self) -> tuple:
        return (self.entries[0][1], self.entries[-1][1])

    @property
    def usable(self) -> bool:
        """Its left side has a moment to replace, and the two sides differ (not ``x = x``)."""
        left, right = self.pair
        return moment_rules.has_moments(left) and not moment_rules.same_up_to_algebra(left, right)

    def words(self) -> str:
        first, last = self.entries[0][0], self.entries[-1][0]
        return f"the result on line {self.line} ({_quoted(first.text, 40)} = {_quoted(last.text, 40)})"


def _lines_of(entries: list) -> list[list]:
    """The entries grouped by the line they were typed on; a line that starts with = joins
    the group of the line above, as if it had been written at its end."""
    lines: list[list] = []
    for entry in entries:
        if lines and (lines[-1][-1][0].line == entry[0].line or entry[0].continues):
            lines[-1].append(entry)
        else:
            lines.append([entry])
    return lines


def _equal(before: tuple, after: tuple, seconds: float):
    """True, False, or a Grade when the values cannot be compared."""
    previous_step, _, previous = before
    step, _, value = after
    try:
        verdict = symbolic.decide_equivalent(previous, value, seconds)
    except symbolic.TooComplexToCheck:
        return _too_complex(step, _source(previous_step, step))
    if verdict is None:
        return could_not_grade(f"Deciding whether {step.subject()} follows from {_source(previous_step, step)} "
                               "timed out; passed on for review.")
    return verdict


def _read_chains(canonicaliser, steps, structures, values, start, seconds, max_rules, options, target,
                 false_conclusions: frozenset = frozenset()):
    """(the derivation's chain from the start to the last step, [Lemma]) or the Grade of the
    first step that breaks it. A line here is a typed line with the lines below it that start
    with = (``_lines_of``). Each line is compared with the end of the chain, never with a side
    result. A line whose first expression is not equal to the end of the chain so far, that has
    a chain of its own and is not the last line, is a side result if that chain is true (and a
    false side result if not). A line of one expression, or the last line, that does not go on
    from the chain breaks it; the side result just above is the break instead only when it was
    meant as a step (``_side_result_meant_as_step``). A line whose first expression equals the
    chain's end only in value may still be a side result (``_side_result_of_equal_value``).
    Without a start, the chain opens at the first line that is not a side result
    (``_opens_the_derivation``). A false conclusion about another quantity than the question
    (``false_conclusions``, by line) is read as a side result wherever it stands, and is caught as
    one that is not true."""
    chain = [(None, *start)] if start is not None else []
    lemmas: list[Lemma] = []
    lines = _lines_of(list(zip(steps, structures, values)))
    starts_from_result = _starts_from_result(lines, target, seconds)
    searches = _SearchBudget(MAX_EQUAL_VALUE_SEARCHES)
    for position, group in enumerate(lines):
        rest = group
        if group[0][0].line in false_conclusions:
            lemma = _side_result(canonicaliser, chain, group, lemmas, steps, max_rules, options, seconds)
            if isinstance(lemma, Grade):
                return lemma
            lemmas.append(lemma)
            continue
        if chain:
            follows = _equal(chain[-1], group[0], seconds)
            if isinstance(follows, Grade):
                return follows
            if not follows:
                if len(group) > 1 and position < len(lines) - 1:
                    lemma = _side_result(canonicaliser, chain, group, lemmas, steps, max_rules, options, seconds)
                    if isinstance(lemma, Grade):
                        return lemma
                    lemmas.append(lemma)
                    continue
                meant = _side_result_meant_as_step(lines, position, chain[-1], lemmas, seconds)
                if isinstance(meant, Grade):
                    return meant
                if meant:  # the derivation went on from the side result: that line is the break
                    lemma = lemmas.pop()
                    return _chain_breaks(canonicaliser, chain, lemma.entries[0], lemmas, steps, max_rules, options)
                return _chain_breaks(canonicaliser, chain, group[0], lemmas, steps, max_rules, options)
            if _side_result_of_equal_value(canonicaliser, lines, position, chain[-1], lemmas, max_rules, seconds,
                                           searches):
                lemmas.append(Lemma(group))
                continue
            chain.append(group[0])
            rest = group[1:]
        else:
            opens = _opens_the_derivation(lines, position, starts_from_result, seconds)
            if isinstance(opens, Grade):
                return opens
            if not opens:
                lemma = _side_result(canonicaliser, chain, group, lemmas, steps, max_rules, options, seconds)
                if isinstance(lemma, Grade):
                    return lemma
                lemmas.append(lemma)
                continue
            chain.append(group[0])
            rest = group[1:]
        for entry in rest:
            follows = _equal(chain[-1], entry, seconds)
            if isinstance(follows, Grade):
                return follows
            if not follows:
                return _chain_breaks(canonicaliser, chain, entry, lemmas, steps, max_rules, options)
            chain.append(entry)
    return chain, lemmas


def _side_result_meant_as_step(lines: list, position: int, chain_end: tuple, lemmas: list, seconds: float):
    """Whether the side result on the line just above ``lines[position]`` (a line that does
    not go on from the chain) was meant as a step of the derivation: True when that line goes
    on from the side result and no later line goes on from the chain, so the derivation never
    comes back to it; False otherwise; a Grade when the first comparison cannot be made.

    Equal values alone do not join a line to a side result: under unit variances ``Var(q_m) = 1``
    ends at 1 and so may the next line, which still goes on from the chain (and breaks it when
    it does not); only a line that starts with = extends a side result."""
    if not lemmas or lemmas[-1].line != lines[position - 1][0][0].line:
        return False
    went_on = _equal(lemmas[-1].entries[-1], lines[position][0], seconds)
    if went_on is not True:
        return went_on
    # A later line that cannot be compared counts as coming back: the break is then this line.
    return all(_equal(chain_end, later[0], seconds) is False for later in lines[position + 1:])


def _side_result_of_equal_value(canonicaliser, lines: list, position: int, chain_end: tuple, lemmas: list,
                                max_rules: int | None, seconds: float, searches: _SearchBudget) -> bool:
    """Whether ``lines[position]``, whose first expression has the value of the chain's end, is
    still a side result: the mirror of ``_side_result_meant_as_step``. Under unit variances
    ``Var(q_m) = E[q_m^2] - E[q_m]^2 = 1`` starts at 1 and so may the chain; equal values alone
    do not make the line a step. It is a side result when it chains expressions of its own, is
    not the last line, starts from another quantity than the chain's end (not the same up to
    algebra), its own chain is true, and the derivation comes back to the chain's end later:
    a later line starts from it again (read as a step, the line would make that one go back),
    or starts from it with side results written in for their left sides while no rule step
    leads from the chain's end to this line. That last search is made for a few lines of an
    answer only (``searches``); past them the line is read as a step, as equal values read."""
    group = lines[position]
    if len(group) < 2 or position == len(lines) - 1:
        return False
    end = chain_end[1]
    if moment_rules.same_up_to_algebra(end, group[0][1]):
        return False
    resumed = _chain_resumed(canonicaliser, lines, position, end, lemmas, seconds)
    if resumed is None:
        return False
    if resumed == SUBSTITUTED:
        if not searches.take():
            return False
        usable = tuple(lemma.pair for lemma in lemmas if lemma.usable)
        if _rule_step_reaches(canonicaliser, end, group[0][1], max_rules, usable):
            return False
    return _first_false_pair(Lemma(group), seconds) is None


def _rule_step_reaches(canonicaliser, previous, following, max_rules: int | None, lemma_pairs: tuple) -> bool:
    """Whether ``_step_rules`` would find a rule step or a restatement from ``previous`` to
    ``following``, without the deeper search that only tells a too-big step from one that is
    not justified (with a limit on the rules per step, both are not a rule step)."""
    key = canonicaliser.model.key
    depth = max_rules if max_rules is not None else SEARCH_DEPTH_WITHOUT_LIMIT
    if moment_rules.rules_between(previous, following, key, depth) is not None:
        return True
    if moment_rules.rules_between(previous, following, key, depth, moment_rules.MAX_SEARCH_NODES, lemma_pairs,
                                  True) is not None:
        return True
    return max_rules is None and moment_rules.rules_reaching(previous, following, key) is not None


MAX_EQUAL_VALUE_SEARCHES = 1


class _SearchBudget:
    """How many more rule searches an answer may spend on reading its lines."""

    def __init__(self, searches: int):
        self.left = searches

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


RESTATED, SUBSTITUTED = "restated", "substituted"


def _chain_resumed(canonicaliser, lines: list, position: int, end, lemmas: list, seconds: float) -> str | None:
    """How a line after ``lines[position]`` comes back to the chain's end ``end``: RESTATED when
    its first expression is ``end`` up to algebra, SUBSTITUTED when it is ``end`` with side
    results written in (those above, the line at ``position`` and the true chained lines
    between), None when no later line does."""
    pairs = [lemma.pair for lemma in lemmas if lemma.usable]
    for offset, later in enumerate(lines[position + 1:]):
        if moment_rules.same_up_to_algebra(end, later[0][1]):
            return RESTATED
        aside = Lemma(lines[position + offset])  # the line just above ``later``, if a side result
        if len(aside.entries) > 1 and aside.usable and _first_false_pair(aside, seconds) is None:
            pairs.append(aside.pair)
        if pairs and moment_rules.rules_between(end, later[0][1], canonicaliser.model.key, 0,
                                                lemmas=tuple(pairs)) is not None:
            return SUBSTITUTED
    return None


def _opens_the_derivation(lines: list, position: int, starts_from_result, seconds: float):
    """Without a start: whether line ``lines[position]``, before any line of the chain, opens
    the derivation (True), is a side result (False), or a Grade when that cannot be decided.
    A line of one expression, the last line, and a line that starts from an expression with
    the required result's value (it starts from the question) open the derivation. Any other
    line chains expressions of its own: it is a side result, as it would be after a start,
    when a later line starts from the required value (the derivation opens there) or when
    the next line does not go on from it; otherwise the derivation opens with it."""
    group = lines[position]
    if len(group) == 1 or position == len(lines) - 1:
        return True
    if starts_from_result(position) is not False:
        return True  # undecided: read as the derivation, as before side results were read
    if any(starts_from_result(later) for later in range(position + 1, len(lines))):
        return False
    return _equal(group[-1], lines[position + 1][0], seconds)


def _starts_from_result(lines: list, target, seconds: float):
    """A function of a line's position: whether its first expression has the required result's
    value (None when that cannot be decided), each line decided once."""
    decided: dict[int, bool | None] = {}

    def starts_from_result(position: int) -> bool | None:
        if position not in decided:
            try:
                decided[position] = symbolic.decide_equivalent(target, lines[position][0][2], seconds)
            except symbolic.TooComplexToCheck:
                decided[position] = None
        return decided[position]
    return starts_from_result


def _side_result(canonicaliser, chain: list, group: list, lemmas: list, steps: list, max_rules, options,
                 seconds: float):
    """The Lemma of a line read as a side result, or the Grade of a false one (or of one
    whose expressions cannot be compared)."""
    lemma = Lemma(group)
    false = _first_false_pair(lemma, seconds)
    if false is None:
        return lemma
    if isinstance(false, Grade):
        return false
    return _false_lemma(canonicaliser, chain, lemma, false, lemmas, steps, max_rules, options)


def _first_false_pair(lemma: Lemma, seconds: float):
    """The index of the first expression of a side result not equal to the one before it,
    None when its chain is true, or a Grade when they cannot be compared."""
    for index, (before, after) in enumerate(zip(lemma.entries, lemma.entries[1:]), start=1):
        verdict = _equal(before, after, seconds)
        if isinstance(verdict, Grade) or not verdict:
            return verdict if isinstance(verdict, Grade) else index
    return None


def _chain_breaks(canonicaliser, chain: list, entry: tuple, lemmas: list, steps: list, max_rules, options) -> Grade:
    reasons = _classify_chain(canonicaliser, chain, max_rules, lemmas)
    slip = moment_rules.slip_between(chain[-1][1], entry[1], canonicaliser.model.key)
    return _broken_chain(entry[0], chain[-1][0], reasons, steps, canonicaliser, options, slip, lemmas=lemmas)


def _false_lemma(canonicaliser, chain: list, lemma: Lemma, index: int, lemmas: list, steps: list, max_rules,
                 options) -> Grade:
    """A side result that is not true: named by its line, the two expressions that differ quoted."""
    (before, before_structure, _), (after, after_structure, _) = lemma.entries[index - 1], lemma.entries[index]
    slip = moment_rules.slip_between(before_structure, after_structure, canonicaliser.model.key)
    why = (f"The line does not go on from {_source(chain[-1][0], lemma.entries[0][0])}" if chain
           else "The next line does not go on from it")
    feedback = _with_slip(
        f"Line {after.line}: '{_quoted(before.text)} = {_quoted(after.text)}' is not true: under the exercise's "
        f"assumptions the two sides are not equal. ({why}, so it is read as a separate result.)", slip)
    reasons = _classify_chain(canonicaliser, chain, max_rules, lemmas)
    return _broken_chain(after, before, reasons, steps, canonicaliser, options, slip, feedback=feedback,
                         lemmas=[*lemmas, lemma])


def _counted_reasons(canonicaliser: Canonicaliser, reasons: list, lemmas: list, max_rules: int | None) -> list:
    """The derivation's steps and those of the side results it uses (directly or through
    another side result), in the order they were written. Only a side result that is used
    has its steps classified: one no step uses counts for nothing, and costs no search."""
    by_line = {lemma.line: lemma for lemma in lemmas}
    used: set = set()
    pending = [line for reason in reasons for line in reason.lemma_lines]
    while pending:
        line = pending.pop()
        if line in used or line not in by_line:
            continue
        used.add(line)
        lemma = by_line[line]
        lemma.reasons = _classify_chain(canonicaliser, lemma.entries, max_rules, lemmas)
        pending += [other for reason in lemma.reasons for other in reason.lemma_lines]
    for lemma in lemmas:
        lemma.used = lemma.line in used
    counted = list(reasons) + [reason for lemma in lemmas if lemma.used for reason in lemma.reasons]
    return sorted(counted, key=lambda reason: reason.number)


def _too_complex(step: Step, against: str) -> Grade:
    """Values too large to compare at any point: no verdict, and no attempt used."""
    return could_not_grade(f"{_sentence(step.subject())} is too complex to check automatically: its values are too "
                           f"large (or too small) to compare with {against} at any test point. Simplify it and submit "
                           "it again.", reason="too_complex")


def derivation_score(reasons: list, credit: float) -> float:
    """The share of the rule path the student justified: every rule of a step within the
    limit counts 1, every rule of a too-big step counts ``credit``; restatements count
    nothing. (Hollow and unjustified derivations score 0 before this is asked.)"""
    counted = [reason for reason in reasons if reason.kind in (RULE, BIG) and reason.makes_progress]
    total = sum(reason.rule_count for reason in counted)
    if not total:
        return 0.0
    earned = sum(reason.rule_count * (1.0 if reason.kind == RULE else credit) for reason in counted)
    return round(min(earned / total, 1.0), 4)


def _last_words(step: Step) -> str:
    if step.alone:
        return f"the last line (line {step.line})"
    return f"the last expression ('{_quoted(step.text)}' on line {step.line})"


def _is_hollow(reasons: list) -> bool:
    """No line shows an intermediate result: no rule step (within the limit) ends at a line
    that still has a moment in it, so every rule is hidden in leaps and the other lines only
    restate or pad the question or the result. A too-big step to such a line is one of those
    leaps: ``Var(q·k)``, then ``d_k E[q_m²] E[k_m²]`` (five rules at once), then the result by
    one substitution scored 0.58 as if it had been shown."""
    return not any(reason.kind == RULE and reason.makes_progress and moment_rules.has_moments(reason.after)
                   for reason in reasons)


def _hollow_feedback(reasons: list, max_rules: int | None) -> str:
    leap = next((reason for reason in reasons if reason.kind == BIG and reason.makes_progress
                 and moment_rules.has_moments(reason.after)), None)
    if leap is not None:
        return (f"{leap.too_big_feedback(max_rules)} No step within that limit shows an intermediate result: a "
                "derivation of leaps earns nothing.")
    restated = next((reason for reason in reasons if reason.kind == RESTATEMENT or not reason.makes_progress), None)
    if restated is None:
        return ("This line only states the result: no step applies a rule. Show how the rules "
                "lead from the question to it, a few at a time.")
    what = "only restates the question" if restated.previous is None else f"only restates {restated.source()}"
    return (f"{_sentence(restated.step.subject())} {what}, and no step applies a rule to show an intermediate result: "
            "padding (+ 0, · 1, + σ − σ) and restating are not steps. Show how the rules lead to the result.")


def _first_moment(structure):
    moments = structure.atoms(*moment_rules.MOMENT_TYPES)
    outermost = [moment for moment in moments if not any(other != moment and other.has(moment) for other in moments)]
    return sorted(outermost, key=sympy.default_sort_key)[0]


RULE, BIG, RESTATEMENT, UNJUSTIFIED = "rule", "too_big", "restatement", "not_justified"
STATEMENT = "statement"  # a line that states the result, set aside (``_statements_of_the_result``)
NOTATION_ONLY_RULES = frozenset({moment_rules.VARIANCE_AS_COVARIANCE, moment_rules.COVARIANCE_OF_ITSELF})


class StepReason:
    """How one step follows from the one before: by ``rule_count`` named rules within the
    limit (RULE) or beyond it (BIG), by ordinary algebra only (RESTATEMENT), or by no rule
    at all although the values agree (UNJUSTIFIED)."""

    def __init__(self, step: Step, previous: Step | None, kind: str, path: tuple = (), before=None, after=None,
                 lemmas: dict | None = None):
        self.step = step
        self.previous = previous
        self.kind = kind
        self.path = path or ()
        self.before, self.after = before, after  # the two structures
        self.lemmas = lemmas or {}  # (left, right) -> Lemma, for the side results the path uses

    @property
    def lemma_lines(self) -> list[int]:
        return [self.lemmas[(left, right)].line for rule, left, right in self.path
                if rule == moment_rules.LEMMA and (left, right) in self.lemmas]

    @property
    def number(self) -> int:
        return self.step.number

    def source(self) -> str:
        return _source(self.previous, self.step)

    @property
    def rules(self) -> list[str]:
        return list(dict.fromkeys(rule for rule, _, _ in self.path))

    @property
    def rule_count(self) -> int:
        """The named rules applied; using a side result shown above is not one."""
        return sum(1 for rule, _, _ in self.path if rule != moment_rules.LEMMA)

    @property
    def makes_progress(self) -> bool:
        """Whether the step does more than write a variance as a covariance of a quantity with
        itself or back (Var(X) = Cov(X, X)): the same moment renamed, like a restatement."""
        return any(rule not in NOTATION_ONLY_RULES for rule, _, _ in self.path)

    @property
    def rule_words(self) -> list[str]:
        words = [moment_rules.RULE_NAMES[rule] for rule in self.rules if rule != moment_rules.LEMMA]
        used = [self.lemmas[(left, right)] for rule, left, right in self.path
                if rule == moment_rules.LEMMA and (left, right) in self.lemmas]
        return words + list(dict.fromkeys(lemma.words() for lemma in used))

    def summary(self) -> str:
        return f"{self.step.subject()}: by " + " and ".join(self.rule_words)

    def too_big_feedback(self, max_rules: int | None) -> str:
        words = self.rule_words
        names = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        limit = f" (this exercise allows {max_rules} rule{'s' if max_rules != 1 else ''} per step)" if max_rules else ""
        return (f"The values are right, but {self.step.subject()} is too big a step from {self.source()}: "
                f"it takes {self.rule_count} rules ({names}) — show them{limit}.")

    def unjustified_feedback(self) -> str:
        return (f"{_sentence(self.step.subject())} is not justified: its value agrees with {self.source()}, but no rule "
                f"leads from {self.source()} to it. The rules turn a moment into simpler ones; a line "
                "that undoes a rule, goes back to an earlier line, or only holds because of the declared "
                "means and variances is not a step.")

    def as_dict(self) -> dict:
        return {"step": self.number, "line": self.step.line, "kind": self.kind, "rules": self.rules, "rule_words": self.rule_words,
                "rule_count": self.rule_count, "too_big": self.kind == BIG,
                "needed": self.rules if self.kind == BIG else [],
                "because": [moment_rules.rule_phrase(rule, moment, replacement)
                            for rule, moment, replacement in _first_of_each_rule(self.path) if moment is not None],
                "instances": [moment_rules.instance_text(moment, replacement)
                              for _, moment, replacement in _first_of_each_rule(self.path) if moment is not None]}


def _first_of_each_rule(path: tuple) -> list:
    seen, result = set(), []
    for rule, moment, replacement in path:
        if rule not in seen:
            seen.add(rule)
            result.append((rule, moment, replacement))
    return result


def _classify_chain(canonicaliser: Canonicaliser, chain: list, max_rules: int | None, lemmas: list = ()) -> list:
    """How each expression of ``chain`` follows from the one before. A step may use the side
    results written on earlier lines. A step that lands on an expression the chain already
    had (other than by restating the one before) goes back: it is not justified.

    Once a step is not justified the derivation scores 0: the next few steps are only looked
    up with the rules forwards in a small search (``_step_rules_quickly``), and left out when
    that does not reach them; thirty steps searched in full took the checker many seconds."""
    reasons, unjustified_at = [], None
    for index, (before, after) in enumerate(zip(chain, chain[1:])):
        if unjustified_at is not None:
            if index - unjustified_at > STEPS_LOOKED_UP_AFTER_UNJUSTIFIED:
                break
            reason = _step_rules_quickly(canonicaliser, before, after, max_rules)
            if reason is None:
                continue
        else:
            usable = [lemma for lemma in lemmas if lemma.usable and lemma.line < after[0].line
                      and lemma.entries[0][0].number != after[0].number]
            reason = _step_rules(canonicaliser, before, after, max_rules, usable)
        if reason.kind in (RULE, BIG) and any(moment_rules.same_up_to_algebra(earlier[1], after[1])
                                              for earlier in chain[:index]):
            reason = StepReason(after[0], before[0], UNJUSTIFIED, before=before[1], after=after[1])
        if reason.kind == UNJUSTIFIED and unjustified_at is None:
            unjustified_at = index
        reasons.append(reason)
    return reasons


STEPS_LOOKED_UP_AFTER_UNJUSTIFIED = 5
NODES_AFTER_UNJUSTIFIED = 40


def _step_rules_quickly(canonicaliser: Canonicaliser, before: tuple, after: tuple, max_rules: int | None):
    """A step after one that is not justified: a RULE or RESTATEMENT StepReason if the rules
    forwards reach it in a small search, else None (the step is shown unchecked)."""
    depth = max_rules if max_rules is not None else SEARCH_DEPTH_WITHOUT_LIMIT
    path = moment_rules.rules_between(before[1], after[1], canonicaliser.model.key, depth, NODES_AFTER_UNJUSTIFIED)
    if path is None:
        return None
    return StepReason(after[0], before[0], RULE if path else RESTATEMENT, path, before=before[1], after=after[1])


def _step_rules(canonicaliser: Canonicaliser, before: tuple, after: tuple, max_rules: int | None,
                lemmas: list = ()) -> StepReason:
    """Precondition: the two steps have the same value. The rules forwards first; then, within
    the same limit, with the definitions read backwards and the side results above."""
    previous_step, previous, _ = before
    step, following, _ = after
    key = canonicaliser.model.key
    depth = max_rules if max_rules is not None else SEARCH_DEPTH_WITHOUT_LIMIT
    by_pair = {lemma.pair: lemma for lemma in lemmas}

    def reason(kind: str, path: tuple = ()) -> StepReason:
        return StepReason(step, previous_step, kind, path, before=previous, after=following, lemmas=by_pair)

    path = moment_rules.rules_between(previous, following, key, depth)
    if path == ():
        return reason(RESTATEMENT)
    if path is None:
        path = moment_rules.rules_between(previous, following, key, depth, moment_rules.MAX_SEARCH_NODES,
                                          tuple(by_pair), True)
    if path is not None:
        return reason(RULE, path)
    reached = moment_rules.rules_reaching(previous, following, key)
    if reached is None:
        return reason(UNJUSTIFIED)
    if not reached:  # neither has a moment left: ordinary algebra between two formulas
        return reason(RESTATEMENT)
    return reason(RULE if max_rules is None else BIG, reached)


def _step_details(canonicaliser: Canonicaliser, steps: list[Step], reasons: list, first_wrong: int | None = None,
                  lemmas: list = ()) -> list[dict]:
    """One entry per step the student wrote: the text as written, the LaTeX of what was read
    (typeset in the feedback), and how it follows from the step before; the first step of a
    chained line also has the whole line as typed (``line_text``), for the feedback to group
    the line's steps under it."""
    by_number = {reason.number: reason for reason in reasons}
    side = {}  # step number -> its side result
    for lemma in lemmas:
        by_number.update({reason.number: reason for reason in lemma.reasons})
        side.update({entry[0].number: lemma for entry in lemma.entries})
    # Without a start the derivation opens at its first step that is not part of a side result.
    opening = next((step.number for step in steps if step.number not in side), None)
    details, previous_line = [], None
    for step in steps:
        number, text = step.number, step.text
        reason = by_number.get(number)
        lemma = side.get(number)
        if reason is not None:
            entry = reason.as_dict()
        else:
            opens = number == opening and (first_wrong is None or number < first_wrong)
            kind = "wrong" if number == first_wrong else ("start" if opens else "unchecked")
            if lemma is not None and number != first_wrong and not (first_wrong and number > first_wrong):
                kind = "lemma" if lemma.entries[0][0].number == number else "side"
            entry = {"step": number, "line": step.line, "kind": kind, "rules": [], "rule_words": [], "rule_count": 0,
                     "too_big": False, "needed": [], "because": [], "instances": []}
        if lemma is not None:  # a side result: counted only when a later step uses it
            entry["side_result"] = lemma.line
            entry["used"] = lemma.used
        entry["text"] = text
        if not step.alone and step.line != previous_line:
            entry["line_text"] = step.line_text  # once per chained line, on its first step
        previous_line = step.line
        try:
            entry["latex"] = canonicaliser.latex_as_read(text)
        except AnswerFormatError:
            entry["latex"] = ""
        details.append(entry)
    return details


def _on_line(canonicaliser: Canonicaliser, step: Step, function, argument):
    """``function(argument)``, a reading problem named by the student's line. A step that
    reads as a sentence is told so, rather than about the first word the reader trips on."""
    try:
        return function(argument)
    except AnswerFormatError as problem:
        if _reads_as_words(step.text, canonicaliser.known):
            raise AnswerFormatError(_words_not_maths(step)) from None
        raise AnswerFormatError(f"Line {step.line}: {canonicaliser.located(problem, step)}") from None


# --------------------------------------------------------------------------- a step in words
# "Hence the variance is d_k" is a step the reader cannot read: it refused it for its first
# word ("'is' is a reserved word", "unknown symbol 'the'"), which told the student nothing about
# what to write. A step with an English word that joins a sentence (is, equals, the, so,
# therefore, ...) is told it reads as words. Asked only once the step is refused, so it never
# changes a grade. Python keywords that are not plainly English (lambda, if, or, not, in, None)
# are left out: an expression with one of them keeps the reader's precise message.
SENTENCE_WORDS = frozenset("""
    is are was were be been being equals equal gives give giving get gets got becomes become yields
    the an this that these those which it its we our us
    so therefore hence thus then and but because since now finally here there
    of to into by using where when
    has have had holds hold follows follow obtain obtains simplifies simplify reduces expands expanding
    substituting substitute applying apply
""".split())
_WORD = re.compile(r"(?<![A-Za-z0-9_\\])[A-Za-z]+(?![A-Za-z0-9_])")  # not a LaTeX command, not part of q_m
WORDS_NOT_MATHS_ADVICE = "write the step as an equation (“so” or “hence” may lead it: hence a = b)."


def _reads_as_words(text: str, names) -> bool:
    """Whether a step has a word that joins a sentence and is not a name the exercise declares
    or a function of the answer syntax: words, not an expression."""
    if len(text) > safe_expr.MAX_CHARS:  # refused as too long, as it is
        return False
    return any(word.lower() in SENTENCE_WORDS and word not in names and word not in GRAMMAR.functions
               for word in _WORD.findall(text))


def _words_not_maths(step: Step) -> str:
    return f"{_sentence(step.subject())} reads as words, not maths: {WORDS_NOT_MATHS_ADVICE}"


def _with_slip(feedback: str, slip: str | None) -> str:
    return f"{feedback} {misconceptions.MISCONCEPTIONS[slip]}" if slip else feedback


def _broken_chain(step: Step, previous: Step | None, reasons: list, steps: list[Step], canonicaliser, options: dict,
                  slip: str | None = None, feedback: str | None = None, lemmas: list = ()) -> Grade:
    feedback = feedback or _with_slip(f"Line {step.line}: '{_quoted(step.text)}' does not follow from "
                                      f"{_source(previous, step)}: under the exercise's assumptions the two are not equal.",
                                      slip)
    step_number = step.number
    score = 0.0
    if options.get("partial_credit") and not any(reason.kind == UNJUSTIFIED for reason in reasons):
        # Writing Var(X) as Cov(X, X) renames a moment: like a restatement, it earns nothing.
        ruled = sum(1 for reason in reasons if reason.kind in (RULE, BIG) and reason.makes_progress)
        score = round(0.5 * ruled / len(steps), 4)
    details = _step_details(canonicaliser, steps, reasons, first_wrong=step_number, lemmas=lemmas)
    return wrong(feedback, score=score, misconception=slip, first_wrong_step=step_number, steps=details)


def parse_answer(answer, options: dict) -> Parsed:
    try:
        canonicaliser = Canonicaliser(options)
        steps = split_steps(answer, canonicaliser.known)
        values = [_on_line(canonicaliser, step, canonicaliser.value, step.text) for step in steps]
    except (AnswerFormatError, InvalidRequest) as problem:
        return Parsed(None, str(problem), None)
    # The preview shows each step as typed: its simplified value would give the answer away.
    return Parsed([str(value) for value in values], None, preview_latex(canonicaliser, steps))


def preview_latex(canonicaliser: Canonicaliser, steps: list[Step]) -> str:
    """One row per line the student typed; the steps of a chained line joined by =."""
    lines: dict[int, list[str]] = {}
    for step in steps:
        lines.setdefault(step.line, []).append(canonicaliser.latex_as_read(step.text))
    return r" \\ ".join(" = ".join(row) for row in lines.values())


def self_test(expected, options: dict) -> dict[str, list]:
    """Right, wrong, hollow and invalid derivations. With a ``start``, the right ones include
    a derivation built rule by rule by the checker itself, the wrong ones one that skips
    rules and ones with a wrong step, and the hollow ones (which must score exactly 0) the
    bare result, the question restated or padded and then the result, and a chain that goes
    back to the question; the exercise's own ``examples`` ({right, wrong, hollow}) are added."""
    text = expected if isinstance(expected, str) else repr(expected)
    examples = options.get("examples") or {}
    right_answers, wrong_answers = list(examples.get("right", [])), list(examples.get("wrong", []))
    hollow_answers = list(examples.get("hollow", [])) + [[text], [text, f"{text} + 0"]]
    invalid_answers = ["", [], ["E[("], ["__import__('os')"]]
    if not options.get("start"):
        return {"right": right_answers, "wrong": wrong_answers, "hollow": hollow_answers, "invalid": invalid_answers}
    canonicaliser = Canonicaliser(options)
    start = options["start"]
    derivation = rule_by_rule(canonicaliser, start, _max_rules(options) or 1)
    right_answers.append(derivation)
    right_answers.append(" = ".join(derivation))
    wrong_answers += [
        derivation[:-1] + [f"2*({text})"],  # a wrong last step
        derivation[:1] + [f"2*({derivation[1]})"] + derivation[2:],  # a wrong first step
    ]
    if len(derivation) > 3:
        wrong_answers.append([derivation[0], derivation[-2], derivation[-1]])  # skips rules
    hollow_answers += [
        [start, text],  # the question restated, then the result
        [f"{start} + 0", f"({start}) * 1", text],  # padded, then the result
        [f"{start} + 1 - 1", text],
        derivation[:2] + [start] + derivation[1:],  # goes back to the question
    ]
    invalid_answers.append([start, "E[("])
    return {"right": right_answers, "wrong": wrong_answers, "hollow": hollow_answers, "invalid": invalid_answers}


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
