"""Starting a job twice starts it once: applying a dry run again (a double click, a retried
request: 21 apply jobs were seen) returns the application already under way, and asking
for the same dry run while one waits returns that one."""

from __future__ import annotations

from django.urls import reverse

from api.models import TokenScope
from api.services import api_token_create
from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from instructor.models import RegradeJob, RegradeStatus
from instructor.services import regrade_job_apply, regrade_job_create


def finished_dry_run(people):
    assignment = assignment_create(people.course, [published_version(source=product_yaml())])
    job = regrade_job_create(assignment=assignment, actor=people.instructor, enqueue=False)
    RegradeJob.objects.filter(pk=job.pk).update(status=RegradeStatus.DONE)
    job.refresh_from_db()
    return assignment, job


def test_repeating_apply_through_the_api_makes_one_job(client, people, settings):
    settings.API_RATE_LIMITS = {"token": "1000/min", "user": "1000/min", "anon": "1000/min"}
    _, dry_run = finished_dry_run(people)
    secret = api_token_create(user=people.instructor, name="t", scope=TokenScope.WRITE, lifetime_days=30)[1]
    url = f"/api/v1/courses/{people.course.slug}/regrades/{dry_run.pk}/apply/"
    answers = [client.post(url, HTTP_AUTHORIZATION=f"Bearer {secret}") for _ in range(21)]
    assert {a.status_code for a in answers} == {202}
    assert len({a.json()["id"] for a in answers}) == 1
    assert RegradeJob.objects.filter(preview_of=dry_run).count() == 1


def test_repeating_apply_on_the_page_makes_one_job(client, people):
    _, dry_run = finished_dry_run(people)
    assert client.login(username=people.instructor.username, password=PASSWORD)
    url = reverse("instructor:regrade_apply", args=[people.course.slug, dry_run.pk])
    targets = {client.post(url)["Location"] for _ in range(3)}
    assert len(targets) == 1
    assert RegradeJob.objects.filter(preview_of=dry_run).count() == 1


def test_after_a_failed_application_applying_again_starts_a_new_one(people):
    _, dry_run = finished_dry_run(people)
    first = regrade_job_apply(dry_run=dry_run, actor=people.instructor)
    assert regrade_job_apply(dry_run=dry_run, actor=people.instructor).pk == first.pk
    RegradeJob.objects.filter(pk=first.pk).update(status=RegradeStatus.FAILED)
    second = regrade_job_apply(dry_run=dry_run, actor=people.instructor)
    assert second.pk != first.pk
    assert RegradeJob.objects.filter(preview_of=dry_run).count() == 2


def test_the_same_dry_run_asked_for_twice_while_it_waits_is_one_job(people):
    assignment, _ = finished_dry_run(people)
    first = regrade_job_create(assignment=assignment, actor=people.instructor, enqueue=False)
    again = regrade_job_create(assignment=assignment, actor=people.instructor, enqueue=False)
    other_scope = regrade_job_create(assignment=assignment, actor=people.instructor, allow_lower=True, enqueue=False)
    assert again.pk == first.pk and other_scope.pk != first.pk
