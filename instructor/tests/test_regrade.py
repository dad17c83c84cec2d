"""Regrading: dry run first, apply, never lower unless allowed, progress, idempotence."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version, variant_for
from grading.models import Submission, SubmissionStatus
from instructor import services
from instructor.models import ChangeOutcome, RegradeChange, RegradeJob, RegradeStatus


def graded(variant, part, raw_answer):
    """Store and grade an answer the way the pipeline does (inline mode)."""
    from grading.services import submission_grade

    attempt = Submission.objects.filter(variant=variant, part=part).count() + 1
    submission = Submission.objects.create(
        variant=variant, student=variant.student, part=part, raw_answer=raw_answer, attempt=attempt
    )
    return submission_grade(submission_id=submission.pk)


@pytest.fixture
def corrected(people):
    """v1's key for 'product' is a * b; v2 'corrects' it to a * b + 1 (3 x 4 -> 13).

    sam answered 12 (right under v1); sue answered 11, then 13 (attempt 2, 25 % penalty).
    """
    v1 = published_version(source=product_yaml())
    v2 = published_version(source=product_yaml(answer="a * b + 1"), number=2, exercise=v1.exercise)
    assignment = assignment_create(people.course, [v1], penalty_per_extra_attempt=0.25)
    item = assignment.items.get()
    sam = variant_for(item, people.student, params={"a": 3, "b": 4, }, seed=1)
    sue = variant_for(item, people.student2, params={"a": 3, "b": 4}, seed=2)
    answers = {
        "sam": graded(sam, "product", "12"),
        "sue1": graded(sue, "product", "11"),
        "sue2": graded(sue, "product", "13"),
        "sam_total": graded(sam, "total", "7"),
    }
    assert [(s.status, s.awarded) for s in answers.values()] == [
        ("graded", 1.0), ("graded", 0.0), ("graded", 0.0), ("graded", 1.0)
    ]
    services.assignment_item_update(item=item, points=1, position=0, version=v2)
    return {"assignment": assignment, "item": item, **answers}


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Run on-commit callbacks (the job's start) as a real commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def scores():
    return list(Submission.objects.order_by("pk").values_list("awarded", "correct"))


def test_dry_run_lists_changes_and_writes_nothing(people, corrected, on_commit):
    before = scores()
    with on_commit():
        job = services.regrade_job_create(assignment=corrected["assignment"], actor=people.instructor)
    job.refresh_from_db()
    assert (job.status, job.total, job.processed, job.changed, job.held, job.errors) == ("done", 4, 4, 1, 1, 0)
    changes = {c.submission_id: (c.outcome, c.old_awarded, c.new_awarded) for c in job.changes.all()}
    assert changes == {
        corrected["sam"].pk: (ChangeOutcome.HELD, 1.0, 0.0),
        corrected["sue2"].pk: (ChangeOutcome.WOULD_CHANGE, 0.0, 0.75),
    }
    assert scores() == before


def test_apply_raises_scores_and_keeps_the_ones_that_would_drop(people, corrected, on_commit):
    with on_commit():
        dry = services.regrade_job_create(assignment=corrected["assignment"], actor=people.instructor)
    dry.refresh_from_db()
    with on_commit():
        applied = services.regrade_job_apply(dry_run=dry, actor=people.instructor)
    applied.refresh_from_db()
    assert (applied.status, applied.changed, applied.held, applied.preview_of_id) == ("done", 1, 1, dry.pk)
    sue2 = Submission.objects.get(pk=corrected["sue2"].pk)
    assert (sue2.score, sue2.awarded, sue2.correct) == (1.0, 0.75, True)
    assert sue2.feedback["regraded"]["previous"] == {"score": 0.0, "awarded": 0.0, "correct": False}
    sam = Submission.objects.get(pk=corrected["sam"].pk)
    assert (sam.awarded, sam.correct) == (1.0, True)
    # Running the same job again (a second delivery) changes nothing more.
    again = services.regrade_job_run(job_id=applied.pk)
    assert again.changed == 1 and RegradeChange.objects.filter(job=applied).count() == 2


def test_allow_lower_applies_lower_scores_too(people, corrected, on_commit):
    with on_commit():
        job = services.regrade_job_create(
            assignment=corrected["assignment"], actor=people.instructor, dry_run=False, allow_lower=True
        )
    job.refresh_from_db()
    assert (job.changed, job.held) == (2, 0)
    sam = Submission.objects.get(pk=corrected["sam"].pk)
    assert (sam.score, sam.awarded, sam.correct) == (0.0, 0.0, False)


def test_scope_by_part(people, corrected, on_commit):
    with on_commit():
        job = services.regrade_job_create(
            assignment=corrected["assignment"], actor=people.instructor, parts=["total"]
        )
    job.refresh_from_db()
    assert (job.total, job.changed, job.held) == (1, 0, 0)


def test_a_pending_job_is_claimed_once(people, corrected):
    job = services.regrade_job_create(assignment=corrected["assignment"], actor=people.instructor, enqueue=False)
    assert services._claim(job.pk) is True
    assert services._claim(job.pk) is False  # a second delivery finds it running
    RegradeJob.objects.filter(pk=job.pk).update(status=RegradeStatus.PENDING)
    done = services.regrade_job_run(job_id=job.pk)
    assert done.status == RegradeStatus.DONE


def test_regrade_pages_dry_run_then_apply(client, people, corrected, on_commit):
    client.login(username="ines", password=PASSWORD)
    with on_commit():
        response = client.post(reverse("instructor:regrade_new", args=["attn", "week1"]), {"items": [corrected["item"].pk]})
    job = RegradeJob.objects.get()
    assert response["Location"] == reverse("instructor:regrade", args=["attn", job.pk])
    page = client.get(response["Location"]).content.decode()
    assert "1 would change" in page and "1 kept (lower)" in page
    assert "0.000 → 0.750" in page and "Kept: the new score is lower" in page
    with on_commit():
        client.post(reverse("instructor:regrade_apply", args=["attn", job.pk]))
    assert Submission.objects.get(pk=corrected["sue2"].pk).awarded == 0.75
    bad = client.post(reverse("instructor:regrade_new", args=["attn", "week1"]), {"items": ["999"]})
    assert bad.status_code == 422


def test_ta_cannot_regrade(client, people, corrected):
    client.login(username="tariq", password=PASSWORD)
    assert client.post(reverse("instructor:regrade_new", args=["attn", "week1"]), {}).status_code == 403
    assert RegradeJob.objects.count() == 0


def test_management_command(people, corrected, capsys):
    call_command("regrade", "--assignment", "attn/week1", "--dry-run")
    out = capsys.readouterr().out
    assert "4 answers in" in out and "1 would change, 1 kept (lower), 0 could not be regraded" in out
    assert Submission.objects.get(pk=corrected["sue2"].pk).awarded == 0.0
    call_command("regrade", "--assignment", "attn/week1", "--allow-lower")
    assert Submission.objects.get(pk=corrected["sam"].pk).awarded == 0.0
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No assignment"):
        call_command("regrade", "--assignment", "attn/nope")


def test_could_not_grade_answers_stay_put_when_still_ungradable(people, corrected, on_commit):
    Submission.objects.filter(pk=corrected["sue1"].pk).update(status=SubmissionStatus.COULD_NOT_GRADE, raw_answer="x")
    with on_commit():
        job = services.regrade_job_create(assignment=corrected["assignment"], actor=people.instructor)
    job.refresh_from_db()
    assert job.errors == 0 and job.total == 4
