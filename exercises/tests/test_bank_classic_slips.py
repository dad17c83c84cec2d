"""The chapter's classic numeric slips get their own feedback in every bank part where they apply:
d_model where d_k is asked (and sqrt(d_model), 1/sqrt(d_model), d_model squared, d_model times h),
the variance for the standard deviation, the scaled value where the unscaled one is asked and back.
Each slip is typed as a student would on the exercise's `chapter` variant (or on a `table`
variant added here for an exercise that has none) and gets exactly its feedback; the right
answer stays right."""

from pathlib import Path

import pytest

from exercises.engine import draw_variant, grade_part, load_spec

BANK = Path(__file__).resolve().parents[1] / "bank"
# Exercises without a `chapter` variant get one hand-picked set of sizes, as the chapter would pick.
TABLE_VARIANTS = {
    "projection-parameter-count": "{n: 20, d_model: 512, d_k: 64, d_v: 96}",
    "qkv-misconception": "{n: 10, d_model: 512, d_k: 64}",
    "scaled-scores-one-query": "{d_k: 16, s: [1, 7, 3, 4]}",
    "score-variance": "{d_k: 256, sigma_q: 1, sigma_k: 3}",
    "sigma-aware-scale": "{d_k: 16, sigma_q: 1, sigma_k: 3}",
    "variance-shared-sigma": "{d_k: 16, sigma: 1.5}",
    "score-variance-numbers": "{d_k: 64, sigma_q: 2, sigma_k: 1.5}",
    "saturated-two-key-gradient": "{g: 1, c: 32}",
    "softmax-gradient-saturation": "{x: [2, 0, 1], c: 10}",
}


def variant(slug: str):
    table = f"\nvariants:\n  table: {TABLE_VARIANTS[slug]}\n" if slug in TABLE_VARIANTS else ""
    spec = load_spec((BANK / f"{slug}.yaml").read_text() + table)
    return spec, draw_variant(spec, 0, name="table" if slug in TABLE_VARIANTS else "chapter").params


