"""manage.py fit_mastery: record grades without evidence, then fit BKT per skill (EM)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from exercises.engine.skills import SKILL_SLUGS, unknown_skills
from mastery import services


class Command(BaseCommand):
    help = "Fit the BKT parameters of every skill (or --skill ones) from the stored attempts and store them."

    def add_arguments(self, parser):
        parser.add_argument("--skill", action="append", default=[], help="a skill slug; repeat for several")
        parser.add_argument("--backfill-days", type=int, default=None,
                            help="record grades of the last N days that have no evidence (default: the setting)")

    def handle(self, *args, skill: list[str], backfill_days: int | None, **options):
        unknown = unknown_skills(skill)
        if unknown:
            raise CommandError(f"unknown skill '{unknown[0]}'; known: {', '.join(SKILL_SLUGS)}")
        days = settings.MASTERY_BACKFILL_DAYS if backfill_days is None else backfill_days
        if days < 0:
            raise CommandError("--backfill-days must be 0 or more")
        recorded = services.mastery_backfill(days=days)
        self.stdout.write(f"recorded {recorded} graded answers without evidence")
        for fit in services.skill_parameters_fit_all(skills=skill or None):
            self.stdout.write(fit.summary())
