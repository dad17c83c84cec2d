"""Regrade an assignment's stored answers from the command line, in this process.

    manage.py regrade --assignment attention-101/scaled-dot-product --dry-run
    manage.py regrade --assignment attention-101/scaled-dot-product [--allow-lower]
    manage.py regrade --run-pending      # jobs left waiting when no worker was reachable
"""

import time

from django.core.management.base import BaseCommand, CommandError

from courses.models import Assignment
from instructor import services
from instructor.models import RegradeJob, RegradeStatus


class Command(BaseCommand):
    help = "Re-grade stored answers against each exercise's current version (never lowers unless --allow-lower)."

    def add_arguments(self, parser):
        parser.add_argument("--assignment", help="COURSE_SLUG/ASSIGNMENT_SLUG")
        parser.add_argument("--dry-run", action="store_true", help="Only list what would change.")
        parser.add_argument("--allow-lower", action="store_true", help="Also apply new scores that are lower.")
        parser.add_argument("--item", type=int, action="append", default=[], help="Assignment item id (repeatable).")
        parser.add_argument("--part", action="append", default=[], help="Part key (repeatable).")
        parser.add_argument("--run-pending", action="store_true", help="Run every job still waiting for a worker.")
        parser.add_argument("--show", type=int, default=20, help="How many changes to list.")

    def handle(self, *args, **options):
        if options["run_pending"]:
            for job_id in RegradeJob.objects.filter(status=RegradeStatus.PENDING).values_list("pk", flat=True):
                self._run(RegradeJob.objects.get(pk=job_id), options["show"])
            return
        if not options["assignment"] or "/" not in options["assignment"]:
            raise CommandError("Give --assignment COURSE_SLUG/ASSIGNMENT_SLUG (or --run-pending).")
        course_slug, assignment_slug = options["assignment"].split("/", 1)
        assignment = Assignment.objects.filter(course__slug=course_slug, slug=assignment_slug).first()
        if assignment is None:
            raise CommandError(f"No assignment '{assignment_slug}' in course '{course_slug}'.")
        try:
            job = services.regrade_job_create(
                assignment=assignment, actor=None, dry_run=options["dry_run"],
                allow_lower=options["allow_lower"], item_ids=options["item"], parts=options["part"],
                enqueue=False,
            )
        except services.InstructorRefused as refused:
            raise CommandError(refused.message)
        self._run(job, options["show"])

    def _run(self, job, show: int):
        started = time.perf_counter()
        job = services.regrade_job_run(job_id=job.pk)
        seconds = time.perf_counter() - started
        verb = "would change" if job.dry_run else "changed"
        self.stdout.write(
            f"{job}: {job.processed} answers in {seconds:.2f} s; {job.changed} {verb}, "
            f"{job.held} kept (lower), {job.errors} could not be regraded, "
            f"{job.by_hand} kept (graded by a person)"
        )
        for change in job.changes.order_by("submission_id")[:show]:
            self.stdout.write(
                f"  submission {change.submission_id}: awarded {change.old_awarded} -> {change.new_awarded} "
                f"({change.get_outcome_display()}){': ' + change.error if change.error else ''}"
            )
        if job.status == RegradeStatus.FAILED:
            raise CommandError(f"The regrade failed: {job.message}")
