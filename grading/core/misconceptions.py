"""Diagnosis of known attention mistakes: recompute the student's own variant under each
mistake and see whether a wrong answer matches one of them.

A correct answer is never labelled: the diagnosis first compares with the right result,
and skips any mistake whose result coincides with the right one on this variant
(e.g. √d_model == √d_k when there is a single head).
"""

from __future__ import annotations

import math

import numpy as np

from grading.core import attention

MISCONCEPTIONS: dict[str, str] = {
    "no_scaling": "It looks as if the scores were not divided by √d_k before the softmax.",
    "divided_by_d_k": "It looks as if the scores were divided by d_k itself; the scale is the square root, √d_k.",
    "softmax_wrong_axis": (
        "It looks as if the softmax normalised each column; each query's row of scores is what must sum to 1."
    ),
    "k_not_transposed": "It looks as if Q was multiplied by K instead of by Kᵀ (query rows against key rows).",
    "weights_transposed": (
        "It looks as if the weights were transposed before they multiply V: softmax(Q Kᵀ / √d_k) already has "
        "one row per query, summing to 1; its transpose has one row per key, and its columns sum to 1."
    ),
    "d_model_scale": (
        "It looks as if the scores were divided by √d_model; each head scales by its own √d_k = √(d_model / h)."
    ),
    "raw_weights_used": (
        "It looks as if the output was built from the unscaled attention weights; "
        "divide the scores by √d_k before the softmax, then weight the values."
    ),
    "scale_after_softmax": (
        "It looks as if the scale was applied after the softmax; divide the scores by √d_k before the softmax."
    ),
    "keys_queries_swapped": (
        "It looks as if queries and keys were swapped (K Qᵀ): each row of scores belongs to one query, Q Kᵀ."
    ),
    "values_on_left": (
        "It looks as if V was put on the left of the weights (V w, which gives the same numbers as w Vᵀ): "
        "the output is w V, where each weight scales one whole row of V."
    ),
    "transposed_result": "Your expression gives the transpose of the result; check the order of the factors.",
    "matrix_transposed": (
        "Your answer is the transpose of the expected one: rows and columns are swapped (entry [j, i] where "
        "[i, j] is asked, or for one query its column where its row is asked). In attention, row i belongs "
        "to query i and holds one entry per key j."
    ),
    "dimension_as_number": "The expression is right only at one size: write the dimensions by name (d_k), not as numbers.",
    "forgot_sigma": (
        "Your expression is right only for unit-variance queries and keys: "
        "the standard deviation also carries the factors σ_q and σ_k."
    ),
    "forgot_squares": (
        "It looks as if the squares on σ were forgotten: E[q_m²] = σ_q², so a variance carries "
        "σ_q² σ_k²; σ_q σ_k belongs to the standard deviation."
    ),
    "sigmas_added": (
        "It looks as if the σ factors were added where they multiply: with zero means, "
        "Var(q_m k_m) = E[q_m²] E[k_m²] = σ_q² σ_k², a product, so the variance carries σ_q² σ_k² "
        "and the standard deviation σ_q σ_k."
    ),
    "projections_swapped": (
        "It looks as if the wrong projection was used: Q = X W_Q, K = X W_K and V = X W_V each have their own matrix."
    ),
    "product_of_variances": (
        "Var(q_m k_m) is not Var(q_m) Var(k_m): for independent factors Var(XY) = E[X²] E[Y²] − E[X]² E[Y]². "
        "The two agree here only because the means are 0, which is not a rule."
    ),
    "sum_of_variances": (
        "Var(q_m k_m) is not Var(q_m) + Var(k_m): variances add for a sum of independent variables, "
        "X + Y, not for a product. For independent factors Var(XY) = E[X²] E[Y²] − E[X]² E[Y]², "
        "a product of the second moments when the means are 0."
    ),
    "count_squared": (
        "The variance of a sum of d_k independent terms is d_k times the variance of one term, not d_k² times: "
        "Var(aX) = a² Var(X) scales one variable, it does not add up independent copies."
    ),
    "square_of_mean": (
        "E[X²] is not E[X]²: the mean of a square is the variance plus the square of the mean."
    ),
    "dropped_mean_square": (
        "Var(X) = E[X²] − E[X]²: the second term was dropped. It is 0 here only because the means are 0; "
        "say so with a rule (independence, then the declared means) instead of leaving it out."
    ),
    # Causal masking: token i may attend to keys 0..i only (the mask is set before the softmax).
    "no_mask": (
        "It looks as if the causal mask was left out: token i may attend only to keys 0 to i, "
        "so every later key must get weight 0 and the visible keys share all of the weight."
    ),
    "mask_transposed": (
        "It looks as if the mask hid the wrong side: token i keeps the keys j ≤ i (the lower triangle, "
        "its own key included) and loses the keys after it, not the keys before it."
    ),
    "mask_hides_self": (
        "It looks as if the diagonal was masked too: token i may attend to itself, "
        "so keys 0 to i take part (i + 1 of them), not only keys 0 to i − 1."
    ),
    "mask_one_extra": (
        "It looks as if the mask let one key too many through: token i sees keys 0 to i only, "
        "so key i + 1 must be masked as well."
    ),
    "masked_scores_zeroed": (
        "It looks as if the masked scores were set to 0 instead of −∞: a score of 0 still gets the weight "
        "e⁰ = 1 before normalising, so the masked keys keep some weight; only −∞ gives them exactly 0."
    ),
    "mask_after_softmax": (
        "It looks as if the masked weights were zeroed after a softmax over all the keys: the mask comes "
        "before the softmax, so the visible keys' weights are renormalised and add up to 1."
    ),
}

