"""manage.py load_bank: publish new or changed question-bank files as exercise versions."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from exercises import engine
from exercises.services_bank import BANK_DIRECTORY, bank_files_read, bank_load


class Command(BaseCommand):
    help = "Load exercises/bank/*.yaml; unchanged files are left alone, changed ones get a new version."

    def add_arguments(self, parser):
        parser.add_argument("--directory", type=Path, default=BANK_DIRECTORY)

    def handle(self, *args, directory: Path, **options):
        try:
            total = len(bank_files_read(directory=directory))
            created = bank_load(directory=directory)
        except engine.SpecError as error:
            raise CommandError(f"the bank has invalid files:\n{error}") from None
        for version in created:
            self.stdout.write(f"published {version.exercise.slug} v{version.number}")
        self.stdout.write(f"{len(created)} new version(s), {total - len(created)} unchanged")
