"""The causal-mask exercises name the masking slips: the spec's `diagnose` takes `mask: causal`,
the bank's two masked exercises declare it, and a student's slip on a variant is named from
that variant's own numbers."""

from pathlib import Path

import numpy as np
import pytest

from exercises.engine import SpecError, draw_variant, grade_part, load_spec, reference_answers
from exercises.engine.grading import part_options
from exercises.engine.selftest import self_test_variant
from exercises.engine.skills import skill_for_misconception
from grading.core.misconceptions import MASK_MISTAKES, MISCONCEPTIONS, attention_quantity
from grading.core.separation import slip_separation

BANK = Path(__file__).resolve().parents[1] / "bank"
WEIGHTS = "causal-mask-weights"
OUTPUT = "causal-masked-output"
# Scores S (Q = I, K = Sᵀ) and row 1, which sees keys 0 and 1: scaled [1, 0] -> [0.7311, 0.2689, 0, 0].
TABLE_VARIANT = """
variants:
  table:
    S: [[1, 0, 2, -1], [2, 0, 3, 1], [0, 1, 4, 2], [1, 3, -2, 0]]
    r: 1
"""
OUTPUT_TABLE_VARIANT = TABLE_VARIANT + "    V: [[1, 0], [0, 3], [2, 1], [4, 2]]\n"


def bank_source(slug: str) -> str:
    return (BANK / f"{slug}.yaml").read_text()


def table(slug: str):
    source = bank_source(slug) + (OUTPUT_TABLE_VARIANT if slug == OUTPUT else TABLE_VARIANT)
    spec = load_spec(source)
    return spec, draw_variant(spec, 0, name="table").params


def test_the_masked_parts_of_the_bank_declare_a_causal_diagnosis():
    weights = load_spec(bank_source(WEIGHTS)).part("masked_weights")
    output = load_spec(bank_source(OUTPUT)).part("masked_output")
    assert (weights.diagnose["quantity"], weights.diagnose["mask"]) == ("weights", "causal")
    assert (output.diagnose["quantity"], output.diagnose["mask"]) == ("output", "causal")
    spec, params = table(WEIGHTS)
    options = part_options(spec, params, "masked_weights")["diagnose"]
    assert options == {
        "kind": "attention", "quantity": "weights", "mask": "causal", "query_index": 1,
        "Q": np.eye(4).tolist(), "K": np.array(params["S"]).T.tolist(), "V": [[1, 0], [0, 1], [1, 1], [2, 0]],
    }


def test_an_unknown_mask_is_refused_with_its_line():
    source = bank_source(WEIGHTS).replace("mask: causal}", "mask: sideways}")
    with pytest.raises(SpecError) as refused:
        load_spec(source)
    text = str(refused.value)
    assert "parts[0].diagnose.mask" in text
    assert "must be one of causal (leave it out for no mask)" in text


