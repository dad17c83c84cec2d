"""The exercise format: valid files load, invalid ones are refused with exact, line-precise messages."""

import pytest

from exercises.engine import SpecError, load_spec, spec_from_json, spec_to_json

VALID = """\
slug: tiny
title: Tiny exercise
version: 2
parameters:
  n: {generator: int_range, min: 2, max: 4}
  X: {generator: int_matrix, shape: [n, 3], min: 0, max: 2}
  total: {generator: derived, expr: "sum(X)"}
prompt: |
  Add up the entries of $X = {{X}}$.
parts:
  - key: total
    type: numeric
    answer: "sum(X)"
    decimals: 0
    solution: |
      The sum is {{total}}.
"""


def errors_of(text):
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    return [str(issue) for issue in caught.value.errors]


def test_valid_spec_loads_with_its_fields():
    spec = load_spec(VALID)
    assert (spec.slug, spec.title, spec.version) == ("tiny", "Tiny exercise", 2)
    assert [p.name for p in spec.parameters] == ["n", "X", "total"]
    assert spec.part("total").decimals == 0


def test_unknown_generator_names_line_path_and_known_generators():
    text = VALID.replace("generator: int_matrix", "generator: intmatrix")
    assert errors_of(text) == [
        "line 6: parameters.X.generator: unknown generator 'intmatrix'; "
        "known: int_matrix, int_range, choice, derived, fixed"
    ]


def test_unknown_name_in_expression_is_caught_at_load_time():
    text = VALID.replace('answer: "sum(X)"', 'answer: "sum(Y) + n"')
    assert errors_of(text) == ["line 13: parts[0].answer: unknown name 'Y' in 'sum(Y) + n'"]


def test_parameter_may_only_use_earlier_parameters():
    text = VALID.replace("shape: [n, 3]", "shape: [n, total]")
    assert errors_of(text) == ["line 6: parameters.X.shape[1]: unknown name 'total' in 'total'"]


def test_missing_part_field_is_reported_on_the_part():
    text = VALID.replace("    solution: |\n      The sum is {{total}}.\n", "")
    assert errors_of(text) == ["line 11: parts[0]: missing required field 'solution'"]


def test_unknown_name_inside_a_placeholder_points_at_its_line():
    text = VALID.replace("The sum is {{total}}.", "The sum is {{totl}}.")
    assert errors_of(text) == [
        "line 16: parts[0].solution: placeholder {{totl}}: unknown name 'totl' in 'totl'"
    ]


def test_every_problem_is_reported_in_file_order():
    text = VALID.replace("version: 2", "version: zero").replace("type: numeric", "type: number")
    assert errors_of(text) == [
        "line 3: version: must be a whole number >= 1",
        "line 12: parts[0].type: unknown answer type 'number'; "
        "known: numeric, matrix, symbolic, matrix_expression, derivation, choice, free_text",
    ]


def test_the_largest_version_loads():
    assert load_spec(VALID.replace("version: 2", "version: 1000000")).version == 1_000_000


@pytest.mark.parametrize(
    ("version", "errors"),
    [
        ("1000001", ["line 3: version: must be at most 1000000, got a number of 7 digits"]),
        ("9" * 4000, ["line 3: version: must be at most 1000000, got a number of 4000 digits"]),
        ("0", ["line 3: version: must be a whole number >= 1"]),
        ("2.5", ["line 3: version: must be a whole number >= 1"]),
    ],
)
def test_a_version_beyond_what_an_author_counts_to_is_refused(version, errors):
    assert errors_of(VALID.replace("version: 2", f"version: {version}")) == errors


def test_yaml_syntax_error_has_a_line():
    assert errors_of("slug: a\ntitle: [unclosed\n") == [
        "line 3: YAML syntax error: expected ',' or ']', but got '<stream end>'"
    ]


def test_non_mapping_and_empty_files_are_refused_clearly():
    assert errors_of("") == ["line 1: the file is empty"]
    assert errors_of("- just a list\n") == ["line 1: an exercise must be a mapping"]


def test_duplicate_key_is_refused():
    text = VALID.replace("version: 2\n", "version: 2\nversion: 3\n")
    assert errors_of(text) == ["line 4: version: duplicate key"]


def test_hostile_expression_in_a_spec_is_refused_at_load():
    text = VALID.replace('answer: "sum(X)"', "answer: \"__import__('os')\"")
    assert errors_of(text) == [
        "line 13: parts[0].answer: name '__import__' is not allowed (names may not start with '_')"
    ]