# What the slip was, for "This is the third time ..." when a student makes it again.
REPEATED_SLIPS: dict[str, str] = {
    "no_scaling": "the √d_k was left out",
    "divided_by_d_k": "the scores were divided by d_k instead of √d_k",
    "softmax_wrong_axis": "the softmax ran down the columns",
    "k_not_transposed": "K was used without its transpose",
    "weights_transposed": "the weights were transposed before multiplying V",
    "d_model_scale": "the scale used √d_model instead of √d_k",
    "raw_weights_used": "the output was built from unscaled weights",
    "scale_after_softmax": "the scale came after the softmax",
    "keys_queries_swapped": "queries and keys were swapped",
    "values_on_left": "V was put on the left",
    "transposed_result": "the result came out transposed",
    "matrix_transposed": "rows and columns were swapped",
    "dimension_as_number": "a dimension was written as a number",
    "forgot_sigma": "the σ factors were left out",
    "forgot_squares": "the squares on σ were forgotten",
    "sigmas_added": "the σ factors were added instead of multiplied",
    "projections_swapped": "a projection was swapped",
    "product_of_variances": "Var(XY) became Var(X) Var(Y)",
    "sum_of_variances": "Var(XY) became Var(X) + Var(Y)",
    "count_squared": "the variance of the sum was taken d_k² times",
    "square_of_mean": "E[X²] became E[X]²",
    "dropped_mean_square": "the E[X]² term of the variance was dropped",
    "no_mask": "the causal mask was left out",
    "mask_transposed": "the mask hid the wrong side",
    "mask_hides_self": "the diagonal was masked too",
    "mask_one_extra": "the mask let one key too many through",
    "masked_scores_zeroed": "masked scores were set to 0 instead of −∞",
    "mask_after_softmax": "the mask came after the softmax",
}
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def ordinal_word(number: int) -> str:
    """1 -> "first" ... 10 -> "tenth", then "11th", "12th", "21st", ..."""
    if 1 <= number <= len(_ORDINALS):
        return _ORDINALS[number - 1]
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def repeat_note(code: str, times: int) -> str:
    """The sentence added when a student makes the same slip again (``times`` counts this
    one); empty the first time."""
    if times < 2 or not code:
        return ""
    slip = REPEATED_SLIPS.get(code, "this same slip came up")
    return f"This is the {ordinal_word(times)} time {slip}."


