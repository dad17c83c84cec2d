"""Safe reading of a student's typed expression into a checked Python AST.

Nothing here evaluates the text. The pipeline is:

1. refuse oversize input and control characters;
2. normalise Unicode (σ, √, ·, ×, −, ², ᵀ) and the LaTeX that MathLive produces
   (``\\frac{a}{b}``, ``\\sqrt{d_k}``, ``\\sigma_{q}``, ``x^{2}``, ``\\mathrm{Var}``, ``\\left(``);
3. tokenise with our own scanner, which only knows numbers, names, ``+ - * / ^ ( ) ,``
   (and ``@``, ``[ ]`` where a grammar allows them) and inserts the implicit
   multiplication of ``2 d_k``, ``sqrt(d_k) sigma_q`` and ``2(x+1)``;
4. ``ast.parse(mode="eval")`` the rebuilt text and walk the tree against a whitelist of
   node types and function names;
5. fold constant sub-expressions with floats to refuse huge powers (``9**9**9**9``),
   huge numbers and division by zero before any algebra system sees them.

The checkers then build their own values (SymPy, NumPy) from the checked tree.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
import unicodedata
from decimal import Decimal
from dataclasses import dataclass
from functools import lru_cache

import mpmath

from grading.core.grades import AnswerFormatError
from grading.core.syntax_tree import parse_expression_tree

MAX_CHARS = 2_000
MAX_NESTING = 40
MAX_TOKENS = 600
MAX_NODES = 800
MAX_EXPONENT = 10_000  # (x-a)^6000 is harmless unexpanded; the deciders never expand big powers
MAX_POWER_NESTING = 6  # SymPy builds deep power towers in quadratic time
MAX_MAGNITUDE = 1e300
SMALLEST_EXPONENT = -1000  # a number that is not 0 is at least 1e-1000
MAX_NUMBER_CHARS = 40

SCALAR_FUNCTIONS = frozenset({"sqrt", "exp", "log", "ln", "sin", "cos", "tan", "abs", "Abs"})
TRANSPOSE_MARKER = "_T"  # internal name: cannot collide, user names never start with "_"


@dataclass(frozen=True)
class Grammar:
    """What one answer type may use beyond numbers, names and arithmetic."""

    functions: frozenset = SCALAR_FUNCTIONS
    bracket_functions: frozenset = frozenset()  # names that may be followed by [ ... ], e.g. E[X]
    transpose: bool = False  # K^T, K^{\top}, Kᵀ
    matmul: bool = False  # the @ operator


SCALAR_GRAMMAR = Grammar()


@dataclass(frozen=True)
class CheckedExpression:
    """A whitelisted AST plus the exact text of each number literal (keyed by column)."""

    body: ast.expr
    literals: dict
    names: frozenset
    text: str  # the normalised text that was parsed


# --------------------------------------------------------------------------- normalise

_UNICODE_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lamda", "μ": "mu",
    "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho", "σ": "sigma", "ς": "sigma", "τ": "tau", "υ": "upsilon",
    "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta",
    "Θ": "Theta", "Λ": "Lamda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}
_LATEX_GREEK = {name: name for name in (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa mu nu xi pi rho sigma tau "
    "upsilon phi chi psi omega Gamma Delta Theta Xi Pi Sigma Phi Psi Omega"
).split()}
_LATEX_GREEK.update({"lambda": "lamda", "Lambda": "Lamda", "varepsilon": "epsilon", "varphi": "phi",
                     "vartheta": "theta", "varsigma": "sigma", "varrho": "rho"})
_UNICODE_OPERATORS = str.maketrans({
    "·": "*", "⋅": "*", "∙": "*", "×": "*", "∗": "*", "÷": "/", "−": "-", "–": "-", "—": "-",
    "（": "(", "）": ")", "⁄": "/", "∕": "/", "\u00a0": " ", "\t": " ", "\r": " ",
})
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN = re.compile(r"(\^\s*)?([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
# Subscript digits and Latin letters after a letter (dₖ, σₖ, W₁): NFKC alone would make dₖ
# "dk". After a digit they stay digits, as NFKC reads them (a number has no subscript).
_SUBSCRIPT_RUN = re.compile(r"(?<=[^\W\d])(_?)([\u2080-\u2089\u2090-\u209c\u1d62-\u1d65\u2c7c]+)")
_UNICODE_ROOT = re.compile(r"√\s*([A-Za-z][A-Za-z0-9_]*|\d+(?:\.\d+)?)")

_LATEX_SPACING = {",", ";", "!", " ", ":", "quad", "qquad", "displaystyle", "textstyle", "limits"}
_LATEX_SIZING = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr"}
_LATEX_OPERATORS = {"cdot": "*", "times": "*", "ast": "*", "div": "/", "lbrack": "[", "rbrack": "]",
                    "lparen": "(", "rparen": ")", "{": "(", "}": ")", "top": "T", "intercal": "T", "mid": "|",
                    "vert": "|", "lvert": "|", "rvert": "|"}
_LATEX_FUNCTIONS = {"exp", "log", "ln", "sin", "cos", "tan"}
_LATEX_TEXT_WRAPPERS = {"mathrm", "operatorname", "text", "textrm", "mathit", "mathsf", "mathbf", "mathcal", "textit", "boldsymbol"}
# Blackboard letters read as the moment they stand for (\mathbb{E}[X], \mathbb{V}(X)) where
# the grammar reads moments; any other \mathbb{...} (\mathbb{R}, \mathbb{P}) is refused.
_BLACKBOARD_MOMENTS = {"E": "E", "V": "Var", "Var": "Var", "Cov": "Cov"}
_MOMENT_WORDS = {"E": "an expectation", "Var": "a variance", "Cov": "a covariance"}


_VULGAR_FRACTION = re.compile(r"(?<!\d)(\d*)\s*([\u00bc-\u00be\u2150-\u215e\u2189])")
_VULGAR_CHARACTERS = re.compile(r"[\u00bc-\u00be\u2150-\u215e\u2189]")


def _vulgar_fraction(match: re.Match) -> str:
    numerator, _, denominator = unicodedata.normalize("NFKC", match.group(2)).partition("\u2044")
    fraction = f"{numerator}/{denominator}"
    return f"({match.group(1)}+{fraction})" if match.group(1) else f"({fraction})"


def normalise_unicode(text: str) -> str:
    """Superscripts, ᵀ and vulgar fractions made explicit, then NFKC (fullwidth ＋ → +).

    The order matters: NFKC would turn x² into x2, Kᵀ into KT and 1⅜ into 13⁄8."""
    # d_k², and d_k^² typed with both a caret and a superscript, are the same square.
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^(" + m.group(2).translate(_SUPERSCRIPT_DIGITS) + ")", text)
    if not text.isascii():
        text = _SUBSCRIPT_RUN.sub(lambda m: "_" + unicodedata.normalize("NFKC", m.group(2)), text)
    text = _transpose_signs(text)
    if _VULGAR_CHARACTERS.search(text):
        text = _VULGAR_FRACTION.sub(_vulgar_fraction, text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = _ascii_digits(text)
    return text


# Invisible characters that only join or break words: the zero-width space, non-joiner and
# joiner, the word joiner, the byte order mark and the soft hyphen. Direction controls
# (U+202A-U+202E, U+2066-U+2069) are not among them: they change what a reader sees, and
# an answer holding them is refused.
_INVISIBLE_CHARACTERS = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")


def without_invisible_characters(text: str) -> str:
    """A number copied from a web page or a PDF brings these along, invisible, and "0.25" with
    a zero-width space in it is still 0.25. (Expressions refuse them, naming the character.)
    Typed answers are nearly always ASCII: those are returned as they are, with no search."""
    return text if text.isascii() else _INVISIBLE_CHARACTERS.sub("", text)


# Kᵀ and K⊤ (the "down tack" of many texts) are K^T; typed after a ^ they are the T alone.
_TRANSPOSE_SIGN = re.compile(r"(\^\s*)?[ᵀ⊤]")


def _transpose_signs(text: str) -> str:
    return _TRANSPOSE_SIGN.sub("^T", text) if "ᵀ" in text or "⊤" in text else text


# The Arabic decimal and thousands separators; NFKC keeps them (and other scripts' digits).
_ARABIC_SEPARATORS = {"\u066b": ".", "\u066c": ","}


def _ascii_digits(text: str) -> str:
    """Digits of any script as ASCII digits (٣ -> 3, ३ -> 3), NFKC leaves them as they are;
    the Arabic decimal separator ٫ as a point."""
    return "".join(
        str(unicodedata.decimal(char)) if char.isdecimal() and not char.isascii()
        else _ARABIC_SEPARATORS.get(char, char)
        for char in text
    )


def normalise(text: str, known_names: frozenset = frozenset(), grammar: Grammar = SCALAR_GRAMMAR) -> str:
    """Turn Unicode math and MathLive LaTeX into the plain ASCII syntax the scanner reads.
    ``grammar`` says which moments (E, Var, Cov) a blackboard \\mathbb{E} or \\mathbb{V} may stand for."""
    text = _without_math_delimiters(normalise_unicode(text)).translate(_UNICODE_OPERATORS)
    text = "".join(" " + _UNICODE_GREEK[ch] if ch in _UNICODE_GREEK else ch for ch in text)
    text = _UNICODE_ROOT.sub(r" sqrt(\1)", text).replace("√", " sqrt")
    if "\\" in text or "{" in text or "}" in text:
        text = _LatexReader(text, known_names, grammar.functions).read_all()
    if "|" in text:
        text = _absolute_values(text)
    return text


# An expression pasted whole with its maths delimiters ($...$, $$...$$, \(...\), \[...\]) from a
# document or a LaTeX editor, as the numeric reader takes it; before, "unexpected character '$'".
_MATH_DELIMITED = re.compile(r"^\s*(?:\$\$(.+)\$\$|\$([^$]+)\$|\\\((.+)\\\)|\\\[(.+)\\\])\s*$", re.DOTALL)


def _without_math_delimiters(text: str) -> str:
    if "$" not in text and "\\" not in text:
        return text
    delimited = _MATH_DELIMITED.match(text)
    return next(group for group in delimited.groups() if group is not None) if delimited else text


def _absolute_values(text: str) -> str:
    """|x| -> abs(x), nested too (||x|+y|): a bar opens where a value cannot end."""
    out, open_bars = [], 0
    for char in text:
        if char != "|":
            out.append(char)
            continue
        before = "".join(out).rstrip()
        opens = open_bars == 0 or not before or before[-1] in "+-*/^(,[" or before.endswith("abs(")
        if opens:
            out.append(" abs(")
            open_bars += 1
        else:
            out.append(")")
            open_bars -= 1
    if open_bars:
        raise AnswerFormatError("an absolute value | is never closed")
    return "".join(out)


class _LatexReader:
    """A small recursive reader for the LaTeX subset an equation editor emits."""

    def __init__(self, text: str, known_names: frozenset, functions: frozenset = SCALAR_FUNCTIONS):
        self.text = text
        self.pos = 0
        self.known_names = known_names
        self.functions = functions  # the grammar's: a blackboard letter reads as a moment only if listed

    def read_all(self) -> str:
        out = self.read_until(None)
        return out

    def read_until(self, closer: str | None) -> str:
        parts: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "}":
                if closer == "}":
                    self.pos += 1
                    return "".join(parts)
                raise AnswerFormatError("unbalanced braces: a } has no matching {")
            if char == "{":
                self.pos += 1
                parts.append("(" + self.read_until("}") + ")")
            elif char == "\\":
                parts.append(self.read_command())
            elif char == "^":
                self.pos += 1
                parts.append("^(" + self.read_argument(superscript=True) + ")")
            elif char == "_":
                self.pos += 1
                subscript = self.read_subscript(parts)
                if parts and parts[-1].startswith("^("):
                    # \sigma^2_q: the subscript belongs to the name, the power to the whole.
                    power = parts.pop()
                    parts += [subscript, power]
                else:
                    parts.append(subscript)
            else:
                parts.append(char)
                self.pos += 1
        if closer is not None:
            raise AnswerFormatError("unbalanced braces: a { is never closed")
        return "".join(parts)

    def read_group(self) -> str:
        self.skip_spaces()
        if self.pos < len(self.text) and self.text[self.pos] == "{":
            self.pos += 1
            return self.read_until("}")
        return self.read_argument(superscript=False)

    def read_argument(self, *, superscript: bool) -> str:
        self.skip_spaces()
        if self.pos >= len(self.text):
            raise AnswerFormatError("the expression ends where an argument was expected")
        char = self.text[self.pos]
        if char == "{":
            self.pos += 1
            return self.read_until("}")
        if char == "\\":
            return self.read_command()
        if superscript:
            match = re.compile(r"-?\d+|[A-Za-z0-9]").match(self.text, self.pos)
            if match:
                self.pos = match.end()
                return match.group(0)
        self.pos += 1
        return char

    def read_subscript(self, parts: list[str]) -> str:
        self.skip_spaces()
        if self.pos < len(self.text) and self.text[self.pos] == "{":
            self.pos += 1
            label = self.read_until("}").replace(" ", "")
        elif self.text.startswith("\\", self.pos):
            label = self.read_command().replace(" ", "")  # d_\text{model}, d_\mathrm{k}
        else:
            label = self.subscript_word()
        if not re.fullmatch(r"[A-Za-z0-9]+", label):
            raise AnswerFormatError(f"a subscript must be letters or digits, got {label!r}")
        return "_" + label + " "

    def subscript_word(self) -> str:
        """LaTeX subscripts take one character, but accept d_model when d_model is a known name."""
        run = re.compile(r"[A-Za-z0-9]+").match(self.text, self.pos)
        if not run:
            raise AnswerFormatError("a _ must be followed by a subscript")
        base = re.search(r"([A-Za-z][A-Za-z0-9]*)$", self.text[: self.pos - 1])
        for end in range(run.end(), run.start(), -1):
            candidate = (base.group(1) if base else "") + "_" + self.text[run.start():end]
            if candidate in self.known_names:
                self.pos = end
                return self.text[run.start():end]
        self.pos = run.start() + 1
        return self.text[run.start()]

    def read_command(self) -> str:
        match = re.compile(r"\\([A-Za-z]+|.)").match(self.text, self.pos)
        if not match:
            raise AnswerFormatError("the expression ends with a lone backslash")
        self.pos = match.end()
        name = match.group(1)
        if name in _LATEX_SPACING or name == "\\":
            return " "
        if name in _LATEX_SIZING:
            if self.text.startswith(".", self.pos):
                self.pos += 1
            return " "
        if name in _LATEX_OPERATORS:
            return " " + _LATEX_OPERATORS[name] + " "
        if name in ("frac", "dfrac", "tfrac"):
            numerator, denominator = self.read_group(), self.read_group()
            return f"(({numerator})/({denominator}))"
        if name == "sqrt":
            return self.read_root()
        if name in _LATEX_GREEK:
            return " " + _LATEX_GREEK[name]
        if name in _LATEX_FUNCTIONS:
            return " " + name
        if name == "mathbb":
            return self.read_blackboard()
        if name in _LATEX_TEXT_WRAPPERS:
            word = self.read_group().strip()
            if not re.fullmatch(r"[A-Za-z0-9 ]*", word):
                raise AnswerFormatError(f"\\{name}{{...}} may only contain letters here")
            return " " + word.replace(" ", "")
        if name in ("sum", "prod", "int"):
            raise AnswerFormatError(f"\\{name} cannot be read here; sums are written Sum(term, m, 1, d_k)")
        if name == "infty":
            raise AnswerFormatError("infinity is not an accepted answer")
        raise AnswerFormatError(f"unsupported LaTeX command \\{name}")

    def read_blackboard(self) -> str:
        """\\mathbb{E} is the expectation E and \\mathbb{V} the variance Var where the grammar reads
        moments; anything else in blackboard bold is refused, saying what is read."""
        letter = self.read_group().replace(" ", "")
        moment = _BLACKBOARD_MOMENTS.get(letter)
        if moment in self.functions:
            return " " + moment
        if moment is not None:
            raise AnswerFormatError(f"\\mathbb{{{letter}}} stands for {_MOMENT_WORDS[moment]}, which this answer "
                                    "does not use: write it with the symbols of the question")
        shown = letter if re.fullmatch(r"[A-Za-z0-9]{0,8}", letter) else "..."
        if {"E", "Var"} <= self.functions:
            raise AnswerFormatError(f"\\mathbb{{{shown}}} cannot be read here: the blackboard letters read are "
                                    "\\mathbb{E} (expectation, \\mathbb{E}[X]) and \\mathbb{V} (variance, \\mathbb{V}(X))")
        raise AnswerFormatError(f"\\mathbb{{{shown}}} cannot be read here: write plain letters, not blackboard bold")

    def read_root(self) -> str:
        self.skip_spaces()
        index = None
        if self.text.startswith("[", self.pos):
            close = self.text.find("]", self.pos)
            if close < 0:
                raise AnswerFormatError("\\sqrt[ is never closed by ]")
            index = _LatexReader(self.text[self.pos + 1: close], self.known_names, self.functions).read_all()
            self.pos = close + 1
        radicand = self.read_group()
        if re.fullmatch(r"[A-Za-z]", radicand) and self.text.startswith("_", self.pos):
            # \sqrt d_k: TeX sets the subscript after the root, but the k is d's (√d_k).
            self.pos += 1
            radicand += self.read_subscript([]).strip()
        if index is None:
            return f" sqrt({radicand})"
        return f"(({radicand})^(1/({index})))"

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1


# --------------------------------------------------------------------------- tokenise

_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|[-+*/^(),\[\]@])"
)
_CHARACTER_ADVICE = {
    ".": "a dot is only allowed inside numbers (write K^T for a transpose, not K.T)",
    "=": "write an expression, not an equation: leave out '='",
    "'": "quotes and text are not allowed in an expression",
    '"': "quotes and text are not allowed in an expression",
    "{": "use round brackets ( ) for grouping",
    "}": "use round brackets ( ) for grouping",
    ":": "':' is not part of a math expression",
    "_": "names must start with a letter",
    "!": "factorials are not supported",
    "%": "'%' is not allowed; write the value as a plain number",
    "<": "comparisons are not allowed; write a single expression",
    ">": "comparisons are not allowed; write a single expression",
}


def _character_advice(char: str) -> str:
    """Why ``char`` cannot be read, and what to type instead: a letter of another alphabet
    (Cyrillic а looks like Latin a) and an invisible character are named, as a student cannot
    see what is wrong with either."""
    if char in _CHARACTER_ADVICE:
        return _CHARACTER_ADVICE[char]
    name = unicodedata.name(char, "")
    if char.isalpha() and not char.isascii() and name:
        alphabet = name.split(" ")[0].title()
        return f"it is a {alphabet} letter ({name.lower()}), not a Latin one: type names with Latin letters a–z"
    if unicodedata.category(char) in ("Cf", "Zs", "Zl", "Zp", "Cc"):
        return f"it is an invisible or special space character ({name.lower() or 'a control character'}): delete it"
    return "it is not part of the answer syntax"


@dataclass
class _Token:
    kind: str  # number | name | op
    text: str
    position: int


def tokenise(text: str, grammar: Grammar, known_names: frozenset) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            char = text[position]
            advice = _character_advice(char)
            if char in "'′" and grammar.transpose:  # K' (MATLAB) or K′ for a transpose
                advice = "write K^T for a transpose, not K'"
            raise AnswerFormatError(f"unexpected character {char!r} at position {position + 1}: {advice}")
        kind = match.lastgroup
        if kind == "name" and grammar.transpose and tokens and tokens[-1].text == "**":
            tokens.extend(_transpose_then_names(match.group(0), position, grammar, known_names))
        elif kind != "space":
            tokens.extend(_checked_token(kind, match.group(0), position, grammar, known_names))
        position = match.end()
        if len(tokens) > MAX_TOKENS:
            raise AnswerFormatError(f"the expression is too long (more than {MAX_TOKENS} symbols)")
    return tokens


def _checked_token(kind: str, text: str, position: int, grammar: Grammar, known_names: frozenset) -> list[_Token]:
    if kind == "number":
        if len(text) > MAX_NUMBER_CHARS:
            raise AnswerFormatError(f"the number at position {position + 1} is too long")
        value = float(text)
        if not math.isfinite(value) or value > MAX_MAGNITUDE:
            raise AnswerFormatError(f"the number {text} is too large")
        if _too_small(text):
            # Read exactly, 1e-999999 is a fraction whose denominator has a million digits.
            raise AnswerFormatError(f"the number {text} is too small (the limit is 1e{SMALLEST_EXPONENT})")
        return [_Token("number", text, position)]
    if kind == "name":
        return [_Token("name", part, position) for part in _checked_name(text, position, grammar, known_names)]
    if text == "@" and not grammar.matmul:
        raise AnswerFormatError("'@' is only used in matrix expressions; write * for a product")
    if text in "[]" and not grammar.bracket_functions:
        raise AnswerFormatError("square brackets are not used here: use round brackets ( ) for grouping")
    return [_Token("op", "**" if text == "^" else text, position)]


def _transpose_then_names(text: str, position: int, grammar: Grammar, known_names: frozenset) -> list[_Token]:
    """After a ^, ``TV`` in ``Q K^TV`` is the transpose mark and then V (when TV is no name)."""
    rest = text[1:]
    if text.startswith("T") and rest and text not in known_names:
        pieces = [rest] if rest in known_names else _split_into_known_names(rest, known_names)
        if pieces:
            return [_Token("name", "T", position)] + [_Token("name", piece, position + 1) for piece in pieces]
    return _checked_token("name", text, position, grammar, known_names)


def _too_small(number_text: str) -> bool:
    """Is the number not 0 but below 10**SMALLEST_EXPONENT? (Exactly: floats stop at 5e-324.)"""
    number = Decimal(number_text)
    return number != 0 and number.adjusted() < SMALLEST_EXPONENT


def _checked_name(text: str, position: int, grammar: Grammar, known_names: frozenset) -> list[str]:
    if "__" in text:
        raise AnswerFormatError(f"names with a double underscore are not allowed ({text!r})")
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        raise AnswerFormatError(f"{text!r} is a reserved word and cannot be used in an answer")
    if text in known_names or text in grammar.functions:
        return [text]
    if text.lower() in _INFINITY_NAMES:
        raise AnswerFormatError("infinity is not an accepted answer")
    if not known_names:
        return [text]
    return _split_into_known_names(text, known_names) or [text]


# Functions a student may know but the answer language does not have: refused by name
# rather than read as a product of a symbol (tanh(x) is not tanh·x).
UNSUPPORTED_FUNCTIONS = frozenset(
    "sinh cosh tanh coth sech csch cosech sec csc cosec cot asin acos atan atan2 arcsin arccos arctan arctan2 "
    "asinh acosh atanh arsinh arcosh artanh max min Max Min sign sgn signum floor ceil round factorial lg log10 "
    "log2 gamma erf".split()
)
_INFINITY_NAMES = frozenset({"inf", "infty", "infinity", "oo"})


_BARE_FRACTION_POWER = re.compile(r"(\^|\*\*)\s*(-?\s*\d*\.?\d+)\s*/\s*(\d*\.?\d+)")
BARE_FRACTION_POWER_ADVICE = "A power such as x^1/2 is read as (x^1)/2; write a fractional power in brackets: x^(1/2)."


def bracketed_fraction_powers(text: str) -> str | None:
    """``text`` with each unbracketed fractional power bracketed (d_k^1/2 -> d_k^(1/2)), or
    None when it has none. For feedback only: the answer is graded as it was typed."""
    if not _BARE_FRACTION_POWER.search(text):
        return None
    return _BARE_FRACTION_POWER.sub(r"\1(\2/\3)", text)


def did_you_mean(name: str, known_names) -> str:
    """' (did you mean d_k?)' for a name that is a declared one without its underscore or in
    another case (dk, sigmaq, D_K, σₖ typed as sigmak); empty when no single name fits."""
    folded = name.replace("_", "").casefold()
    matches = sorted(known for known in known_names
                     if known != name and known.replace("_", "").casefold() == folded)
    return f" (did you mean {matches[0]}?)" if len(matches) == 1 else ""


def _split_into_known_names(text: str, known_names: frozenset) -> list[str] | None:
    """Read glued names such as ``sigma_qsigma_k`` as a product, if every piece is declared.

    Longest pieces first; memoised on the remaining suffix, so overlapping names (A, AA)
    cost linear time in the length rather than exponential."""
    if len(text) > 60:
        return None
    return _split_suffix(text, known_names)


@lru_cache(maxsize=4096)
def _split_suffix(text: str, known_names: frozenset) -> list[str] | None:
    # Iterative over suffixes from the end, so the recursion depth never grows with the length.
    best: dict[int, list[str] | None] = {len(text): []}
    for start in range(len(text) - 1, -1, -1):
        best[start] = None
        for end in range(len(text), start, -1):
            head = text[start:end]
            if head in known_names and best[end] is not None and (end - start < len(text)):
                best[start] = [head, *best[end]]
                break
    result = best[0]
    return result if result else None


def _with_brackets_and_products(tokens: list[_Token], grammar: Grammar, known_names: frozenset) -> list[_Token]:
    """Check nesting, turn E[...] into E(...), mark transposes and insert implicit products."""
    _check_nesting(tokens, grammar)
    result: list[_Token] = []
    for token in tokens:
        if token.text == "[":
            token = _Token("op", "(", token.position)
        elif token.text == "]":
            token = _Token("op", ")", token.position)
        previous = result[-1] if result else None
        if previous is not None and _implicit_product(previous, token, grammar, known_names):
            result.append(_Token("op", "*", token.position))
        result.append(token)
    if grammar.transpose:
        result = _mark_transposes(result)
    _check_function_calls(result, grammar)
    return result


def _check_nesting(tokens: list[_Token], grammar: Grammar) -> None:
    stack: list[_Token] = []
    for index, token in enumerate(tokens):
        if token.text in "([":
            if token.text == "[":
                before = tokens[index - 1] if index else None
                if before is None or before.text not in grammar.bracket_functions:
                    allowed = " and ".join(f"{name}[...]" for name in sorted(grammar.bracket_functions))
                    raise AnswerFormatError(f"square brackets are only used for {allowed}; use ( ) for grouping")
            stack.append(token)
            if len(stack) > MAX_NESTING:
                raise AnswerFormatError(f"the expression is nested too deeply (more than {MAX_NESTING} brackets)")
        elif token.text in ")]":
            if not stack:
                raise AnswerFormatError(f"unbalanced brackets: {token.text!r} at position {token.position + 1} closes nothing")
            opener = stack.pop()
            if (opener.text == "(") != (token.text == ")"):
                raise AnswerFormatError(f"mismatched brackets: {opener.text!r} is closed by {token.text!r}")
    if stack:
        raise AnswerFormatError(f"unbalanced brackets: {stack[-1].text!r} at position {stack[-1].position + 1} is never closed")


def _ends_value(token: _Token, grammar: Grammar) -> bool:
    if token.kind == "name":
        return token.text not in grammar.functions
    return token.kind == "number" or token.text == ")"


def _starts_value(token: _Token) -> bool:
    return token.kind in ("number", "name") or token.text == "("


def _implicit_product(previous: _Token, token: _Token, grammar: Grammar, known_names: frozenset) -> bool:
    if previous.text == "(" and token.text == ")":
        raise AnswerFormatError(f"empty brackets () at position {token.position}: put an expression inside or remove them")
    if (previous.kind == "name" and token.text == "(" and previous.text in UNSUPPORTED_FUNCTIONS
            and previous.text not in known_names | grammar.functions):
        functions = ", ".join(sorted(grammar.functions))
        raise AnswerFormatError(f"{previous.text}(...) is not supported here; the functions you may use are {functions}")
    if previous.kind == "name" and token.text == "(" and known_names and previous.text not in known_names | grammar.functions:
        functions = ", ".join(sorted(grammar.functions))
        raise AnswerFormatError(f"unknown function {previous.text!r}; the functions you may use are {functions}")
    if not (_ends_value(previous, grammar) and _starts_value(token)):
        return False
    if previous.kind == "number" and token.kind == "number":
        raise AnswerFormatError(f"two numbers next to each other at position {token.position + 1}: put an operator between them")
    return True


def _mark_transposes(tokens: list[_Token]) -> list[_Token]:
    """K ** T and K ** (T) become K ** _T, which the matrix checker reads as a transpose."""
    result: list[_Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.text == "**":
            count, end = _transposes_at(tokens, index)
            if count:
                if count % 2:  # Q^T^T is Q: only an odd number of transposes is kept
                    result += [token, _Token("name", TRANSPOSE_MARKER, token.position)]
                index = end
                continue
        result.append(token)
        index += 1
    return result


def _transposes_at(tokens: list[_Token], index: int) -> tuple[int, int]:
    """How many ``** T`` / ``** (T)`` follow one another from ``index``, and where they end."""
    count = 0
    while index < len(tokens) and tokens[index].text == "**":
        following = [t.text for t in tokens[index + 1: index + 4]]
        if following[:1] == ["T"]:
            index += 2
        elif following == ["(", "T", ")"]:
            index += 4
        else:
            break
        count += 1
    return count, index


def _check_function_calls(tokens: list[_Token], grammar: Grammar) -> None:
    for index, token in enumerate(tokens):
        if token.kind == "name" and token.text in grammar.functions:
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if following is None or following.text != "(":
                raise AnswerFormatError(f"write {token.text}(...) with brackets around its argument")


# --------------------------------------------------------------------------- parse + whitelist

_ALLOWED_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def require_short(text: str) -> None:
    """AnswerFormatError for a text longer than MAX_CHARS (checked before any pattern runs on it)."""
    if len(text) > MAX_CHARS:
        raise AnswerFormatError(f"the answer is too long ({len(text)} characters; the limit is {MAX_CHARS})")


def read_expression(text, grammar: Grammar = SCALAR_GRAMMAR, known_names=frozenset()) -> CheckedExpression:
    """Read ``text`` into a whitelisted AST; raise AnswerFormatError saying what is wrong."""
    if not isinstance(text, str):
        raise AnswerFormatError(f"expected an expression as text, got {type(text).__name__}")
    require_short(text)
    if any(ord(char) < 32 and char not in "\n\t\r" for char in text):
        raise AnswerFormatError("the answer contains control characters (such as NUL); retype it")
    known_names = frozenset(known_names)
    normalised = normalise(text.replace("\n", " "), known_names, grammar)
    tokens = _with_brackets_and_products(tokenise(normalised, grammar, known_names), grammar, known_names)
    if not tokens:
        raise AnswerFormatError("the answer is empty: type an expression")
    source, literals = _rebuild(tokens)
    try:
        tree = parse_expression_tree(source)
    except SyntaxError:
        raise AnswerFormatError(_syntax_advice(tokens)) from None
    except (RecursionError, MemoryError, ValueError):
        raise AnswerFormatError("the expression is too complicated to read") from None
    names = _check_tree(tree.body, grammar)
    _check_constants(tree.body, literals)
    return CheckedExpression(tree.body, literals, frozenset(names), normalised)


def _rebuild(tokens: list[_Token]) -> tuple[str, dict]:
    pieces, literals, column = [], {}, 0
    for token in tokens:
        if token.kind == "number":
            literals[column] = token.text
        pieces.append(token.text)
        column += len(token.text) + 1
    return " ".join(pieces), literals


def _syntax_advice(tokens: list[_Token]) -> str:
    last = tokens[-1]
    if last.text in ("+", "-", "*", "/", "**", ","):
        return f"the expression ends with {last.text!r}: something is missing after it"
    first = tokens[0]
    if first.text in ("*", "/", "**", ","):
        return f"the expression cannot start with {first.text!r}"
    for previous, token in zip(tokens, tokens[1:]):
        if previous.text in ("*", "/", "**", "+", "-", "(", ",") and token.text in ("*", "/", "**", ")", ","):
            return f"{previous.text!r} followed by {token.text!r} at position {token.position + 1}: something is missing between them"
    return "could not read the expression: check the operators and brackets"


def _check_tree(node: ast.AST, grammar: Grammar) -> set[str]:
    names: set[str] = set()
    count = 0
    stack = [node]
    while stack:
        current = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise AnswerFormatError("the expression is too long")
        stack.extend(_checked_children(current, grammar, names))
    return names


def _checked_children(node: ast.AST, grammar: Grammar, names: set[str]) -> list[ast.AST]:
    if isinstance(node, ast.BinOp):
        allowed = _ALLOWED_BINARY + ((ast.MatMult,) if grammar.matmul else ())
        if not isinstance(node.op, allowed):
            raise AnswerFormatError(f"the operator {type(node.op).__name__} is not allowed")
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise AnswerFormatError("only + and - may stand in front of a term")
        return [node.operand]
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise AnswerFormatError("only numbers may appear as constants")
        return []
    if isinstance(node, ast.Name):
        if node.id == TRANSPOSE_MARKER and not grammar.transpose:
            raise AnswerFormatError("names must start with a letter")
        if node.id in grammar.functions:
            raise AnswerFormatError(f"{node.id} is a function: write {node.id}(...)")
        names.add(node.id)
        return []
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in grammar.functions:
            raise AnswerFormatError("only the listed functions may be called")
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise AnswerFormatError(f"{node.func.id}(...) takes plain arguments only")
        if not node.args:
            raise AnswerFormatError(f"{node.func.id}() needs an argument")
        return list(node.args)
    if isinstance(node, ast.Tuple):
        raise AnswerFormatError("commas are only used between the arguments of a function")
    raise AnswerFormatError(f"{type(node).__name__} is not allowed in an answer")


def _check_constants(node: ast.AST, literals: dict | None = None) -> None:
    """Fold constant parts so huge or tiny numbers, huge powers and 1/0 are refused before any algebra."""
    if _power_nesting(node) > MAX_POWER_NESTING:
        raise AnswerFormatError(f"powers are nested too deeply (more than {MAX_POWER_NESTING} levels)")
    with mpmath.workprec(FOLD_BITS):
        _fold(node, literals or {})


def _power_nesting(node: ast.AST) -> int:
    """The largest number of powers stacked inside one another."""
    deepest = 0
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Pow):
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((child, depth) for child in ast.iter_child_nodes(current))
    return deepest


# Constants are folded in mpmath at float precision but with an unbounded exponent, so
# (1e-999)^10000 is seen to be tiny (a float says 0.0) and refused before SymPy builds an
# exact fraction with ten million digits.
FOLD_BITS = 53


class _Coefficient:
    """The folded size of a sub-tree that involves a name: the product of its constant
    factors (d_k * 1e-999 * 1e-999 has the coefficient 1e-1998, which SymPy would gather)."""

    def __init__(self, value):
        self.value = value


def _fold(node: ast.AST, literals: dict):
    """The value of a constant sub-tree (an mpf), a _Coefficient for a product, quotient or
    power that involves a name, or None for a sum or call that does."""
    if isinstance(node, ast.Constant):
        return _checked_size(mpmath.mpf(literals.get(node.col_offset, repr(node.value))))
    if isinstance(node, ast.Name):
        return _Coefficient(mpmath.mpf(1))
    if isinstance(node, ast.UnaryOp):
        value = _fold(node.operand, literals)
        return -value if isinstance(value, mpmath.mpf) and isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        return _folded_binary_node(node, _fold(node.left, literals), _fold(node.right, literals))
    if isinstance(node, ast.Call):
        values = [_fold(arg, literals) for arg in node.args]
        if len(values) != 1 or not isinstance(values[0], mpmath.mpf):
            return None
        return _folded_call(node.func.id, values[0])
    return None


def _folded_binary_node(node: ast.BinOp, left, right):
    if isinstance(node.op, ast.Pow) and isinstance(right, mpmath.mpf) and abs(right) > MAX_EXPONENT:
        raise AnswerFormatError(f"the exponent {float(right):g} is too large (the limit is {MAX_EXPONENT})")
    if isinstance(node.op, ast.Div) and isinstance(right, mpmath.mpf) and right == 0:
        raise AnswerFormatError("the expression divides by zero")
    if isinstance(left, mpmath.mpf) and isinstance(right, mpmath.mpf):
        return _folded_binary(node.op, left, right)
    if isinstance(node.op, (ast.Mult, ast.Div)) and left is not None and right is not None:
        coefficient = _folded_binary(node.op, _size_of(left), _size_of(right))
        return _Coefficient(coefficient)
    if isinstance(node.op, ast.Pow) and left is not None and isinstance(right, mpmath.mpf):
        return _Coefficient(_folded_binary(node.op, _size_of(left), right))
    return None


def _size_of(value) -> "mpmath.mpf":
    return value.value if isinstance(value, _Coefficient) else value


def _checked_size(value):
    """``value``, unless it is not 0 and outside 10^SMALLEST_EXPONENT .. MAX_MAGNITUDE."""
    if not mpmath.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise AnswerFormatError("a number in the expression is too large")
    if value and mpmath.log10(abs(value)) < SMALLEST_EXPONENT:
        raise AnswerFormatError(f"a number in the expression is too small (the limit is 1e{SMALLEST_EXPONENT})")
    return value


def _folded_binary(op: ast.operator, left, right):
    if isinstance(op, ast.Add):
        return _checked_size(left + right)
    if isinstance(op, ast.Sub):
        return _checked_size(left - right)
    if isinstance(op, ast.Mult):
        return _checked_size(left * right)
    if isinstance(op, ast.Div):
        return _checked_size(left / right)
    if isinstance(op, ast.Pow):
        if left == 0 and right < 0:
            raise AnswerFormatError("the expression divides by zero (0 to a negative power)")
        return _checked_size(abs(left) ** right)  # magnitude is all the guard needs
    return None


def _folded_call(function: str, argument):
    if function == "exp":
        if argument > 690:
            raise AnswerFormatError("a number in the expression is too large")
        return _checked_size(mpmath.exp(argument))
    if function in ("log", "ln") and argument == 0:
        raise AnswerFormatError("log(0) is undefined")
    if function in ("sqrt", "abs", "Abs"):
        return mpmath.sqrt(abs(argument)) if function == "sqrt" else abs(argument)
    return None
