"""Teaching endpoints return what the teaching pages show, with exact values."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from api.tests.conftest import api_client
from authoring.tests.factories import submission_add, variant_for
from courses.models import Enrolment, EnrolmentStatus, Role
from grading.models import Submission
from instructor.models import RegradeJob, RegradeStatus


@pytest.fixture
def graded(world):
    """sam: product right (1.0), total wrong then right; sue: product wrong."""
    sam = variant_for(world.item, world.people.student, params={"a": 3, "b": 4})
    sue = variant_for(world.item, world.people.student2, params={"a": 2, "b": 5}, seed=2)
    submission_add(sam, "product", "12", awarded=1.0)
    submission_add(sam, "total", "6", awarded=0.0)
    submission_add(sam, "total", "7", awarded=0.8)
    submission_add(sue, "product", "7", awarded=0.0)
    return world


@pytest.fixture
def instructor(world):
    return api_client(world.tokens["instructor"])


A = "/api/v1/courses/attn/assignments/week1/"


def test_gradebook_json_and_csv(graded, instructor):
    book = instructor.get(A + "gradebook/").json()
    assert book["columns"] == [{"id": graded.item.pk, "exercise": "product", "title": "Product of two numbers", "points": 1.0, "pool": ""}]
    assert [(r["username"], r["scores"], round(r["total"], 4), round(r["percent"], 2)) for r in book["rows"]] == [
        ("sam", [0.9], 0.9, 90.0), ("sue", [0.0], 0.0, 0.0),
    ]
    response = instructor.get(A + "gradebook.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [
        ["username", "student_id", "email", "first_name", "last_name", "product (/1)", "total (/1)", "percent", "pending"],
        ["sam", "", "", "Sam", "Stone", "0.9", "0.9", "90", ""],
        ["sue", "", "", "Sue", "Shaw", "0", "0", "0", ""],
    ]


def test_gradebook_csv_streams_the_bytes_the_page_exports(graded, instructor, client):
    from django.http import StreamingHttpResponse

    from instructor.csv_response import csv_cell
    from instructor.selectors import gradebook_csv_rows

    for index in range(450):  # more than two chunks of rows
        user = graded.people.student.__class__.objects.create(username=f"extra-{index:03d}")
        Enrolment.objects.create(course=graded.people.course, user=user, role=Role.STUDENT)
    response = instructor.get(A + "gradebook.csv")
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"] == 'attachment; filename="attn-week1-scores.csv"'
    chunks = list(response.streaming_content)
    assert len(chunks) == 3  # 200 + 200 + 53 lines: sent as produced, not built first
    # The bytes the in-memory writer produced before, and the gradebook page's download.
    before = io.StringIO()
    csv.writer(before).writerows([csv_cell(value) for value in row] for row in gradebook_csv_rows(assignment=graded.assignment))
    assert b"".join(chunks) == before.getvalue().encode()
    client.force_login(graded.people.instructor)
    page = client.get("/teach/attn/a/week1/gradebook.csv")
    assert b"".join(page.streaming_content) == before.getvalue().encode()


def test_submissions_export_pages_by_cursor_and_filters_by_since(graded, instructor):
    first = instructor.get(A + "submissions/?page_size=3").json()
    assert [(s["username"], s["part"], s["attempt"], s["awarded"]) for s in first["results"]] == [
        ("sam", "product", 1, 1.0), ("sam", "total", 1, 0.0), ("sam", "total", 2, 0.8),
    ]
    second = instructor.get(first["next"].replace("http://testserver", "")).json()
    assert [(s["username"], s["answer"]) for s in second["results"]] == [("sue", "7")]
    assert second["next"] is None
    cutoff = timezone.now()
    late = Submission.objects.get(student=graded.people.student2)
    Submission.objects.exclude(pk=late.pk).update(created_at=cutoff - timedelta(hours=1))
    Submission.objects.filter(pk=late.pk).update(created_at=cutoff + timedelta(seconds=1))
    since = instructor.get(A + "submissions/", {"since": cutoff.isoformat()}).json()
    assert [s["id"] for s in since["results"]] == [late.pk]
    # A regraded (re-stamped) old submission is pulled again.
    old = Submission.objects.filter(student=graded.people.student).first()
    Submission.objects.filter(pk=old.pk).update(graded_at=cutoff + timedelta(seconds=2))
    assert {s["id"] for s in instructor.get(A + "submissions/", {"since": cutoff.isoformat()}).json()["results"]} == {late.pk, old.pk}
    assert instructor.get(A + "submissions/", {"since": "yesterday"}).status_code == 400


def test_analytics_per_part(graded, instructor):
    report = instructor.get(A + "analytics/").json()
    assert report["students"] == 2
    parts = {p["key"]: p for p in report["exercises"][0]["parts"]}
    assert (parts["product"]["attempts"], parts["product"]["facility"]) == (2, 0.5)
    assert parts["product"]["common_wrong"] == [{"value": "7", "count": 1}]
    # Over the one student who answered the part (sue never did), not over both; in the
    # gradebook's points: the 1-point exercise's two parts are worth 0.5 each.
    assert (parts["total"]["attempts"], parts["total"]["students"], parts["total"]["mean_score"]) == (2, 1, 0.4)
    assert (parts["total"]["points"], parts["total"]["facility"]) == (0.5, 0.8)


def test_regrade_is_a_dry_run_first_then_applied(graded, instructor, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        started = instructor.post(A + "regrades/", {"parts": ["product"]}, content_type="application/json")
    assert started.status_code == 202
    job = RegradeJob.objects.get()
    assert (job.dry_run, job.parts, job.status) == (True, ["product"], RegradeStatus.DONE)
    progress = instructor.get(started["Location"]).json()
    # The exercise did not change, so the dry run finds nothing to change.
    assert (progress["finished"], progress["total"], progress["processed"], progress["changed"], progress["dry_run"]) == (
        True, 2, 2, 0, True,
    )
    with django_capture_on_commit_callbacks(execute=True):
        applied = instructor.post(f"/api/v1/courses/attn/regrades/{job.pk}/apply/", content_type="application/json")
    assert applied.status_code == 202
    applied_job = RegradeJob.objects.get(pk=applied.json()["id"])
    assert (applied_job.dry_run, applied_job.preview_of_id) == (False, job.pk)
    refused = instructor.post(f"/api/v1/courses/attn/regrades/{applied_job.pk}/apply/", content_type="application/json")
    assert (refused.status_code, refused.json()["detail"]) == (409, "Only a finished dry run can be applied.")


def test_regrade_of_an_exercise_not_in_the_assignment_is_refused(graded, instructor):
    response = instructor.post(A + "regrades/", {"exercises": [99999]}, content_type="application/json")
    assert (response.status_code, response.json()["detail"]) == (409, "Items [99999] are not in this assignment.")


def test_roster_read(graded):
    Enrolment.objects.filter(user=graded.people.student2).update(status=EnrolmentStatus.DROPPED, student_id="S-2")
    roster = api_client(graded.tokens["ta"]).get("/api/v1/courses/attn/roster/").json()
    assert [(e["username"], e["role"], e["status"]) for e in roster] == [
        ("ines", "instructor", "active"), ("rita", "instructor", "active"), ("sam", "student", "active"),
        ("tariq", "ta", "active"), ("sue", "student", "dropped"),
    ]
    assert roster[-1]["student_id"] == "S-2"


def test_roster_import_dry_run_then_apply(world, instructor):
    body = {"csv": "username,email,name,role\nnew1,new1@example.org,Nia Ewe,\nsam,,,ta\n,,,\nbad user,,,\n"}
    dry = instructor.post("/api/v1/courses/attn/roster/", body, content_type="application/json").json()
    assert dry["dry_run"] is True
    assert [(line["line"], line["action"]) for line in dry["lines"]] == [(2, "create"), (3, "change role"), (5, "error")]
    assert not Enrolment.objects.filter(user__username="new1").exists()
    applied = instructor.post("/api/v1/courses/attn/roster/", {**body, "dry_run": False}, content_type="application/json").json()
    assert (applied["dry_run"], applied["changes"]) == (False, 2)
    assert Enrolment.objects.get(user__username="new1").role == Role.STUDENT
    assert Enrolment.objects.get(user__username="sam").role == Role.TEACHING_ASSISTANT
    rows = instructor.post("/api/v1/courses/attn/roster/", {"rows": [{"username": "new1"}], "dry_run": False},
                           content_type="application/json").json()
    assert [line["action"] for line in rows["lines"]] == ["skip"]


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({}, 400, "non_field_errors"),
        ({"csv": "a,b\n1,2\n", "rows": []}, 400, "non_field_errors"),
        ({"csv": "colour,size\nred,1\n"}, 422, None),
    ],
)
def test_roster_import_refuses_what_is_not_a_roster(world, instructor, body, status, field):
    response = instructor.post("/api/v1/courses/attn/roster/", body, content_type="application/json")
    assert response.status_code == status
    if field:
        assert list(response.json()["errors"]) == [field]


def test_course_gradebook_json_csv_and_schema(graded, instructor):
    Enrolment.objects.filter(user=graded.people.student).update(student_id="S-1")
    book = instructor.get("/api/v1/courses/attn/gradebook/").json()
    assert [column["assignment"] for column in book["columns"]] == ["week1"]
    assert book["categories"] == [{"id": None, "name": "All assignments", "weight": 100.0, "drop_lowest": 0}]
    rows = {row["username"]: row for row in book["rows"]}
    assert rows["sam"]["student_id"] == "S-1"
    assert rows["sam"]["cells"] == [{"earned": 0.9, "out_of": 1.0, "accommodated": False, "dropped": False}]
    assert round(rows["sam"]["total"], 2) == 90.0
    response = instructor.get("/api/v1/courses/attn/gradebook.csv?excel=1")
    body = b"".join(response.streaming_content)
    assert body.startswith(b"\xef\xbb\xbfusername,student_id,email,")
    schema = instructor.get("/api/schema/").content.decode()
    assert "/api/v1/courses/{course_slug}/gradebook/" in schema and "CourseGradebookRow" in schema