# A short name for each mistake, for summaries such as the student's skill map
# ("last 2 attempts showed 'forgot σ'"); the messages above are the feedback itself.
MISCONCEPTION_LABELS: dict[str, str] = {
    "no_scaling": "left out √d_k",
    "divided_by_d_k": "divided by d_k, not √d_k",
    "softmax_wrong_axis": "softmax down the columns",
    "k_not_transposed": "K not transposed",
    "weights_transposed": "transposed the weights",
    "d_model_scale": "scaled by √d_model",
    "raw_weights_used": "used the unscaled weights",
    "scale_after_softmax": "scaled after the softmax",
    "keys_queries_swapped": "swapped queries and keys",
    "values_on_left": "put V on the left",
    "transposed_result": "transposed result",
    "matrix_transposed": "swapped rows and columns",
    "dimension_as_number": "a dimension as a number",
    "forgot_sigma": "forgot σ",
    "forgot_squares": "forgot the squares on σ",
    "sigmas_added": "added σ factors instead of multiplying",
    "projections_swapped": "swapped projections",
    "product_of_variances": "Var(XY) = Var(X) Var(Y)",
    "sum_of_variances": "Var(XY) = Var(X) + Var(Y)",
    "count_squared": "d_k² instead of d_k",
    "square_of_mean": "E[X²] = E[X]²",
    "dropped_mean_square": "dropped E[X]² from Var(X)",
    "no_mask": "left out the causal mask",
    "mask_transposed": "masked the wrong side",
    "mask_hides_self": "masked the diagonal too",
    "mask_one_extra": "let one later key through the mask",
    "masked_scores_zeroed": "masked scores set to 0, not −∞",
    "mask_after_softmax": "masked after the softmax",
}

QUANTITIES = ("scores", "scaled_scores", "weights", "output")
MASKS = ("causal",)  # a diagnosis's optional ``mask``: None (no mask) or one of these
# The masking slips: each needs a mask to get wrong, and changes only the weights (and so
# the output); on an unmasked part they cannot be made (attention_quantity gives None).
MASK_MISTAKES = (
    "no_mask", "mask_transposed", "mask_hides_self", "mask_one_extra", "masked_scores_zeroed", "mask_after_softmax",
)
# The index slips (rows and columns swapped) need as many queries as keys, and come last:
# K Qᵀ is the transpose of the scores, and weights indexed [j, i] are the transposed weights.
_CANDIDATES = {
    "scores": ("k_not_transposed", "keys_queries_swapped"),
    "scaled_scores": ("no_scaling", "divided_by_d_k", "d_model_scale", "k_not_transposed", "keys_queries_swapped"),
    "weights": ("no_scaling", "divided_by_d_k", "d_model_scale", "softmax_wrong_axis", "k_not_transposed")
    + MASK_MISTAKES
    + ("keys_queries_swapped", "matrix_transposed"),
    "output": (
        "raw_weights_used", "divided_by_d_k", "d_model_scale", "softmax_wrong_axis", "k_not_transposed",
        "values_on_left",
    )
    + MASK_MISTAKES
    + ("keys_queries_swapped", "weights_transposed"),
}
INDEX_MISTAKES = ("keys_queries_swapped", "matrix_transposed", "weights_transposed")


