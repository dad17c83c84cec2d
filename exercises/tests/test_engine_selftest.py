"""The self-test flags a part whose own reference answer is one of the mistakes the part
diagnoses (e.g. weights written without the √d_k), on every variant, instead of passing
with one answer fewer checked."""

from pathlib import Path

import pytest

import exercises
from exercises import engine
from exercises.engine.selftest import self_test_variant

WORKED_EXAMPLE = (Path(exercises.__file__).parent / "bank" / "attention-weights-one-query.yaml").read_text()
WEIGHTS = 'answer: "attention(Q, K, V).weights[q]"'
OUTPUT = 'answer: "attention(Q, K, V).output[q]"'
DRAWS = [(seed, None) for seed in range(5)] + [(0, "chapter")]


def flagged(part: str, code: str, label: str) -> str:
    return (
        f"the reference answer of part {part} matches the misconception '{code}' ({label}) the part "
        "diagnoses: students who make that mistake would be marked right, and the right answer wrong; "
        "check the part's answer expression"
    )


def self_tests(source: str) -> list[tuple[int, list[str]]]:
    spec = engine.load_spec(source)
    results = []
    for seed, name in DRAWS:
        result = self_test_variant(spec, engine.draw_variant(spec, seed, name=name).params)
        results.append((result.checked, result.failures))
    return results


def test_the_worked_example_passes_with_twenty_answers_checked():
    assert self_tests(WORKED_EXAMPLE) == [(20, [])] * len(DRAWS)


# (what the instructor wrote instead of the reference, the failure on every variant)
WRONG_REFERENCES = [
    ("weights without the √d_k", WEIGHTS, 'answer: "softmax(scores_q)"',
     flagged("weights", "no_scaling", "left out √d_k")),
    ("weights divided by d_k", WEIGHTS, 'answer: "softmax(scores_q / 4)"',
     flagged("weights", "divided_by_d_k", "divided by d_k, not √d_k")),
    ("weights without the scale, through attention()", WEIGHTS, 'answer: "attention(Q, K, V, scale=1).weights[q]"',
     flagged("weights", "no_scaling", "left out √d_k")),
    ("output from unscaled weights", OUTPUT, 'answer: "softmax(scores_q) @ V"',
     flagged("output", "raw_weights_used", "used the unscaled weights")),
]


@pytest.mark.parametrize(("what", "old", "new", "failure"), WRONG_REFERENCES, ids=[w[0] for w in WRONG_REFERENCES])
def test_a_reference_that_is_a_diagnosed_mistake_fails_every_variant_and_keeps_the_count(what, old, new, failure):
    assert self_tests(WORKED_EXAMPLE.replace(old, new)) == [(20, [failure])] * len(DRAWS)


def test_a_part_without_diagnosis_is_not_checked_against_mistakes():
    undiagnosed = WORKED_EXAMPLE.replace(WEIGHTS, 'answer: "softmax(scores_q)"').replace(
        "    diagnose: {kind: attention, Q: Q, K: K, V: V, query_index: q, quantity: weights}\n", "")
    assert self_tests(undiagnosed) == [(19, [])] * len(DRAWS)


TIED_SOURCE = """
slug: tied
title: Which key
version: 1
parameters:
  w: {generator: choice, from: [[0.5, 0.5, 0.0], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]}
prompt: "Weights {{w}}."
parts:
  - key: top
    type: numeric
    prompt: "Which key has the largest weight?"
    answer: "argmax(w)"
    decimals: 0
    solution: "Key {{argmax(w)}}."
  - key: flat
    type: choice
    prompt: "Which key has the smallest weight?"
    choices: [{key: k0, text: "key 0"}, {key: k1, text: "key 1"}, {key: k2, text: "key 2"}]
    answer_index: "argmin(w)"
    solution: "Key {{argmin(w)}}."
"""


@pytest.mark.parametrize(("w", "failures"), [
    ([0.5, 0.5, 0.0], ["top: argmax(w) is tied on this variant (indices 0, 1 share the value 0.5): a student who "
                       "names another of them is marked wrong; add a gate with kind: unique_max"]),
    ([0.2, 0.5, 0.3], []),
    ([0.1, 0.1, 0.8], ["flat: argmin(w) is tied on this variant (indices 0, 1 share the value 0.1): a student who "
                       "names another of them is marked wrong; add a gate with kind: unique_max"]),
])
def test_an_index_answer_with_a_tied_extreme_fails_the_self_test(w, failures):
    spec = engine.load_spec(TIED_SOURCE)
    result = self_test_variant(spec, {"w": w})
    assert [failure for failure in result.failures if "tied" in failure] == failures