SLIPS = [
    ("multi-head-dimensions", "per_head_dk", "512",
     "that is d_model, the width of the whole layer; d_k is one head's share of it, "
     "d_model / h."),
    ("multi-head-dimensions", "per_head_dk", "4096",
     "that is d_model × h; the heads split the width between them, so d_k = d_model / h."),
    ("multi-head-dimensions", "per_head_std", "22.6274",
     "that is √d_model, the standard deviation for a head as wide as the model; one head's"
     " scores sum only d_k = d_model / h products, so theirs is √d_k."),
    ("multi-head-dimensions", "per_head_std", "512",
     "that is d_model, the variance of a head as wide as the model; one head's scores have"
     " variance d_k = d_model / h, and the question asks for the standard deviation, √d_k."),
    ("multi-head-dimensions", "per_head_std", "1",
     "that is 1, the standard deviation after dividing by √d_k; the question asks for the "
     "raw scores', before any scaling."),
    ("multi-head-dimensions", "wrong_scale_std", "8",
     "that is √d_k, the standard deviation of the raw scores before any division; the "
     "question asks for it after dividing by √d_model."),
    ("multi-head-dimensions", "wrong_scale_std", "0.0156",
     "that is √d_k / d_model, dividing by d_model itself; the buggy head divides by its "
     "square root, √d_model."),
    ("multi-head-parameter-count", "one_head_query", "262144",
     "that is d_model², a full-width d_model × d_model matrix; one head's W_Q maps d_model"
     " to its own width d_k, so it is d_model × d_k."),
    ("multi-head-parameter-count", "one_head_query", "4096",
     "that is d_k², a d_k × d_k matrix; one head's W_Q maps the whole d_model-wide input "
     "to width d_k, so it is d_model × d_k."),
    ("multi-head-parameter-count", "all_projections", "6291456",
     "that is 3 h d_model², every head's projections as wide as the model; each head's "
     "W_Q, W_K, W_V is d_model × d_k, with d_k = d_model / h."),
    ("multi-head-parameter-count", "all_projections", "98304",
     "that is 3 d_model d_k, the projections of one head; all h heads hold h times as "
     "many."),
    ("multi-head-parameter-count", "whole_layer", "786432",
     "that is the query, key and value projections alone; the question includes W_O, "
     "d_model × d_model more."),
    ("multi-head-parameter-count", "whole_layer", "6553600",
     "that is 3 h d_model² + d_model², every head's projections as wide as the model; each"
     " head's W_Q, W_K, W_V is d_model × d_k, with d_k = d_model / h."),
    ("multi-head-scale-per-head", "head_scale", "0.0442",
     "that is 1/√d_model, keyed to the model's width; each head scales by its own width, "
     "1/√d_k with d_k = d_model / h."),
    ("multi-head-scale-per-head", "head_scale", "8",
     "that is √d_k, the number the scores are divided by; the factor they are multiplied "
     "by is its reciprocal, 1/√d_k."),
    ("multi-head-scale-per-head", "head_score_std", "22.6274",
     "that is √d_model, the standard deviation for a head as wide as the model; one head's"
     " scores sum only d_k = d_model / h products, so theirs is √d_k."),
    ("multi-head-scale-per-head", "head_score_std", "512",
     "that is d_model, the variance of a head as wide as the model; one head's scores have"
     " variance d_k = d_model / h, and the question asks for the standard deviation, √d_k."),
    ("multi-head-scale-per-head", "head_score_std", "1",
     "that is 1, the standard deviation after dividing by √d_k; the question asks for the "
     "raw scores', before any scaling."),
    ("multi-head-split-shapes", "per_head_width", "512",
     "that is d_model, the width of the whole layer; d_k is one head's share of it, "
     "d_model / h."),
    ("multi-head-split-shapes", "per_head_width", "4096",
     "that is d_model × h; the heads split the width between them, so d_k = d_model / h."),
    ("projection-parameter-count", "query_weights", "262144",
     "that is d_model², a d_model × d_model matrix; W_Q maps d_model to d_k, so it is "
     "d_model × d_k."),
    ("projection-parameter-count", "all_weights", "98304",
     "that is 3 d_model d_k, as if W_V had the shape of W_Q; W_V maps to width d_v, so it "
     "is d_model × d_v."),
    ("projection-parameter-count", "all_weights", "786432",
     "that is 3 d_model², three d_model × d_model matrices; W_Q and W_K are d_model × d_k "
     "and W_V is d_model × d_v."),
    ("qkv-misconception", "learned_parameters", "786432",
     "that is 3 d_model², three d_model × d_model matrices; each projection maps d_model "
     "to d_k, so it is d_model × d_k."),
    ("qkv-misconception", "learned_parameters", "32768",
     "that is d_model × d_k, one projection; W_Q, W_K and W_V hold three times as many."),
    ("saturated-two-key-gradient", "saturated_gradient", "0.1966",
     "that is ∂p_0/∂x_0 at the original scores x; the question asks for it at the 32 times"
     " larger scores x', where p_0' is nearly 1."),
    ("saturation-weight-ratio", "raw_spread", "1",
     "that is 1, the standard deviation after dividing by √d_k; the question asks for the "
     "raw scores', before any scaling."),
    ("saturation-weight-ratio", "unscaled_ratio", "2.5536",
     "that is e^(gap/√d_k), the ratio with the 1/√d_k scale; the question asks for it "
     "without scaling, e^gap."),
    ("saturation-weight-ratio", "unscaled_ratio", "30",
     "that is the score gap itself; the ratio of the two weights is e to the power of the "
     "gap, e^gap."),
    ("saturation-weight-ratio", "scaled_ratio", "1.0297",
     "that is e^(gap/d_k), dividing the gap by d_k; the scale divides it by √d_k."),
    ("saturation-weight-ratio", "scaled_ratio", "0.9375",
     "that is the scaled gap, gap/√d_k; the ratio of the two weights is e to that power."),
    ("scaled-scores-one-query", "scaled_gap", "3",
     "that is the gap of the raw scores; the question asks for it after dividing by √d_k."),
    ("scaled-scores-one-query", "scaled_gap", "0.1875",
     "that is the raw gap divided by d_k; the scores are divided by √d_k."),
    ("score-spread-and-saturation", "raw_std", "1",
     "that is 1, the standard deviation after dividing by √d_k; the question asks for the "
     "raw scores', before any scaling."),
    ("score-spread-and-saturation", "unscaled_ratio", "2.5536",
     "that is e^(gap/√d_k), the ratio with the 1/√d_k scale; the question asks for it "
     "without scaling, e^gap."),
    ("score-spread-and-saturation", "unscaled_ratio", "30",
     "that is the score gap itself; the ratio of the two weights is e to the power of the "
     "gap, e^gap."),
    ("score-spread-and-saturation", "scaled_ratio", "1.0297",
     "that is e^(gap/d_k), dividing the gap by d_k; the scale divides it by √d_k."),
    ("score-spread-and-saturation", "scaled_ratio", "0.9375",
     "that is the scaled gap, gap/√d_k; the ratio of the two weights is e to that power."),
    ("score-variance-numbers", "score_std", "3",
     "that is σ_q σ_k, the standard deviation after dividing by √d_k; the question asks "
     "for the raw score's, √d_k σ_q σ_k."),
    ("score-variance", "textbook_std", "48",
     "that is √d_k σ_q σ_k, the standard deviation of the raw score; the question asks for"
     " it after dividing by √d_k."),
    ("sigma-aware-scale", "textbook_spread", "12",
     "that is √d_k σ_q σ_k, the standard deviation of the raw score; the question asks for"
     " it after dividing by √d_k."),
    ("softmax-gradient-saturation", "saturated_entry", "-0.0599",
     "that is the entry at the original scores x; the question asks for it at the 10 times"
     " larger scores x', where the weights are nearly one-hot."),
    ("softmax-gradient-saturation", "diagonal_winner", "0.2227",
     "that is the entry at the original scores x; the question asks for it at the 10 times"
     " larger scores x', where the winner's weight is nearly 1."),
    ("unit-variance-score-steps", "score_variance", "1",
     "that is 1, the variance after dividing by √d_k; the question asks for the raw "
     "score's, before any scaling."),
    ("unit-variance-score-steps", "wrong_divisor_std", "32",
     "that is √d_k, the standard deviation of the raw score before any division; the "
     "question asks for it after dividing by d_k."),
    ("unit-variance-score-steps", "wrong_divisor_std", "1",
     "that is the standard deviation after dividing by √d_k, the right scale; this score "
     "is divided by d_k, which is larger."),
    ("variance-per-head", "head_variance", "512",
     "that is d_model, the variance for a head as wide as the model; one head's score sums"
     " only d_k = d_model / h products."),
    ("variance-per-head", "head_variance", "1",
     "that is 1, the variance after dividing by √d_k; the question asks for the raw "
     "score's, before any scaling."),
    ("variance-per-head", "wide_variance", "64",
     "that is d_k = d_model / h, the variance of one head's score; a single head spanning "
     "all d_model dimensions sums d_model products."),
    ("variance-per-head", "wrong_scale_variance", "64",
     "that is d_k, the variance of the raw scores before any division; the question asks "
     "for it after dividing by √d_model."),
    ("variance-per-head", "wrong_scale_variance", "0.0002",
     "that is d_k / d_model², dividing the variance by d_model squared; dividing the "
     "scores by √d_model divides their variance by d_model."),
    ("variance-shared-sigma", "textbook_std", "9",
     "that is √d_k σ², the standard deviation of the raw score; the question asks for it "
     "after dividing by √d_k."),
]


