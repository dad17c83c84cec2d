"""Drawn variants of the bank, over many seeds: token matrices without degenerate rows, the
V-transposed slip named on every output part that projects V from X, a ratio question
whose wording fits its numbers, with its inverted answer named, and the known wrong numbers
of the variance exercises named on every variant they have."""

import itertools
from pathlib import Path

import numpy as np
import pytest

from exercises.engine import draw_variant, grade_part, load_spec, part_options, reference_answers, render_part_prompt
from exercises.engine.expressions import evaluate, to_json_value
from exercises.engine.variants import first_failed_gate
from grading.core.numeric import numbers_match

BANK = Path(__file__).resolve().parents[1] / "bank"
SEEDS = range(500)

# Every bank exercise that draws token embeddings X and projects them.
TOKEN_EXERCISES = [
    "attention-weights-one-query", "equal-keys", "late-query-output", "late-query-raw-scores",
    "late-query-scaled-weights", "project-one-token", "qkv-projections",
]
# Those with an output part whose V = X W_V is square, so V can be put on the wrong side.
OUTPUT_PARTS = [("attention-weights-one-query", "output"), ("equal-keys", "output"), ("late-query-output", "output")]

_specs, _draws = {}, {}


def spec_of(slug: str):
    if slug not in _specs:
        _specs[slug] = load_spec((BANK / f"{slug}.yaml").read_text())
    return _specs[slug]


def drawn(slug: str) -> list[dict]:
    """The parameters of every seed in SEEDS (drawn once per module: equal-keys redraws a lot)."""
    if slug not in _draws:
        _draws[slug] = [draw_variant(spec_of(slug), seed).params for seed in SEEDS]
    return _draws[slug]


def v_transposed_answer(params: dict, decimals: int) -> list[float]:
    """The query's output computed with Vᵀ in place of V (the same numbers as V w), rounded
    as a student types it."""
    matrices = {name: np.asarray(value, dtype=float) for name, value in params.items() if name in ("Q", "K", "V")}
    scores = matrices["Q"][params["q"]] @ matrices["K"].T  # (d_k,) x (d_k, m) -> (m,)
    scaled = scores / np.sqrt(matrices["Q"].shape[-1])
    weights = np.exp(scaled - scaled.max())
    weights /= weights.sum()
    return np.round(weights @ matrices["V"].T, decimals).tolist()  # (m,) x (d_v, m)^T -> (d_v,), m == d_v


@pytest.mark.parametrize("slug", TOKEN_EXERCISES)
def test_no_token_is_all_zeros_and_no_two_tokens_are_equal_on_500_seeds(slug):
    for seed, params in zip(SEEDS, drawn(slug)):
        X = np.asarray(params["X"], dtype=float)
        assert np.all(np.abs(X).sum(axis=1) > 0), (seed, X.tolist())
        assert len({tuple(row) for row in X.tolist()}) == X.shape[0], (seed, X.tolist())


@pytest.mark.parametrize("slug, part_key", OUTPUT_PARTS)
def test_the_v_transposed_output_is_named_on_500_seeds_and_the_chapter_variant(slug, part_key):
    spec = spec_of(slug)
    decimals = spec.part(part_key).decimals
    variants = drawn(slug) + [draw_variant(spec, 0, name=name).params for name in spec.variants]
    for index, params in enumerate(variants):
        grade = grade_part(spec, params, part_key, v_transposed_answer(params, decimals))
        assert (grade.correct, grade.misconception) == (False, "values_on_left"), (index, params["X"], grade.feedback)
        assert grade.feedback.endswith(
            "It looks as if V was put on the left of the weights (V w, which gives the same numbers as w Vᵀ): "
            "the output is w V, where each weight scales one whole row of V."
        )