def attention_quantity(
    Q, K, V, quantity: str, mistake: str | None = None, d_model: int | None = None, *, mask: str | None = None
):
    """The full (n, m) or (n, d_v) matrix of ``quantity``, computed under ``mistake``; None if
    the mistake is impossible on these shapes or indistinguishable from the right method.

    ``mask`` is the mask the part asks for: None, or "causal" (query i sees keys 0..i).
    Every mistake is made with the part's own mask, except the masking slips, which are
    the mask done wrong (and impossible without one)."""
    if mask is not None and mask not in MASKS:
        raise ValueError(f"mask must be one of {MASKS} or absent, got {mask!r}")
    Q, K, V = attention.as_array(Q), attention.as_array(K), attention.as_array(V)
    d_k = Q.shape[-1]
    causal = mask == "causal"
    if mistake in MASK_MISTAKES:
        return _mask_mistake(Q, K, V, quantity, mistake) if causal else None
    if mistake in INDEX_MISTAKES:
        return _index_mistake(Q, K, V, quantity, mistake, causal)
    if mistake is None:
        result = attention.attention(Q, K, V, causal=causal)
    elif mistake in ("no_scaling", "raw_weights_used"):
        result = attention.attention(Q, K, V, scale=1.0, causal=causal)
    elif mistake == "divided_by_d_k":
        result = attention.attention(Q, K, V, scale=1.0 / d_k, causal=causal)
    elif mistake == "d_model_scale":
        if d_model is None or d_model == d_k:
            return None
        result = attention.attention(Q, K, V, scale=1.0 / math.sqrt(d_model), causal=causal)
    elif mistake == "k_not_transposed":
        if K.shape[-2] != d_k or V.shape[-2] != d_k:
            return None
        result = attention.attention(Q, np.swapaxes(K, -1, -2), V, causal=causal)  # Q (K^T)^T = Q K
    elif mistake == "softmax_wrong_axis":
        scaled = attention.attention(Q, K, V, causal=causal)
        weights = attention.softmax(scaled.scaled_scores, axis=-2)  # columns instead of rows
        output = weights @ V  # (n, m) x (m, d_v) -> (n, d_v)
        return {"scores": scaled.scores, "scaled_scores": scaled.scaled_scores, "weights": weights, "output": output}[quantity]
    elif mistake == "values_on_left":
        # V w instead of w V: for one query's row the same numbers as w Vᵀ (entry j is the
        # weights dotted with row j of V). Only an output shows it, and only with a square V.
        if quantity != "output" or V.shape[-2] != V.shape[-1]:
            return None
        weights = attention.attention(Q, K, V, causal=causal).weights
        return weights @ np.swapaxes(V, -1, -2)  # (n, m) x (d_v, m) -> (n, d_v), with m == d_v
    else:
        raise ValueError(f"unknown mistake {mistake!r}")
    return {"scores": result.scores, "scaled_scores": result.scaled_scores, "weights": result.weights, "output": result.output}[quantity]


def _index_mistake(Q: np.ndarray, K: np.ndarray, V: np.ndarray, quantity: str, mistake: str, causal: bool):
    """``quantity`` with a query's index and a key's swapped: scores from K Qᵀ (and all that
    follows from them), the weights transposed (one row per key), or the output built from
    the transposed weights (Wᵀ V). None unless there are as many queries as keys."""
    if Q.shape[-2] != K.shape[-2]:
        return None
    if mistake == "keys_queries_swapped":
        result = attention.attention(K, Q, V, causal=causal)  # rows of K against rows of Q
        return {"scores": result.scores, "scaled_scores": result.scaled_scores, "weights": result.weights,
                "output": result.output}[quantity]
    weights = attention.attention(Q, K, V, causal=causal).weights
    transposed = np.swapaxes(weights, -1, -2)  # entry [i, j] holds the weight of query j on key i
    if mistake == "matrix_transposed" and quantity == "weights":
        return transposed
    if mistake == "weights_transposed" and quantity == "output":
        return transposed @ V  # (m, n) x (m, d_v) with n == m -> (n, d_v)
    return None


