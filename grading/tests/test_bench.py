"""The benchmark reports one line of figures per answer type it was given."""

from grading.core.bench import BANK_LIKE, benchmark


def test_benchmark_reports_median_and_p99_per_type():
    cases = BANK_LIKE + [{"type": "numeric", "expected": "0.3875", "answer": "0.3875", "options": {}}]
    results = benchmark(cases, checks_per_type=40, cold=True)
    assert sorted(results) == ["numeric", "symbolic"]
    assert results["symbolic"]["checks"] == 40
    assert results["symbolic"]["cases"] == len(BANK_LIKE)
    assert 0 < results["symbolic"]["median_ms"] <= results["symbolic"]["p99_ms"]


def test_attention_benchmark_times_each_round_and_agrees_with_torch_when_present():
    from grading.core.bench_attention import run

    result = run(batch=1, heads=2, n=4, d=2, rounds=2, repetitions=3, threads=1)
    assert len(result["rounds"]["numpy"]) == 2 and result["numpy"] > 0
    if "torch" in result:  # torch is optional: a benchmark tool, not a requirement
        assert len(result["rounds"]["torch"]) == 2
        assert result["max_abs_difference"] < 1e-12
        assert result["ratio"] == result["numpy"] / result["torch"]
