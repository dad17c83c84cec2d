"""Print the variant-fairness tests of every assignment of a course, as the analytics page shows them.

    manage.py variant_fairness attention-101
    manage.py variant_fairness attention-101 --assignment midterm
"""

from django.core.management.base import BaseCommand, CommandError

from courses.models import Course
from exercises.engine import fairness
from instructor.selectors_fairness import assignment_fairness


class Command(BaseCommand):
    help = (
        "Test, per exercise and per pool, whether first-try correctness differs across variants "
        "(chi-square, Holm-corrected per assignment). Exits 0 whether or not anything is flagged."
    )

    def add_arguments(self, parser):
        parser.add_argument("course", help="course slug")
        parser.add_argument("--assignment", help="only this assignment (slug)")

    def handle(self, *args, course: str, assignment: str | None, **options):
        found = Course.objects.filter(slug=course).first()
        if found is None:
            raise CommandError(f"No course '{course}'.")
        assignments = found.assignments.order_by("slug")
        if assignment:
            assignments = assignments.filter(slug=assignment)
            if not assignments.exists():
                raise CommandError(f"No assignment '{assignment}' in course '{course}'.")
        self.stdout.write(
            f"Chi-square test of first-try correctness across variant groups; at least "
            f"{fairness.MIN_PER_BIN} students per group and an expected count of {fairness.MIN_EXPECTED:g} "
            f"per cell; Holm over each assignment's tests; flagged when adjusted p < {fairness.ALPHA}."
        )
        for each in assignments:
            self._report(assignment_fairness(assignment=each))

    def _report(self, report) -> None:
        self.stdout.write("")
        self.stdout.write(
            f"{report.assignment.slug}: {report.tests_run} test(s) run, {report.flagged_count} flagged"
        )
        for exercise in report.exercises:
            self.stdout.write(f"  {exercise.info.slug} ({exercise.observations} students)")
            if not exercise.tests:
                self.stdout.write("    no variant parameter varies among the answers")
            for test in exercise.tests:
                self.stdout.write("    " + self._line(test))
        for pool in report.pools:
            self.stdout.write(f"  pool {pool.name} ({pool.observations} students)")
            self.stdout.write("    " + self._line(pool.test))

    @staticmethod
    def _line(test) -> str:
        bins = ", ".join(f"{b.label}: {b.right}/{b.total}" for b in test.bins)
        if test.left_out:
            few = "too few: " + ", ".join(f"{b.label}: {b.right}/{b.total}" for b in test.left_out)
            bins = f"{bins}; {few}" if bins else few
        if not test.tested:
            return f"{test.factor:<12} [{bins}]  not tested: {test.reason}"
        verdict = f"FLAG hardest {test.hardest.label}" if test.flagged else "ok"
        return (
            f"{test.factor:<12} [{bins}]  chi2={test.result.statistic:.2f} df={test.result.df} "
            f"p={fairness.p_value_text(test.result.p_value)} holm={fairness.p_value_text(test.adjusted_p)}  {verdict}"
        )
