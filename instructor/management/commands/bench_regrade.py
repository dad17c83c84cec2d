"""Time a regrade of many stored submissions in a throwaway database.

    manage.py bench_regrade [--submissions 10000] [--students 1000]

Creates a fresh test database (a temporary SQLite file, or ``bench_regrade_<pid>`` on
PostgreSQL), fills it with one assignment holding the chapter's attention-weights
exercise and ``--submissions`` graded matrix answers, switches the item to a version
with a looser tolerance (abs 0.002), and times the dry run and the apply. The
database is destroyed afterwards; the real one is never touched.
"""

import os
import tempfile
import time
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import connection, transaction

ANSWER_KINDS = ("exact", "near", "wrong", "exact", "exact")  # near: 0.0015 off, right under the new tolerance


class Command(BaseCommand):
    help = "Benchmark regrade dry run and apply on N submissions in a throwaway database."

    def add_arguments(self, parser):
        parser.add_argument("--submissions", type=int, default=10_000)
        parser.add_argument("--students", type=int, default=1_000)

    def handle(self, *args, **options):
        old_name = connection.settings_dict["NAME"]
        test_settings = connection.settings_dict.setdefault("TEST", {})
        if connection.vendor == "sqlite":
            test_settings["NAME"] = str(Path(tempfile.mkdtemp()) / "bench.sqlite3")
        else:
            # A name of our own: never clobber a test database another run is using.
            test_settings["NAME"] = f"bench_regrade_{os.getpid()}"
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
        try:
            self._bench(options["submissions"], options["students"])
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)

    def _bench(self, total: int, students: int):
        from instructor import services

        started = time.perf_counter()
        assignment, item, v2 = self._populate(total, students)
        self.stdout.write(f"database: {connection.vendor}; created {total} submissions "
                          f"for {students} students in {time.perf_counter() - started:.1f} s")
        services.assignment_item_update(item=item, points=1, position=0, version=v2)
        for dry_run in (True, False):
            job = services.regrade_job_create(assignment=assignment, actor=None, dry_run=dry_run, enqueue=False)
            started = time.perf_counter()
            job = services.regrade_job_run(job_id=job.pk)
            seconds = time.perf_counter() - started
            self.stdout.write(
                f"{'dry run' if dry_run else 'apply  '}: {job.processed} submissions in {seconds:.2f} s "
                f"({job.processed / seconds:.0f}/s); {job.changed} changed, {job.held} kept, {job.errors} errors"
            )

    @transaction.atomic
    def _populate(self, total: int, students: int):
        from django.contrib.auth import get_user_model
        from django.contrib.auth.hashers import make_password

        from courses.models import Assignment, AssignmentItem, Course, Enrolment
        from exercises import engine
        from exercises.models import Exercise, ExerciseVersion, Variant, VersionStatus
        from grading.models import Submission

        import exercises
        from authoring.services import source_hash

        source = (Path(exercises.__file__).parent / "bank" / "attention-weights-one-query.yaml").read_text()
        looser = source.replace("    decimals: 4\n    points: 2\n", "    decimals: 4\n    tolerance: {abs: 0.002}\n    points: 2\n")
        assert looser != source, "the bank file changed shape; update the benchmark"
        exercise = Exercise.objects.create(slug="attention-weights-one-query", title="bench")
        versions = []
        for number, text in ((1, source), (2, looser)):
            spec = engine.load_spec(text)
            versions.append(ExerciseVersion.objects.create(
                exercise=exercise, number=number, source=text, spec=engine.spec_to_json(spec),
                content_hash=source_hash(text), status=VersionStatus.PUBLISHED,
            ))
        course = Course.objects.create(slug="bench", title="Bench")
        assignment = Assignment.objects.create(course=course, slug="bench", title="Bench", attempts_per_part=0)
        item = AssignmentItem.objects.create(assignment=assignment, exercise_version=versions[0])
        User = get_user_model()
        password = make_password(None)
        users = User.objects.bulk_create(User(username=f"s{i:05d}", password=password) for i in range(students))
        Enrolment.objects.bulk_create(Enrolment(course=course, user=u) for u in users)
        spec = engine.spec_from_json(versions[0].spec)
        variants, references = [], []
        for index, user in enumerate(users):
            draw = engine.draw_variant(spec, index)
            variants.append(Variant(exercise_version=versions[0], student=user, assignment_item=item,
                                    context=f"assignment:{item.pk}", seed=index, params=draw.params))
            references.append(engine.reference_answers(spec, draw.params))
        variants = Variant.objects.bulk_create(variants)
        submissions = []
        per_student = max(1, total // students)
        for index in range(total):
            student_index, attempt_index = divmod(index, per_student)
            student_index %= students
            variant = variants[student_index]
            part = ("weights", "output")[attempt_index % 2]
            expected = references[student_index][part]
            kind = ANSWER_KINDS[index % len(ANSWER_KINDS)]
            offset = {"exact": 0.0, "near": 0.0015, "wrong": 0.05}[kind]
            answer = [[f"{value + offset:.4f}" for value in expected]]
            score = 1.0 if kind == "exact" else 0.0
            submissions.append(Submission(
                variant=variant, student_id=variant.student_id, part=part, raw_answer=answer,
                attempt=index + 1, status="graded", score=score, awarded=score, correct=score == 1.0,
            ))
        Submission.objects.bulk_create(submissions, batch_size=2000)
        return assignment, item, versions[1]
