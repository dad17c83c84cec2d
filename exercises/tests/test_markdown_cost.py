"""Author Markdown is rendered while a student's request waits, so its cost is bounded:
no shape of text costs the square of its length, and a text (and an exercise's texts
together) has a size limit, checked when the source is read, with a message naming the field.
"""

from __future__ import annotations

import time

import markdown
import pytest
from markdown.extensions.tables import TableProcessor

from exercises.engine import SpecError, load_spec
from exercises.engine.spec import MAX_EXERCISE_MARKDOWN_CHARS, MAX_MARKDOWN_CHARS, spec_from_json, spec_to_json
from exercises.markdown_math import LinearTableProcessor, render_markdown_math


def filled(unit: str, length: int) -> str:
    return (unit * (length // len(unit) + 1))[:length]


# Each shape cost Python-Markdown far more than its length before (noted: seconds per 100 KB).
SHAPES = {
    "one long paragraph": "word and more words ",
    "many short lines": "a short line of text\n",
    "unclosed brackets": "[a ",
    "unclosed image brackets": "![a ",
    "emphasis": "*a* _b_ **c** ",  # 2.8 s
    "lone stars": "*a ",
    "inline maths": "$x_1$ ",  # 3.1 s
    "unclosed dollars": "$a ",  # 2.1 s
    "nested lists": "".join("  " * (depth % 10) + "- item\n" for depth in range(10)),
    "table rows": "| 1 | 2 | 3 |\n",
    "backticks": "`a ",
    "headings": "# h\n",  # 23 s
    "headings ending in a pipe": "# h |\n",
    "headings and rules": "# h\n---\n",
    "entities": "&amp; ",
    "autolinks": "<http://a> ",
    "block quotes": "> " * 20 + "x\n",
}


def render_seconds(text: str, *, repeats: int = 3) -> float:
    """The fastest of ``repeats`` renders: the least disturbed by whatever else the machine runs."""
    render_markdown_math(text[:10])  # a converter for this thread, built outside the timing
    fastest = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        render_markdown_math(text)
        fastest = min(fastest, time.perf_counter() - started)
    return fastest


@pytest.mark.parametrize("unit", SHAPES.values(), ids=SHAPES.keys())
def test_a_text_of_the_largest_allowed_size_renders_quickly_whatever_its_shape(unit):
    text = filled(unit, MAX_MARKDOWN_CHARS)
    if unit.startswith("| 1"):
        text = "| a | b | c |\n|---|:-:|--:|\n" + text
    # About 0.1 s on the development machine; the bound leaves room for one several times slower.
    assert render_seconds(text, repeats=1) < 2.0


QUADRATIC_BEFORE = {
    # (a unit of text, what 100 KB of it cost before)
    "inline maths": ("$x_1$ ", "3.1 s"),
    "unclosed dollars": ("$a ", "2.1 s"),
    "a table row of code spans": ("`a` | ", "6.1 s"),
    "headings ending in a pipe": ("# h |\n", "about 80 s"),
    "headings": ("# h\n", "23 s"),
}


def shaped(unit: str, length: int) -> str:
    text = filled(unit, length)
    return "| a | b |\n|---|---|\n| " + text if unit.startswith("`a`") else text


@pytest.mark.parametrize("unit,before", QUADRATIC_BEFORE.values(), ids=QUADRATIC_BEFORE.keys())
def test_shapes_that_cost_the_square_of_their_length_are_now_linear(unit, before):
    # Four times the text costs about four times the time (sixteen times when it was
    # quadratic): a ratio, so a slower or busier machine does not change the verdict.
    short, long = render_seconds(shaped(unit, 25_000)), render_seconds(shaped(unit, 100_000))
    assert long / max(short, 1e-4) < 8


# --- the table reader decides exactly as Python-Markdown's own ----------------------------

TABLE_BLOCKS = [
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "a | b\n--|--\n1 | 2",
    "| a |\n|---|\n| 1 |\n| 2 |",
    "| a |\n|---|\n| 1 |\nnot a row",
    "| a |\n| - |",
    "a |\n- |",
    "| a\n|-\n| b",
    "| a | b |\n|---|",
    "| a | b |\n|--x|---|",
    "| a | b |\n|:-:|--:|\n",
    "a `|` b | c\n--- | ---\n1 | 2",
    "a \\| b | c\n--- | ---",
    "a ``x|y`` b | c\n--|--",
    "a \\`x|y` b | c\n--|--",
    "a ` b | c ` d | e\n-|-",
    "a `` b | c ` d | e\n-|-|-",
    "# h\n---\n# h",
    "# h |\n# h |\n# h |",
    "just a paragraph",
    "one line | with a pipe",
    "",
    "|\n|",
    "| a \\\\| b |\n|---|---|",
]


def table_readers():
    converter = markdown.Markdown()
    config = {"use_align_attribute": True}
    return TableProcessor(converter.parser, config), LinearTableProcessor(converter.parser, config)


@pytest.mark.parametrize("block", TABLE_BLOCKS)
def test_the_linear_table_reader_decides_as_the_original(block):
    original, linear = table_readers()
    decided = original.test(None, block)
    assert linear.test(None, block) is decided
    if decided:
        assert (linear.border, list(linear.separator)) == (original.border, list(original.separator))


@pytest.mark.parametrize("row", [
    "a | b | c", "`a | b` | c", "``a | b`` | `c` | d", "\\`a | b` | c", "a ` b | c",
    "`` a ` | b `` | c", "\\| a | b", "a \\\\| b", "```a|b``` | ``c|d`` | `e|f` | g",
    "`a` `b` | `c", "",
])
def test_the_linear_table_reader_splits_rows_as_the_original(row):
    original, linear = table_readers()
    for border in (0, 1, 3):
        original.border = linear.border = border
        assert linear._split_row(row) == original._split_row(row)


# --- the size limits, checked when the source is read -------------------------------------

SOURCE = """\
slug: long-text
title: Long text
version: 1
parameters:
  a: {generator: int_range, min: 1, max: 9}
prompt: |
  PROMPT
parts:
  - key: p
    type: numeric
    answer: "a * 2"
    decimals: 0
    solution: SOLUTION
    hints:
      - after: 1
        text: HINT
"""


def source_with(prompt: str = "Twice {{a}}?", solution: str = "It is {{a * 2}}.", hint: str = "Double it.") -> str:
    return SOURCE.replace("PROMPT", prompt).replace("SOLUTION", solution).replace("HINT", hint)


def issues(source: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(source)
    return [str(issue) for issue in caught.value.errors]


def test_texts_at_the_limits_are_accepted():
    hint = "Double it."
    solution = "s" * (MAX_EXERCISE_MARKDOWN_CHARS - MAX_MARKDOWN_CHARS - len(hint))
    spec = load_spec(source_with(prompt="p" * (MAX_MARKDOWN_CHARS - 1), solution=solution, hint=hint))
    assert len(spec.prompt) == MAX_MARKDOWN_CHARS  # the block's text and its newline
    assert len(spec.prompt) + len(spec.parts[0].solution) + len(hint) == MAX_EXERCISE_MARKDOWN_CHARS


def test_a_text_longer_than_its_limit_is_refused_with_its_line():
    assert issues(source_with(solution="s" * 10_001)) == [
        "line 13: parts[0].solution: must be at most 10000 characters long, got 10001 "
        "(longer Markdown takes too long to show)"
    ]


def test_texts_longer_than_the_limit_together_are_refused_on_the_text_that_passes_it():
    assert issues(source_with(prompt="p" * 9_000, solution="s" * 9_000, hint="h" * 9_000)) == [
        "line 16: parts[0].hints[0].text: the exercise's texts (prompts, hints, solutions, choices, feedback) "
        "reach 27001 characters with this one; at most 20000 are allowed together, as a page shows them at once"
    ]


def test_a_stored_version_saved_before_the_limits_still_opens():
    data = spec_to_json(load_spec(source_with()))
    data["prompt"] = "p" * 50_000
    assert spec_from_json(data).prompt == "p" * 50_000
    assert MAX_EXERCISE_MARKDOWN_CHARS == 2 * MAX_MARKDOWN_CHARS
