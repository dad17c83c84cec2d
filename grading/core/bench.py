"""Latency measurement of the checkers: median and p99 of ``answers.check`` per answer type."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

from grading.core import answers, symbolic

_SYMBOLS = {"d_k": "positive, integer", "sigma_q": "positive", "sigma_k": "positive",
            "d_model": "positive, integer", "h": "positive, integer", "gap": "real"}
_SD = "sqrt(d_k)*sigma_q*sigma_k"

# Answers of the kind students type for the built-in bank's symbolic questions.
BANK_LIKE = [
    {"type": "symbolic", "expected": _SD, "answer": answer, "options": {"symbols": _SYMBOLS}}
    for answer in (
        "sqrt(d_k)*sigma_q*sigma_k", "sqrt(d_k) sigma_q sigma_k", r"\sqrt{d_k}\sigma_q\sigma_k", "√d_k·σ_q·σ_k",
        "sqrt(d_k)", "d_k*sigma_q*sigma_k", "d_k sigma_q^2 sigma_k^2", "sqrt(d_k*sigma_q^2*sigma_k^2)",
        "sigma_q*sigma_k*d_k^(1/2)", "sqrt(d_model)*sigma_q*sigma_k",
    )
] + [
    {"type": "symbolic", "expected": expected, "answer": answer, "options": {"symbols": _SYMBOLS}}
    for expected, answer in (
        ("d_model/h", "d_model/h"), ("d_model/h", "h/d_model"), ("d_model/h", r"\frac{d_{model}}{h}"),
        ("1/sqrt(d_k)", "d_k^(-1/2)"), ("1/sqrt(d_k)", "1/d_k"), ("exp(gap)", "e^gap"), ("exp(gap)", "exp(-gap)"),
        ("d_k*sigma_q^2*sigma_k^2", "d_k sigma_q^2 sigma_k^2"), ("d_k*sigma_q^2*sigma_k^2", "d_k"),
    )
]


def benchmark(
    cases: list[dict], checks_per_type: int = 2000, warmup: int = 1, cold: bool = False,
    sandboxed: bool = False,
) -> dict:
    """{type: {"median_ms", "p99_ms", "checks"}} cycling through each type's cases.

    ``cold`` clears the decision, reading and rule-search caches before every check, so
    repeated answers do not profit from having been decided before. ``sandboxed`` checks the way
    the worker does (``sandbox.check_isolated``: the CAS types in a checker process).
    """
    check = _check_sandboxed if sandboxed else _check
    by_type = defaultdict(list)
    for case in cases:
        by_type[case["type"]].append(case)
    results = {}
    for answer_type, type_cases in sorted(by_type.items()):
        for case in type_cases * warmup:
            check(case)
        timings = []
        for index in range(checks_per_type):
            case = type_cases[index % len(type_cases)]
            if cold:
                _clear_caches()
            started = time.perf_counter()
            check(case)
            timings.append((time.perf_counter() - started) * 1000)
        timings.sort()
        results[answer_type] = {
            "median_ms": statistics.median(timings),
            "p99_ms": timings[min(len(timings) - 1, int(0.99 * len(timings)))],
            "checks": len(timings),
            "cases": len(type_cases),
        }
    return results


def _clear_caches() -> None:
    """Forget every decision, read expression and derivation rule search."""
    from grading.core import derivation, matrix_expression, moment_rules

    symbolic.decide_equivalent.cache_clear()
    symbolic._read_expected_cached.cache_clear()
    moment_rules.normal_form.cache_clear()
    moment_rules.rules_between.cache_clear()
    moment_rules.rule_phrase.cache_clear()
    moment_rules.instance_text.cache_clear()
    moment_rules.slip_between.cache_clear()
    moment_rules._moments_in.cache_clear()
    moment_rules.rules_reaching.cache_clear()
    moment_rules.normal_form_path.cache_clear()
    moment_rules._normal_form_trajectory.cache_clear()
    derivation._LATEX.clear()
    matrix_expression._prepared.cache_clear()
    derivation._STRUCTURES.clear()


def _check(case: dict):
    return answers.check(case["type"], case["expected"], case["answer"], case.get("options"))


def _check_sandboxed(case: dict):
    from grading.core.sandbox import check_isolated

    return check_isolated(case["type"], case["expected"], case["answer"], case.get("options"))