# The variant the tester was given at /exercises/45/ (attention-weights-one-query): two tokens
# of all zeros. Its V-transposed answer [0, 0, 1.9464, 0.4009] got no diagnosis.
REPORTED = {
    "X": [[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0]],
    "W_Q": [[0, 1, 0, 1], [1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 0, 0]],
    "W_K": [[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 0, 1], [0, 1, 1, 0]],
    "W_V": [[0, 1, 0, 0], [0, 1, 1, 2], [1, 2, 0, 1], [2, 0, 1, 0]],
    "q": 2,
    "Q": [[0, 0, 0, 0], [0, 0, 0, 0], [2, 1, 1, 0], [0, 1, 1, 1]],
    "K": [[0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 1, 0], [1, 1, 0, 1]],
    "V": [[0, 0, 0, 0], [0, 0, 0, 0], [2, 1, 2, 2], [1, 2, 0, 1]],
    "scores_q": [0, 0, 5, 3],
}


def test_the_reported_variant_is_refused_and_its_v_transposed_answer_is_now_named():
    spec = spec_of("attention-weights-one-query")
    assert first_failed_gate(spec, REPORTED) == "require: a token whose embedding is all zeros has a zero query, key and value"
    assert v_transposed_answer(REPORTED, 4) == [0.0, 0.0, 1.9464, 0.4009]
    grade = grade_part(spec, REPORTED, "output", "[0, 0, 1.9464, 0.4009]")
    assert (grade.correct, grade.misconception) == (False, "values_on_left")
    assert grade_part(spec, REPORTED, "output", "[1.5456, 1.133, 1.3054, 1.5456]").correct  # the right answer


def test_the_chapter_numbers_are_unchanged_by_the_new_gates():
    spec = spec_of("attention-weights-one-query")
    chapter = draw_variant(spec, 0, name="chapter").params
    assert first_failed_gate(spec, chapter) is None  # the chapter's tokens pass the new gates too
    answers = reference_answers(spec, chapter)
    assert np.round(answers["output"], 4).tolist() == [1.6225, 0.3775, 1.8674, 1.0]
    assert v_transposed_answer(chapter, 4) == [1.7149, 0.765, 1.1525, 1.3275]


# ---------------------------------------------------------------------------
# softmax-weights-from-scores, part (c): the ratio of two weights
# ---------------------------------------------------------------------------


def ratio_prompt(a: int, b: int) -> str:
    return f"What is the ratio $w_{{ {a} }} / w_{{ {b} }}$, the weight of key {a} divided by the weight of key {b}? (4 decimals)"


def inverted_feedback(a: int, b: int) -> str:
    return (
        f"Not quite: that is the weight of key {b} divided by that of key {a}, the ratio the other way "
        f"round; the question asks for the weight of key {a} divided by that of key {b}."
    )


def test_the_ratio_question_fits_its_numbers_and_names_the_inverted_ratio_on_500_seeds():
    spec = spec_of("softmax-weights-from-scores")
    for params in drawn("softmax-weights-from-scores"):
        a, b, weights = params["a"], params["b"], params["w"]
        assert render_part_prompt(spec, params, "ratio").strip() == ratio_prompt(a, b)
        ratio = reference_answers(spec, params)["ratio"]
        assert ratio == pytest.approx(weights[a] / weights[b]) and ratio != pytest.approx(1.0)
        assert grade_part(spec, params, "ratio", f"{ratio:.4f}").correct
        inverted = grade_part(spec, params, "ratio", f"{weights[b] / weights[a]:.4f}")
        assert (inverted.correct, inverted.feedback) == (False, inverted_feedback(a, b)), params


