"""Print the chapter's worked example and Monte Carlo table as the NumPy core computes them."""

import numpy as np
from django.core.management.base import BaseCommand

from grading.core import attention as att

IT, LATE = 3, 2


class Command(BaseCommand):
    help = "The worked example (query 'it' and 'late') and the variance table of q·k."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--samples", type=int, default=200_000)

    def handle(self, *args, samples, **options):
        Q, K, V = att.qkv_projections(
            att.WORKED_EXAMPLE_X, att.WORKED_EXAMPLE_W_Q, att.WORKED_EXAMPLE_W_K, att.WORKED_EXAMPLE_W_V
        )
        it = att.raw_vs_scaled(Q, K, V, query_index=IT)
        late = att.raw_vs_scaled(Q, K, V, query_index=LATE)
        rows = [
            ("raw scores (it)", it.raw_scores),
            ("scaled scores (it)", it.scaled_scores),
            ("softmax(raw) (it)", it.raw_weights),
            ("softmax(scaled) (it)", it.scaled_weights),
            ("output, raw weights (it)", it.raw_output),
            ("output, scaled weights (it)", it.scaled_output),
            ("output, scaled weights (late)", late.scaled_output),
        ]
        for label, values in rows:
            self.stdout.write(f"{label:<32} {np.array2string(np.round(values, 4), precision=4)}")
        self.stdout.write(f"\nMonte Carlo, {samples:,} samples of q·k, q, k ~ N(0, I):")
        self.stdout.write(f"{'d_k':>6} {'mean':>9} {'variance':>11} {'std':>9} {'sqrt(d_k)':>10}")
        for estimate in att.variance_table(samples=samples):
            self.stdout.write(
                f"{estimate.d_k:>6} {estimate.mean:>+9.4f} {estimate.variance:>11.3f} "
                f"{estimate.std:>9.4f} {estimate.predicted_variance ** 0.5:>10.4f}"
            )
