"""The benchmark reports one line of figures per answer type it was given."""

from grading.core.bench import BANK_LIKE, benchmark


def test_benchmark_reports_median_and_p99_per_type():
    cases = BANK_LIKE + [{"type": "numeric", "expected": "0.3875", "answer": "0.3875", "options": {}}]
    results = benchmark(cases, checks_per_type=40, cold=True)
    assert sorted(results) == ["numeric", "symbolic"]
    assert results["symbolic"]["checks"] == 40
    assert results["symbolic"]["cases"] == len(BANK_LIKE)
    assert 0 < results["symbolic"]["median_ms"] <= results["symbolic"]["p99_ms"]
