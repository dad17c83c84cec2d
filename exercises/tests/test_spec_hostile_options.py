"""Hostile values in every field and checker option of an exercise source.

For each field or option a part type reads, and each value of HOSTILE, ``load_spec`` either
refuses the source with a SpecError naming the field's line and path (the exact issues are
in the table), or accepts it, and then a variant draws, renders, and grades a right answer
right and a wrong one without an error. Nothing else may escape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from exercises.engine import SpecError, draw_variant, grade_part, load_spec, part_options, reference_answers
from exercises.engine.figures import render_figures
from exercises.engine.rendering import part_points, render_hints, render_prompt, render_solution, text_problems
from grading.core import answers, derivation

# How each hostile value is written in YAML. "1e400" reads as text (YAML 1.1 wants a dot),
# 1.0e+400 would read as .inf.
HOSTILE = {
    "0": "0",
    "-1": "-1",
    "1.5": "1.5",
    "400": "400",
    "10**6": "1000000",
    "10**400": "1" + "0" * 400,
    "1e400": "1e400",
    ".inf": ".inf",
    ".nan": ".nan",
    "true": "true",
    "abc": '"abc"',
    "[]": "[]",
    "{}": "{}",
    "null": "null",
}
UNSTORABLE = ("is not a finite number ({value}); write a finite number (NaN, infinity and numbers beyond ±1.8e308 "
              "cannot be stored)")

NUMERIC = """\
slug: hostile
title: Hostile values
version: 1
parameters:
  a: {generator: int_range, min: 2, max: 5}
  c: {generator: choice, from: [1, 2, 3]}
  f: {generator: fixed, value: [1, 2]}
  g: {generator: derived, expr: "a + c"}
prompt: Compute {{a}} / 3, about {{a / 3 | 2}}.
parts:
  - key: p
    type: numeric
    answer: "a / 3"
    points: 1
    decimals: 4
    hints:
      - {after: 1, text: "Divide {{a}} by 3."}
    options: {}
    solution: It is {{a / 3 | 4}}.
gates:
  rounding_margin: 0.05
  max_attempts: 100
  checks:
    - {kind: entry_range, expr: "[c]", limit: [0, 10]}
"""

TOLERANCE = NUMERIC.replace("    decimals: 4\n", "    decimals: 4\n    tolerance: {abs: 0.001, rel: 0.001}\n")

MATRIX = """\
slug: hostile
title: Hostile values
version: 1
parameters:
  Q: {generator: int_matrix, shape: [3, 2], min: -1, max: 1}
  K: {generator: int_matrix, shape: [3, 2], min: -1, max: 1}
  V: {generator: int_matrix, shape: [3, 2], min: -2, max: 2}
prompt: "The weights of query 0 for Q = {{Q}}."
figures:
  - heatmap: "attention(Q, K, V).weights"
    decimals: 2
    range: [0, 1]
parts:
  - key: w
    type: matrix
    answer: "attention(Q, K, V).weights[0]"
    decimals: 4
    diagnose: {kind: attention, Q: Q, K: K, V: V, query_index: 0, quantity: weights}
    options: {}
    solution: "They are {{attention(Q, K, V).weights[0] | 4}}."
"""

SHAPE = """\
slug: hostile
title: Hostile values
version: 1
parameters:
  n: {generator: int_range, min: 2, max: 6}
prompt: "The shape of Q K^T for {{n}} tokens."
parts:
  - key: s
    type: matrix
    answer: "[n, n]"
    decimals: 0
    options: {shape: true}
    solution: "[{{n}}, {{n}}]."
"""

SYMBOLIC = """\
slug: hostile
title: Hostile values
version: 1
parameters: {}
prompt: The standard deviation of a score.
parts:
  - key: s
    type: symbolic
    answer: "sqrt(d_k) * sigma"
    symbols: {d_k: positive, sigma: positive}
    options: {}
    solution: It is sqrt(d_k) sigma.
"""

MATRIX_EXPRESSION = """\
slug: hostile
title: Hostile values
version: 1
parameters: {}
prompt: Attention as one expression.
parts:
  - key: e
    type: matrix_expression
    answer: "softmax(Q K^T / sqrt(d_k)) V"
    options: {matrices: {Q: [n, d_k], K: [n, d_k], V: [n, d_v]}, scalars: {n: 4, d_k: 3, d_v: 2}}
    solution: softmax(Q K^T / sqrt(d_k)) V.
