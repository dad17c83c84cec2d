"""Variant fairness statistics: the chi-square tail, Holm, binning, minimum samples,
variant features, and a fixed-seed simulation of the false-positive rate and power."""

from pathlib import Path

import numpy as np
import pytest

from exercises.engine import draw_variant, load_spec
from exercises.engine.fairness import (
    MIN_PER_BIN,
    Observation,
    adjust_family,
    bin_labels,
    chi2_sf,
    chi_square_independence,
    exercise_tests,
    factor_test,
    holm_adjust,
    variant_features,
    variant_spread,
)

BANK = Path(__file__).resolve().parents[1] / "bank"


@pytest.mark.parametrize(
    ("x", "df", "p"),
    # the 5 % critical values of the chi-square tables, and two points off them
    [(3.841459, 1, 0.05), (5.991465, 2, 0.05), (7.814728, 3, 0.05), (9.487729, 4, 0.05),
     (11.070498, 5, 0.05), (6.634897, 1, 0.01), (0.5, 3, 0.918891), (0.0, 2, 1.0)],
)
def test_chi_square_tail_matches_the_tables(x, df, p):
    assert chi2_sf(x, df) == pytest.approx(p, abs=2e-6)


def test_chi_square_refuses_a_table_with_one_group():
    with pytest.raises(ValueError):
        chi_square_independence([[3, 4]])


def test_pearson_statistic_of_a_two_by_two_table():
    result = chi_square_independence([[30, 20], [10, 40]])
    assert (round(result.statistic, 6), result.df, round(result.p_value, 8), result.min_expected) == (
        16.666667, 1, 4.456e-05, 20.0,
    )