def test_the_reported_ratio_variant_now_asks_for_what_its_answer_is():
    # s = [3, 2, 3, 0], keys 3 and 2: the old prompt asked how many times *larger* key 3's
    # weight was, though it is the smaller one (0.0498); 20.0855 got no specific feedback.
    spec = spec_of("softmax-weights-from-scores")
    scores = np.array([3.0, 2.0, 3.0, 0.0])
    reported = {"s": scores.tolist(), "a": 3, "b": 2, "w": (np.exp(scores) / np.exp(scores).sum()).tolist()}
    assert first_failed_gate(spec, reported) is None
    assert render_part_prompt(spec, reported, "ratio").strip() == (
        "What is the ratio $w_{ 3 } / w_{ 2 }$, the weight of key 3 divided by the weight of key 2? (4 decimals)"
    )
    assert grade_part(spec, reported, "ratio", "0.0498").correct
    assert grade_part(spec, reported, "ratio", "20.0855").feedback == inverted_feedback(3, 2)
    assert grade_part(spec, reported, "ratio", "0.05").feedback == (
        "Not quite: your value is close to the correct answer but not within the required precision; "
        "keep more digits in the intermediate steps and round only at the end."
    )
    assert grade_part(spec, reported, "ratio", "0.5").feedback == "Not correct."


# ---------------------------------------------------------------------------
# The variance exercises: known wrong numbers named, and the σ's added named
# ---------------------------------------------------------------------------

NOT_CORRECT = "Not correct."


def not_quite(feedback: str) -> str:
    return f"Not quite: {feedback}"


