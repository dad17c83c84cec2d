"""Variants: stable keyed seeds, deterministic draws, quality gates with recorded reasons."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from exercises.engine import VariantError, draw_variant, load_spec, variant_seed
from exercises.engine.variants import DrawStream

REPO = Path(__file__).resolve().parents[2]
BANK_FILE = REPO / "exercises" / "bank" / "attention-weights-one-query.yaml"
SEED_ARGS = dict(secret="s3cret", course="ml-101", assignment="hw1", student="42", slug="attention-weights-one-query", version=1)


def test_variant_seed_is_a_known_63_bit_value():
    seed = variant_seed(**SEED_ARGS)
    assert seed == 682501978858274089
    assert 0 <= seed < 2**63


@pytest.mark.parametrize("field", ["secret", "course", "assignment", "student", "slug"])
def test_every_input_changes_the_seed(field):
    assert variant_seed(**{**SEED_ARGS, field: "other"}) != variant_seed(**SEED_ARGS)


def test_version_changes_the_seed():
    assert variant_seed(**{**SEED_ARGS, "version": 2}) != variant_seed(**SEED_ARGS)


def test_empty_secret_is_refused():
    with pytest.raises(ValueError, match="non-empty secret"):
        variant_seed(**{**SEED_ARGS, "secret": ""})


def test_same_seed_same_variant():
    spec = load_spec(BANK_FILE.read_text())
    assert draw_variant(spec, 77) == draw_variant(spec, 77)
    assert draw_variant(spec, 77).params != draw_variant(spec, 78).params


def test_seed_and_variant_are_stable_across_processes():
    script = (
        "import json; from exercises.engine import load_spec, draw_variant, variant_seed;"
        f"seed = variant_seed(**{SEED_ARGS!r});"
        f"spec = load_spec(open({str(BANK_FILE)!r}).read());"
        "print(json.dumps([seed, draw_variant(spec, seed).params]))"
    )
    output = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout
    seed, params = json.loads(output)
    spec = load_spec(BANK_FILE.read_text())
    assert seed == variant_seed(**SEED_ARGS)
    assert params == draw_variant(spec, seed).params


def test_draw_stream_is_uniform_enough_and_in_range():
    stream = DrawStream(5, 0)
    draws = [stream.integer(0, 2) for _ in range(3000)]
    assert set(draws) == {0, 1, 2}
    assert all(900 < draws.count(v) < 1100 for v in (0, 1, 2))


DEGENERATE = """\
slug: degenerate
title: Degenerate on purpose
version: 1
parameters:
  a: {generator: int_range, min: 0, max: 3}
prompt: "Give {{a}}."
gates:
  max_attempts: 40
  checks:
    - kind: require
      expr: "a == 2"
      reason: only a = 2 is acceptable
parts:
  - key: a
    type: numeric
    answer: "a"
    decimals: 0
    solution: "It is {{a}}."
"""


def test_degenerate_draws_are_redrawn_with_reasons_recorded():
    spec = load_spec(DEGENERATE)
    draw = draw_variant(spec, 3)
    assert draw.params == {"a": 2}
    assert draw.attempts == len(draw.rejections) + 1
    assert draw.attempts > 1
    assert set(draw.rejections) == {"require: only a = 2 is acceptable"}


def refusal_of_a_gate_that_never_passes() -> VariantError:
    spec = load_spec(DEGENERATE.replace('"a == 2"', '"a == 7"').replace("a = 2", "a = 7"))
    with pytest.raises(VariantError) as caught:
        draw_variant(spec, 3)
    return caught.value


def test_gate_that_never_passes_ends_in_a_clear_error():
    refusal = refusal_of_a_gate_that_never_passes()
    assert str(refusal) == (
        "'degenerate': no acceptable variant for seed 3 in 40 attempts; "
        "last rejection: require: only a = 7 is acceptable"
    )
    assert len(refusal.rejections) == 40


def test_a_draw_whose_redraws_outlast_the_budget_ends_in_a_clear_error(monkeypatch):
    """Each attempt here takes 0.7 s of CPU: the draw stops after the attempt that
    passes the 2 s budget instead of running all 40 (as a page drawing on a first visit must)."""
    from exercises.engine import variants

    clock = iter(0.7 * tick for tick in range(100))
    monkeypatch.setattr(variants, "thread_time", lambda: next(clock))
    refusal = refusal_of_a_gate_that_never_passes()
    assert str(refusal) == (
        "'degenerate': no acceptable variant for seed 3 within 2 s (3 attempts); "
        "last rejection: require: only a = 7 is acceptable"
    )
    assert len(refusal.rejections) == 3


def test_rounding_boundary_gate_rejects_half_units():
    spec = load_spec(DEGENERATE.replace('answer: "a"', 'answer: "a + 0.5"').replace('"a == 2"', '"a >= 0"'))
    with pytest.raises(VariantError) as caught:
        draw_variant(spec, 3)
    assert caught.value.rejections[0].startswith(
        "rounding boundary: part a value "
    )


SATURATING = """\
slug: saturating
title: Saturates for large scales
version: 1
parameters:
  s: {generator: choice, from: [1, 20]}
  Q: {generator: derived, expr: "s * eye(2)"}
prompt: "Attend with {{Q}}."
parts:
  - key: weights
    type: matrix
    answer: "attention(Q, Q, Q).weights[0]"
    diagnose: {kind: attention, Q: Q, K: Q, V: Q, query_index: 0, quantity: weights}
    solution: "See above."
"""


def test_saturated_query_is_rejected_by_default():
    spec = load_spec(SATURATING)
    draws = [draw_variant(spec, seed) for seed in range(8)]
    assert {draw.params["s"] for draw in draws} == {1}
    reasons = {reason for draw in draws for reason in draw.rejections}
    assert reasons == {"saturated: top weight 1.0000 > 0.95 for query 0"}


def test_bad_seed_is_refused():
    spec = load_spec(DEGENERATE)
    with pytest.raises(ValueError, match="seed must be a whole number"):
        draw_variant(spec, -1)


def test_unknown_named_variant_is_refused():
    spec = load_spec(DEGENERATE)
    with pytest.raises(ValueError, match="'degenerate' has no variant named 'chapter'; known: none"):
        draw_variant(spec, 0, name="chapter")
