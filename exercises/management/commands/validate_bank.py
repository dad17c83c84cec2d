"""manage.py validate_bank: draw many variants of every bank exercise and self-test them."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from exercises import engine
from exercises.services_bank import BANK_DIRECTORY, bank_validate

BAR_WIDTH = 30


class Command(BaseCommand):
    help = "Validate the question bank over many seeds; exits non-zero if any exercise fails."

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=int, default=200)
        parser.add_argument("--directory", type=Path, default=BANK_DIRECTORY)

    def handle(self, *args, seeds: int, directory: Path, **options):
        if seeds < 1:
            raise CommandError("--seeds must be at least 1")
        try:
            reports = bank_validate(seeds=seeds, directory=directory, progress=self._progress)
        except engine.SpecError as error:
            raise CommandError(f"the bank has invalid files:\n{error}") from None
        sys.stderr.write("\n")
        self.stdout.write(self._table(reports))
        for report in reports:
            for failure in report.failures:
                self.stdout.write(f"FAIL {report.slug}: {failure}")
            if report.failure_count > len(report.failures):
                self.stdout.write(f"     {report.slug}: ... {report.failure_count - len(report.failures)} more")
            for skipped in sorted(report.skipped):
                self.stdout.write(f"SKIP {report.slug}: {skipped}")
        failed = [report.slug for report in reports if not report.passed]
        if failed:
            raise CommandError(f"{len(failed)} exercise(s) failed: {', '.join(failed)}")
        self.stdout.write(f"all {len(reports)} exercises passed")

    def _progress(self, slug: str, done: int, total: int) -> None:
        filled = BAR_WIDTH * done // total
        sys.stderr.write(f"\r{slug[:36]:<36} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    @staticmethod
    def _table(reports) -> str:
        header = f"{'exercise':<32} {'seeds':>5} {'ok':>5} {'redraws':>7} {'max_att':>7} {'checks':>7} {'fail':>5} {'sec':>6}  rejection reasons"
        lines = [header, "-" * len(header)]
        for r in reports:
            reasons = ", ".join(f"{kind} {count}" for kind, count in r.reasons.most_common()) or "-"
            lines.append(
                f"{r.slug:<32} {r.seeds:>5} {r.accepted:>5} {r.redraws:>7} {r.max_attempts:>7} "
                f"{r.checks:>7} {r.failure_count:>5} {r.seconds:>6.1f}  {reasons}"
            )
        total_seconds = sum(r.seconds for r in reports)
        lines.append(f"{'total':<32} {'':>5} {'':>5} {sum(r.redraws for r in reports):>7} {'':>7} "
                     f"{sum(r.checks for r in reports):>7} {sum(r.failure_count for r in reports):>5} {total_seconds:>6.1f}")
        return "\n".join(lines)