# The standard slips of the variance argument, in the words the bank uses for each.
TEXTBOOK_ONE = not_quite(
    "dividing by √d_k removes only the factor √d_k from the score's standard deviation "
    "√d_k σ_q σ_k; the factor σ_q σ_k is left, and it is not 1 here. The spread comes back to 1 only "
    "when queries and keys have unit variance."
)
TEXTBOOK_ONE_SHARED_SIGMA = not_quite(
    "dividing by √d_k removes only the factor √d_k from the score's standard deviation √d_k σ²; the "
    "factor σ² is left, and it is not 1 here. The spread comes back to 1 only when queries and keys "
    "have unit variance."
)
TERM_VARIANCES_ADDED = not_quite(
    "that is σ_q² + σ_k², the two variances added. For independent factors with mean 0 the "
    "variance of the product is the product of the second moments, E[q_m²] E[k_m²], not a sum."
)
TERM_TEXTBOOK_ONE = not_quite(
    "that is the variance of one product when queries and keys have unit variance; here "
    "E[q_m²] E[k_m²] = σ_q² σ_k², which is not 1."
)
TERM_STD = not_quite("that is σ_q σ_k, the standard deviation of one product; the question asks for its variance, the square.")
SCORE_VARIANCES_ADDED = not_quite(
    "that is d_k (σ_q² + σ_k²): the variances of q_m and k_m were added, but each product "
    "q_m k_m has variance σ_q² σ_k², the product of the two."
)
SCORE_SQUARES_FORGOTTEN = not_quite(
    "that is d_k σ_q σ_k, with standard deviations where variances belong: E[q_m²] = σ_q², so "
    "each term contributes σ_q² σ_k²."
)
SCORE_VARIANCE_SIGMAS_FORGOTTEN = not_quite(
    "that is d_k, the variance only when queries and keys have unit variance; here each of the d_k "
    "products has variance σ_q² σ_k²."
)
SCORE_STD_FOR_VARIANCE = not_quite(
    "that is √d_k σ_q σ_k, the standard deviation of the score; the question asks for its variance, the square."
)
SCORE_STD_SIGMAS_FORGOTTEN = not_quite(
    "that is √d_k, the standard deviation only when queries and keys have unit variance; here "
    "the factors σ_q and σ_k scale it too."
)
SCORE_VARIANCE_FOR_STD = not_quite("that is d_k σ_q² σ_k², the variance of the score; its standard deviation is the square root.")
SCORE_STD_SIGMAS_ADDED = not_quite(
    "that is √d_k (σ_q + σ_k), with the σ's added: each product q_m k_m has standard deviation σ_q σ_k, "
    "the product of the two."
)
DIVISOR_SIGMAS_FORGOTTEN = not_quite(
    "that is √d_k, the right divisor only when queries and keys have unit variance; here the factors "
    "σ_q and σ_k scale the score's standard deviation too."
)
DIVISOR_IS_VARIANCE = not_quite(
    "that is d_k σ_q² σ_k², the score's variance. Dividing by c divides the variance by c², so the "
    "divisor is its square root, the standard deviation."
)
SCALED_VARIANCE_FOR_STD = not_quite(
    "that is σ_q² σ_k², the variance of the scaled score; the question asks for its standard deviation, the square root."
)
SCALED_SIGMAS_ADDED = not_quite(
    "that is σ_q + σ_k, the σ's added: the factor left after dividing by √d_k is the product σ_q σ_k."
)
SHARED_DIVISOR_SIGMA_FORGOTTEN = not_quite(
    "that is √d_k, the right divisor only when the entries have unit variance; here the factor σ² "
    "scales the score's standard deviation too."
)
SHARED_DIVISOR_IS_VARIANCE = not_quite(
    "that is d_k σ⁴, the score's variance. Dividing by c divides the variance by c², so the divisor "
    "is its square root, the standard deviation."
)
SHARED_DIVISOR_ONE_SIGMA = not_quite(
    "that is √d_k σ, as if each product q_m k_m had variance σ²; its variance is E[q_m²] E[k_m²] = σ² · σ²."
)
SHARED_DIVISOR_SIGMAS_ADDED = not_quite(
    "that is √d_k (σ + σ), with the σ's added: each product q_m k_m has standard deviation σ · σ, "
    "the product of the two."
)
SHARED_SCALED_VARIANCE_FOR_STD = not_quite(
    "that is σ⁴, the variance of the scaled score; the question asks for its standard deviation, the square root."
)
SHARED_SCALED_ONE_SIGMA = not_quite("that is σ, the spread of one entry; each product q_m k_m has standard deviation σ · σ.")
SHARED_SCALED_SIGMAS_ADDED = not_quite(
    "that is σ + σ, the σ's added: the factor left after dividing by √d_k is the product σ · σ."
)
RAW_VARIANCE_FOR_STD = not_quite(
    "that is d_k, the variance of the raw scores; the question asks for their standard deviation, the square root."
)
RAW_STD_FOR_VARIANCE = not_quite("that is √d_k, the standard deviation of the score; the question asks for its variance, the square.")
HEAD_STD_FOR_VARIANCE = not_quite(
    "that is √d_k, the standard deviation of one head's score; the question asks for its variance, the square."
)
WIDE_STD_FOR_VARIANCE = not_quite(
    "that is √d_model, the standard deviation of the score; the question asks for its variance, the square."
)
DIVIDED_BY_D_K_VARIANCE = not_quite(
    "that is 1/d_k, the variance left after dividing by d_k; the question asks for the standard deviation, its square root."
)
WRONG_SCALE_TEXTBOOK_VARIANCE = not_quite(
    "scaled scores have variance 1 only when the divisor is √d_k, the width of the head that computes them; "
    "this head divides by √d_model, which is larger."
)
WRONG_SCALE_STD_FOR_VARIANCE = not_quite(
    "that is √(d_k / d_model), the standard deviation of the scaled scores; the question asks for their variance, the square."
)
WRONG_SCALE_TEXTBOOK_STD = not_quite(
    "scaled scores have standard deviation 1 only when the divisor is √d_k, the width of the head that computes "
    "them; this head divides by √d_model, which is larger."
)
WRONG_SCALE_VARIANCE_FOR_STD = not_quite(
    "that is d_k / d_model, the variance of the scaled scores; the question asks for their standard deviation, the square root."
)
SCALE_BY_VARIANCE = not_quite(
    "that is 1/d_k, one over the variance of the raw scores; the scale divides them by their standard deviation."
)
DIVISOR_BY_VARIANCE = not_quite("that is d_k, the variance of the raw scores; they are divided by their standard deviation.")


def sqrt(value) -> float:
    return float(np.sqrt(value))


