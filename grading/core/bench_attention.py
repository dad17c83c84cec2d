"""The NumPy attention core against torch's CPU SDPA on one batched float64 case.

Run as ``python -m grading.core.bench_attention`` (``manage.py bench_attention`` sets the
thread counts first: BLAS reads them once, at import). Rounds alternate the two, so a
noisy machine slows both alike; each round reports the median of its repetitions and
the summary the median of the rounds. torch is optional, a benchmark tool only.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from grading.core.attention import attention, attention_output


def _median_ms(function, repetitions: int) -> float:
    function()  # warm caches and thread pools
    timings = []
    for _ in range(repetitions):
        started = time.perf_counter()
        function()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def run(*, batch: int, heads: int, n: int, d: int, rounds: int, repetitions: int, threads: int) -> dict:
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((batch, heads, n, d)) for _ in range(3))  # (B, h, n, d_k)
    # "numpy" is the output alone, as SDPA computes it; "numpy-all" also keeps every
    # intermediate (scores, scaled scores, weights), as the reference answers need them.
    contenders = {"numpy": lambda: attention_output(Q, K, V, workers=threads), "numpy-all": lambda: attention(Q, K, V).output}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(threads)
        q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        difference = float(np.max(np.abs(attention_output(Q, K, V, workers=threads) - sdpa(q, k, v).numpy())))
        contenders["torch"] = lambda: sdpa(q, k, v)
    per_round = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, function in contenders.items():
            per_round[name].append(_median_ms(function, repetitions))
    result = {name: statistics.median(values) for name, values in per_round.items()}
    result["rounds"] = per_round
    if torch is not None:
        result["ratio"] = result["numpy"] / result["torch"]
        result["max_abs_difference"] = difference
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2, help="torch's threads and NumPy's block workers")
    parser.add_argument("--blas-threads", type=int, default=1, help="set by the command before BLAS loads")
    options = parser.parse_args(argv)
    blas_threads = vars(options).pop("blas_threads")
    result = run(**vars(options))
    shape = (f"B{options.batch}·H{options.heads}·n{options.n}·d{options.d} float64, {options.threads} threads "
             f"(NumPy: {options.threads} block workers, BLAS {blas_threads})")
    print(f"attention {shape}; median ms per round (interleaved):")
    for name, values in result["rounds"].items():
        print(f"  {name:<9} " + "  ".join(f"{value:8.2f}" for value in values)
              + f"   median {result[name]:.2f} ms")
    if "ratio" in result:
        print(f"  numpy / torch = {result['ratio']:.2f}x  (outputs agree to {result['max_abs_difference']:.1e})")
    else:
        print("  torch is not installed: pip install torch (benchmark only, not a requirement)")


if __name__ == "__main__":
    main()
