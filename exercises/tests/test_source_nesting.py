"""The YAML reader refuses deep nesting before PyYAML's composer recurses into it, and
counts only real nesting: a "[" in a prompt's text is a character, not a level."""

from __future__ import annotations

import pytest

from exercises.engine import SpecError
from exercises.engine.source import MAX_NESTING, read_yaml

ACCEPTED = [
    # (case, source, the value of "a")
    ("21 unclosed [ in a | block", "a: |\n  " + "[" * 21 + "\n", "[" * 21 + "\n"),
    ("5,000 unclosed [ in a | block", "a: |\n  see " + "[" * 5000 + "\n", "see " + "[" * 5000 + "\n"),
    ("unclosed [ and { in a > block", "a: >\n  " + "[{" * 30 + "\n", "[{" * 30 + "\n"),
    ("[ inside plain text", "a: see " + "[" * 30, "see " + "[" * 30),
    ("[ in a plain text of several lines", "a: one [[[[[[[[[[\n  two [[[[[[[[[[[[[[\n", "one [[[[[[[[[[ two [[[[[[[[[[[[[["),
    ("[ in single quotes", "a: '" + "[" * 40 + "'", "[" * 40),
    ("[ in double quotes", 'a: "' + "[" * 40 + '"', "[" * 40),
    ("[ in a comment", "# " + "[" * 40 + "\na: 1", 1),
    ("Markdown links in a prompt", "a: |\n  " + "[x](y) [z][w] " * 50 + "\n", "[x](y) [z][w] " * 50 + "\n"),
    ("20 brackets deep under the top mapping", "a: " + "[" * 20 + "]" * 20, [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]),
    ("a flow list of many shallow lists", "a: [" + "[1], " * 500 + "[1]]", [[1]] * 501),
]


@pytest.mark.parametrize("case,source,value", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_text_that_only_looks_nested_is_read(case, source, value):
    data, _ = read_yaml(source)
    assert data["a"] == value


REFUSED = [
    # (case, source, the one issue)
    ("21 brackets deep", "a: " + "[" * 21 + "]" * 21, "line 1: brackets nested more than 20 levels deep"),
    ("5,000 brackets deep", "a: " + "[" * 5000 + "]" * 5000, "line 1: brackets nested more than 20 levels deep"),
    ("5,000 unclosed brackets", "a: " + "[" * 5000, "line 1: brackets nested more than 20 levels deep"),
    ("braces, on a later line", "x: 1\na: " + "{b: " * 25 + "1" + "}" * 25,
     "line 2: brackets nested more than 20 levels deep"),
    ("5,000 dashes on one line", "- " * 5000 + "x",
     "line 1: [0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested more than 20 levels deep"),
    ("block mappings 30 deep", "".join("  " * i + f"k{i}:\n" for i in range(30)) + "  " * 30 + "v: 1\n",
     "line 22: k0.k1.k2.k3.k4.k5.k6.k7.k8.k9.k10.k11.k12.k13.k14.k15.k16.k17.k18.k19.k20: nested more than 20 levels deep"),
    ("a block list inside flow brackets", "a:\n  - " + "[" * 25 + "]" * 25,
     "line 2: brackets nested more than 20 levels deep"),
]


@pytest.mark.parametrize("case,source,issue", REFUSED, ids=[c[0] for c in REFUSED])
def test_deep_nesting_is_refused_with_its_line(case, source, issue):
    with pytest.raises(SpecError) as caught:
        read_yaml(source)
    assert [str(error) for error in caught.value.errors] == [issue]


def test_a_syntax_error_is_still_reported_as_one():
    with pytest.raises(SpecError) as caught:
        read_yaml("a: [[[\n")
    assert str(caught.value) == "line 2: YAML syntax error: expected the node content, but found '<stream end>'"


def test_the_limit_is_twenty():
    assert MAX_NESTING == 20


def test_an_exercise_whose_prompt_block_has_unclosed_brackets_loads():
    from exercises.engine import load_spec

    source = (
        "slug: brackets\ntitle: Brackets\nversion: 1\n"
        "parameters:\n  a: {generator: int_range, min: 1, max: 9}\n"
        "prompt: |\n  Intervals " + "[0, " * 25 + "{{a}}.\n"
        "parts:\n  - key: p\n    type: numeric\n    answer: \"a\"\n    decimals: 0\n    solution: It is {{a}}.\n"
    )
    assert load_spec(source).prompt == "Intervals " + "[0, " * 25 + "{{a}}.\n"
