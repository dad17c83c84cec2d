"""Targeted variants: on each of 200 seeds the misconception's answer misses the right one
by more than the part's tolerance — the slip recomputed here from its definition."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from exercises.engine import load_spec, part_options
from exercises.engine.targeting import SEPARATION_FACTOR, draw_targeted_variant, targeted_seed
from grading.core.separation import slip_separation

BANK = Path(__file__).resolve().parents[2] / "exercises" / "bank"


def bank_spec(slug: str):
    return load_spec((BANK / f"{slug}.yaml").read_text())


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def by_definition(diagnose: dict, *, scale: float) -> dict:
    """Weights and output of one query row, the scores multiplied by ``scale`` (1 for the
    no-scaling slip, 1/√d_k for the right method)."""
    Q, K, V = (np.asarray(diagnose[name], dtype=float) for name in ("Q", "K", "V"))
    weights = softmax_rows((Q @ K.T) * scale)  # (n, d_k) x (d_k, m) -> (n, m)
    output = weights @ V  # (n, m) x (m, d_v) -> (n, d_v)
    return {"weights": weights[diagnose["query_index"]], "output": output[diagnose["query_index"]]}


@pytest.mark.parametrize(
    "slug,part_key", [
        ("attention-weights-one-query", "weights"),
        ("attention-weights-one-query", "output"),
        ("equal-keys", "weights"),
        ("scaled-vs-unscaled-softmax", "scaled_weights"),
    ],
)
def test_on_200_seeds_the_no_scaling_slip_is_far_outside_the_tolerance(slug, part_key):
    spec = bank_spec(slug)
    tolerance = 0.5 * 10.0 ** -spec.part(part_key).decimals  # the checker's, at the part's decimals
    for seed in range(200):
        draw = draw_targeted_variant(spec, seed, part_key=part_key, misconception="no_scaling")
        assert draw is not None, seed
        diagnose = part_options(spec, draw.params, part_key)["diagnose"]
        d_k = np.asarray(diagnose["Q"]).shape[-1]
        slip = by_definition(diagnose, scale=1.0)[spec.part(part_key).diagnose["quantity"]]
        right = by_definition(diagnose, scale=1.0 / np.sqrt(d_k))[spec.part(part_key).diagnose["quantity"]]
        gap = float(np.max(np.abs(slip - right)))
        assert gap > SEPARATION_FACTOR * tolerance, (seed, gap)


ZERO_TOKEN_GATE = """    - kind: require
      expr: "min(sum(abs(X), 1)) > 0"
      reason: a token whose embedding is all zeros has a zero query, key and value
"""


def test_a_plain_variant_can_hide_the_slip_and_the_targeted_one_does_not():
    # The bank's equal-keys refuses tokens of all zeros, and with them the draws that hid
    # the slip (seed 31 had one); without that gate, a plain draw can still hide it.
    source = (BANK / "equal-keys.yaml").read_text()
    assert ZERO_TOKEN_GATE in source
    spec = load_spec(source.replace(ZERO_TOKEN_GATE, ""))
    from exercises.engine import draw_variant

    hidden = []
    for seed in range(200):
        options = part_options(spec, draw_variant(spec, seed).params, "weights")
        separation = slip_separation(diagnose=options["diagnose"], options=options, misconception="no_scaling")
        if separation < SEPARATION_FACTOR:
            hidden.append(seed)
    assert hidden, "no plain variant of equal-keys hides the slip: pick another example"
    for seed in hidden:
        draw = draw_targeted_variant(spec, seed, part_key="weights", misconception="no_scaling")
        assert draw.seed in [targeted_seed(seed, attempt) for attempt in range(1, 32)]
        options = part_options(spec, draw.params, "weights")
        assert slip_separation(
            diagnose=options["diagnose"], options=options, misconception="no_scaling"
        ) >= SEPARATION_FACTOR


@pytest.mark.parametrize(
    "slug,part_key,misconception",
    [
        ("raw-and-scaled-scores", "raw_scores", "no_scaling"),  # raw scores are unscaled by definition
        ("attention-weights-one-query", "weights", "forgot_sigma"),  # a symbolic slip: no numbers to move
        ("attention-weights-one-query", "no-such-part", "no_scaling"),
        ("score-variance", "unit_variance", "no_scaling"),  # no attention diagnosis on this part
    ],
)
def test_no_separating_variant_gives_none_after_a_bounded_number_of_draws(slug, part_key, misconception):
    spec = bank_spec(slug)
    assert draw_targeted_variant(spec, 7, part_key=part_key, misconception=misconception, tries=5) is None


@pytest.mark.parametrize(
    "misconception,expected",
    [("no_scaling", True), ("divided_by_d_k", True), ("softmax_wrong_axis", True), ("forgot_sigma", None)],
)
def test_separation_is_measured_for_numeric_slips_only(misconception, expected):
    spec = bank_spec("attention-weights-one-query")
    from exercises.engine.variants import DrawStream, generate_params

    params = generate_params(spec, DrawStream(0, 0), fixed=spec.variants["chapter"])
    options = part_options(spec, params, "weights")
    separation = slip_separation(diagnose=options["diagnose"], options=options, misconception=misconception)
    if expected is None:
        assert separation is None
    else:
        assert separation > SEPARATION_FACTOR


# An exact part (rtol and atol both 0): every entry has no tolerance at all.
EXACT = {"rtol": 0.0, "atol": 0.0}
ONE_QUERY = {"Q": [[1.0, 0.0], [0.0, 1.0]], "K": [[1.0, 0.0], [0.0, 1.0]], "V": [[1.0, 2.0], [3.0, 4.0]],
             "quantity": "weights", "query_index": 0}


def test_an_exact_part_is_infinitely_separated_when_the_slip_differs(recwarn):
    # Scaled weights of query 0: softmax([1, 0] / √2); unscaled: softmax([1, 0]): they differ.
    assert slip_separation(diagnose=ONE_QUERY, options=EXACT, misconception="no_scaling") == float("inf")
    assert [str(warning.message) for warning in recwarn if warning.category is RuntimeWarning] == []


def test_an_exact_part_whose_slip_equals_the_right_answer_is_not_separated(recwarn):
    # Equal keys: every score is the same, scaled or not, so both give [0.5, 0.5].
    equal_keys = ONE_QUERY | {"K": [[1.0, 1.0], [1.0, 1.0]]}
    assert slip_separation(diagnose=equal_keys, options=EXACT, misconception="no_scaling") == 0.0
    assert [str(warning.message) for warning in recwarn if warning.category is RuntimeWarning] == []


def test_a_tolerance_divides_the_gap_as_before():
    # |softmax([1, 0]) - softmax([1/√2, 0])| at entry 0, over atol 0.01 (rtol 0).
    def first_weight(score):
        return np.exp(score) / (np.exp(score) + 1.0)

    gap = first_weight(1.0) - first_weight(1.0 / np.sqrt(2.0))
    separation = slip_separation(diagnose=ONE_QUERY, options={"rtol": 0.0, "atol": 0.01}, misconception="no_scaling")
    assert separation == pytest.approx(gap / 0.01, rel=1e-12)
