"""The BKT update and fit (pure, no database), against values worked out by hand from the
BKT equations:

    P(L | right) = P(L)(1 − s) / (P(L)(1 − s) + (1 − P(L)) g)
    P(L | wrong) = P(L) s / (P(L) s + (1 − P(L))(1 − g))
    P(L next)    = P(L | obs)(1 − f) + (1 − P(L | obs)) T
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from mastery import bkt

DEFAULTS = bkt.DEFAULT_PARAMS  # prior 0.3, learn 0.15, guess 0.1, slip 0.1
OTHER = bkt.BKTParams(prior=0.5, learn=0.2, guess=0.25, slip=0.05)


def test_defaults_are_the_documented_ones():
    assert (DEFAULTS.prior, DEFAULTS.learn, DEFAULTS.guess, DEFAULTS.slip, DEFAULTS.forget) == (0.3, 0.15, 0.1, 0.1, 0.0)


@pytest.mark.parametrize(
    ("params", "p_known", "correct", "expected_posterior", "expected_next"),
    [
        # right from 0.3: 0.27 / (0.27 + 0.07) = 27/34; then 27/34 + (7/34)(0.15) = 28.05/34 = 0.825
        (DEFAULTS, 0.3, True, Fraction(27, 34), Fraction(33, 40)),
        # wrong from 0.3: 0.03 / (0.03 + 0.63) = 1/22; then 1/22 + (21/22)(0.15) = 4.15/22 = 83/440
        (DEFAULTS, 0.3, False, Fraction(1, 22), Fraction(83, 440)),
        # right from 0.5: 0.475 / (0.475 + 0.125) = 19/24; then 19/24 + (5/24)(0.2) = 20/24 = 5/6
        (OTHER, 0.5, True, Fraction(19, 24), Fraction(5, 6)),
        # wrong from 0.5: 0.025 / (0.025 + 0.375) = 1/16; then 1/16 + (15/16)(0.2) = 4/16 = 1/4
        (OTHER, 0.5, False, Fraction(1, 16), Fraction(1, 4)),
        # certainty stays certain; from 0 only learning moves it
        (OTHER, 0.0, True, Fraction(0), Fraction(1, 5)),
        (OTHER, 1.0, False, Fraction(1), Fraction(1)),
    ],
)
def test_one_update_matches_the_hand_computed_posterior_and_learning_step(
    params, p_known, correct, expected_posterior, expected_next
):
    assert bkt.posterior(p_known, correct, params) == pytest.approx(float(expected_posterior), abs=1e-12)
    assert bkt.update(p_known, correct, params) == pytest.approx(float(expected_next), abs=1e-12)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], Fraction(3, 10)),
        ([True], Fraction(33, 40)),
        ([False], Fraction(83, 440)),
        # from 33/40, right: (33/40)(0.9) / ((33/40)(0.9) + (7/40)(0.1)) = 29.7/30.4; + learning -> 5961/6080
        ([True, True], Fraction(5961, 6080)),
        # from 83/440, wrong: (83/440)(0.1) / ((83/440)(0.1) + (357/440)(0.9)) = 8.3/329.6; + learning -> 11299/65920
        ([False, False], Fraction(11299, 65920)),
        ([False, True], Fraction(5337, 7360)),
        ([True, False], Fraction(283, 640)),
        ([False, False, True, True], Fraction(14754393, 15339040)),
    ],
)
def test_replay_of_a_history_matches_the_hand_computed_chain(outcomes, expected):
    assert bkt.replay(outcomes, DEFAULTS) == pytest.approx(float(expected), abs=1e-12)


def test_forgetting_when_set_moves_known_mass_back():
    params = bkt.BKTParams(prior=0.5, learn=0.2, guess=0.25, slip=0.05, forget=0.1)
    # posterior 19/24 as above; then (19/24)(0.9) + (5/24)(0.2) = 18.1/24
    assert bkt.update(0.5, True, params) == pytest.approx(18.1 / 24, abs=1e-12)


def test_predicted_chance_of_a_right_answer():
    assert bkt.p_correct(0.3, DEFAULTS) == pytest.approx(0.3 * 0.9 + 0.7 * 0.1, abs=1e-12)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"prior": 1.5}, "prior must be a probability in [0, 1], got 1.5"),
        ({"learn": -0.1}, "learn must be a probability in [0, 1], got -0.1"),
        ({"slip": math.nan}, "slip must be a probability in [0, 1], got nan"),
        ({"guess": "0.2"}, "guess must be a probability in [0, 1], got '0.2'"),
        ({"guess": 0.6, "slip": 0.4}, "guess + slip must be below 1, got 0.6 + 0.4"),
    ],
)
def test_invalid_parameters_are_refused(fields, message):
    values = {"prior": 0.3, "learn": 0.1, "guess": 0.2, "slip": 0.1} | fields
    with pytest.raises(ValueError) as refused:
        bkt.BKTParams(**values)
    assert str(refused.value) == message


# --------------------------------------------------------------------------- the fit


def test_log_likelihood_matches_the_hand_computed_probability_of_the_answers():
    # P(right first) = 0.3(0.9) + 0.7(0.1) = 0.34; then P(known) = 0.825, P(right) = 0.825(0.9) + 0.175(0.1) = 0.76
    assert bkt.log_likelihood([[True]], DEFAULTS) == pytest.approx(math.log(0.34), abs=1e-12)
    assert bkt.log_likelihood([[True, False]], DEFAULTS) == pytest.approx(math.log(0.34 * 0.24), abs=1e-12)
    assert bkt.log_likelihood([[True], [True, False], []], DEFAULTS) == pytest.approx(
        math.log(0.34) + math.log(0.34 * 0.24), abs=1e-12
    )


def simulate(params: bkt.BKTParams, *, students: int, attempts: int, seed: int) -> list[list[bool]]:
    rng = np.random.default_rng(seed)
    sequences = []
    for _ in range(students):
        known = rng.random() < params.prior
        sequence = []
        for _ in range(attempts):
            sequence.append(bool(rng.random() < (1 - params.slip if known else params.guess)))
            known = known or rng.random() < params.learn
        sequences.append(sequence)
    return sequences


def test_fit_recovers_the_parameters_that_generated_the_data():
    truth = bkt.BKTParams(prior=0.4, learn=0.2, guess=0.15, slip=0.08)
    sequences = simulate(truth, students=1500, attempts=10, seed=7)
    result = bkt.fit(sequences)
    fitted = result.params
    assert (result.sequences, result.observations) == (1500, 15000)
    assert abs(fitted.prior - truth.prior) < 0.04
    assert abs(fitted.learn - truth.learn) < 0.04
    assert abs(fitted.guess - truth.guess) < 0.03
    assert abs(fitted.slip - truth.slip) < 0.03
    assert fitted.forget == 0.0
    # EM's fixed point is at least as likely as the truth on the data it was fitted to
    assert result.log_likelihood >= bkt.log_likelihood(sequences, truth)
    assert result.log_likelihood > bkt.log_likelihood(sequences, DEFAULTS)


def test_fit_is_deterministic_and_keeps_guess_and_slip_within_bounds():
    everyone_right = [[True] * 6 for _ in range(30)]
    first, second = bkt.fit(everyone_right), bkt.fit(everyone_right)
    assert first == second
    assert first.params.guess <= bkt.MAX_GUESS and first.params.slip <= bkt.MAX_SLIP
    everyone_wrong = [[False] * 6 for _ in range(30)]
    fitted = bkt.fit(everyone_wrong).params
    assert fitted.guess <= bkt.MAX_GUESS and fitted.slip <= bkt.MAX_SLIP
    assert fitted.prior < 0.01  # nobody knows it


def test_fit_without_any_attempt_is_refused():
    with pytest.raises(ValueError, match="^no attempts to fit$"):
        bkt.fit([[], []])


# --------------------------------------------------------------------------- against enumeration


def path_probabilities(sequence, params):
    """Every hidden path (known or not at each step) with P(path, outcomes): the HMM's
    definition, summed by brute force instead of the forward-backward recursions."""
    import itertools

    paths = []
    for path in itertools.product((0, 1), repeat=len(sequence)):
        if any(a == 1 and b == 0 for a, b in zip(path, path[1:])):  # forget = 0
            continue
        probability = params.prior if path[0] else 1 - params.prior
        for step, (known, correct) in enumerate(zip(path, sequence)):
            if step:
                probability *= 1.0 if path[step - 1] else (params.learn if known else 1 - params.learn)
            right = 1 - params.slip if known else params.guess
            probability *= right if correct else 1 - right
        paths.append((path, probability))
    return paths


MIXED = [[True], [False, True], [False, False, True, True], [True, False, True], [False] * 5, [True, True, False, True, True, True]]


def test_log_likelihood_of_mixed_lengths_equals_the_sum_over_every_hidden_path():
    expected = sum(math.log(sum(p for _, p in path_probabilities(sequence, OTHER))) for sequence in MIXED)
    assert bkt.log_likelihood(MIXED, OTHER) == pytest.approx(expected, abs=1e-12)


def test_one_em_step_equals_the_expected_counts_over_every_hidden_path():
    first_known = learned = unknown_before = right_unknown = total_unknown = right_known = total_known = 0.0
    for sequence in MIXED:
        paths = path_probabilities(sequence, OTHER)
        total = sum(p for _, p in paths)
        for path, p in paths:
            weight = p / total
            first_known += weight * path[0]
            for a, b in zip(path, path[1:]):
                if a == 0:
                    unknown_before += weight
                    learned += weight * b
            for known, correct in zip(path, sequence):
                if known:
                    total_known += weight
                    right_known += weight * correct
                else:
                    total_unknown += weight
                    right_unknown += weight * correct
    stepped = bkt.fit(MIXED, start=OTHER, max_iterations=1).params
    assert stepped.prior == pytest.approx(first_known / len(MIXED), abs=1e-12)
    assert stepped.learn == pytest.approx(learned / unknown_before, abs=1e-12)
    assert stepped.guess == pytest.approx(min(right_unknown / total_unknown, bkt.MAX_GUESS), abs=1e-12)
    assert stepped.slip == pytest.approx(min(1 - right_known / total_known, bkt.MAX_SLIP), abs=1e-12)


def test_partial_credit_weighs_the_right_and_wrong_posteriors():
    params = bkt.DEFAULT_PARAMS
    # P(L | right) = 27/34, P(L | wrong) = 1/22 at 0.3; 0.8 of each: 241/374, then learning.
    conditioned = Fraction(4, 5) * Fraction(27, 34) + Fraction(1, 5) * Fraction(1, 22)
    assert conditioned == Fraction(241, 374)
    assert bkt.posterior_partial(0.3, 0.8, params) == pytest.approx(float(conditioned), abs=1e-12)
    assert bkt.update(0.3, 0.8, params) == pytest.approx(float(conditioned + (1 - conditioned) * Fraction(3, 20)), abs=1e-12)
    # 0.8 raises P(known) from the prior; a plain wrong answer lowers it to 83/440.
    assert bkt.update(0.3, 0.8, params) > 0.3 > bkt.update(0.3, False, params) == pytest.approx(83 / 440)
    assert bkt.update(0.3, 1.0, params) == pytest.approx(bkt.update(0.3, True, params))
    assert bkt.update(0.3, 0.0, params) == pytest.approx(bkt.update(0.3, False, params))
    assert bkt.replay([True, 0.8], params) == pytest.approx(bkt.update(bkt.update(0.3, True, params), 0.8, params))