def test_json_round_trip_gives_an_equal_spec():
    spec = load_spec(VALID)
    again = spec_from_json(spec_to_json(spec))
    assert again == spec


def test_spec_from_json_revalidates_without_lines():
    data = spec_to_json(load_spec(VALID))
    data["parts"][0]["type"] = "essay"
    with pytest.raises(SpecError) as caught:
        spec_from_json(data)
    assert str(caught.value) == (
        "parts[0].type: unknown answer type 'essay'; "
        "known: numeric, matrix, symbolic, matrix_expression, derivation, choice, free_text"
    )


def test_stored_spec_keeps_parameter_order_when_the_store_sorts_keys():
    import json

    from exercises.engine import draw_variant, load_spec, spec_from_json, spec_to_json

    source = open("exercises/bank/attention-weights-one-query.yaml").read()
    spec = load_spec(source)
    stored = json.loads(json.dumps(spec_to_json(spec), sort_keys=True))  # as jsonb returns it
    restored = spec_from_json(stored)
    assert [p.name for p in restored.parameters] == [p.name for p in spec.parameters]
    assert draw_variant(restored, 12345).params == draw_variant(spec, 12345).params


def test_a_control_character_is_an_issue_on_its_line_not_a_crash():
    with pytest.raises(SpecError) as error:
        load_spec("slug: x\ntitle: bad \x0f char\n")
    assert [str(issue) for issue in error.value.errors] == [
        "line 2: character #x000f is not allowed in YAML; remove it"
    ]


DERIVATION = """\
slug: derive
title: Derive
version: 1
parameters: {}
prompt: Derive it.
parts:
  - key: variance
    type: derivation
    answer: "d_k"
    symbols: {d_k: positive}
    options:
      random_variables: {q: {mean: 0, variance: 1}, k: {mean: 0, variance: 1}}
      start: "Var(dot(q, k))"
    solution: d_k.
"""


def test_a_derivation_part_loads_with_its_start():
    assert load_spec(DERIVATION).part("variance").options["start"] == "Var(dot(q, k))"


def test_a_derivation_part_without_a_start_is_refused_on_its_line():
    text = DERIVATION.replace('      start: "Var(dot(q, k))"\n', "")
    assert errors_of(text) == [
        "line 11: parts[0].options: a derivation part needs options.start, the expression the derivation starts "
        'from (e.g. "Var(dot(q, k))"): without it a derivation of another quantity with the same value would be accepted']
    no_options = "\n".join(line for line in DERIVATION.splitlines() if not line.startswith("      ") and "options:" not in line)
    assert errors_of(no_options + "\n")[0].startswith("line 7: parts[0].options: a derivation part needs options.start")


@pytest.mark.parametrize("option, value, message", [
    ("big_step_credit", "0.9", "must be a number from 0 to 0.5"),
    ("big_step_credit", "yes", "must be a number from 0 to 0.5"),
    ("max_rules_per_step", "7", "must be a whole number from 0 (no limit) to 4"),
    ("min_steps", "0", "must be a whole number from 1 to 10"),
])
def test_derivation_options_that_would_let_reasoning_be_skipped_are_refused(option, value, message):
    text = DERIVATION.replace('      start: "Var(dot(q, k))"\n', f'      start: "Var(dot(q, k))"\n      {option}: {value}\n')
    (issue,) = errors_of(text)
    assert issue.startswith(f"line 14: parts[0].options.{option}: {message}")


def test_the_same_issue_is_reported_once_in_file_order():
    from exercises.engine.errors import SpecError, SpecIssue

    repeated = SpecIssue(7, "parameters.Q", "is not a matrix")
    error = SpecError([repeated, SpecIssue(2, "slug", "is required"), repeated, SpecIssue(7, "parameters.Q", "is not a matrix")])
    assert [str(issue) for issue in error.errors] == ["line 2: slug: is required", "line 7: parameters.Q: is not a matrix"]
    assert str(error) == "line 2: slug: is required\nline 7: parameters.Q: is not a matrix"


def test_a_whole_number_too_large_for_a_float_is_refused_not_a_crash():
    text = VALID.replace("    decimals: 0\n", "    decimals: 0\n    points: " + "9" * 400 + "\n")
    assert errors_of(text) == ["line 15: parts[0].points: must be a number from 0 to 100"]