# (exercise, part, the slip as a student types it on the variant, the feedback after "Not quite: ")
@pytest.mark.parametrize(("slug", "part", "answer", "feedback"), SLIPS)
def test_a_classic_slip_gets_its_own_feedback(slug, part, answer, feedback):
    spec, params = variant(slug)
    grade = grade_part(spec, params, part, answer)
    assert (grade.correct, grade.feedback) == (False, f"Not quite: {feedback}")


RIGHT = [
    ("multi-head-dimensions", "per_head_dk", "64"),
    ("multi-head-dimensions", "per_head_std", "8"),
    ("multi-head-dimensions", "wrong_scale_std", "0.3536"),
    ("multi-head-parameter-count", "one_head_query", "32768"),
    ("multi-head-parameter-count", "all_projections", "786432"),
    ("multi-head-parameter-count", "whole_layer", "1048576"),
    ("multi-head-scale-per-head", "head_scale", "0.125"),
    ("multi-head-scale-per-head", "head_score_std", "8"),
    ("multi-head-split-shapes", "per_head_width", "64"),
    ("projection-parameter-count", "query_weights", "32768"),
    ("projection-parameter-count", "all_weights", "114688"),
    ("qkv-misconception", "rows_projected", "10"),
    ("qkv-misconception", "learned_parameters", "98304"),
    ("saturated-two-key-gradient", "top_weight", "0.7311"),
    ("saturated-two-key-gradient", "gradient", "0.1966"),
    ("saturated-two-key-gradient", "saturated_gradient", "1.27e-14"),
    ("saturation-weight-ratio", "raw_spread", "32"),
    ("saturation-weight-ratio", "unscaled_ratio", "1.0686e13"),
    ("saturation-weight-ratio", "scaled_ratio", "2.5536"),
    ("scaled-scores-one-query", "divisor", "4"),
    ("scaled-scores-one-query", "scaled_gap", "0.75"),
    ("score-spread-and-saturation", "raw_std", "32"),
    ("score-spread-and-saturation", "unscaled_ratio", "1.0686e13"),
    ("score-spread-and-saturation", "scaled_ratio", "2.5536"),
    ("score-variance-numbers", "term_variance", "9"),
    ("score-variance-numbers", "score_variance", "576"),
    ("score-variance-numbers", "score_std", "24"),
    ("score-variance", "textbook_std", "3"),
    ("sigma-aware-scale", "right_divisor", "12"),
    ("sigma-aware-scale", "textbook_spread", "3"),
    ("softmax-gradient-saturation", "cross_entry", "-0.0599"),
    ("softmax-gradient-saturation", "saturated_entry", "-2.06e-09"),
    ("softmax-gradient-saturation", "diagonal_winner", "4.54e-05"),
    ("unit-variance-score-steps", "score_variance", "1024"),
    ("unit-variance-score-steps", "wrong_divisor_std", "0.0312"),
    ("variance-per-head", "head_variance", "64"),
    ("variance-per-head", "wide_variance", "512"),
    ("variance-per-head", "wrong_scale_variance", "0.125"),
    ("variance-shared-sigma", "right_divisor", "9"),
    ("variance-shared-sigma", "textbook_std", "2.25"),
]


@pytest.mark.parametrize(("slug", "part", "answer"), RIGHT)
def test_the_right_answer_is_still_right(slug, part, answer):
    spec, params = variant(slug)
    grade = grade_part(spec, params, part, answer)
    assert (grade.correct, grade.feedback) == (True, "Correct.")


def test_the_walkers_answers_are_named():
    """The answers that got a bare "Not correct." before."""
    named = {
        ("multi-head-dimensions", "per_head_dk", "512"): "that is d_model",
        ("multi-head-dimensions", "per_head_std", "22.6274"): "that is √d_model",
        ("multi-head-scale-per-head", "head_scale", "0.0442"): "that is 1/√d_model",
        ("multi-head-parameter-count", "one_head_query", "262144"): "that is d_model²",
        ("multi-head-split-shapes", "per_head_width", "512"): "that is d_model",
        ("saturation-weight-ratio", "unscaled_ratio", "2.5536"): "that is e^(gap/√d_k)",
        ("score-spread-and-saturation", "unscaled_ratio", "2.5536"): "that is e^(gap/√d_k)",
    }
    for (slug, part, answer), start in named.items():
        spec, params = variant(slug)
        assert grade_part(spec, params, part, answer).feedback.startswith(f"Not quite: {start},")
