"""Explorations: pages that let a student watch the scaling argument happen. Thin views.

Each page renders in full without JavaScript (a GET form); with htmx the same URL
answers an ``HX-Request`` with just the result fragment, and a ``.json`` twin serves
the raw numbers.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from . import plots, selectors


def _wants_fragment(request) -> bool:
    return request.headers.get("HX-Request") == "true"


def _int_param(request, name: str, default: int) -> int | None:
    """The integer query parameter, the default when absent, None when malformed."""
    raw = request.GET.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        return None


def _scaling_d_k(request) -> int | None:
    """d_k from ``log2_d_k`` (the slider sends the exponent) or else from ``d_k``."""
    if request.GET.get("log2_d_k"):
        exponent = _int_param(request, "log2_d_k", None)
        if exponent is None or not 0 <= exponent <= 10:
            return None
        return 2**exponent
    return _int_param(request, "d_k", selectors.SCALING_DEFAULT_D_K)


def _scaling_demo_or_error(request):
    d_k = _scaling_d_k(request)
    seed = _int_param(request, "seed", 0)
    if d_k is None or seed is None or not 0 <= seed < 2**32:
        return None, "d_k and seed must be whole numbers."
    try:
        return selectors.scaling_demo_get(d_k=d_k, seed=seed), None
    except ValueError as error:
        return None, str(error)


def _slider_exponent(d_k: int) -> int:
    """The slider position (log2 d_k, clamped to 2..10) nearest below ``d_k``."""
    return min(10, max(2, d_k.bit_length() - 1))


@require_GET
def index(request):
    return render(request, "explorations/index.html")


@require_GET
def scaling(request):
    demo, error = _scaling_demo_or_error(request)
    context = {
        "demo": demo,
        "error": error,
        "slider_d_ks": selectors.SCALING_SLIDER_D_KS,
        "slider_exponent": _slider_exponent(demo.d_k if demo else selectors.SCALING_DEFAULT_D_K),
        # Numbered from 0 as the exercises number tokens and keys ("key 0", heatmaps' "key j").
        "key_labels": [f"key {index}" for index in range(selectors.SCALING_NUM_KEYS)],
        "demo_rows": [demo.raw_weights, demo.scaled_weights] if demo else [],
        "demo_row_labels": ["unscaled", "scaled by 1/√d_k"],
    }
    if _wants_fragment(request):
        # ``fragment``: the short sentence the page's live region reads out comes along.
        return render(request, "explorations/_scaling_result.html", {**context, "fragment": True})
    worked_example = selectors.worked_example_get()
    context.update(
        worked_example=worked_example,
        worked_query_labels=[f"query {index} ({token})" for index, token in enumerate(worked_example.tokens)],
        worked_key_labels=[f"key {index} ({token})" for index, token in enumerate(worked_example.tokens)],
    )
    return render(request, "explorations/scaling.html", context, status=400 if error else 200)


@require_GET
def scaling_json(request):
    demo, error = _scaling_demo_or_error(request)
    if error:
        return JsonResponse({"error": error}, status=400)
    return JsonResponse(demo.as_dict())


def _samples_or_error(request):
    samples = _int_param(request, "samples", selectors.DEFAULT_SAMPLES)
    if samples not in selectors.SAMPLE_CHOICES:
        choices = ", ".join(f"{choice:,}" for choice in selectors.SAMPLE_CHOICES)
        return None, f"Choose a sample count from {choices}."
    return samples, None


@require_GET
def variance(request):
    samples, error = _samples_or_error(request)
    rows = [] if error else selectors.variance_rows_get(samples=samples)
    context = {
        "rows": rows,
        "plot": plots.variance_plot(rows),
        "samples": samples,
        "sample_choices": selectors.SAMPLE_CHOICES,
        "chapter_samples": selectors.CHAPTER_SAMPLES,
        "error": error,
    }
    template = (
        "explorations/_variance_result.html"
        if _wants_fragment(request)
        else "explorations/variance.html"
    )
    return render(request, template, context, status=400 if error else 200)


@require_GET
def variance_json(request):
    samples, error = _samples_or_error(request)
    if error:
        return JsonResponse({"error": error}, status=400)
    rows = selectors.variance_rows_get(samples=samples)
    return JsonResponse({"samples": samples, "rows": [row.as_dict() for row in rows]})
