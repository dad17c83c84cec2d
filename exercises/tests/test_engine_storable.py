"""Values a YAML file can hold but JSON (PostgreSQL jsonb) cannot store, and fields longer
than the database columns they are copied into: refused when the source is read, with the
line and path of each, so no path that stores a spec fails at the database."""

import pytest

from exercises.engine import SpecError, load_spec, spec_from_json, spec_to_json
from exercises.engine.spec import MAX_PART_KEY_LENGTH, MAX_SLUG_LENGTH, MAX_TITLE_LENGTH

BASE = """\
slug: storable
title: Storable
version: 1
parameters:
  a: {generator: int_range, min: 1, max: 9}
prompt: Compute {{a}}.
parts:
  - key: value
    type: numeric
    answer: "a * 2"
    decimals: 0
    solution: Twice {{a}}.
"""
NOT_FINITE = "write a finite number (NaN, infinity and numbers beyond ±1.8e308 cannot be stored)"
NUL = "contains a NUL character (U+0000), which cannot be stored; remove it"


def surrogate(code: str) -> str:
    return (f"contains U+{code}, half of a UTF-16 surrogate pair, which is not a character; "
            "write the character itself (or \\U and its 8-digit code point)")


def issues(source: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(source)
    return [str(issue) for issue in caught.value.errors]


def with_part_field(line: str) -> str:
    return BASE.replace("    decimals: 0\n", f"    decimals: 0\n    {line}\n")


# (what, source, every issue exactly)
UNSTORABLE = [
    ("NaN in a named variant", BASE + "variants: {v1: {a: .nan}}\n",
     [f"line 13: variants.v1.a: is not a finite number (.nan); {NOT_FINITE}"]),
    ("infinity in a named variant", BASE + "variants: {v1: {a: .inf}}\n",
     [f"line 13: variants.v1.a: is not a finite number (.inf); {NOT_FINITE}"]),
    ("minus infinity, capitalised", BASE + "variants: {v1: {a: -.Inf}}\n",
     [f"line 13: variants.v1.a: is not a finite number (-.inf); {NOT_FINITE}"]),
    ("a number beyond the float range", BASE + "variants: {v1: {a: 1.0e+999}}\n",
     [f"line 13: variants.v1.a: is not a finite number (.inf); {NOT_FINITE}"]),
    ("NaN in a fixed parameter's list", BASE.replace("parameters:\n", "parameters:\n  c: {generator: fixed, value: [1, .nan]}\n"),
     [f"line 5: parameters.c.value[1]: is not a finite number (.nan); {NOT_FINITE}"]),
    ("NaN in a choice generator", BASE.replace("parameters:\n", "parameters:\n  c: {generator: choice, from: [1, .nan]}\n"),
     [f"line 5: parameters.c.from[1]: is not a finite number (.nan); {NOT_FINITE}"]),
    ("infinite tolerance", with_part_field("tolerance: {abs: .inf}"),
     [f"line 12: parts[0].tolerance.abs: is not a finite number (.inf); {NOT_FINITE}"]),
    # One message for the field, not also "must be a number >= 0".
    ("NaN points", with_part_field("points: .nan"),
     [f"line 12: parts[0].points: is not a finite number (.nan); {NOT_FINITE}"]),
    ("NaN gate limit", BASE + "gates:\n  checks:\n    - {kind: max_weight, expr: \"[a, 1]\", limit: .nan}\n",
     [f"line 15: gates.checks[0].limit: is not a finite number (.nan); {NOT_FINITE}"]),
    ("NaN rounding margin", BASE + "gates: {rounding_margin: .nan}\n",
     [f"line 13: gates.rounding_margin: is not a finite number (.nan); {NOT_FINITE}"]),
    ("NaN in an option", with_part_field("options: {rtol: .nan}"),
     [f"line 12: parts[0].options.rtol: is not a finite number (.nan); {NOT_FINITE}"]),
    ("NUL in the title", BASE.replace("title: Storable", 'title: "Stor\\0able"'),
     [f"line 2: title: {NUL}"]),
    ("NUL written as \\x00 in the solution", BASE.replace("solution: Twice {{a}}.", 'solution: "Twice\\x00 {{a}}."'),
     [f"line 12: parts[0].solution: {NUL}"]),
    ("NUL in a key", with_part_field('options: {"a\\0b": 1}'),
     [f"line 12: parts[0].options: the key 'a\\u0000b' {NUL}"]),
    ("a lone surrogate in the prompt", BASE.replace("prompt: Compute {{a}}.", 'prompt: "Compute \\ud800 {{a}}."'),
     [f"line 6: prompt: {surrogate('D800')}"]),
    ("a surrogate pair written as two escapes", BASE.replace("title: Storable", 'title: "\\uD83D\\uDE00"'),
     [f"line 2: title: {surrogate('D83D')}"]),
    ("an unquoted date", with_part_field("options: {due: 2024-01-31}"),
     ["line 12: parts[0].options.due: is read as a date (2024-01-31); put it in quotes to make it text"]),
    ("an unquoted timestamp", with_part_field("symbols: {t: 2024-01-31 10:00:00}"),
     ["line 12: parts[0].symbols.t: is read as a date (2024-01-31T10:00:00); put it in quotes to make it text"]),
    ("binary data", with_part_field("symbols: {x: !!binary aGk=}"),
     ["line 12: parts[0].symbols.x: is binary data (!!binary), which an exercise file cannot hold"]),
    ("a hexadecimal number of 4,000 digits", with_part_field("options: {x: 0x" + "f" * 4000 + "}"),
     ["line 12: parts[0].options.x: is a whole number too long to store (more than 4300 digits)"]),
    ("several at once, each with its line", BASE.replace("title: Storable", 'title: "\\0"') + "variants: {v1: {a: .nan}}\n",
     [f"line 2: title: {NUL}", f"line 13: variants.v1.a: is not a finite number (.nan); {NOT_FINITE}"]),
]

TOO_LONG = [
    ("a slug of 51 characters", BASE.replace("slug: storable", "slug: " + "s" * 51),
     ["line 1: slug: must be at most 50 characters long, got 51"]),
    ("a title of 201 characters", BASE.replace("title: Storable", "title: " + "t" * 201),
     ["line 2: title: must be at most 200 characters long, got 201"]),
    ("a part key of 65 characters", BASE.replace("key: value", "key: " + "k" * 65),
     ["line 8: parts[0].key: must be at most 64 characters long, got 65"]),
]


@pytest.mark.parametrize(("what", "source", "expected"), UNSTORABLE + TOO_LONG,
                         ids=[what for what, *_ in UNSTORABLE + TOO_LONG])
def test_unstorable_or_too_long_fields_are_refused_with_line_and_path(what, source, expected):
    assert issues(source) == expected


# (what, source, the stored value that must come back exactly)
STORABLE = [
    ("a slug of exactly 50 characters", BASE.replace("slug: storable", "slug: " + "s" * 50), ("slug",), "s" * 50),
    ("a title of exactly 200 characters", BASE.replace("title: Storable", "title: " + "t" * 200), ("title",), "t" * 200),
    ("a part key of exactly 64 characters", BASE.replace("key: value", "key: " + "k" * 64), ("parts", 0, "key"), "k" * 64),
    ("the largest float", with_part_field("tolerance: {abs: 1.7976931348623157e+308}"),
     ("parts", 0, "tolerance", "abs"), 1.7976931348623157e308),
    # (as a parameter's value it is refused: no draw can compute with it, test_spec_hostile_options.py)
    # (a free-text part's answer is the rubric for the person who grades it: any value is one)
    ("a 4,000-digit whole number", BASE + "  - {key: why, type: free_text, answer: " + "9" * 4000 + ", solution: x}\n",
     ("parts", 1, "answer"), int("9" * 4000)),
    ("an emoji written as \\U", BASE.replace("title: Storable", 'title: "\\U0001F600 and é"'), ("title",), "\U0001F600 and é"),
    ("a quoted date", with_part_field('hints: [{after: 1, text: "2024-01-31"}]'), ("parts", 0, "hints", 0, "text"),
     "2024-01-31"),
]


@pytest.mark.parametrize(("what", "source", "path", "value"), STORABLE, ids=[what for what, *_ in STORABLE])
def test_storable_values_load_and_survive_the_json_round_trip(what, source, path, value):
    stored = spec_to_json(load_spec(source))
    found = stored
    for step in path:
        found = found[step]
    assert found == value
    assert spec_from_json(stored).data == load_spec(source).data


def test_the_length_limits_are_the_database_columns():
    from exercises.models import Exercise
    from grading.models import Submission
    from instructor.models import Rubric
    from review.models import ReviewCard

    assert Exercise._meta.get_field("slug").max_length == MAX_SLUG_LENGTH == 50
    assert Exercise._meta.get_field("title").max_length == MAX_TITLE_LENGTH == 200
    for model in (Submission, Rubric, ReviewCard):
        assert model._meta.get_field("part").max_length == MAX_PART_KEY_LENGTH == 64, model


def test_a_stored_spec_from_before_the_length_limits_still_opens():
    # Part keys only ever lived in the spec's JSON, so an old version may have a longer
    # one; rebuilding its spec must not fail (its source is refused only when saved again).
    stored = spec_to_json(load_spec(BASE))
    stored["parts"][0]["key"] = "k" * 65
    assert spec_from_json(stored).parts[0].key == "k" * 65
    assert issues(BASE.replace("key: value", "key: " + "k" * 65)) == [
        "line 8: parts[0].key: must be at most 64 characters long, got 65"
    ]