# (exercise, part, decimals a student types, the known wrong value, its feedback), in the order
# of each part's value_feedback: where two known values coincide on a variant, the first is said.
KNOWN_WRONG_NUMBERS = [
    pytest.param("score-variance", "textbook_std", 2, lambda p: 1, TEXTBOOK_ONE, id="score-variance/textbook_std=1"),
    pytest.param("score-variance", "textbook_std", 2, lambda p: (p["sigma_q"] * p["sigma_k"]) ** 2, SCALED_VARIANCE_FOR_STD,
                 id="score-variance/textbook_std=variance"),
    pytest.param("score-variance", "textbook_std", 2, lambda p: p["sigma_q"] + p["sigma_k"], SCALED_SIGMAS_ADDED,
                 id="score-variance/textbook_std=sigmas-added"),
    pytest.param("sigma-aware-scale", "right_divisor", 4, lambda p: sqrt(p["d_k"]), DIVISOR_SIGMAS_FORGOTTEN,
                 id="sigma-aware-scale/right_divisor=sqrt-d_k"),
    pytest.param("sigma-aware-scale", "right_divisor", 4, lambda p: p["d_k"] * p["product"] ** 2, DIVISOR_IS_VARIANCE,
                 id="sigma-aware-scale/right_divisor=variance"),
    pytest.param("sigma-aware-scale", "right_divisor", 4, lambda p: sqrt(p["d_k"]) * (p["sigma_q"] + p["sigma_k"]),
                 SCORE_STD_SIGMAS_ADDED, id="sigma-aware-scale/right_divisor=sigmas-added"),
    pytest.param("sigma-aware-scale", "textbook_spread", 4, lambda p: 1, TEXTBOOK_ONE, id="sigma-aware-scale/textbook_spread=1"),
    pytest.param("sigma-aware-scale", "textbook_spread", 4, lambda p: p["product"] ** 2, SCALED_VARIANCE_FOR_STD,
                 id="sigma-aware-scale/textbook_spread=variance"),
    pytest.param("sigma-aware-scale", "textbook_spread", 4, lambda p: p["sigma_q"] + p["sigma_k"], SCALED_SIGMAS_ADDED,
                 id="sigma-aware-scale/textbook_spread=sigmas-added"),
    pytest.param("score-variance-numbers", "term_variance", 4, lambda p: p["sigma_q"] ** 2 + p["sigma_k"] ** 2,
                 TERM_VARIANCES_ADDED, id="score-variance-numbers/term_variance=added"),
    pytest.param("score-variance-numbers", "term_variance", 4, lambda p: 1, TERM_TEXTBOOK_ONE,
                 id="score-variance-numbers/term_variance=1"),
    pytest.param("score-variance-numbers", "term_variance", 4, lambda p: p["sigma_q"] * p["sigma_k"], TERM_STD,
                 id="score-variance-numbers/term_variance=std"),
    pytest.param("score-variance-numbers", "score_variance", 4, lambda p: p["d_k"] * (p["sigma_q"] ** 2 + p["sigma_k"] ** 2),
                 SCORE_VARIANCES_ADDED, id="score-variance-numbers/score_variance=added"),
    pytest.param("score-variance-numbers", "score_variance", 4, lambda p: p["d_k"] * p["sigma_q"] * p["sigma_k"],
                 SCORE_SQUARES_FORGOTTEN, id="score-variance-numbers/score_variance=no-squares"),
    pytest.param("score-variance-numbers", "score_variance", 4, lambda p: p["d_k"], SCORE_VARIANCE_SIGMAS_FORGOTTEN,
                 id="score-variance-numbers/score_variance=d_k"),
    pytest.param("score-variance-numbers", "score_variance", 4, lambda p: sqrt(p["d_k"]) * p["sigma_q"] * p["sigma_k"],
                 SCORE_STD_FOR_VARIANCE, id="score-variance-numbers/score_variance=std"),
    pytest.param("score-variance-numbers", "score_std", 4, lambda p: sqrt(p["d_k"]), SCORE_STD_SIGMAS_FORGOTTEN,
                 id="score-variance-numbers/score_std=sqrt-d_k"),
    pytest.param("score-variance-numbers", "score_std", 4, lambda p: p["d_k"] * (p["sigma_q"] * p["sigma_k"]) ** 2,
                 SCORE_VARIANCE_FOR_STD, id="score-variance-numbers/score_std=variance"),
    pytest.param("score-variance-numbers", "score_std", 4, lambda p: sqrt(p["d_k"]) * (p["sigma_q"] + p["sigma_k"]),
                 SCORE_STD_SIGMAS_ADDED, id="score-variance-numbers/score_std=sigmas-added"),
    pytest.param("variance-shared-sigma", "right_divisor", 4, lambda p: sqrt(p["d_k"]), SHARED_DIVISOR_SIGMA_FORGOTTEN,
                 id="variance-shared-sigma/right_divisor=sqrt-d_k"),
    pytest.param("variance-shared-sigma", "right_divisor", 4, lambda p: p["d_k"] * p["sigma"] ** 4, SHARED_DIVISOR_IS_VARIANCE,
                 id="variance-shared-sigma/right_divisor=variance"),
    pytest.param("variance-shared-sigma", "right_divisor", 4, lambda p: sqrt(p["d_k"]) * p["sigma"], SHARED_DIVISOR_ONE_SIGMA,
                 id="variance-shared-sigma/right_divisor=one-sigma"),
    pytest.param("variance-shared-sigma", "right_divisor", 4, lambda p: sqrt(p["d_k"]) * 2 * p["sigma"],
                 SHARED_DIVISOR_SIGMAS_ADDED, id="variance-shared-sigma/right_divisor=sigmas-added"),
    pytest.param("variance-shared-sigma", "textbook_std", 4, lambda p: 1, TEXTBOOK_ONE_SHARED_SIGMA,
                 id="variance-shared-sigma/textbook_std=1"),
    pytest.param("variance-shared-sigma", "textbook_std", 4, lambda p: p["sigma"] ** 4, SHARED_SCALED_VARIANCE_FOR_STD,
                 id="variance-shared-sigma/textbook_std=variance"),
    pytest.param("variance-shared-sigma", "textbook_std", 4, lambda p: p["sigma"], SHARED_SCALED_ONE_SIGMA,
                 id="variance-shared-sigma/textbook_std=one-sigma"),
    pytest.param("variance-shared-sigma", "textbook_std", 4, lambda p: 2 * p["sigma"], SHARED_SCALED_SIGMAS_ADDED,
                 id="variance-shared-sigma/textbook_std=sigmas-added"),
    pytest.param("unit-variance-score-steps", "score_variance", 0, lambda p: sqrt(p["d_k"]), RAW_STD_FOR_VARIANCE,
                 id="unit-variance-score-steps/score_variance=std"),
    pytest.param("unit-variance-score-steps", "wrong_divisor_std", 4, lambda p: 1 / p["d_k"], DIVIDED_BY_D_K_VARIANCE,
                 id="unit-variance-score-steps/wrong_divisor_std=variance"),
    pytest.param("variance-per-head", "head_variance", 0, lambda p: sqrt(p["d_model"] / p["h"]), HEAD_STD_FOR_VARIANCE,
                 id="variance-per-head/head_variance=std"),
    pytest.param("variance-per-head", "wide_variance", 0, lambda p: sqrt(p["d_model"]), WIDE_STD_FOR_VARIANCE,
                 id="variance-per-head/wide_variance=std"),
    pytest.param("variance-per-head", "wrong_scale_variance", 4, lambda p: 1, WRONG_SCALE_TEXTBOOK_VARIANCE,
                 id="variance-per-head/wrong_scale_variance=1"),
    pytest.param("variance-per-head", "wrong_scale_variance", 4, lambda p: sqrt(p["d_k"] / p["d_model"]),
                 WRONG_SCALE_STD_FOR_VARIANCE, id="variance-per-head/wrong_scale_variance=std"),
    pytest.param("multi-head-dimensions", "per_head_std", 4, lambda p: p["d_k"], RAW_VARIANCE_FOR_STD,
                 id="multi-head-dimensions/per_head_std=variance"),
    pytest.param("multi-head-dimensions", "wrong_scale_std", 4, lambda p: 1, WRONG_SCALE_TEXTBOOK_STD,
                 id="multi-head-dimensions/wrong_scale_std=1"),
    pytest.param("multi-head-dimensions", "wrong_scale_std", 4, lambda p: p["d_k"] / p["d_model"],
                 WRONG_SCALE_VARIANCE_FOR_STD, id="multi-head-dimensions/wrong_scale_std=variance"),
    pytest.param("multi-head-scale-per-head", "head_scale", 4, lambda p: 1 / p["d_k"], SCALE_BY_VARIANCE,
                 id="multi-head-scale-per-head/head_scale=over-variance"),
    pytest.param("multi-head-scale-per-head", "head_score_std", 4, lambda p: p["d_k"], RAW_VARIANCE_FOR_STD,
                 id="multi-head-scale-per-head/head_score_std=variance"),
    pytest.param("saturation-weight-ratio", "raw_spread", 2, lambda p: p["d_k"], RAW_VARIANCE_FOR_STD,
                 id="saturation-weight-ratio/raw_spread=variance"),
    pytest.param("score-spread-and-saturation", "raw_std", 2, lambda p: p["d_k"], RAW_VARIANCE_FOR_STD,
                 id="score-spread-and-saturation/raw_std=variance"),
    pytest.param("scaled-scores-one-query", "divisor", 0, lambda p: p["d_k"], DIVISOR_BY_VARIANCE,
                 id="scaled-scores-one-query/divisor=variance"),
]


