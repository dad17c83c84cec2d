"""Print median and p99 check latency per answer type (grading.core.bench)."""

from django.core.management.base import BaseCommand

from grading.core.bench import BANK_LIKE, benchmark


class Command(BaseCommand):
    help = "Measure answer-checker latency per type over the answer-test table plus bank-like answers."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--checks", type=int, default=2000, help="checks per answer type (default 2000)")
        parser.add_argument("--cold", action="store_true", help="clear the decision, reading and rule-search caches before every check")
        parser.add_argument(
            "--sandboxed", action="store_true",
            help="also time each check as the worker runs it (CAS types in the checker pool), interleaved",
        )

    def handle(self, *args, **options):
        from grading.tests.fixtures.answer_tests import ROWS

        cases = [row for row in ROWS if not row["hostile"]] + BANK_LIKE
        modes = [("in-process", False)] + ([("sandboxed", True)] if options["sandboxed"] else [])
        self.stdout.write(f"{'type':<20}{'mode':<12}{'cases':>7}{'checks':>8}{'median ms':>11}{'p99 ms':>9}")
        rounds = 3 if options["sandboxed"] else 1
        for round_number in range(rounds):  # interleaved: a noisy machine slows both modes alike
            for mode, sandboxed in modes:
                results = benchmark(
                    cases, checks_per_type=options["checks"], cold=options["cold"], sandboxed=sandboxed
                )
                for answer_type, figures in results.items():
                    self.stdout.write(
                        f"{answer_type:<20}{mode:<12}{figures['cases']:>7}{figures['checks']:>8}"
                        f"{figures['median_ms']:>11.3f}{figures['p99_ms']:>9.3f}"
                    )
