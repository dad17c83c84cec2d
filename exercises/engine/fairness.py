"""Variant fairness: is one variant family (or one pool item) harder than the others?

Two halves, both pure (NumPy and ``math``; no Django, no SciPy):

* **What makes a variant easier, before anyone answers** — ``variant_features``
  measures a drawn variant: how close its attention weights are to uniform (the
  largest weight of any weight vector among the reference answers), how large its
  entries are (the largest absolute number among its parameters) and how many digits
  its answers need (significant digits of the numeric answers at their decimals).
  ``variant_spread`` summarises those over many seeds for the author's pre-flight view.

* **Whether first-try correctness differs, once students answered** — the observations
  are grouped into bins of one *factor* at a time (a drawn scalar parameter such as
  ``d_k``, or one of the features above), and a Pearson chi-square test of independence
  on the bins × {right, wrong} table asks whether the share right at the first try
  differs between bins beyond chance. Pools get the same test with one bin per item.
  Every test of one report is one family: p-values are Holm-adjusted together, and an
  exercise (or pool) is flagged when one of its tests has an adjusted p below ``ALPHA``.
  So a report of fair exercises flags anything at all with probability at most 5 %
  (family-wise), whatever the number of exercises on it.

Minimum sample: a bin enters a test only with ``MIN_PER_BIN`` observations; a test runs
only with two bins or more and an expected count of at least ``MIN_EXPECTED`` in every
cell (Cochran's rule, which keeps the chi-square approximation honest); otherwise the
test is reported as "too few answers", never as fair.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import ExpressionError
from .reference import reference_answers
from .spec import ExerciseSpec
from .variants import draw_variant

ALPHA = 0.05
MIN_PER_BIN = 20
MIN_EXPECTED = 5.0
MAX_VALUE_BINS = 4  # a factor with more distinct values is cut into terciles
FEATURES = ("top_weight", "magnitude", "digits")
FEATURE_SHORT_LABELS = {"top_weight": "largest weight", "magnitude": "largest entry", "digits": "digits needed"}
FEATURE_LABELS = {
    "top_weight": "largest attention weight (1/m is uniform)",
    "magnitude": "largest absolute entry of the parameters",
    "digits": "significant digits the numeric answers need",
}


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


def chi2_sf(x: float, df: int) -> float:
    """P(X ≥ x) for X chi-square with ``df`` degrees of freedom (closed form for
    whole df: a finite Poisson sum for even df, erfc plus a finite sum for odd df)."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if x <= 0:
        return 1.0
    half = x / 2.0
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    total = math.erfc(math.sqrt(half))
    if df > 1:
        term = math.sqrt(2.0 * x / math.pi) * math.exp(-half)
        partial = term
        for i in range(2, (df + 1) // 2):
            term *= x / (2 * i - 1)
            partial += term
        total += partial
    return min(1.0, total)


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    df: int
    p_value: float
    min_expected: float


def chi_square_independence(table: Sequence[Sequence[float]]) -> ChiSquare:
    """Pearson's chi-square test of independence for a groups × outcomes table of counts."""
    observed = np.asarray(table, dtype=float)
    if observed.ndim != 2 or observed.shape[0] < 2 or observed.shape[1] < 2:
        raise ValueError("need a table of at least 2 groups × 2 outcomes")
    total = observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / total  # (groups, outcomes)
    df = (observed.shape[0] - 1) * (observed.shape[1] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cells = np.where(expected > 0, (observed - expected) ** 2 / expected, 0.0)
    statistic = float(cells.sum())
    return ChiSquare(statistic=statistic, df=df, p_value=chi2_sf(statistic, df), min_expected=float(expected.min()))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1), in input order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (len(p_values) - rank) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted


# ---------------------------------------------------------------------------
# Variant features (what makes a variant easier)
# ---------------------------------------------------------------------------


def p_value_text(p: float) -> str:
    """A p-value as a person reads it: four decimals, "< 0.0001" below that (never "0.0000")."""
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}"


def variant_features(spec: ExerciseSpec, params: dict, references: dict | None = None) -> dict[str, float]:
    """The features of one variant that are defined for it (a subset of ``FEATURES``)."""
    if references is None:
        references = reference_answers(spec, params)
    features: dict[str, float] = {}
    weights = [vector for vector in _numeric_arrays(references.values()) if _is_weight_vector(vector)]
    weights += [vector for vector in _numeric_arrays(params.values()) if _is_weight_vector(vector)]
    if weights:
        features["top_weight"] = round(max(float(vector.max()) for vector in weights), 6)
    entries = [float(np.abs(array).max()) for array in _numeric_arrays(params.values())]
    if entries:
        features["magnitude"] = round(max(entries), 6)
    digits = [
        _answer_digits(references[part.key], part.decimals)
        for part in spec.parts
        if part.type in ("numeric", "matrix") and part.key in references
    ]
    if digits:
        features["digits"] = float(sum(digits))
    return features