"""

DERIVATION = """\
slug: hostile
title: Hostile values
version: 1
parameters: {}
prompt: Derive the variance of a score.
parts:
  - key: v
    type: derivation
    answer: "d_k"
    symbols: {d_k: positive}
    options:
      random_variables: {q: {mean: 0, variance: 1}, k: {mean: 0, variance: 1}}
      start: "Var(dot(q, k))"
    solution: d_k.
"""

CHOICE = """\
slug: hostile
title: Hostile values
version: 1
parameters: {}
prompt: Is the scale 1/sqrt(d_k)?
parts:
  - key: c
    type: choice
    answer: A
    choices:
      - {key: A, text: "Yes"}
      - {key: B, text: "No", feedback: "It is."}
    options: {}
    solution: Yes.
"""

FREE_TEXT = """\
slug: hostile
title: Hostile values
version: 1
parameters: {}
prompt: Why scale the scores?
parts:
  - key: t
    type: free_text
    answer: "Mentions the variance of the scores."
    options: {}
    solution: Their variance grows with d_k.
"""


@dataclass(frozen=True)
class Field:
    """One field: ``old`` in ``base`` becomes ``new`` with HOSTILE for each hostile value.
    A value in ``accept`` must load and grade; any other is refused with ``refuse`` (a message
    on ``path``, at the line of the hostile value) unless ``special`` says otherwise: a message
    on ``path``, or the exact issues. .inf and .nan are refused as unstorable by default."""

    path: str
    base: str
    old: str
    new: str
    accept: frozenset = frozenset()
    refuse: str = ""
    special: dict = field(default_factory=dict)


def option(base: str, name: str, *, accept=(), refuse="", special=None, old="    options: {}") -> Field:
    return Field(f"parts[0].options.{name}", base, old, f"    options: {{{name}: HOSTILE}}", frozenset(accept), refuse,
                 special or {})


def line_field(path: str, base: str, old: str, *, accept=(), refuse="", special=None, new=None) -> Field:
    if new is None:
        new = old.rsplit(":", 1)[0] + ": HOSTILE"
    return Field(path, base, old, new, frozenset(accept), refuse, special or {})


WHOLE_0_12 = "must be a whole number from 0 to 12"
NOT_A_LIST_OF_NUMBERS = "must be a non-empty list of numbers or number lists"
TRUE_OR_FALSE = "must be true or false"
NOT_AN_EXPRESSION = {"true": "expected an expression, got bool", "abc": "unknown name 'abc' in 'abc'",
                     "[]": "expected an expression, got list", "{}": "expected an expression, got dict",
                     "null": "expected an expression, got NoneType",
                     "10**400": "a whole number in the expression is too large (at most 2^63)",
                     "1e400": "a number in the expression is too large (at most about 1.8e308)"}
NOT_A_SHAPE = "must be a list of one or two sizes, e.g. [n, d_model]"
CANNOT = "the part cannot be graded as written: "
DERIVATION_NOT_RIGHT = ("graded with the part's options, a derivation from options.start, one rule per line, is not "
                        "right: Every step follows, but the last line (line 6) is not the required result.")
NOT_A_CHOICE = "'{}' is not one of the choice keys A, B"
RANDOM_VARIABLE = ("a random variable has a plain name (letters and digits) and {mean, variance}, and may have "
                   "distribution: normal")
MOMENT = "must be a number or an expression in the part's symbols"
VARIANCE = "must be a number >= 0 or an expression in the part's symbols"
NO_MATRICES = ("a matrix_expression part needs options.matrices, each matrix's name with its [rows, cols], "
               "e.g. {Q: [n, d_k]}")
SCALAR = "must be a number or a {{ }} template that fills to one"
SCALAR_SIZE = "is the size of a matrix: must be a whole number from 1 to 64"

FIELDS = [
    # --- a part's own fields ---
    line_field("parts[0].points", NUMERIC, "    points: 1", accept={"0", "1.5"},
               refuse="must be a number from 0 to 100"),
    line_field("parts[0].decimals", NUMERIC, "    decimals: 4", accept={"0"}, refuse=WHOLE_0_12),
    line_field("parts[0].hints", NUMERIC, '    hints:\n      - {after: 1, text: "Divide {{a}} by 3."}',
               new="    hints: HOSTILE", accept={"[]"}, refuse="must be a list of {after, text}"),
    line_field("parts[0].hints[0].after", NUMERIC, '      - {after: 1, text: "Divide {{a}} by 3."}',
               new='      - {after: HOSTILE, text: "Divide {{a}} by 3."}', accept={"0"},
               refuse="must be a whole number of tries from 0 to 100"),
    line_field("parts[0].answer", NUMERIC, '    answer: "a / 3"', accept={"0", "-1", "1.5", "400", "10**6"},
               special=NOT_AN_EXPRESSION),
    line_field("parts[0].options", NUMERIC, "    options: {}", accept={"{}"}, refuse="must be a mapping"),
    line_field("parts[0].tolerance", TOLERANCE, "    tolerance: {abs: 0.001, rel: 0.001}", new="    tolerance: HOSTILE",
               accept={"null"},
               refuse="must be a mapping with 'abs' and/or 'rel'"),
    line_field("parts[0].tolerance.abs", TOLERANCE, "    tolerance: {abs: 0.001, rel: 0.001}",
               new="    tolerance: {abs: HOSTILE, rel: 0.001}", accept={"0", "1.5", "400", "10**6"},
               refuse="must be a number >= 0"),
    line_field("parts[0].tolerance.rel", TOLERANCE, "    tolerance: {abs: 0.001, rel: 0.001}",
               new="    tolerance: {abs: 0.001, rel: HOSTILE}", accept={"0"}, refuse="must be a number from 0 to 0.5"),
    line_field("parts[0].symbols", SYMBOLIC, "    symbols: {d_k: positive, sigma: positive}",
               new="    symbols: HOSTILE", refuse="must be a mapping of symbol name to assumptions",
               special={"{}": ["line 9: parts[0].answer: " + CANNOT + "expected expression cannot be read: unknown "
                               "symbol 'd_k'; this answer may use no letters (numbers only)"]}),
    line_field("parts[0].symbols.d_k", SYMBOLIC, "    symbols: {d_k: positive, sigma: positive}",
               new="    symbols: {d_k: HOSTILE, sigma: positive}", accept={"true", "[]", "null"},
               refuse="assumptions of 'd_k' must be a string or list; a symbol is positive, real, integer, "
                      "nonnegative or complex",
               special={"1e400": "unknown assumption '1e400' for symbol 'd_k'; a symbol is positive, real, integer, "
                                 "nonnegative or complex",
                        "abc": "unknown assumption 'abc' for symbol 'd_k'; a symbol is positive, real, integer, "
                               "nonnegative or complex"}),
    line_field("parts[0].answer", SYMBOLIC, '    answer: "sqrt(d_k) * sigma"', accept={"0", "-1", "1.5", "400", "10**6"},
               special={"10**400": CANNOT + "expected expression cannot be read: the number at position 1 is too long",
                        "1e400": CANNOT + "expected expression cannot be read: the number 1e400 is too large",
                        "true": CANNOT + "expected must be an expression as text, got bool",
                        "abc": CANNOT + "expected expression cannot be read: unknown symbol 'abc'; this answer may use "
                                        "d_k, sigma",
                        "[]": CANNOT + "expected must be an expression as text, got list",
                        "{}": CANNOT + "expected must be an expression as text, got dict",
                        "null": CANNOT + "expected must be an expression as text, got NoneType"}),
    line_field("parts[0].answer", MATRIX_EXPRESSION, '    answer: "softmax(Q K^T / sqrt(d_k)) V"',
               refuse=CANNOT + "expected must be a matrix expression as text",
               special={"1e400": CANNOT + "expected expression is not usable: the number 1e400 is too large",
                        "abc": CANNOT + "expected expression is not usable: unknown name 'abc'; this answer may use "
                                        "K, Q, V, d_k, d_v, n"}),
    line_field("parts[0].answer", DERIVATION, '    answer: "d_k"', refuse=DERIVATION_NOT_RIGHT,
               special={"10**400": CANNOT + "expected cannot be read: the number at position 1 is too long",
                        "1e400": CANNOT + "expected cannot be read: the number 1e400 is too large",
                        "true": CANNOT + "expected must be an expression as text",
                        "abc": CANNOT + "expected cannot be read: unknown symbol 'abc'; this answer may use d_k, k, "
                                        "k_m, q, q_m",
                        "[]": CANNOT + "expected must be an expression as text",
                        "{}": CANNOT + "expected must be an expression as text",
                        "null": CANNOT + "expected must be an expression as text"}),
    line_field("parts[0].answer", CHOICE, "    answer: A", refuse="",
               special={"0": NOT_A_CHOICE.format(0), "-1": NOT_A_CHOICE.format(-1), "1.5": NOT_A_CHOICE.format(1.5),
                        "400": NOT_A_CHOICE.format(400), "10**6": NOT_A_CHOICE.format(1000000),
                        "10**400": NOT_A_CHOICE.format("a 401-digit number"), "1e400": NOT_A_CHOICE.format("1e400"),
                        "true": NOT_A_CHOICE.format(True), "abc": NOT_A_CHOICE.format("abc"),
                        "[]": "must be a choice key or a non-empty list of keys", "{}": NOT_A_CHOICE.format({}),
                        "null": NOT_A_CHOICE.format(None)}),
    # A free-text part's answer is the rubric for the person who grades it: any value is one.
    line_field("parts[0].answer", FREE_TEXT, '    answer: "Mentions the variance of the scores."',
               accept=set(HOSTILE) - {".inf", ".nan"}),
    line_field("parts[0].diagnose", MATRIX,
               "    diagnose: {kind: attention, Q: Q, K: K, V: V, query_index: 0, quantity: weights}",
               new="    diagnose: HOSTILE", accept={"null"},
               refuse="must have exactly the fields K, Q, V, kind, quantity, query_index (and optionally mask)"),
    # --- checker options ---
    option(NUMERIC, "decimals", accept={"0"}, refuse=WHOLE_0_12),
    option(NUMERIC, "sigfigs", refuse="must be a whole number from 1 to 15"),
    option(NUMERIC, "atol", accept={"0", "1.5", "400", "10**6"}, refuse="must be a number >= 0"),
    option(NUMERIC, "rtol", accept={"0"}, refuse="must be a number from 0 to 0.5"),
    option(MATRIX, "decimals", accept={"0"}, refuse=WHOLE_0_12),
    option(MATRIX, "sigfigs", refuse="must be a whole number from 1 to 15"),
    option(MATRIX, "partial_credit", accept={"true"}, refuse=TRUE_OR_FALSE),
    option(MATRIX, "diagnose", refuse="is not an option: write the part's `diagnose` field instead"),
    option(SHAPE, "shape", accept={"true"}, refuse=TRUE_OR_FALSE, old="    options: {shape: true}"),
    option(SYMBOLIC, "symbols", refuse="must be a mapping of symbol name to assumptions",
           special={"{}": ["line 9: parts[0].answer: " + CANNOT + "expected expression cannot be read: unknown "
                           "symbol 'd_k'; this answer may use no letters (numbers only)"]}),
    option(SYMBOLIC, "allow_any_symbols", accept={"true"}, refuse=TRUE_OR_FALSE),
    option(SYMBOLIC, "time_limit", accept={"1.5"}, refuse="must be a number from 0.5 to 2"),
    option(SYMBOLIC, "forbid_symbols", accept={"[]"},
           refuse="must be a list of at most 20 symbol names, e.g. [d_model]"),
    option(SYMBOLIC, "form_credit", accept={"0"}, refuse="must be a number from 0 to 0.99"),
    option(SYMBOLIC, "product_of_powers", accept={"true"}, refuse=TRUE_OR_FALSE),
    option(SYMBOLIC, "require_simplified", accept={"true"}, refuse=TRUE_OR_FALSE),
    line_field("parts[0].options.matrices", MATRIX_EXPRESSION, "{matrices: {Q: [n, d_k], K: [n, d_k], V: [n, d_v]}",
               new="{matrices: HOSTILE", refuse=NO_MATRICES),
    line_field("parts[0].options.matrices.Q", MATRIX_EXPRESSION, "{Q: [n, d_k], K:", new="{Q: HOSTILE, K:",
               refuse="must be [rows, cols]: two sizes, each a whole number or the name of a scalar"),
    line_field("parts[0].options.matrices.Q[0]", MATRIX_EXPRESSION, "{Q: [n, d_k], K:", new="{Q: [HOSTILE, d_k], K:",
               refuse="must be a whole number from 1 to 64, or the name of a scalar",
               special={"1e400": "'1e400' is not one of the scalars (n, d_k, d_v)",
                        "abc": "'abc' is not one of the scalars (n, d_k, d_v)"}),
    line_field("parts[0].options.scalars", MATRIX_EXPRESSION, "scalars: {n: 4, d_k: 3, d_v: 2}",
               new="scalars: HOSTILE", refuse='must map names to numbers, e.g. {n: 4, d_k: "{{d_k}}"}',
               special={"{}": [f"line 10: parts[0].options.matrices.{name}[{axis}]: '{size}' is not one of the "
                                "scalars (none declared)"
                                for name, sizes in (("K", ("n", "d_k")), ("Q", ("n", "d_k")), ("V", ("n", "d_v")))
                                for axis, size in enumerate(sizes)]}),
    line_field("parts[0].options.scalars.n", MATRIX_EXPRESSION, "scalars: {n: 4,", new="scalars: {n: HOSTILE,",
               refuse=SCALAR, special={key: SCALAR_SIZE for key in ("0", "-1", "1.5", "400", "10**6")}),
    line_field("parts[0].options.start", DERIVATION, '      start: "Var(dot(q, k))"',
               refuse="",
               special={**{key: ["line 11: parts[0].options: a derivation part needs options.start, the expression the "
                                 'derivation starts from (e.g. "Var(dot(q, k))"): without it a derivation of another '
                                 "quantity with the same value would be accepted"]
                           for key in HOSTILE if key not in ("1e400", "abc", ".inf", ".nan")},
                        "1e400": "cannot be read: the number 1e400 is too large",
                        "abc": "cannot be read: unknown symbol 'abc'; this answer may use d_k, k, k_m, q, q_m"}),
    line_field("parts[0].options.random_variables", DERIVATION,
               "      random_variables: {q: {mean: 0, variance: 1}, k: {mean: 0, variance: 1}}",
               new="      random_variables: HOSTILE",
               refuse="must map each random variable to its {mean, variance}, e.g. {q: {mean: 0, variance: 1}}",
               special={"{}": ["line 13: parts[0].options.start: cannot be read: dot(q, k) takes two declared random "
                               "vectors"]}),
    line_field("parts[0].options.random_variables.q", DERIVATION, "{q: {mean: 0, variance: 1}, k:",
               new="{q: HOSTILE, k:", accept={"{}"}, refuse=RANDOM_VARIABLE),
    line_field("parts[0].options.random_variables.q.mean", DERIVATION, "{q: {mean: 0, variance: 1}, k:",
               new="{q: {mean: HOSTILE, variance: 1}, k:", accept={"0"}, refuse=MOMENT,
               special={**{key: ["line 9: parts[0].answer: " + DERIVATION_NOT_RIGHT]
                           for key in ("-1", "1.5", "400", "10**6")},
                        "1e400": ["line 11: parts[0].options: " + CANNOT + "mean of q cannot be read: the number 1e400 "
                                  "is too large"],
                        "abc": ["line 11: parts[0].options: " + CANNOT + "mean of q cannot be read: unknown symbol "
                                "'abc'; this answer may use d_k"]}),
    line_field("parts[0].options.random_variables.q.variance", DERIVATION, "{q: {mean: 0, variance: 1}, k:",
               new="{q: {mean: 0, variance: HOSTILE}, k:", refuse=VARIANCE,
               special={**{key: ["line 9: parts[0].answer: " + DERIVATION_NOT_RIGHT]
                           for key in ("0", "1.5", "400", "10**6")},
                        "1e400": ["line 11: parts[0].options: " + CANNOT + "variance of q cannot be read: the number "
                                  "1e400 is too large"],
                        "abc": ["line 11: parts[0].options: " + CANNOT + "variance of q cannot be read: unknown symbol "
                                "'abc'; this answer may use d_k"]}),
    line_field("parts[0].options.random_variables.q.distribution", DERIVATION, "{q: {mean: 0, variance: 1}, k:",
               new="{q: {mean: 0, variance: 1, distribution: HOSTILE}, k:",
               refuse="must be normal (leave it out otherwise)"),
]


def derivation_option(name: str, *, accept=(), refuse="", special=None) -> Field:
    return line_field(f"parts[0].options.{name}", DERIVATION, '      start: "Var(dot(q, k))"',
                      new=f'      start: "Var(dot(q, k))"\n      {name}: HOSTILE', accept=accept, refuse=refuse,
                      special=special)


FIELDS += [
    derivation_option("dimension",
                      refuse="must be one of the part's symbols: the number of terms of dot(q, k), e.g. d_k"),
    derivation_option("max_rules_per_step", accept={"0", "null"},
                      refuse="must be a whole number from 0 (no limit) to 4"),
    derivation_option("big_step_credit", accept={"0"},
                      refuse="must be a number from 0 to 0.5: the credit per rule of a step that skips rules may not "
                             "reach that of a step shown"),
    derivation_option("min_steps", refuse="must be a whole number from 1 to 10"),
    derivation_option("time_limit", accept={"1.5"}, refuse="must be a number from 0.5 to 2"),
    derivation_option("partial_credit", accept={"true"}, refuse=TRUE_OR_FALSE),
    derivation_option("examples", accept={"{}"},
                      refuse="must map right, wrong and hollow to lists of at most 20 derivations, each a text or a "
                             "list of lines"),
    option(CHOICE, "multiple", accept={"true"}, refuse=TRUE_OR_FALSE),
    option(CHOICE, "partial_credit", accept={"true"}, refuse=TRUE_OR_FALSE),
    option(CHOICE, "choices", refuse="is not an option: write the part's `choices` field instead"),
    option(CHOICE, "choice_feedback", refuse="is not an option: write the part's `choices` field instead"),
    option(FREE_TEXT, "max_chars", accept={"400"}, refuse="must be a whole number from 1 to 10000"),
    # --- parameters, gates, figures, placeholders ---
    line_field("parameters.a.min", NUMERIC, "  a: {generator: int_range, min: 2, max: 5}",
               new="  a: {generator: int_range, min: HOSTILE, max: 5}", accept={"0", "-1"},
               special={**NOT_AN_EXPRESSION, "1.5": "must be a whole number, got 1.5",
                        "400": "must not be above max (5): nothing could be drawn",
                        "10**6": "must not be above max (5): nothing could be drawn",
                        "10**400": "must be between -1000000000 and 1000000000, got a 401-digit number"}),
    line_field("parameters.a.max", NUMERIC, "  a: {generator: int_range, min: 2, max: 5}",
               new="  a: {generator: int_range, min: 2, max: HOSTILE}", accept={"400", "10**6"},
               special={**NOT_AN_EXPRESSION, "1.5": "must be a whole number, got 1.5",
                        "0": ["line 5: parameters.a.min: must not be above max (0): nothing could be drawn"],
                        "-1": ["line 5: parameters.a.min: must not be above max (-1): nothing could be drawn"],
                        "10**400": "must be between -1000000000 and 1000000000, got a 401-digit number"}),
    line_field("parameters.Q.shape", MATRIX, "  Q: {generator: int_matrix, shape: [3, 2], min: -1, max: 1}",
               new="  Q: {generator: int_matrix, shape: HOSTILE, min: -1, max: 1}", refuse=NOT_A_SHAPE),
    line_field("parameters.Q.shape[0]", MATRIX, "  Q: {generator: int_matrix, shape: [3, 2], min: -1, max: 1}",
               new="  Q: {generator: int_matrix, shape: [HOSTILE, 2], min: -1, max: 1}",
               special={**NOT_AN_EXPRESSION, "0": "a matrix side must be between 1 and 12, got 0",
                        "-1": "a matrix side must be between 1 and 12, got -1",
                        "1.5": "a matrix side must be a whole number, got 1.5",
                        "400": "a matrix side must be between 1 and 12, got 400",
                        "10**6": "a matrix side must be between 1 and 12, got 1000000",
                        "10**400": "a matrix side must be between 1 and 12, got a 401-digit number"}),
    line_field("parameters.V.min", MATRIX, "  V: {generator: int_matrix, shape: [3, 2], min: -2, max: 2}",
               new="  V: {generator: int_matrix, shape: [3, 2], min: HOSTILE, max: 2}", accept={"0", "-1"},
               special={**NOT_AN_EXPRESSION, "1.5": "must be a whole number, got 1.5",
                        "400": "must not be above max (2): nothing could be drawn",
                        "10**6": "must not be above max (2): nothing could be drawn",
                        "10**400": "must be between -1000000000 and 1000000000, got a 401-digit number"}),
    line_field("parameters.V.max", MATRIX, "  V: {generator: int_matrix, shape: [3, 2], min: -2, max: 2}",
               new="  V: {generator: int_matrix, shape: [3, 2], min: -2, max: HOSTILE}",
               accept={"0", "-1", "400", "10**6"},
               special={**NOT_AN_EXPRESSION, "1.5": "must be a whole number, got 1.5",
                        "10**400": "must be between -1000000000 and 1000000000, got a 401-digit number"}),
    line_field("parameters.c.from", NUMERIC, "  c: {generator: choice, from: [1, 2, 3]}",
               new="  c: {generator: choice, from: HOSTILE}", refuse=NOT_A_LIST_OF_NUMBERS),
    line_field("parameters.c.from", NUMERIC, "  c: {generator: choice, from: [1, 2, 3]}",
               new="  c: {generator: choice, from: [1, HOSTILE, 3]}", accept={"0", "-1", "1.5", "400", "10**6"},
               refuse=NOT_A_LIST_OF_NUMBERS,
               special={".inf": ["line 6: parameters.c.from[1]: " + UNSTORABLE.format(value=".inf")],
                        ".nan": ["line 6: parameters.c.from[1]: " + UNSTORABLE.format(value=".nan")]}),
    line_field("parameters.f.value", NUMERIC, "  f: {generator: fixed, value: [1, 2]}",
               new="  f: {generator: fixed, value: HOSTILE}", accept={"0", "-1", "1.5", "400", "10**6"},
               refuse="must be a number or a (nested) list of numbers"),
    line_field("parameters.g.expr", NUMERIC, '  g: {generator: derived, expr: "a + c"}',
               new="  g: {generator: derived, expr: HOSTILE}", accept={"0", "-1", "1.5", "400", "10**6"},
               special=NOT_AN_EXPRESSION),
    line_field("gates.rounding_margin", NUMERIC, "  rounding_margin: 0.05", accept={"0"},
               refuse="must be a number >= 0",
               special={key: "must be below 0.5 (it is a fraction of one last-digit unit)"
                        for key in ("1.5", "400", "10**6")}),
    line_field("gates.max_attempts", NUMERIC, "  max_attempts: 100", accept={"400"},
               refuse="must be a whole number >= 1",
               special={"10**6": "at most 1000 redraws are allowed, got 1000000; if the gates reject that many draws, "
                                 "loosen them or change the generators"}),
    line_field("gates.checks[0].limit", NUMERIC, "limit: [0, 10]", new="limit: HOSTILE",
               refuse="an entry_range gate needs limit: [low, high], low not above high"),
    line_field("gates.checks[0].limit", NUMERIC, "limit: [0, 10]", new="limit: [HOSTILE, 10]",
               accept={"0", "-1", "1.5"}, refuse="an entry_range gate needs limit: [low, high], low not above high",
               special={key: ["line 24: gates.checks[0].limit[0]: " + UNSTORABLE.format(value=key)]
                        for key in (".inf", ".nan")}),
    line_field("figures[0].decimals", MATRIX, "    decimals: 2", accept={"0"},
               refuse="must be a whole number from 0 to 6"),
    line_field("figures[0].range", MATRIX, "    range: [0, 1]", accept={"null"},
               refuse="must be [low, high]: two numbers, low below high (the lightest and the darkest colour)"),
]

PLACEHOLDER = "decimals after '|' must be a whole number from 0 to 12, got "
FIELDS.append(line_field(
    "prompt", NUMERIC, "prompt: Compute {{a}} / 3, about {{a / 3 | 2}}.",
    new="prompt: Compute {{a}} / 3, about {{a / 3 | HOSTILE}}.", accept={"0"},
    special={"-1": "placeholder {{a / 3 | -1}}: " + PLACEHOLDER + "'-1'",
             "1.5": "placeholder {{a / 3 | 1.5}}: " + PLACEHOLDER + "'1.5'",
             "400": "placeholder {{a / 3 | 400}}: " + PLACEHOLDER + "400",
             "10**6": "placeholder {{a / 3 | 1000000}}: " + PLACEHOLDER + "1000000",
             "10**400": "placeholder {{a / 3 | " + HOSTILE["10**400"] + "}}: " + PLACEHOLDER + "a 401-digit number",
             "1e400": "placeholder {{a / 3 | 1e400}}: " + PLACEHOLDER + "'1e400'",
             ".inf": "placeholder {{a / 3 | .inf}}: " + PLACEHOLDER + "'.inf'",
             ".nan": "placeholder {{a / 3 | .nan}}: " + PLACEHOLDER + "'.nan'",
             "true": "placeholder {{a / 3 | true}}: " + PLACEHOLDER + "'true'",
             "abc": 'placeholder {{a / 3 | "abc"}}: ' + PLACEHOLDER + "'\"abc\"'",
             "[]": "placeholder {{a / 3 | []}}: " + PLACEHOLDER + "'[]'",
             "{}": "placeholder {{a / 3 | {}}: " + PLACEHOLDER + "'{'",
             "null": "placeholder {{a / 3 | null}}: " + PLACEHOLDER + "'null'"}))


def cases() -> list:
    return [pytest.param(row, key, id=f"{row.new.strip()[-40:]}<-{key}") for row in FIELDS for key in HOSTILE]


def source_and_line(row: Field, key: str) -> tuple[str, int]:
    """The source with the hostile value written in, and the line it is on."""
    assert row.base.count(row.old) == 1, row.old
    start = row.base.index(row.old)
    text = row.base.replace(row.old, row.new.replace("HOSTILE", HOSTILE[key]))
    return text, text[:start + row.new.index("HOSTILE")].count("\n") + 1


def expected_issues(row: Field, key: str, line: int) -> list[str] | None:
    """The issues ``load_spec`` must report; None when the value must be accepted."""
    if key in row.accept:
        return None
    special = row.special.get(key)
    if isinstance(special, list):
        return special
    if special is None and key in (".inf", ".nan"):
        special = UNSTORABLE.format(value=key)
    return [f"line {line}: {row.path}: {special or row.refuse}"]


def right_and_wrong(part, expected, options) -> tuple[object, object]:
    """A right answer as a student writes it, and a wrong one."""
    if part.type == "numeric":
        return repr(float(expected)), repr(float(expected) * 3 + 7)
    if part.type == "matrix":
        return expected, [value + 7 for value in expected]
    if part.type in ("symbolic", "matrix_expression"):
        text = expected if isinstance(expected, str) else repr(expected)
        return text, f"2*({text}) + 1"
    if part.type == "derivation":
        steps = derivation.rule_by_rule(derivation.Canonicaliser(options), options["start"])
        return steps, steps[:-1] + [f"2*({steps[-1]})"]
    if part.type == "choice":
        return expected, "B" if expected != "B" else "A"
    return "The variance grows with d_k, so the softmax saturates.", ""


def draw_render_and_grade(spec) -> None:
    """A variant draws, renders, and grades a right answer right and a wrong one without an error."""
    params = draw_variant(spec, 0).params
    render_prompt(spec, params, part_points=part_points(spec, 10.0))
    render_solution(spec, params)
    render_figures(spec, params)
    assert text_problems(spec, params) == []
    references = reference_answers(spec, params)
    for part in spec.parts:
        render_hints(spec, params, part.key, tries=1000)
        options = part_options(spec, params, part.key)
        right, wrong = right_and_wrong(part, references[part.key], options)
        assert answers.parse(part.type, right, options).error is None
        right_grade = grade_part(spec, params, part.key, right)
        if part.type == "free_text":  # graded by a person: received, not refused
            assert right_grade.error is None and right_grade.details == {"manual": True}
        else:
            assert right_grade.correct, right_grade.feedback
        wrong_grade = grade_part(spec, params, part.key, wrong)
        assert not wrong_grade.details.get("could_not_grade"), wrong_grade.details
        assert part.type == "free_text" or wrong_grade.error is None, wrong_grade.error


@pytest.mark.parametrize("row, key", cases())
def test_a_hostile_value_is_refused_with_its_line_and_path_or_works(row, key):
    text, line = source_and_line(row, key)
    expected = expected_issues(row, key, line)
    if expected is None:
        draw_render_and_grade(load_spec(text))
        return
    with pytest.raises(SpecError) as caught:  # any other exception fails the test
        load_spec(text)
    assert [str(issue) for issue in caught.value.errors] == expected


def test_every_base_source_draws_and_grades():
    for base in (NUMERIC, TOLERANCE, MATRIX, SHAPE, SYMBOLIC, MATRIX_EXPRESSION, DERIVATION, CHOICE, FREE_TEXT):
        draw_render_and_grade(load_spec(base))


def test_a_stored_version_still_opens_with_a_value_the_new_bounds_refuse():
    """The bounds hold for a file being read; a version stored before them still opens."""
    from exercises.engine import spec_from_json, spec_to_json

    data = spec_to_json(load_spec(NUMERIC))
    data["parts"][0]["decimals"] = 13
    data["parts"][0]["points"] = 500
    assert spec_from_json(data).part("p").decimals == 13
    with pytest.raises(SpecError) as caught:
        load_spec(NUMERIC.replace("    decimals: 4", "    decimals: 13"))
    assert [str(issue) for issue in caught.value.errors] == ["line 15: parts[0].decimals: " + WHOLE_0_12]
