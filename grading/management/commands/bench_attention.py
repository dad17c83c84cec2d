"""The NumPy attention core vs torch CPU SDPA (grading.core.bench_attention), thread counts pinned."""

import os
import subprocess
import sys

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Batched float64 attention: NumPy core vs torch CPU SDPA, interleaved rounds."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--threads", type=int, default=2, help="torch's threads and NumPy's block workers")
        parser.add_argument("--blas-threads", type=int, default=1,
                            help="BLAS threads per product (1: the block workers share the cores)")
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--repetitions", type=int, default=20)

    def handle(self, *args, threads, blas_threads, rounds, repetitions, **options):
        # BLAS and OpenMP read their thread counts once, when loaded: a fresh interpreter.
        count, blas = str(threads), str(blas_threads)
        env = dict(os.environ, OPENBLAS_NUM_THREADS=blas, OMP_NUM_THREADS=count, MKL_NUM_THREADS=count)
        command = [sys.executable, "-m", "grading.core.bench_attention", "--threads", count, "--blas-threads", blas,
                   "--rounds", str(rounds), "--repetitions", str(repetitions)]
        completed = subprocess.run(command, env=env, cwd=settings.BASE_DIR, capture_output=True, text=True)
        self.stdout.write(completed.stdout)
        if completed.returncode:
            self.stderr.write(completed.stderr)
            raise SystemExit(completed.returncode)
