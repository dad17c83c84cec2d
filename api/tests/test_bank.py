"""Exercise banks as code: validate, push drafts, list versions, review under the web's rules,
and the bank_sync command against a live server."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from api.tests.conftest import api_client, world_create
from authoring.tests.factories import product_yaml
from exercises.models import ExerciseVersion, VersionStatus

C = "/api/v1/courses/attn/exercises/"


def post(client, path, body):
    return client.post(path, body, content_type="application/json")


@pytest.fixture
def instructor(world):
    return api_client(world.tokens["instructor"])


def test_validate_gives_the_editors_line_precise_issues(world):
    ta = api_client(world.tokens["ta_read"])  # a TA's read-only token may validate
    broken = product_yaml(slug="p").replace("generator: int_range", "generator: intrange", 1)
    result = post(ta, C + "validate/", {"source": broken}).json()
    assert result["valid"] is False and result["slug"] is None
    assert result["issues"] == [{
        "line": 5, "path": "parameters.a.generator",
        "message": "unknown generator 'intrange'; known: int_matrix, int_range, choice, derived, fixed",
    }]
    good = post(ta, C + "validate/", {"source": product_yaml(slug="p")}).json()
    assert (good["valid"], good["slug"], good["title"], good["issues"]) == (True, "p", "Product of two numbers", [])
    assert ExerciseVersion.objects.filter(exercise__slug="p").count() == 0


def test_validate_holds_the_persons_one_check_place_as_the_editor_does(world):
    """Four validations at once kept the sandbox busy for 20 s, past the editor's rule of one
    check at a time per person: while one of theirs runs, another is refused with 429."""
    from django.utils import timezone

    from authoring.models import SourceCheckRun

    ta = api_client(world.tokens["ta_read"])
    running = SourceCheckRun.objects.create(user=world.people.ta, started_at=timezone.now())
    refused = post(ta, C + "validate/", {"source": product_yaml(slug="p")})
    assert (refused.status_code, refused["Retry-After"]) == (429, "2")
    assert refused.json()["detail"].startswith("A check of yours is still running, so this one was not started")
    running.delete()
    assert post(ta, C + "validate/", {"source": product_yaml(slug="p")}).json()["valid"] is True
    assert SourceCheckRun.objects.count() == 0  # the place was given back


def test_push_holds_the_persons_one_place_as_the_editors_save_does(world, instructor):
    """A push draws the file in the sandbox as Save does: while another run of the person's
    holds their place, 429 with Retry-After and nothing stored; an unchanged file runs nothing."""
    from django.utils import timezone

    from authoring.models import SourceCheckRun

    assert post(instructor, C, {"source": product_yaml(slug="mine")}).status_code == 201
    running = SourceCheckRun.objects.create(user=world.people.instructor, started_at=timezone.now())
    refused = post(instructor, C, {"source": product_yaml(slug="mine", points=2)})
    assert (refused.status_code, refused["Retry-After"]) == (429, "2")
    assert refused.json()["detail"] == (
        "A check of yours is still running, so this import was not started: one check, save, import or "
        "preview at a time per person, and each stops after at most 10 s. Expected available in 2 seconds."
    )
    assert list(ExerciseVersion.objects.filter(exercise__slug="mine").values_list("number", "source")) == [
        (1, product_yaml(slug="mine"))
    ]
    assert post(instructor, C, {"source": product_yaml(slug="mine")}).status_code == 200  # unchanged: no run
    running.delete()
    assert post(instructor, C, {"source": product_yaml(slug="mine", points=2)}).status_code == 201
    assert SourceCheckRun.objects.count() == 0


def test_push_creates_a_draft_then_a_new_version_and_skips_an_unchanged_file(world, instructor):
    created = post(instructor, C, {"source": product_yaml(slug="mine")})
    assert created.status_code == 201
    assert {k: created.json()[k] for k in ("exercise", "number", "status", "changed")} == {
        "exercise": "mine", "number": 1, "status": "draft", "changed": True,
    }
    same = post(instructor, C, {"source": product_yaml(slug="mine")})
    assert (same.status_code, same.json()["number"], same.json()["changed"]) == (200, 1, False)
    # A draft is edited in place; once published, a changed file becomes version 2.
    version = ExerciseVersion.objects.get(exercise__slug="mine")
    ExerciseVersion.objects.filter(pk=version.pk).update(status=VersionStatus.PUBLISHED)
    assert post(instructor, C, {"source": product_yaml(slug="mine")}).status_code == 200
    changed = post(instructor, C, {"source": product_yaml(slug="mine", points=2)})
    assert (changed.status_code, changed.json()["number"], changed.json()["status"]) == (201, 2, "draft")
    versions = instructor.get(C + "mine/versions/").json()
    assert [(v["number"], v["status"]) for v in versions] == [(2, "draft"), (1, "published")]
    assert instructor.get(C + "mine/versions/2/").json()["source"] == product_yaml(slug="mine", points=2)


def test_push_of_a_broken_file_is_422_with_issues(world, instructor):
    response = post(instructor, C, {"source": "slug: x\ntitle: [unclosed\n"})
    assert response.status_code == 422
    body = response.json()
    assert body["type"] == "urn:attnquiz:problem:invalid-exercise"
    assert body["issues"][0]["line"] == 3
    assert ExerciseVersion.objects.filter(exercise__slug="x").count() == 0


def test_push_of_another_courses_exercise_is_refused(world, instructor):
    outsider = api_client(world.tokens["outsider"])
    assert post(outsider, "/api/v1/courses/other/exercises/", {"source": product_yaml(slug="theirs")}).status_code == 201
    response = post(instructor, C, {"source": product_yaml(slug="theirs")})
    assert response.status_code == 422
    assert response.json()["issues"][0]["path"] == "slug"


def test_review_rules_hold_no_self_approval(world, instructor):
    post(instructor, C, {"source": product_yaml(slug="mine")})
    transition = C + "mine/versions/1/transition/"
    assert post(instructor, transition, {"to_status": "published"}).status_code == 409  # a draft is not reviewed yet
    assert post(instructor, transition, {"to_status": "in_review"}).json()["status"] == "in_review"
    own = post(instructor, transition, {"to_status": "published"})
    assert (own.status_code, own.json()["type"]) == (403, "urn:attnquiz:problem:self-approval")
    assert post(api_client(world.tokens["ta"]), transition, {"to_status": "published"}).status_code == 403
    approved = post(api_client(world.tokens["reviewer"]), transition, {"to_status": "published", "message": "ok"})
    assert (approved.status_code, approved.json()["status"]) == (200, "published")
    assert post(instructor, transition, {"to_status": "sideways"}).status_code == 400



def test_approval_holds_the_reviewers_one_place_and_is_refused_with_429_while_it_is_taken(world, instructor):
    """Publishing checks the stored file in the sandbox: while another run of the reviewer's
    holds their place, 429 with Retry-After and the version stays in review."""
    from django.utils import timezone

    from authoring.models import SourceCheckRun

    post(instructor, C, {"source": product_yaml(slug="mine")})
    transition = C + "mine/versions/1/transition/"
    assert post(instructor, transition, {"to_status": "in_review"}).json()["status"] == "in_review"
    reviewer = api_client(world.tokens["reviewer"])
    running = SourceCheckRun.objects.create(user=world.people.reviewer, started_at=timezone.now())
    refused = post(reviewer, transition, {"to_status": "published"})
    assert (refused.status_code, refused["Retry-After"]) == (429, "2")
    assert "this publish was not started" in refused.json()["detail"]
    assert ExerciseVersion.objects.get(exercise__slug="mine", number=1).status == "in_review"
    running.delete()
    approved = post(reviewer, transition, {"to_status": "published"})
    assert (approved.status_code, approved.json()["status"]) == (200, "published")
    assert SourceCheckRun.objects.count() == 0  # the place was given back

# ---------------------------------------------------------------------------
# bank_sync against a live server
# ---------------------------------------------------------------------------


def sync(live_server, token, directory, *extra):
    out, err = io.StringIO(), io.StringIO()
    call_command("bank_sync", "--url", live_server.url, "--token", token, "--course", "attn",
                 str(directory), *extra, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_bank_sync_pushes_changed_files_and_refuses_a_broken_one(live_server, transactional_db, tmp_path, settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}
    world = world_create()
    token = world.tokens["instructor"]
    (tmp_path / "one.yaml").write_text(product_yaml(slug="one"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two.yml").write_text(product_yaml(slug="two"))
    out, err = sync(live_server, token, tmp_path)
    assert out.splitlines() == [
        "one.yaml: one v1 draft",
        "sub/two.yml: two v1 draft",
        "2 file(s) valid; pushed 2, 0 unchanged.",
    ]
    # Nothing changed: nothing is pushed.
    assert sync(live_server, token, tmp_path)[0].splitlines()[-1] == "2 file(s) valid; pushed 0, 2 unchanged."
    # One file changes, another is broken: nothing is pushed, the exit is non-zero.
    (tmp_path / "one.yaml").write_text(product_yaml(slug="one", points=3))
    (tmp_path / "broken.yaml").write_text(product_yaml(slug="three").replace("type: numeric", "type: numbr", 1))
    with pytest.raises(CommandError) as failed:
        sync(live_server, token, tmp_path)
    assert str(failed.value) == "1 problem(s) found; nothing was pushed."
    assert ExerciseVersion.objects.get(exercise__slug="one").spec["parts"][0]["points"] == 1
    # Fixed: the changed file is pushed (its draft edited in place), the rest left alone.
    (tmp_path / "broken.yaml").unlink()
    out, _ = sync(live_server, token, tmp_path)
    assert out.splitlines() == [
        "one.yaml: one v1 draft",
        "sub/two.yml: two unchanged",
        "2 file(s) valid; pushed 1, 1 unchanged.",
    ]
    assert ExerciseVersion.objects.get(exercise__slug="one").spec["parts"][0]["points"] == 3


def test_bank_sync_reports_the_broken_line_and_refuses_a_read_token(live_server, transactional_db, tmp_path, settings):
    settings.API_RATE_LIMITS = {"token": "10000/min", "user": "10000/min", "anon": "10000/min"}
    world = world_create()
    (tmp_path / "bad.yaml").write_text(product_yaml(slug="bad").replace("type: numeric", "type: numbr", 1))
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("bank_sync", "--url", live_server.url, "--token", world.tokens["instructor"],
                     "--course", "attn", str(tmp_path), stderr=err, stdout=io.StringIO())
    assert err.getvalue() == (
        "bad.yaml:11: parts[0].type: unknown answer type 'numbr'; known: numeric, matrix, symbolic, "
        "matrix_expression, derivation, choice, free_text\n"
    )
    (tmp_path / "bad.yaml").write_text(product_yaml(slug="good"))
    with pytest.raises(CommandError) as refused:
        sync(live_server, world.tokens["instructor_read"], tmp_path)
    assert str(refused.value) == (
        "bad.yaml: This token may only read; create a read and write token to change anything.\n"
        "Pushing bad.yaml was refused (HTTP 403)."
    )
    with pytest.raises(CommandError) as expired:
        sync(live_server, world.tokens["expired"], tmp_path)
    assert "(HTTP 401)" in str(expired.value)


def test_validate_names_the_parameter_a_failing_draw_breaks_with_its_line(world):
    from exercises.tests.test_engine_draw_problems import BASE

    ta = api_client(world.tokens["ta_read"])
    result = post(ta, C + "validate/", {"source": BASE}).json()
    assert result["valid"] is False
    causes = [issue for issue in result["issues"] if issue["line"] is not None]
    assert causes == [{
        "line": 11, "path": "parameters.K.expr",
        "message": "parameter `K`: expression `X @ W_K` failed for 6 of 10 draws: shapes (4,4) and (3,4) do not align",
    }]
