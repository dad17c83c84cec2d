"""Archived means read-only everywhere: every write URL that names a course — found by
walking the URLconf and the OpenAPI schema, not listed by hand — refuses an archived
course with 409 and changes nothing; the services refuse too, for tasks and the LTI."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from api.models import TokenScope
from api.services import api_token_create
from authoring.services import exercise_create
from authoring.tests.factories import (
    PASSWORD, assignment_create, product_yaml, published_version, submission_add, variant_for,
)
from courses import services
from courses.models import Enrolment
from exams.models import Accommodation
from exercises.models import Exercise, ExerciseVersion
from grading.models import Submission
from instructor.models import GradeCategory, RegradeJob, RegradeRequest, RegradeStatus
from instructor.services import regrade_job_create, regrade_job_run

COURSE_KWARGS = ("course_slug", "item_id", "variant_id")
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def url_patterns(resolver=None, prefix=""):
    """(route, view, keyword names) for every URL of the site."""
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from url_patterns(pattern, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback, list(pattern.pattern.converters)


def _marked(view, name: str) -> bool:
    return getattr(view, name, False) or getattr(getattr(view, "cls", None), name, False)


def course_write_urls(values: dict) -> list[tuple[str, str, bool]]:
    """(route, filled path, checked in the view) of every URL naming a course, less the
    ones archiving allows."""
    urls = []
    for route, view, names in url_patterns():
        if route.startswith("admin/") or not set(names) & set(COURSE_KWARGS):
            continue
        if _marked(view, "allowed_when_archived"):
            continue
        path = "/" + route
        for name in names:
            path = path.replace(f"<{_converter(route, name)}:{name}>", str(values[name]))
        urls.append((route, path, _marked(view, "course_checked_in_view")))
    return urls


def _converter(route: str, name: str) -> str:
    start = route.index(f":{name}>")
    return route[route.rindex("<", 0, start) + 1:start]


@pytest.fixture
def archived_world(people, django_capture_on_commit_callbacks):
    course = people.course
    assignment = assignment_create(course, [published_version(source=product_yaml())])
    item = assignment.items.get()
    variant = variant_for(item, people.student, params={"a": 2, "b": 5})
    submission = submission_add(variant, "product", "10", awarded=1.0)
    draft = exercise_create(course=course, actor=people.instructor, source=product_yaml(slug="owned-product"))
    job = regrade_job_create(assignment=assignment, actor=people.instructor, enqueue=False)
    RegradeJob.objects.filter(pk=job.pk).update(status=RegradeStatus.DONE)
    enrolment = Enrolment.objects.get(course=course, user=people.student)
    category = GradeCategory.objects.create(course=course, name="Homework", weight=40)
    request = RegradeRequest.objects.create(submission=submission, student=people.student, message="Please look again")
    token = api_token_create(user=people.instructor, name="archive", scope=TokenScope.WRITE, lifetime_days=30)[1]
    services.course_archive(course=course)
    values = {
        "course_slug": course.slug, "assignment_slug": assignment.slug, "item_id": item.pk,
        "variant_id": variant.pk, "part": "product", "submission_id": submission.pk,
        "job_id": job.pk, "slug": draft.exercise.slug, "number": draft.number,
        "user_id": people.student.pk, "enrolment_id": enrolment.pk,
        "category_id": category.pk, "request_id": request.pk, "version_id": draft.pk,
        "exercise_id": item.exercise_version.exercise_id, "part_key": "product",
        # The guard answers before the view reads it: any criterion id will do.
        "criterion_id": 1, "invitation_id": 1,
    }
    return people, values, token


def stored_counts():
    return (Submission.objects.count(), Exercise.objects.count(), ExerciseVersion.objects.count(),
            Accommodation.objects.count(), RegradeJob.objects.count(), Enrolment.objects.count())


def test_every_write_url_of_an_archived_course_is_refused(client, archived_world):
    people, values, token = archived_world
    urls = course_write_urls(values)
    routes = {route for route, _, _ in urls}
    # The walk finds the pages and the API alike, the two from the finding included.
    assert "teach/<slug:course_slug>/a/<slug:assignment_slug>/accommodations/new/" in routes
    assert "api/v1/courses/<slug:course_slug>/exercises/" in routes
    assert len(urls) >= 60
    before = stored_counts()
    refused = []
    for who in ("instructor", "student"):
        client.logout()
        assert client.login(username=getattr(people, who).username, password=PASSWORD)
        for route, path, in_view in urls:
            for method in WRITE_METHODS if route.startswith("api/") else ("POST",):
                response = client.generic(method, path, b"{}", content_type="application/json")
                refused.append((who, method, path, in_view, response.status_code))
    # The guard answers 409 before the view; an answer's submit checks in its view (no extra
    # query on the hot path), after its own access check: 409 for its owner, else its 4xx.
    assert [r for r in refused if r[4] != 409 and not r[3]] == []
    assert [r for r in refused if r[3] and not 400 <= r[4] < 500] == []
    owner_submits = [r for r in refused if r[3] and r[0] == "student" and r[1] == "POST"]
    assert len(owner_submits) == 2 and {r[4] for r in owner_submits} == {409}
    assert stored_counts() == before


def test_every_write_operation_of_the_schema_is_refused_with_a_token(client, archived_world):
    from drf_spectacular.generators import SchemaGenerator

    people, values, token = archived_world
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = [
        (method.upper(), path.format(**values))
        for path, methods in schema["paths"].items()
        for method in methods if method.upper() in WRITE_METHODS
    ]
    assert len(operations) >= 8
    before = stored_counts()
    # A student's own operations (a regrade request about their answer) with their token.
    student_token = api_token_create(user=people.student, name="archive", scope=TokenScope.WRITE, lifetime_days=30)[1]

    def token_for(path):
        return student_token if path.startswith("/api/v1/submissions/") else token

    answers = {
        (method, path): client.generic(method, path, b"{}", content_type="application/json",
                                       HTTP_AUTHORIZATION=f"Bearer {token_for(path)}")
        for method, path in operations
    }
    assert {key: r.status_code for key, r in answers.items() if r.status_code != 409} == {}
    assert all(r.json()["type"] == "urn:attnquiz:problem:archived" for r in answers.values())
    assert stored_counts() == before


def test_only_archiving_and_copying_are_allowed_on_an_archived_course():
    allowed = {route for route, view, _ in url_patterns() if getattr(view, "allowed_when_archived", False)}
    assert allowed == {"courses/<slug:course_slug>/archive/", "courses/<slug:course_slug>/copy/"}


def test_the_services_refuse_too_for_tasks_and_the_lms(people, archived_world):
    from exams.services_accommodations import accommodation_set

    _, values, _ = archived_world
    assignment = people.course.assignments.get()
    with pytest.raises(services.CourseArchived):
        accommodation_set(assignment=assignment, student=people.student, values={"extra_attempts": 1}, actor=people.instructor)
    with pytest.raises(services.CourseArchived):
        exercise_create(course=people.course, actor=people.instructor, source=product_yaml(slug="another"))
    # A regrade queued before the course was archived does not write when it runs.
    job = RegradeJob.objects.create(assignment=assignment, created_by=people.instructor, dry_run=False)
    finished = regrade_job_run(job_id=job.pk)
    assert finished.status == RegradeStatus.FAILED
    assert "archived" in finished.message
