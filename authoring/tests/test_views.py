"""Authoring pages: every URL for every role, the editor's line-precise errors, previews,
the variant test, and an exact import/export round trip."""

import pytest
from django.urls import reverse

from authoring import services
from exercises.models import ExerciseVersion, VersionStatus

from .factories import PASSWORD, product_yaml, published_version

ROLES = ("anonymous", "student", "ta", "instructor", "outsider")


@pytest.fixture
def draft(people):
    return services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())


def login(client, people, role):
    user = {
        "anonymous": None, "student": people.student, "ta": people.ta,
        "instructor": people.instructor, "outsider": people.outsider,
    }[role]
    if user is not None:
        client.login(username=user.username, password=PASSWORD)
    return user


# name, method, data, expected codes for (anonymous, student, ta, instructor, outsider)
COURSE_URLS = [
    ("list", "get", None, (302, 403, 200, 200, 404)),
    ("new", "get", None, (302, 403, 403, 200, 404)),
    ("import", "get", None, (302, 403, 403, 200, 404)),
    ("check", "post", {"source": product_yaml(), "seed": "3"}, (302, 403, 200, 200, 404)),
    ("format", "get", None, (302, 403, 200, 200, 404)),
    ("review_setting", "post", {"second_reviewer": "auto"}, (302, 403, 403, 302, 404)),
]
VERSION_URLS = [
    ("exercise", "get", None, (302, 403, 200, 200, 404)),
    ("version", "get", None, (302, 403, 200, 200, 404)),
    ("edit", "get", None, (302, 403, 403, 200, 404)),
    ("preview", "get", {"seed": "5"}, (302, 403, 200, 200, 404)),
    ("test", "get", None, (302, 403, 200, 200, 404)),
    ("export", "get", None, (302, 403, 200, 200, 404)),
    ("transition", "post", {"to_status": "in_review"}, (302, 403, 403, 302, 404)),
    ("comment", "post", {"message": "Reads well."}, (302, 403, 302, 302, 404)),
]


def url_for(name, people, version):
    if name in ("list", "new", "import", "check", "format", "review_setting"):
        return reverse(f"authoring:{name}", args=[people.course.slug])
    if name == "exercise":
        return reverse("authoring:exercise", args=[people.course.slug, version.exercise.slug])
    return reverse(f"authoring:{name}", args=[people.course.slug, version.exercise.slug, version.number])


@pytest.mark.parametrize("role_index,role", list(enumerate(ROLES)))
@pytest.mark.parametrize("name,method,data,expected", COURSE_URLS + VERSION_URLS, ids=lambda v: v if isinstance(v, str) else None)
def test_every_url_for_every_role(client, people, draft, role_index, role, name, method, data, expected):
    login(client, people, role)
    url = url_for(name, people, draft)
    response = getattr(client, method)(url, data or {})
    assert response.status_code == expected[role_index], (role, name, response.status_code)
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))


def test_other_courses_staff_see_published_library_versions_read_only(client, people):
    library = published_version(source=product_yaml(slug="library-product"))
    owned = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    client.login(username="otto", password=PASSWORD)
    mine = people.other_course.slug
    assert client.get(reverse("authoring:version", args=[mine, "library-product", 1])).status_code == 200
    assert client.get(reverse("authoring:export", args=[mine, "library-product", 1])).status_code == 200
    assert client.get(reverse("authoring:edit", args=[mine, "library-product", 1])).status_code == 403
    assert client.post(reverse("authoring:transition", args=[mine, "library-product", 1]), {"to_status": "retired"}).status_code == 403
    # The draft of another course is invisible, even through the outsider's own course.
    assert client.get(reverse("authoring:version", args=[mine, "product", 1])).status_code == 404
    page = client.get(reverse("authoring:list", args=[mine])).content.decode()
    assert "library-product" in page and ">product<" not in page
    library.refresh_from_db()
    assert library.status == VersionStatus.PUBLISHED and owned.status == VersionStatus.DRAFT


def test_editor_shows_line_precise_errors_and_keeps_the_text(client, people):
    client.login(username="ines", password=PASSWORD)
    broken = product_yaml().replace('answer: "a + b"', 'answer: "a + c"').replace("\n", "\r\n")
    response = client.post(reverse("authoring:new", args=["attn"]), {"source": broken})
    assert response.status_code == 422
    page = response.content.decode()
    assert "line 19: parts[1].answer: " in page
    assert "unknown name &#x27;c&#x27;" in page or "&#x27;c&#x27;" in page
    assert 'answer: &quot;a + c&quot;' in page  # the author's text is still in the textarea
    assert ExerciseVersion.objects.count() == 0
    fixed = client.post(reverse("authoring:new", args=["attn"]), {"source": product_yaml()})
    assert fixed.status_code == 302
    version = ExerciseVersion.objects.get()
    assert version.source == product_yaml()
    assert fixed["Location"] == reverse("authoring:version", args=["attn", "product", 1])


def test_check_endpoint_reports_errors_or_previews_the_seed(client, people):
    client.login(username="tariq", password=PASSWORD)
    url = reverse("authoring:check", args=["attn"])
    bad = client.post(url, {"source": "slug: x\ntitle: [unclosed\n", "seed": "0"}).content.decode()
    assert "line 3: YAML syntax error" in bad or "line 2: YAML syntax error" in bad
    good = client.post(url, {"source": product_yaml(), "seed": "not a number"}).content.decode()
    assert "The file is valid: seeds 0–9" in good and "showing seed 0" in good


