"""The built-in question bank: every file loads, and the chapter's numbers come out exactly."""

from pathlib import Path

import pytest

from exercises.engine import draw_variant, load_spec, reference_answers

BANK = Path(__file__).resolve().parents[1] / "bank"
BANK_FILES = sorted(BANK.glob("*.yaml"))


def rounded(values, decimals=4):
    return [round(v, decimals) for v in values]


@pytest.mark.parametrize("path", BANK_FILES, ids=lambda p: p.stem)
def test_bank_file_loads_and_slug_matches_file_name(path):
    spec = load_spec(path.read_text())
    assert spec.slug == path.stem


def test_chapter_variant_reproduces_the_worked_example():
    spec = load_spec((BANK / "attention-weights-one-query.yaml").read_text())
    draw = draw_variant(spec, 0, name="chapter")
    answers = reference_answers(spec, draw.params)
    assert draw.params["q"] == 3
    assert draw.params["Q"] == [[2, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 0, 2, 1]]
    assert draw.params["K"] == [[1, 1, 2, 0], [1, 1, 0, 2], [1, 1, 1, 1], [1, 1, 1, 1]]
    assert draw.params["V"] == [[2, 0, 3, 1], [1, 1, 0, 1], [2, 1, 0, 1], [1, 0, 3, 1]]
    assert draw.params["scores_q"] == [5, 3, 4, 4]
    assert rounded(answers["weights"]) == [0.3875, 0.1425, 0.2350, 0.2350]
    assert rounded(answers["output"]) == [1.6225, 0.3775, 1.8674, 1.0]


def test_chapter_variants_of_the_other_exercises_match_the_chapter():
    unscaled = load_spec((BANK / "scaled-vs-unscaled-softmax.yaml").read_text())
    answers = reference_answers(unscaled, draw_variant(unscaled, 0, name="chapter").params)
    assert rounded(answers["unscaled_weights"]) == [0.5344, 0.0723, 0.1966, 0.1966]
    assert rounded(answers["unscaled_output"]) == [1.7311, 0.2689, 2.1932, 1.0]
    late = load_spec((BANK / "equal-keys.yaml").read_text())
    answers = reference_answers(late, draw_variant(late, 0, name="chapter").params)
    assert answers["equal_pair"] == "23"
    assert rounded(answers["weights"]) == [0.1425, 0.3875, 0.2350, 0.2350]
    assert rounded(answers["output"]) == [1.3775, 0.6225, 1.1326, 1.0]
    spread = load_spec((BANK / "score-spread-and-saturation.yaml").read_text())
    answers = reference_answers(spread, draw_variant(spread, 0, name="chapter").params)
    assert answers["raw_std"] == 32
    assert f"{answers['unscaled_ratio']:.4e}" == "1.0686e+13"
    heads = load_spec((BANK / "multi-head-dimensions.yaml").read_text())
    assert reference_answers(heads, draw_variant(heads, 0, name="chapter").params)["per_head_dk"] == 64


def test_unscaled_weights_are_diagnosed_as_missing_scale():
    from exercises.engine import grade_part

    spec = load_spec((BANK / "attention-weights-one-query.yaml").read_text())
    params = draw_variant(spec, 0, name="chapter").params
    grade = grade_part(spec, params, "weights", [0.5344, 0.0723, 0.1966, 0.1966])
    assert (grade.correct, grade.misconception) == (False, "no_scaling")
    assert grade_part(spec, params, "weights", "[0.3875, 0.1425, 0.2350, 0.2350]").correct
    assert grade_part(spec, params, "output", [1.6225, 0.3775, 1.8674, 1.0]).correct
    assert grade_part(spec, params, "weights", "[0.3875, 0.14").error is not None


def test_the_bank_covers_every_answer_type_and_has_at_least_twelve_exercises():
    specs = [load_spec(path.read_text()) for path in BANK_FILES]
    types = {part.type for spec in specs for part in spec.parts}
    assert len(specs) >= 12
    assert types == {"numeric", "matrix", "symbolic", "matrix_expression", "derivation", "choice", "free_text"}


@pytest.mark.parametrize("path", BANK_FILES, ids=lambda p: p.stem)
def test_bank_exercise_passes_its_self_test_on_a_few_seeds(path):
    from exercises.engine import render_prompt, render_solution
    from exercises.engine.selftest import self_test_variant

    spec = load_spec(path.read_text())
    draws = [draw_variant(spec, seed) for seed in range(3)]
    draws += [draw_variant(spec, 0, name=name) for name in spec.variants]
    failures = []
    for draw in draws:
        assert "{{" not in render_prompt(spec, draw.params) + render_solution(spec, draw.params)
        result = self_test_variant(spec, draw.params)
        assert result.checked > 0 and not result.skipped
        failures += result.failures
    assert failures == []


def test_scaled_vs_unscaled_names_the_slips_on_its_chapter_numbers():
    import numpy as np

    from exercises.engine import draw_variant, grade_part, load_spec, reference_answers

    spec = load_spec((BANK / "scaled-vs-unscaled-softmax.yaml").read_text())
    params = draw_variant(spec, 0, name="chapter").params
    references = reference_answers(spec, params)
    assert np.round(references["scaled_weights"], 4).tolist() == [0.3875, 0.1425, 0.2350, 0.2350]

    def misconception(part, values):
        return grade_part(spec, params, part, str(np.round(values, 4).tolist())).misconception

    assert misconception("scaled_weights", [0.5344, 0.0723, 0.1966, 0.1966]) == "no_scaling"
    assert misconception("scaled_output", references["unscaled_output"]) == "raw_weights_used"
    assert misconception("scaled_weights", references["scaled_weights"]) is None


def test_distractor_feedback_reaches_the_choice_checker():
    from exercises.engine.grading import grade_part, part_options

    spec = load_spec((BANK / "qkv-misconception.yaml").read_text())
    options = part_options(spec, {"n": 4, "d_model": 8, "d_k": 4}, "correct_statement")
    assert options["choice_feedback"]["fixed"].startswith("W_Q, W_K and W_V are trained")
    assert "shared" not in options["choice_feedback"]
    grade = grade_part(spec, {"n": 4, "d_model": 8, "d_k": 4}, "correct_statement", "subsets")
    assert grade.feedback == ("Not the right choice: Every token gets a query, a key and a value: "
                              "the projections act on all n rows of X.")


def test_the_heatmap_reading_exercise_shows_its_weights_as_a_heatmap_not_a_matrix():
    from exercises.engine import render_figures, render_prompt

    spec = load_spec((BANK / "heatmap-reading.yaml").read_text())
    params = draw_variant(spec, 0).params
    (figure,) = render_figures(spec, params)
    assert figure["rows"] == [[round(weight, 2) for weight in row] for row in params["W"]]
    assert (figure["title"], figure["decimals"], figure["range"]) == ("Attention weights W", 2, [0.0, 1.0])
    assert figure["row_labels"] == ["query 0", "query 1", "query 2", "query 3"]
    assert figure["col_labels"] == ["key 0", "key 1", "key 2", "key 3"]
    shared_prompt = render_prompt(spec, params).split("**(a)**")[0]
    assert "bmatrix" not in shared_prompt and "{{" not in shared_prompt