def every_variant(slug: str) -> list[dict]:
    """Every variant the gates allow: these exercises draw only from short lists and ranges
    (and derive the rest), so all combinations can be tried instead of a sample of seeds.
    An exercise that also draws matrices gets the variants of SEEDS instead."""
    spec = spec_of(slug)
    if any(parameter.generator not in ("choice", "int_range", "derived") for parameter in spec.parameters):
        return drawn(slug)
    listed = [parameter for parameter in spec.parameters if parameter.generator in ("choice", "int_range")]
    variants = []
    for values in itertools.product(*(_values_of(parameter) for parameter in listed)):
        params = {parameter.name: value for parameter, value in zip(listed, values)}
        for parameter in spec.parameters:
            if parameter.generator == "derived":
                params[parameter.name] = to_json_value(evaluate(parameter.settings["expr"], params))
        if first_failed_gate(spec, params) is None:
            variants.append(params)
    return variants


def _values_of(parameter) -> list:
    if parameter.generator == "choice":
        return list(parameter.settings["from"])
    low, high = (int(evaluate(parameter.settings[bound], {})) for bound in ("min", "max"))
    return list(range(low, high + 1))


def _typed(value, decimals: int) -> str:
    return f"{float(value):.{decimals}f}"


@pytest.mark.parametrize("slug, part_key, decimals, known_wrong, feedback", KNOWN_WRONG_NUMBERS)
def test_a_known_wrong_number_is_named_on_every_variant(slug, part_key, decimals, known_wrong, feedback):
    """On every variant: the right answer is right, the known wrong value gets its feedback
    (unless it is right there, or an earlier known value of the part says the same number),
    and an unrelated wrong value is plainly "Not correct."."""
    spec = spec_of(slug)
    earlier = []
    for row in KNOWN_WRONG_NUMBERS:
        if row.values[3] is known_wrong:
            break
        if row.values[:2] == (slug, part_key):
            earlier.append(row.values[3:])
    named = 0
    for params in every_variant(slug):
        options = part_options(spec, params, part_key)
        right = reference_answers(spec, params)[part_key]
        value = known_wrong(params)
        if numbers_match(right, value, options):
            assert grade_part(spec, params, part_key, _typed(value, decimals)).correct, params  # never labelled
            continue
        said_first = [first for first_value, first in earlier if numbers_match(first_value(params), value, options)]
        graded = {
            "right": grade_part(spec, params, part_key, _typed(right, decimals)),
            "known": grade_part(spec, params, part_key, _typed(value, decimals)),
            "other": grade_part(spec, params, part_key, _typed(1.37 * right + 0.37, decimals)),
        }
        assert {kind: (grade.correct, grade.feedback) for kind, grade in graded.items()} == {
            "right": (True, "Correct."), "known": (False, (said_first or [feedback])[0]), "other": (False, NOT_CORRECT),
        }, params
        named += not said_first
    assert named >= len(every_variant(slug)) // 2  # a coincidence on a few variants, not the rule