def _mask_mistake(Q: np.ndarray, K: np.ndarray, V: np.ndarray, quantity: str, mistake: str):
    """The weights or output of a causal part computed with ``mistake`` in the mask; None
    for scores, which a mask does not change."""
    if quantity not in ("weights", "output"):
        return None
    n, m = Q.shape[-2], K.shape[-2]
    everything = np.ones((n, m), dtype=bool)
    if mistake == "no_mask":
        weights = attention.attention(Q, K, V).weights
    elif mistake in ("mask_transposed", "mask_hides_self", "mask_one_extra"):
        allowed = {
            "mask_transposed": np.triu(everything),  # keys j >= i: the later keys kept instead of the earlier
            "mask_hides_self": np.tril(everything, k=-1),  # keys j < i: row 0 sees nothing, its weights are 0
            "mask_one_extra": np.tril(everything, k=1),  # keys j <= i + 1: one later key let through
        }[mistake]
        weights = attention.attention(Q, K, V, mask=allowed).weights
    elif mistake == "masked_scores_zeroed":
        unmasked = attention.attention(Q, K, V)
        allowed = attention.causal_mask(n, m)
        weights = attention.softmax(np.where(allowed, unmasked.scaled_scores, 0.0), axis=-1)  # 0, not -inf
    elif mistake == "mask_after_softmax":
        weights = attention.attention(Q, K, V).weights * attention.causal_mask(n, m)  # not renormalised
    else:  # pragma: no cover - MASK_MISTAKES lists exactly the cases above
        raise ValueError(f"unknown mistake {mistake!r}")
    if quantity == "weights":
        return weights
    return weights @ V  # (n, m) x (m, d_v) -> (n, d_v)


def _matches(answer: np.ndarray, candidate: np.ndarray, rtol: float, atol: float) -> bool:
    return answer.shape == candidate.shape and bool(np.all(np.abs(answer - candidate) <= atol + rtol * np.abs(candidate)))


def _select(matrix: np.ndarray, answer: np.ndarray, query_index: int | None) -> np.ndarray | None:
    if answer.ndim == 1 and query_index is not None:
        if not -matrix.shape[-2] <= query_index < matrix.shape[-2]:
            return None
        return matrix[..., query_index, :]
    return matrix


def diagnose_attention(
    *, Q, K, V, query_index: int | None, quantity: str, answer, rtol: float, atol: float, d_model: int | None = None,
    mask: str | None = None,
) -> str | None:
    """The code of the first known mistake that reproduces ``answer``, or None.

    A mistake is named only when the answer matches it (within the tolerance) and not the
    right result, and only when, on this variant, it gives something else than the right
    result (a mask slip on row 0 of a causal part, or a missing √d_k on a row with one
    visible key, changes nothing and is never named)."""
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {QUANTITIES}, got {quantity!r}")
    answer = np.asarray(answer, dtype=float)
    right_value = _select(attention_quantity(Q, K, V, quantity, mask=mask), answer, query_index)
    if right_value is None or _matches(answer, right_value, rtol, atol):
        return None
    for mistake in _CANDIDATES[quantity]:
        candidate = attention_quantity(Q, K, V, quantity, mistake, d_model, mask=mask)
        if candidate is None:
            continue
        candidate = _select(candidate, answer, query_index)
        if candidate is None or _matches(candidate, right_value, rtol, atol):
            continue
        if _matches(answer, candidate, rtol, atol):
            return mistake
    return None


def diagnose_from_spec(spec: dict, answer: np.ndarray, options: dict) -> str | None:
    """Run the diagnosis an exercise asked for in options['diagnose']; unknown kinds give None."""
    from grading.core.grades import InvalidRequest
    from grading.core.numeric import DEFAULT_ATOL, DEFAULT_RTOL

    if not isinstance(spec, dict) or spec.get("kind", "attention") != "attention":
        return None
    try:
        return diagnose_attention(
            Q=spec["Q"],
            K=spec["K"],
            V=spec["V"],
            query_index=spec.get("query_index"),
            quantity=spec.get("quantity", "weights"),
            answer=answer,
            rtol=float(options.get("rtol", DEFAULT_RTOL)),
            atol=float(options.get("atol", DEFAULT_ATOL)),
            d_model=spec.get("d_model"),
            mask=spec.get("mask"),
        )
    except (KeyError, ValueError, TypeError) as problem:
        raise InvalidRequest(f"option 'diagnose' is not usable: {problem}") from None