def test_preview_shows_prompt_reference_answers_and_gate_verdicts(client, people, draft):
    from exercises import engine

    client.login(username="tariq", password=PASSWORD)
    url = reverse("authoring:preview", args=["attn", "product", 1])
    spec = engine.spec_from_json(draft.spec)
    for seed in (11, 12):
        params = engine.draw_variant(spec, seed).params
        page = client.get(url, {"seed": seed}, HTTP_HX_REQUEST="true").content.decode()
        assert f'data-seed="{seed}"' in page
        assert f"<code>{params['a'] * params['b']}</code>" in page
        assert f"<code>{params['a'] + params['b']}</code>" in page
        assert "passes — built-in" in page
    assert client.get(url, {"seed": "-1"}).status_code == 400
    assert client.get(url, {"seed": "0", "variant": "nope"}).status_code == 400


def test_preview_of_the_chapter_variant_gives_the_chapter_weights(client, people):
    from pathlib import Path

    import exercises

    source = (Path(exercises.__file__).parent / "bank" / "attention-weights-one-query.yaml").read_text()
    published_version(source=source)
    client.login(username="ines", password=PASSWORD)
    page = client.get(
        reverse("authoring:preview", args=["attn", "attention-weights-one-query", 1]), {"seed": 0, "variant": "chapter"}
    ).content.decode()
    assert "<code>[0.3875, 0.1425, 0.2350, 0.2350]</code>" in page
    assert "<code>[1.6225, 0.3775, 1.8674, 1.0000]</code>" in page


def test_variant_test_runs_100_seeds(client, people, draft):
    client.login(username="tariq", password=PASSWORD)
    response = client.post(reverse("authoring:test", args=["attn", "product", 1]), {"first_seed": "0"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "100 of 100 variants passed" in page
    assert page.count('class="num">0</td><td class="num">1</td>') == 1  # seed 0, drawn in 1 attempt


def test_export_returns_exactly_the_uploaded_bytes(client, people):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.login(username="ines", password=PASSWORD)
    data = ("# Zoë's exercise — tabs\tand trailing spaces   \r\n" + product_yaml().replace("\n", "\r\n")).encode()
    data = data.rstrip(b"\r\n")  # and no final newline
    upload = SimpleUploadedFile("product.yaml", data, content_type="application/yaml")
    response = client.post(reverse("authoring:import", args=["attn"]), {"file": upload})
    assert response.status_code == 302
    exported = client.get(reverse("authoring:export", args=["attn", "product", 1]))
    assert exported.status_code == 200
    assert exported.content == data
    assert exported["Content-Disposition"] == 'attachment; filename="product-v1.yaml"'


def test_import_refuses_bad_files_with_a_message(client, people):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.login(username="ines", password=PASSWORD)
    url = reverse("authoring:import", args=["attn"])
    wrong_name = client.post(url, {"file": SimpleUploadedFile("x.txt", b"slug: a")})
    assert wrong_name.status_code == 422 and "Upload a .yaml" in wrong_name.content.decode()
    invalid = client.post(url, {"file": SimpleUploadedFile("x.yaml", b"slug: a\n")})
    assert invalid.status_code == 422 and "missing required field" in invalid.content.decode()
    binary = client.post(url, {"file": SimpleUploadedFile("x.yaml", b"\xff\xfe\x00")})
    assert binary.status_code == 422 and "not UTF-8" in binary.content.decode()


def test_review_through_the_pages(client, people, draft):
    client.login(username="ines", password=PASSWORD)
    url = reverse("authoring:transition", args=["attn", "product", 1])
    client.post(url, {"to_status": "in_review"})
    refused = client.post(url, {"to_status": "published"}, follow=True).content.decode()
    assert "you cannot approve it" in refused
    assert ExerciseVersion.objects.get().status == VersionStatus.IN_REVIEW
    client.logout()
    client.login(username="rita", password=PASSWORD)
    page = client.get(reverse("authoring:version", args=["attn", "product", 1])).content.decode()
    assert 'id="approve-button"' in page
    client.post(url, {"to_status": "published"})
    assert ExerciseVersion.objects.get().status == VersionStatus.PUBLISHED
    assert client.post(url, {"to_status": "bogus"}, follow=True).status_code == 200
    # Editing the published version makes version 2.
    edit = client.post(reverse("authoring:edit", args=["attn", "product", 1]), {"source": product_yaml(points=2)})
    assert edit["Location"] == reverse("authoring:version", args=["attn", "product", 2])
    history = client.get(reverse("authoring:exercise", args=["attn", "product"])).content.decode()
    for text in ("Created", "Sent to review", "Approved and published", "Started a new version"):
        assert text in history


def test_preview_shows_a_choice_parts_choices_with_the_right_one(client, people):
    from pathlib import Path

    import exercises

    source = (Path(exercises.__file__).parent / "bank" / "qkv-misconception.yaml").read_text()
    version = published_version(source=source)
    client.login(username="ines", password=PASSWORD)
    page = client.get(
        reverse("authoring:preview", args=["attn", version.exercise.slug, 1]), {"seed": 0}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "the choices</strong>" in page
    assert "Q, K and V are three learned linear maps applied to the same embeddings X.</span> — right" in page
    assert "Q, K and V are fixed by hand and not learned.</span></li>" in page