@pytest.mark.parametrize(
    "slug, part_key, params, answer",
    [
        ("score-variance", "textbook_std", {"d_k": 16, "sigma_q": 1, "sigma_k": 1}, "1"),
        ("sigma-aware-scale", "textbook_spread", {"d_k": 64, "sigma_q": 1, "sigma_k": 1, "product": 1}, "1.0000"),
        ("sigma-aware-scale", "textbook_spread", {"d_k": 64, "sigma_q": 0.5, "sigma_k": 2, "product": 1.0}, "1"),
        ("score-variance-numbers", "score_std", {"d_k": 256, "sigma_q": 1, "sigma_k": 1}, "16.0000"),
    ],
)
def test_a_known_wrong_number_that_is_right_on_a_variant_is_graded_right_there(slug, part_key, params, answer):
    # The gates keep σ_q σ_k = 1 out of the bank; were such a variant drawn, the engine still
    # never labels its right answer with the "known wrong" feedback.
    spec = spec_of(slug)
    assert first_failed_gate(spec, params) is not None
    grade = grade_part(spec, params, part_key, answer)
    assert (grade.correct, grade.feedback) == (True, "Correct.")
    assert grade_part(spec, params, part_key, "1.5").feedback == NOT_CORRECT


@pytest.mark.parametrize("slug, count", [("score-variance", 52), ("sigma-aware-scale", 39), ("score-variance-numbers", 36)])
def test_every_variant_the_gates_allow_is_tried(slug, count):
    variants = every_variant(slug)
    assert len(variants) == count
    assert all(params["sigma_q"] * params["sigma_k"] != 1 for params in variants)