def test_a_diagnosis_without_a_mask_still_loads_and_an_unknown_field_is_still_refused():
    plain = load_spec(bank_source(WEIGHTS).replace(", mask: causal}", "}"))
    assert "mask" not in plain.part("masked_weights").diagnose
    with pytest.raises(SpecError, match="and optionally mask"):
        load_spec(bank_source(WEIGHTS).replace("mask: causal}", "mask: causal, shade: blue}"))


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ([0.8808, 0.1192, 0, 0], "no_scaling"),
        ([0.276, 0.1015, 0.4551, 0.1674], "no_mask"),
        ([0, 0.1402, 0.6285, 0.2312], "mask_transposed"),
        ([1, 0, 0, 0], "mask_hides_self"),
        ([0.3315, 0.122, 0.5465, 0], "mask_one_extra"),
        ([0.4754, 0.1749, 0.1749, 0.1749], "masked_scores_zeroed"),
        ([0.276, 0.1015, 0, 0], "mask_after_softmax"),
        ([0.7311, 0.2689, 0, 0], None),  # right
        ([0.6, 0.4, 0, 0], None),  # wrong, and no known slip
    ],
)
def test_causal_mask_weights_names_each_slip(answer, code):
    spec, params = table(WEIGHTS)
    assert np.round(reference_answers(spec, params)["masked_weights"], 4).tolist() == [0.7311, 0.2689, 0, 0]
    grade = grade_part(spec, params, "masked_weights", answer)
    assert (grade.correct, grade.misconception) == (code is None and answer[0] == 0.7311, code)
    if code is not None:
        assert grade.feedback.endswith(MISCONCEPTIONS[code])


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ([0.8808, 0.3576], "raw_weights_used"),
        ([1.8557, 1.0945], "no_mask"),
        ([2.182, 1.5117], "mask_transposed"),
        ([1, 0], "mask_hides_self"),
        ([1.4246, 0.9124], "mask_one_extra"),
        ([1.5246, 1.0493], "masked_scores_zeroed"),
        ([0.276, 0.3046], "mask_after_softmax"),
        ([0.7311, 0.8068], None),  # right
        ([1, 1], None),  # wrong, and no known slip
    ],
)
def test_causal_masked_output_names_each_slip(answer, code):
    spec, params = table(OUTPUT)
    assert np.round(reference_answers(spec, params)["masked_output"], 4).tolist() == [0.7311, 0.8068]
    grade = grade_part(spec, params, "masked_output", answer)
    assert (grade.correct, grade.misconception) == (code is None and answer == [0.7311, 0.8068], code)
    if code is not None:
        assert grade.feedback.endswith(MISCONCEPTIONS[code])


@pytest.mark.parametrize(("slug", "part"), [(WEIGHTS, "masked_weights"), (OUTPUT, "masked_output")])
def test_on_drawn_variants_each_slip_is_named_unless_it_changes_nothing(slug, part):
    spec = load_spec(bank_source(slug))
    named = set()
    for seed in range(40):
        params = draw_variant(spec, seed).params
        diagnose = part_options(spec, params, part)["diagnose"]
        quantity, row = diagnose["quantity"], diagnose["query_index"]
        right = np.asarray(reference_answers(spec, params)[part], dtype=float)
        assert grade_part(spec, params, part, np.round(right, 4).tolist()).misconception is None
        for mistake in MASK_MISTAKES:
            slipped = attention_quantity(diagnose["Q"], diagnose["K"], diagnose["V"], quantity, mistake,
                                         mask="causal")[row]
            grade = grade_part(spec, params, part, np.round(slipped, 4).tolist())
            if np.allclose(slipped, right, rtol=1e-3, atol=5e-5):
                assert grade.correct and grade.misconception is None  # nothing to name
            else:
                # Named; on a rare variant another listed slip gives the same numbers and
                # is named first (an output of two value columns can coincide).
                assert not grade.correct and grade.misconception is not None
                named.add(grade.misconception)
    assert named >= set(MASK_MISTAKES)


@pytest.mark.parametrize("slug", [WEIGHTS, OUTPUT])
def test_the_masked_exercises_pass_their_self_test(slug):
    spec = load_spec(bank_source(slug))
    for seed in range(10):
        result = self_test_variant(spec, draw_variant(spec, seed).params)
        assert result.failures == []
    result = self_test_variant(*table(slug))
    assert result.failures == []


def test_a_targeted_variant_measures_the_mask_slip_with_the_mask():
    spec, params = table(WEIGHTS)
    options = part_options(spec, params, "masked_weights")
    # no mask: [0.276, 0.1015, 0.4551, 0.1674] against [0.7311, 0.2689, 0, 0], tolerance 5e-5
    assert slip_separation(diagnose=options["diagnose"], options=options, misconception="no_mask") == pytest.approx(
        (0.7311 - 0.276) / 5e-5, rel=1e-3)


def test_mask_slips_reveal_the_softmax_skill():
    assert {skill_for_misconception(code) for code in MASK_MISTAKES} == {"softmax"}