def _numeric_arrays(values: Iterable) -> list[np.ndarray]:
    arrays = []
    for value in values:
        if isinstance(value, (bool, str)) or value is None:
            continue
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            continue
        if array.size and np.isfinite(array).all():
            arrays.append(array)
    return arrays


def _is_weight_vector(array: np.ndarray) -> bool:
    """A vector of at least two entries in [0, 1] that sums to 1 (each row of a matrix counts)."""
    if array.ndim not in (1, 2) or array.shape[-1] < 2:
        return False
    if array.min() < 0 or array.max() > 1:
        return False
    return bool((np.abs(array.sum(axis=-1) - 1.0) <= 1e-9).all())


def _answer_digits(value, decimals: int) -> int:
    """Significant digits of the answer written at ``decimals`` (0.0723 → 3, 1024 → 4, 0 → 1)."""
    total = 0
    for number in np.atleast_1d(np.asarray(value, dtype=float)).ravel():
        text = f"{abs(float(number)):.{decimals}f}".replace(".", "").lstrip("0")
        total += max(1, len(text))
    return total


@dataclass(frozen=True)
class FeatureSpread:
    feature: str
    label: str
    seeds: int
    minimum: float
    p10: float
    median: float
    p90: float
    maximum: float
    histogram: list[tuple[str, int]]  # (bin label, seeds)

    @property
    def varies(self) -> bool:
        return self.maximum > self.minimum


def variant_spread(
    spec: ExerciseSpec,
    *,
    seeds: int = 200,
    draw: Callable[[ExerciseSpec, int], dict] | None = None,
    bins: int = 8,
) -> dict:
    """Each feature over ``seeds`` drawn variants, and how often each value of every drawn
    scalar parameter (``d_k``, ``h``, …) comes up. ``draw(spec, seed) -> params`` defaults
    to the engine's gated draw; a draw that returns None (no acceptable variant) or whose
    answers cannot be computed is counted in ``unusable`` and otherwise left out."""
    if draw is None:
        def draw(spec, seed):
            return draw_variant(spec, seed).params

    values: dict[str, list[float]] = {feature: [] for feature in FEATURES}
    parameter_counts: dict[str, Counter] = {}
    scalars = scalar_parameters(spec)
    unusable = 0
    for seed in range(seeds):
        params = draw(spec, seed)
        try:
            features = variant_features(spec, params) if params is not None else None
        except (ExpressionError, ValueError, KeyError):
            features = None
        if features is None:
            unusable += 1
            continue
        for feature, value in features.items():
            values[feature].append(value)
        for name in scalars:
            parameter_counts.setdefault(name, Counter())[_label(params.get(name))] += 1
    spreads = [_spread(feature, found, bins) for feature, found in values.items() if found]
    return {
        "seeds": seeds,
        "unusable": unusable,
        "features": spreads,
        "parameters": {name: sorted(counts.items(), key=lambda kv: _sort_key(kv[0])) for name, counts in parameter_counts.items()},
    }


def _spread(feature: str, found: list[float], bins: int) -> FeatureSpread:
    array = np.asarray(found, dtype=float)
    low, high = float(array.min()), float(array.max())
    distinct = sorted(set(found))
    if len(distinct) <= bins:  # few values (digits, small integers): one bar per value
        counts = Counter(found)
        histogram = [(_label(value), counts[value]) for value in distinct]
    else:
        edges = np.linspace(low, high, bins + 1)
        counts, _ = np.histogram(array, bins=edges)
        histogram = [(f"{edges[i]:.3g}–{edges[i + 1]:.3g}", int(count)) for i, count in enumerate(counts)]
    return FeatureSpread(
        feature=feature, label=FEATURE_LABELS[feature], seeds=len(found), minimum=low,
        p10=float(np.quantile(array, 0.1)), median=float(np.median(array)),
        p90=float(np.quantile(array, 0.9)), maximum=high, histogram=histogram,
    )


def scalar_parameters(spec: ExerciseSpec) -> list[str]:
    """The drawn (not derived, not fixed) parameters that are single numbers: the ones a
    variant family is named by (``d_k = 64``)."""
    return [
        parameter.name for parameter in spec.parameters
        if parameter.generator in ("choice", "int_range")
    ]