@pytest.mark.parametrize("slug", ["score-variance", "sigma-aware-scale", "score-variance-numbers", "variance-shared-sigma",
                                  "unit-variance-score-steps", "variance-per-head", "multi-head-dimensions"])
def test_the_variance_exercises_pass_their_self_test_on_every_variant(slug):
    from exercises.engine.selftest import self_test_variant

    spec = spec_of(slug)
    failures = []
    for params in every_variant(slug):
        result = self_test_variant(spec, params)
        assert result.checked > 0 and not result.skipped
        failures += result.failures
    assert failures == []


@pytest.mark.parametrize(
    "part_key, answer, correct, misconception",
    [
        ("general_variance", "d_k*sigma_q^2*sigma_k^2", True, None),
        ("general_variance", "d_k (σ_q σ_k)²", True, None),
        ("general_variance", "d_k*(sigma_q^2 + sigma_k^2)", False, "sigmas_added"),
        ("general_variance", "d_k sigma_q^2 + d_k sigma_k^2", False, "sigmas_added"),
        ("general_variance", "d_k*sigma_q*sigma_k", False, "forgot_squares"),
        ("general_variance", "d_k*(sigma_q + sigma_k)^2", False, None),
        ("correct_scale", "sqrt(d_k)*sigma_q*sigma_k", True, None),
        ("correct_scale", "sqrt(d_k)*(sigma_q + sigma_k)", False, "sigmas_added"),
        ("correct_scale", "sqrt(d_k)", False, "forgot_sigma"),
        ("correct_scale", "sqrt(d_k) + sigma_q + sigma_k", False, None),
    ],
)
def test_the_symbolic_variance_parts_name_the_sigmas_added(part_key, answer, correct, misconception):
    spec = spec_of("score-variance")
    grade = grade_part(spec, every_variant("score-variance")[0], part_key, answer)
    assert (grade.correct, grade.misconception, grade.error) == (correct, misconception, None)
