"""How clearly a variant tells a misconception's answer apart from the right one.

A practice variant meant to probe a student's slip is only useful if the slip's answer
is rejected by a wide margin: if the unscaled weights happened to round to the scaled
ones, the student who left √d_k out would be told "correct". The measure is in units of
the checker's own tolerance (``matrix.entry_tolerances``): the largest
``|slip - right| / tolerance`` over the entries the part asks for.
"""

from __future__ import annotations

import numpy as np

from grading.core.matrix import entry_tolerances
from grading.core.misconceptions import attention_quantity


def slip_answer(diagnose: dict, misconception: str):
    """The answer a student making ``misconception`` would give to a part with these
    ``diagnose`` options (as ``engine.part_options`` resolves them); None when the slip
    is impossible or identical to the right method on this variant."""
    try:
        full = attention_quantity(
            diagnose["Q"], diagnose["K"], diagnose["V"], diagnose.get("quantity", "weights"),
            misconception, diagnose.get("d_model"), mask=diagnose.get("mask"),
        )
    except ValueError:  # not a numeric attention slip (e.g. forgot_sigma)
        return None
    return _selected(full, diagnose)


def right_answer(diagnose: dict):
    full = attention_quantity(
        diagnose["Q"], diagnose["K"], diagnose["V"], diagnose.get("quantity", "weights"), mask=diagnose.get("mask")
    )
    return _selected(full, diagnose)


def _selected(full, diagnose: dict):
    if full is None:
        return None
    query_index = diagnose.get("query_index")
    if query_index is None:
        return full
    if not -full.shape[-2] <= query_index < full.shape[-2]:
        return None
    return full[..., query_index, :]


def slip_separation(*, diagnose: dict, options: dict, misconception: str) -> float | None:
    """The slip's distance from the right answer in tolerances (see the module docstring),
    or None when the slip cannot be made on this variant."""
    slip = slip_answer(diagnose, misconception)
    if slip is None:
        return None
    right = np.asarray(right_answer(diagnose), dtype=float)
    slip = np.asarray(slip, dtype=float)
    if slip.shape != right.shape or not np.all(np.isfinite(slip)):
        return None
    return float(np.max(_in_tolerances(np.abs(slip - right), entry_tolerances(right, options))))


def _in_tolerances(difference: np.ndarray, tolerances: np.ndarray) -> np.ndarray:
    """``difference / tolerances`` entry by entry. An entry with no tolerance (rtol and atol
    both 0: it must be exact) is infinitely far when it differs and 0 when it does not;
    before, 0 / 0 gave NaN (and a RuntimeWarning), and one NaN made the whole variant's
    separation NaN, so no variant ever counted as separated."""
    exact = tolerances <= 0
    ratios = difference / np.where(exact, 1.0, tolerances)
    return np.where(exact, np.where(difference > 0, np.inf, 0.0), ratios)