def test_holm_adjusts_step_down_and_keeps_the_order():
    assert holm_adjust([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert holm_adjust([]) == []


def test_few_values_bin_by_value_and_many_by_tercile():
    assert bin_labels([64, 16, 64, 256]) == ["64", "16", "64", "256"]
    assert bin_labels(list(range(1, 10))) == ["≤ 3.667"] * 3 + ["3.667 – 6.333"] * 3 + ["> 6.333"] * 3


def test_a_bin_under_the_minimum_is_left_out_and_one_bin_is_not_a_test():
    labels = ["a"] * MIN_PER_BIN + ["b"] * (MIN_PER_BIN - 1)
    test = factor_test("x", "d_k", labels, [True, False] * MIN_PER_BIN)
    assert [(b.label, b.total) for b in test.left_out] == [("b", MIN_PER_BIN - 1)]
    assert not test.tested and test.reason.startswith("too few answers")


def test_no_spread_in_outcomes_is_not_a_test():
    test = factor_test("x", "d_k", ["a"] * 30 + ["b"] * 30, [True] * 60)
    assert not test.tested and "nothing to compare" in test.reason


def test_a_clearly_harder_family_is_flagged_after_correction():
    observations = (
        [Observation(correct=i < 35, factors={"d_k": 4}) for i in range(50)]
        + [Observation(correct=i < 36, factors={"d_k": 9}) for i in range(50)]
        + [Observation(correct=i < 15, factors={"d_k": 16}) for i in range(50)]
    )
    (test,) = exercise_tests("ex", observations)
    adjust_family([test])
    assert test.flagged and test.hardest.label == "16"
    assert [(b.label, b.right, b.total) for b in test.bins] == [("4", 35, 50), ("9", 36, 50), ("16", 15, 50)]


def test_a_factor_grouping_students_like_an_earlier_one_is_not_tested_twice():
    observations = [Observation(correct=i % 3 == 0, factors={"d_k": d, "magnitude": d * 2, "digits": i % 2})
                    for i, d in enumerate([4, 9, 16] * 30)]
    assert [test.factor for test in exercise_tests("ex", observations)] == ["d_k", "digits"]


def test_tercile_bins_are_listed_low_to_high():
    observations = [Observation(correct=i % 2 == 0, factors={"top_weight": i / 100}) for i in range(90)]
    (test,) = exercise_tests("ex", observations)
    assert [b.label for b in test.bins] == ["≤ 0.2967", "0.2967 – 0.5933", "> 0.5933"]


def _class(rng, students: int, share_by_d_k: dict) -> list[Observation]:
    """Simulated first tries: d_k drawn uniformly from 4, 9, 16, and an irrelevant second
    factor, so every class is a family of two tests, as on a real report."""
    values = list(share_by_d_k)
    observations = []
    for _ in range(students):
        d_k = values[rng.integers(len(values))]
        factors = {"d_k": d_k, "magnitude": float(rng.integers(1, 10))}
        observations.append(Observation(correct=bool(rng.random() < share_by_d_k[d_k]), factors=factors))
    return observations


def _flagged(observations) -> bool:
    tests = exercise_tests("simulated", observations)
    adjust_family(tests)
    return any(test.flagged for test in tests)


def test_simulated_false_positive_rate_and_power_with_a_fixed_seed():
    """The figures docs/exercise-format.md states: a fair exercise is flagged at about the
    5 % family-wise level; one family right 45 % of the time among families right 70 %
    is caught in most classes of 300."""
    rng = np.random.default_rng(2027)
    runs = 300
    fair = sum(_flagged(_class(rng, 300, {4: 0.7, 9: 0.7, 16: 0.7})) for _ in range(runs))
    harder = sum(_flagged(_class(rng, 300, {4: 0.7, 9: 0.7, 16: 0.45})) for _ in range(runs))
    assert fair / runs <= 0.06
    assert harder / runs >= 0.9
    assert (fair, harder) == (14, 282)  # 4.7 % and 94 %


def test_features_of_the_chapter_variant():
    spec = load_spec((BANK / "attention-weights-one-query.yaml").read_text())
    params = draw_variant(spec, 0, name="chapter").params
    # weights [0.3875, 0.1425, 0.2350, 0.2350] (4 digits each), output
    # [1.6225, 0.3775, 1.8674, 1.0000] (5 + 4 + 5 + 5); the raw scores [5, 3, 4, 4] hold the 5
    assert variant_features(spec, params) == {"top_weight": 0.387456, "magnitude": 5.0, "digits": 35.0}


def test_features_without_weights_leave_top_weight_out():
    spec = load_spec((BANK / "multi-head-parameter-count.yaml").read_text())
    params = draw_variant(spec, 0, name="chapter").params
    # 512·64 = 32768, 3·8·512·64 = 786432, + 512² = 1048576
    assert variant_features(spec, params) == {"magnitude": 512.0, "digits": 18.0}


def test_spread_over_seeds_summarises_every_feature_and_scalar_parameter():
    spec = load_spec((BANK / "saturation-weight-ratio.yaml").read_text())
    spread = variant_spread(spec, seeds=40)
    assert spread["seeds"] == 40
    assert [f.feature for f in spread["features"]] == ["magnitude", "digits"]
    assert sum(count for _, count in spread["features"][0].histogram) == 40
    assert sorted(spread["parameters"]) == ["d_k", "gap"]
    assert sum(count for _, count in spread["parameters"]["d_k"]) == 40


def test_a_feature_with_few_values_gets_one_bar_per_value():
    spec = load_spec((BANK / "heatmap-reading.yaml").read_text())
    spread = {f.feature: f for f in variant_spread(spec, seeds=30)["features"]}
    assert [label for label, _ in spread["magnitude"].histogram] == ["2", "3"]
    assert sum(count for _, count in spread["digits"].histogram) == 30


@pytest.mark.parametrize(("p", "text"), [(0.04321, "0.0432"), (0.0001, "0.0001"), (0.00009, "< 0.0001"), (0.0, "< 0.0001"), (1.0, "1.0000")])
def test_a_p_value_reads_as_four_decimals_or_below_one_in_ten_thousand(p, text):
    from exercises.engine.fairness import p_value_text

    assert p_value_text(p) == text
