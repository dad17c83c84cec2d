"""Variants drawn to probe one misconception: the slip's answer must be far from the right one.

A targeted draw is an ordinary draw (``draw_variant``: the same generators, the same
quality gates) from one of a bounded list of seeds derived from the caller's seed; the
first variant on which the misconception's answer lies at least ``factor`` tolerances
from the right answer (``grading.core.separation``) is taken. When none of the tries
separates, the caller gets None and falls back to a plain variant: the number of tries
is fixed, so a request never loops for ever.
"""

from __future__ import annotations

import hashlib

from .errors import VariantError
from .grading import part_options
from .spec import ExerciseSpec
from .variants import SEED_BITS, VariantDraw, draw_variant

SEPARATION_FACTOR = 10.0  # the slip must miss by at least ten times the part's tolerance
MAX_TARGET_TRIES = 32


def targeted_seed(seed: int, attempt: int) -> int:
    """The ``attempt``-th seed tried for ``seed`` (attempt 0 is the seed itself)."""
    if attempt == 0:
        return seed
    digest = hashlib.sha256(f"{int(seed)}:target:{int(attempt)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def draw_targeted_variant(
    spec: ExerciseSpec,
    seed: int,
    *,
    part_key: str,
    misconception: str,
    factor: float = SEPARATION_FACTOR,
    tries: int = MAX_TARGET_TRIES,
) -> VariantDraw | None:
    """The first gated variant from ``targeted_seed(seed, 0..tries-1)`` on which
    ``misconception`` misses part ``part_key`` by at least ``factor`` tolerances, or None
    (the part has no attention diagnosis, or no try separated)."""
    from grading.core.separation import slip_separation  # the checkers load only when needed

    try:
        part = spec.part(part_key)
    except KeyError:
        return None
    if not part.diagnose:
        return None
    for attempt in range(max(1, tries)):
        try:
            draw = draw_variant(spec, targeted_seed(seed, attempt))
        except VariantError:
            continue
        options = part_options(spec, draw.params, part_key)
        separation = slip_separation(
            diagnose=options["diagnose"], options=options, misconception=misconception
        )
        if separation is not None and separation >= factor:
            return draw
    return None
