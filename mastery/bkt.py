"""Bayesian Knowledge Tracing (Corbett & Anderson, 1995): the update after one observed
attempt, the replay of a whole history, and an EM fit of the parameters per skill.

Pure Python and NumPy, no Django. The model is the two-state hidden Markov model of
standard BKT: a skill is *known* or not; a known skill is answered right unless the student
slips (``slip``), an unknown one only by a guess (``guess``); after each attempt an unknown
skill becomes known with probability ``learn``, and (here) a known one is never forgotten
(``forget`` = 0). ``prior`` is P(known) before the first attempt.

The fit is Baum–Welch (expectation–maximisation on the same HMM), which is what pyBKT's
``EM_fit`` does; pyBKT itself is not used because its fit fails under NumPy 2.4 (it stores
1-element arrays into scalars) and its import needs scikit-learn < 1.7.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BKTParams:
    prior: float
    learn: float
    guess: float
    slip: float
    forget: float = 0.0

    def __post_init__(self):
        for name in ("prior", "learn", "guess", "slip", "forget"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
        if self.guess + self.slip >= 1.0:
            # Otherwise a right answer would be evidence of *not* knowing the skill.
            raise ValueError(f"guess + slip must be below 1, got {self.guess} + {self.slip}")


# Before there is data to fit: most parts ask for typed numbers, matrices or expressions,
# which are hard to guess (guess 0.1); an arithmetic slip is as likely (slip 0.1); about one
# student in three arrives knowing a skill from the chapter (prior 0.3); and one attempt
# with feedback teaches a skill with probability 0.15 (learn, within the 0.1–0.3 range
# fitted in the BKT literature for step-based tutors).
DEFAULT_PARAMS = BKTParams(prior=0.3, learn=0.15, guess=0.1, slip=0.1, forget=0.0)


def posterior(p_known: float, correct: bool, params: BKTParams) -> float:
    """P(known | this attempt's outcome), before any learning from the attempt."""
    if correct:
        known, unknown = p_known * (1.0 - params.slip), (1.0 - p_known) * params.guess
    else:
        known, unknown = p_known * params.slip, (1.0 - p_known) * (1.0 - params.guess)
    total = known + unknown
    return known / total if total > 0.0 else p_known


def posterior_partial(p_known: float, credit: float, params: BKTParams) -> float:
    """P(known) after an answer given partial credit in [0, 1] (a person's 0.8): the right
    and the wrong posteriors weighed by the credit. Credit 1 and 0 are the plain updates;
    any credit above P(right answer | p_known) raises P(known)."""
    credit = min(max(float(credit), 0.0), 1.0)
    return credit * posterior(p_known, True, params) + (1.0 - credit) * posterior(p_known, False, params)


def update(p_known: float, correct: bool | float, params: BKTParams) -> float:
    """P(known) after one attempt: the Bayes posterior, then the learning step. A float
    outcome is partial credit (``posterior_partial``)."""
    if isinstance(correct, bool):
        conditioned = posterior(p_known, correct, params)
    else:
        conditioned = posterior_partial(p_known, correct, params)
    return conditioned * (1.0 - params.forget) + (1.0 - conditioned) * params.learn


def replay(outcomes: Iterable[bool | float], params: BKTParams) -> float:
    """P(known) after a whole ordered history of outcomes (right/wrong, or partial credit
    as a float), starting from the prior."""
    p_known = params.prior
    for correct in outcomes:
        p_known = update(p_known, correct if isinstance(correct, float) else bool(correct), params)
    return p_known


def p_correct(p_known: float, params: BKTParams) -> float:
    """The predicted chance that the next attempt is right."""
    return p_known * (1.0 - params.slip) + (1.0 - p_known) * params.guess


# --------------------------------------------------------------------------- fitting


@dataclass(frozen=True)
class FitResult:
    params: BKTParams
    log_likelihood: float
    iterations: int
    sequences: int
    observations: int


# Bounds keep the fit identifiable: without them EM can swap the meaning of the two states
# ("known" answered wrongly), the degenerate solution BKT papers warn about.
MAX_GUESS = 0.3
MAX_SLIP = 0.3
EPSILON = 1e-4


def log_likelihood(sequences: Sequence[Sequence[bool]], params: BKTParams) -> float:
    """log P(all sequences | params) by the forward algorithm."""
    return sum(_forward(batch, params)[2] for batch in _batches(sequences))


@dataclass(frozen=True)
class _Batch:
    """Sequences of similar length, padded at the end: ``correct`` and ``observed`` are
    (S, T); a padded step is "no observation" (emission 1 in both states), which changes
    neither the likelihood nor the posteriors of the real steps."""

    correct: np.ndarray
    observed: np.ndarray


def _batches(sequences: Sequence[Sequence[bool]]) -> list[_Batch]:
    # Lengths in (2^(k-1), 2^k] share a batch, so padding at most doubles the work while the
    # loop over time steps runs once per batch, not once per student.
    buckets: dict[int, list[Sequence[bool]]] = defaultdict(list)
    for sequence in sequences:
        if len(sequence):
            buckets[(len(sequence) - 1).bit_length()].append(sequence)
    batches = []
    for key in sorted(buckets):
        group = buckets[key]
        steps = max(len(sequence) for sequence in group)
        correct = np.zeros((len(group), steps), dtype=bool)
        observed = np.zeros((len(group), steps), dtype=bool)
        for row, sequence in enumerate(group):
            correct[row, : len(sequence)] = np.asarray(sequence, dtype=bool)
            observed[row, : len(sequence)] = True
        batches.append(_Batch(correct, observed))
    return batches


def _emission(params: BKTParams, batch: _Batch) -> np.ndarray:
    # (S, T, 2): P(observation | unknown), P(observation | known); 1 where nothing was observed
    right = np.array([params.guess, 1.0 - params.slip])
    emission = np.where(batch.correct[..., None], right, 1.0 - right)
    return np.where(batch.observed[..., None], emission, 1.0)


def _transition(params: BKTParams) -> np.ndarray:
    # rows: from (unknown, known); columns: to (unknown, known)
    return np.array([[1.0 - params.learn, params.learn], [params.forget, 1.0 - params.forget]])


def _forward(batch: _Batch, params: BKTParams):
    """Scaled forward messages (S, T, 2), the scales (S, T), and the total log-likelihood."""
    emission, transition = _emission(params, batch), _transition(params)
    sequences, steps = batch.correct.shape
    alpha, scales = np.empty((sequences, steps, 2)), np.empty((sequences, steps))
    state = np.tile([1.0 - params.prior, params.prior], (sequences, 1))  # (S, 2)
    for t in range(steps):
        joint = state * emission[:, t]
        scales[:, t] = joint.sum(axis=1)
        alpha[:, t] = joint / scales[:, t, None]
        state = alpha[:, t] @ transition  # (S, 2) x (2, 2) -> (S, 2)
    return alpha, scales, float(np.log(scales).sum())


def _expected_counts(batch: _Batch, params: BKTParams):
    """The E-step of one batch: P(state at t) (S, T, 2), expected transitions summed over
    sequences and steps (2, 2), and the batch's log-likelihood."""
    alpha, scales, loglike = _forward(batch, params)
    emission, transition = _emission(params, batch), _transition(params)
    sequences, steps = batch.correct.shape
    beta = np.ones((sequences, steps, 2))
    for t in range(steps - 2, -1, -1):
        ahead = emission[:, t + 1] * beta[:, t + 1]  # (S, 2)
        beta[:, t] = ahead @ transition.T / scales[:, t + 1, None]  # (S, 2) x (2, 2) -> (S, 2)
    gamma = alpha * beta
    gamma /= gamma.sum(axis=2, keepdims=True)
    # xi[s, t, i, j] = P(state i at t, state j at t + 1 | sequence s), for real pairs only
    ahead = emission[:, 1:] * beta[:, 1:]  # (S, T-1, 2)
    pairs = alpha[:, :-1, :, None] * transition * ahead[:, :, None, :] / scales[:, 1:, None, None]
    pairs = pairs[batch.observed[:, 1:]]  # (pairs, 2, 2)
    xi = (pairs / pairs.sum(axis=(1, 2), keepdims=True)).sum(axis=0) if len(pairs) else np.zeros((2, 2))
    return gamma, xi, loglike


def fit(
    sequences: Sequence[Sequence[bool]],
    *,
    start: BKTParams = DEFAULT_PARAMS,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
) -> FitResult:
    """Fit prior, learn, guess and slip (forget stays 0) to students' ordered outcome
    sequences by EM. Deterministic for the same input; each iteration never lowers the
    likelihood except where the bounds clip a parameter."""
    batches = _batches(sequences)
    if not batches:
        raise ValueError("no attempts to fit")
    count = sum(len(batch.correct) for batch in batches)
    params, previous, iterations = start, -math.inf, 0
    for iterations in range(1, max_iterations + 1):
        first_known = 0.0
        xi = np.zeros((2, 2))
        right_when = np.zeros(2)  # expected right answers in (unknown, known)
        total_when = np.zeros(2)
        loglike = 0.0
        for batch in batches:
            gamma, batch_xi, batch_loglike = _expected_counts(batch, params)
            loglike += batch_loglike
            first_known += gamma[:, 0, 1].sum()
            xi += batch_xi
            right_when += gamma[batch.observed & batch.correct].sum(axis=0)
            total_when += gamma[batch.observed].sum(axis=0)
        learned, unknown_before = xi[0, 1], xi[0].sum()
        params = BKTParams(
            prior=_clip(first_known / count, EPSILON, 1.0 - EPSILON),
            learn=_clip(learned / unknown_before if unknown_before > 0 else params.learn, EPSILON, 1.0 - EPSILON),
            guess=_clip(right_when[0] / total_when[0] if total_when[0] > 0 else params.guess, EPSILON, MAX_GUESS),
            slip=_clip(1.0 - right_when[1] / total_when[1] if total_when[1] > 0 else params.slip, EPSILON, MAX_SLIP),
            forget=0.0,
        )
        if loglike - previous < tolerance:
            break
        previous = loglike
    return FitResult(
        params=params,
        log_likelihood=log_likelihood(sequences, params),
        iterations=iterations,
        sequences=count,
        observations=int(sum(batch.observed.sum() for batch in batches)),
    )


def _clip(value: float, low: float, high: float) -> float:
    return float(min(max(value, low), high))