def _label(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _sort_key(label: str):
    """Numbers in order; tercile labels low, middle, high; anything else after, by text."""
    for prefix, rank in (("≤ ", 0), ("> ", 2)):
        if label.startswith(prefix):
            return _number_key(label[len(prefix):], rank, label)
    if " – " in label:
        return _number_key(label.split(" – ", 1)[0], 1, label)
    return _number_key(label, 0, label)


def _number_key(text: str, rank: int, label: str):
    try:
        return (0, float(text), rank, label)
    except ValueError:
        return (1, 0.0, rank, label)


# ---------------------------------------------------------------------------
# Tests on answers
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """One student's first try at one exercise: the factors of their variant, and whether
    every part they answered was right at the first attempt."""

    correct: bool
    factors: dict = field(default_factory=dict)  # factor name -> number or label


@dataclass
class BinCount:
    label: str
    right: int
    total: int

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 0.0


@dataclass
class FactorTest:
    subject: str  # exercise slug, or "pool <name>"
    factor: str
    bins: list[BinCount]
    left_out: list[BinCount]  # bins under MIN_PER_BIN
    result: ChiSquare | None = None
    adjusted_p: float | None = None
    reason: str = ""  # why no test ran

    @property
    def tested(self) -> bool:
        return self.result is not None

    @property
    def flagged(self) -> bool:
        return self.adjusted_p is not None and self.adjusted_p < ALPHA

    @property
    def factor_short(self) -> str:
        if self.factor == "exercise":
            return "exercise"
        return FEATURE_SHORT_LABELS.get(self.factor, self.factor)

    @property
    def others_share(self) -> float | None:
        """The share right at the first try outside the hardest group."""
        hardest = self.hardest
        if hardest is None:
            return None
        right = sum(b.right for b in self.bins if b is not hardest)
        total = sum(b.total for b in self.bins if b is not hardest)
        return right / total if total else None

    @property
    def factor_label(self) -> str:
        if self.factor == "exercise":
            return "exercise of the pool"
        return FEATURE_LABELS.get(self.factor, f"parameter {self.factor}")

    @property
    def hardest(self) -> BinCount | None:
        return min(self.bins, key=lambda b: b.share) if self.tested else None


def bin_labels(values: Sequence) -> list[str]:
    """A bin label per value: the value itself when there are at most ``MAX_VALUE_BINS``
    distinct ones (or any is not a number), else its tercile of the observed values."""
    distinct = set(values)
    numbers = [_as_number(v) for v in values]
    if len(distinct) <= MAX_VALUE_BINS or any(n is None for n in numbers):
        return [_label(v) for v in values]
    array = np.asarray(numbers, dtype=float)
    low_cut, high_cut = (float(c) for c in np.quantile(array, [1 / 3, 2 / 3]))
    labels = []
    for number in numbers:
        if number <= low_cut:
            labels.append(f"≤ {low_cut:.4g}")
        elif number <= high_cut:
            labels.append(f"{low_cut:.4g} – {high_cut:.4g}")
        else:
            labels.append(f"> {high_cut:.4g}")
    return labels


def _as_number(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def factor_test(subject: str, factor: str, labels: Sequence[str], outcomes: Sequence[bool]) -> FactorTest:
    """The chi-square test of one grouping (unadjusted); bins under the minimum are left out."""
    counts: dict[str, list[int]] = {}
    for label, correct in zip(labels, outcomes):
        right_total = counts.setdefault(label, [0, 0])
        right_total[0] += int(bool(correct))
        right_total[1] += 1
    every = [BinCount(label, right, total) for label, (right, total) in sorted(counts.items(), key=lambda kv: _sort_key(kv[0]))]
    kept = [b for b in every if b.total >= MIN_PER_BIN]
    test = FactorTest(subject=subject, factor=factor, bins=kept, left_out=[b for b in every if b.total < MIN_PER_BIN])
    if len(kept) < 2:
        test.reason = f"too few answers: needs 2 groups of at least {MIN_PER_BIN}"
        return test
    table = [[b.right, b.total - b.right] for b in kept]
    if sum(row[0] for row in table) == 0 or sum(row[1] for row in table) == 0:
        test.reason = "everyone was right (or everyone wrong) at the first try: nothing to compare"
        return test
    result = chi_square_independence(table)
    if result.min_expected < MIN_EXPECTED:
        test.reason = f"too few answers: an expected count is {result.min_expected:.1f} (< {MIN_EXPECTED:g})"
        return test
    test.result = result
    return test


def exercise_tests(subject: str, observations: Sequence[Observation]) -> list[FactorTest]:
    """One test per factor that varies among the observations. A factor that groups the
    students exactly as an earlier one does (``magnitude`` when it is ``d_k`` itself) is the
    same test and is not repeated, so it does not cost the family power."""
    names = sorted({name for observation in observations for name in observation.factors})
    tests, partitions = [], set()
    for name in names:
        present = [index for index, o in enumerate(observations) if name in o.factors]
        values = [observations[index].factors[name] for index in present]
        if len(set(values)) < 2:
            continue
        labels = bin_labels(values)
        partition = _partition(present, labels)
        if partition in partitions:
            continue
        partitions.add(partition)
        tests.append(factor_test(subject, name, labels, [observations[index].correct for index in present]))
    return tests


def _partition(indices: Sequence[int], labels: Sequence[str]) -> frozenset:
    groups: dict[str, list[int]] = {}
    for index, label in zip(indices, labels):
        groups.setdefault(label, []).append(index)
    return frozenset(tuple(group) for group in groups.values())


def adjust_family(tests: Sequence[FactorTest]) -> None:
    """Holm-adjust, together, every test that ran (in place)."""
    ran = [test for test in tests if test.tested]
    for test, adjusted in zip(ran, holm_adjust([test.result.p_value for test in ran])):
        test.adjusted_p = adjusted
