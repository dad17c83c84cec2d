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


def update(p_known: float, correct: bool, params: BKTParams) -> float:
    """P(known) after one attempt: the Bayes posterior, then the learning step."""
    conditioned = posterior(p_known, correct, params)
    return conditioned * (1.0 - params.forget) + (1.0 - conditioned) * params.learn


def replay(outcomes: Iterable[bool], params: BKTParams) -> float:
    """P(known) after a whole ordered history of outcomes, starting from the prior."""
    p_known = params.prior
    for correct in outcomes:
        p_known = update(p_known, bool(correct), params)
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
    return sum(_forward(np.asarray(sequence, dtype=bool), params)[1] for sequence in sequences if len(sequence))


def _emission(params: BKTParams, correct: np.ndarray) -> np.ndarray:
    # (T, 2): P(observation | unknown), P(observation | known)
    right = np.array([params.guess, 1.0 - params.slip])
    return np.where(correct[:, None], right[None, :], 1.0 - right[None, :])


def _transition(params: BKTParams) -> np.ndarray:
    # rows: from (unknown, known); columns: to (unknown, known)
    return np.array([[1.0 - params.learn, params.learn], [params.forget, 1.0 - params.forget]])


def _forward(correct: np.ndarray, params: BKTParams):
    """Scaled forward messages (T, 2), the log-likelihood, and the scales (T,)."""
    emission, transition = _emission(params, correct), _transition(params)
    steps = len(correct)
    alpha, scales = np.empty((steps, 2)), np.empty(steps)
    state = np.array([1.0 - params.prior, params.prior])
    for t in range(steps):
        joint = state * emission[t]
        scales[t] = joint.sum()
        alpha[t] = joint / scales[t]
        state = alpha[t] @ transition  # (2,) x (2, 2) -> (2,)
    return alpha, float(np.log(scales).sum()), scales


def _expected_counts(correct: np.ndarray, params: BKTParams):
    """One sequence's E-step: P(known at t), expected transitions, and its log-likelihood."""
    alpha, loglike, scales = _forward(correct, params)
    emission, transition = _emission(params, correct), _transition(params)
    steps = len(correct)
    beta = np.ones((steps, 2))
    for t in range(steps - 2, -1, -1):
        beta[t] = transition @ (emission[t + 1] * beta[t + 1]) / scales[t + 1]  # (2, 2) x (2,) -> (2,)
    gamma = alpha * beta  # (T, 2): P(state at t | sequence)
    gamma /= gamma.sum(axis=1, keepdims=True)
    xi = np.zeros((2, 2))  # expected transitions summed over t
    for t in range(steps - 1):
        pair = alpha[t][:, None] * transition * (emission[t + 1] * beta[t + 1])[None, :] / scales[t + 1]
        xi += pair / pair.sum()
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
    arrays = [np.asarray(sequence, dtype=bool) for sequence in sequences if len(sequence)]
    if not arrays:
        raise ValueError("no attempts to fit")
    params, previous, iterations = start, -math.inf, 0
    for iterations in range(1, max_iterations + 1):
        first_known = learned = unknown_before = 0.0
        right_when = np.zeros(2)  # expected right answers in (unknown, known)
        total_when = np.zeros(2)
        loglike = 0.0
        for correct in arrays:
            gamma, xi, sequence_loglike = _expected_counts(correct, params)
            loglike += sequence_loglike
            first_known += gamma[0, 1]
            learned += xi[0, 1]
            unknown_before += xi[0].sum()
            right_when += gamma[correct].sum(axis=0)
            total_when += gamma.sum(axis=0)
        params = BKTParams(
            prior=_clip(first_known / len(arrays), EPSILON, 1.0 - EPSILON),
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
        log_likelihood=log_likelihood(arrays, params),
        iterations=iterations,
        sequences=len(arrays),
        observations=int(sum(len(a) for a in arrays)),
    )


def _clip(value: float, low: float, high: float) -> float:
    return float(min(max(value, low), high))
