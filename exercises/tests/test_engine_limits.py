"""Hard caps on the work an exercise source can ask for, refused when the source is read."""

import pytest

from exercises.engine import SpecError, load_spec
from exercises.engine.source import read_yaml

BASE = """\
slug: capped
title: Capped
version: 1
parameters:
  a: {generator: int_range, min: 1, max: 9}
  M: {generator: int_matrix, shape: [2, 3], min: -2, max: 2}
prompt: Compute {{a}}.
parts:
  - key: value
    type: numeric
    answer: "a * 2"
    decimals: 0
    solution: Twice {{a}}.
gates:
  max_attempts: 50
"""


def issues(source: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(source)
    return [str(issue) for issue in caught.value.errors]


def test_the_base_source_is_valid():
    assert load_spec(BASE).max_attempts == 50


def test_a_billion_redraws_are_refused_at_read_time_with_the_line():
    assert issues(BASE.replace("max_attempts: 50", "max_attempts: 1000000000")) == [
        "line 15: gates.max_attempts: at most 1000 redraws are allowed, got 1000000000; "
        "if the gates reject that many draws, loosen them or change the generators"
    ]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("shape: [2, 3]", "shape: [2, 300]",
         "line 6: parameters.M.shape[1]: a matrix side must be between 1 and 12, got 300"),
        ("min: 1, max: 9", "min: 1, max: 99999999999",
         "line 5: parameters.a.max: must be between -1000000000 and 1000000000, got 99999999999"),
        ('answer: "a * 2"', 'answer: "' + "-" * 60 + 'a"',
         "line 11: parts[0].answer: expression nested too deeply (at most 50 levels)"),
    ],
)
def test_sizes_are_capped_with_the_line(old, new, expected):
    assert issues(BASE.replace(old, new)) == [expected]


def test_too_many_parts_are_refused():
    part = BASE[BASE.index("  - key: value"):BASE.index("gates:")]
    parts = "".join(part.replace("key: value", f"key: p{i}") for i in range(21))
    source = BASE.replace(part, parts)
    assert issues(source) == ["line 8: parts: at most 20 parts are allowed, found 21"]


def test_five_thousand_nested_brackets_are_refused_before_the_yaml_parser_recurses():
    with pytest.raises(SpecError) as caught:
        read_yaml("a: " + "[" * 5000 + "]" * 5000)
    assert str(caught.value) == "line 1: brackets nested more than 20 levels deep"


def test_brackets_inside_quotes_and_comments_do_not_count():
    data, _ = read_yaml("a: '" + "[" * 40 + "'\n# " + "{" * 40 + "\nb: [[1]]\n")
    assert data == {"a": "[" * 40, "b": [[1]]}


def test_deep_block_nesting_is_refused_with_its_line():
    source = "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 30)) + "  " * 30 + "x: 1\n"
    with pytest.raises(SpecError) as caught:
        read_yaml(source)
    assert str(caught.value).startswith("line 22: a.k1.k2")
    assert str(caught.value).endswith("nested more than 20 levels deep")
