"""Sources whose spec the database cannot store (NaN or infinity, NUL, lone surrogates,
dates, fields longer than their column) are refused on every page that saves a source
(new, import, edit of a published version) with the line-precise 422 of any invalid
file, store nothing, and the live check reports the same issue instead of "valid".
Run against PostgreSQL, where each of them used to fail with a DataError (a 500)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from authoring import services
from exercises.models import Exercise, ExerciseVersion, VersionStatus

from .factories import PASSWORD, product_yaml

NOT_FINITE = "write a finite number (NaN, infinity and numbers beyond ±1.8e308 cannot be stored)"
SLUG = "product"


def with_tolerance(source: str, tolerance: str) -> str:
    return source.replace("    points: 1\n", f"    points: 1\n    tolerance: {tolerance}\n", 1)


# (what, source, its one issue exactly). product_yaml's first part starts on line 10.
BAD_SOURCES = [
    ("NaN in a named variant", product_yaml() + "variants: {v1: {a: .nan, b: 2}}\n",
     f"line 23: variants.v1.a: is not a finite number (.nan); {NOT_FINITE}"),
    ("minus infinity in a tolerance", with_tolerance(product_yaml(), "{abs: -.inf}"),
     f"line 15: parts[0].tolerance.abs: is not a finite number (-.inf); {NOT_FINITE}"),
    ("a number past the float range", product_yaml() + "variants: {v1: {a: 2, b: 1.0e+400}}\n",
     f"line 23: variants.v1.b: is not a finite number (.inf); {NOT_FINITE}"),
    ("NUL in the title", product_yaml().replace("title: Product of two numbers", 'title: "Product\\0"'),
     "line 2: title: contains a NUL character (U+0000), which cannot be stored; remove it"),
    ("a lone surrogate in a solution", product_yaml().replace("The sum is", "The \\ud800 sum is").replace(
        "    solution: |\n      The \\ud800 sum is {{a + b}}.\n", '    solution: "The \\ud800 sum is {{a + b}}."\n'),
     "line 21: parts[1].solution: contains U+D800, half of a UTF-16 surrogate pair, which is not a "
     "character; write the character itself (or \\U and its 8-digit code point)"),
    ("an unquoted date", product_yaml().replace("    points: 1\n", "    points: 1\n    options: {due: 2026-02-01}\n", 1),
     "line 15: parts[0].options.due: is read as a date (2026-02-01); put it in quotes to make it text"),
    ("a slug of 51 characters", product_yaml(slug="p" * 51),
     "line 1: slug: must be at most 50 characters long, got 51"),
    ("a title of 201 characters", product_yaml().replace("title: Product of two numbers", "title: " + "T" * 201),
     "line 2: title: must be at most 200 characters long, got 201"),
    ("a part key of 65 characters", product_yaml().replace("key: product", "key: " + "k" * 65),
     "line 10: parts[0].key: must be at most 64 characters long, got 65"),
]
IDS = [what for what, _, _ in BAD_SOURCES]


@pytest.fixture
def instructor(client, people):
    client.login(username="ines", password=PASSWORD)
    return client


@pytest.fixture
def published(people):
    version = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    ExerciseVersion.objects.filter(pk=version.pk).update(status=VersionStatus.PUBLISHED)
    return version


def stored() -> tuple[int, int]:
    return Exercise.objects.count(), ExerciseVersion.objects.count()


def the_issues(page: str) -> list[str]:
    """The editor's list of problems, as text (one <li> each)."""
    block = page[page.index('id="spec-errors"'):]
    block = block[:block.index("</ul>")]
    return [item.split(">", 1)[1].split("</li>", 1)[0] for item in block.split("<li ")[1:]]


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_new_refuses_with_the_issue_and_stores_nothing(instructor, what, source, issue):
    before = stored()
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": source})
    assert response.status_code == 422
    assert the_issues(response.content.decode()) == [escape(issue)]
    assert stored() == before == (0, 0)


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_import_refuses_with_the_issue_and_stores_nothing(instructor, what, source, issue):
    upload = SimpleUploadedFile("exercise.yaml", source.encode("utf-8"), content_type="application/yaml")
    response = instructor.post(reverse("authoring:import", args=["attn"]), {"file": upload})
    assert response.status_code == 422
    assert the_issues(response.content.decode()) == [escape(issue)]
    assert stored() == (0, 0)


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_editing_a_published_version_refuses_and_starts_no_new_version(instructor, published, what, source, issue):
    before = stored()
    response = instructor.post(reverse("authoring:edit", args=["attn", SLUG, 1]), {"source": source})
    assert response.status_code == 422
    assert the_issues(response.content.decode()) == [escape(issue)]
    assert stored() == before == (1, 1)
    published.refresh_from_db()
    assert (published.source, published.status) == (product_yaml(), VersionStatus.PUBLISHED)


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_editing_a_draft_refuses_and_leaves_it_unchanged(instructor, people, what, source, issue):
    draft = services.exercise_create(course=people.course, actor=people.instructor, source=product_yaml())
    response = instructor.post(reverse("authoring:edit", args=["attn", SLUG, 1]), {"source": source})
    assert response.status_code == 422
    assert the_issues(response.content.decode()) == [escape(issue)]
    draft.refresh_from_db()
    assert (draft.source, stored()) == (product_yaml(), (1, 1))


@pytest.mark.parametrize(("what", "source", "issue"), BAD_SOURCES, ids=IDS)
def test_the_live_check_reports_the_same_issue_instead_of_valid(instructor, what, source, issue):
    response = instructor.post(reverse("authoring:check", args=["attn"]), {"source": source, "seed": "0"})
    page = response.content.decode()
    assert response.status_code == 200
    assert the_issues(page) == [escape(issue)]
    assert "The file is valid" not in page
    assert stored() == (0, 0)


# Right at the limits, and values JSON does hold: saved, and read back from the database
# exactly as written.
GOOD_SOURCES = [
    ("a slug of 50 characters", product_yaml(slug="p" * 50), "p" * 50, ("slug",), "p" * 50),
    ("a title of 200 characters", product_yaml().replace("title: Product of two numbers", "title: " + "T" * 200),
     SLUG, ("title",), "T" * 200),
    ("a part key of 64 characters", product_yaml().replace("key: product", "key: " + "k" * 64),
     SLUG, ("parts", 0, "key"), "k" * 64),
    # (as a parameter's value it is refused: no draw can compute with it; a free-text part's
    # answer is the rubric for the person who grades it, and any value is one)
    ("a 4,000-digit whole number",
     product_yaml() + "  - {key: why, type: free_text, answer: " + "7" * 4000 + ", solution: x}\n",
     SLUG, ("parts", 2, "answer"), int("7" * 4000)),
    ("an emoji and an accent", product_yaml().replace("title: Product of two numbers", 'title: "\\U0001F600 Zoë"'),
     SLUG, ("title",), "\U0001F600 Zoë"),
]


@pytest.mark.parametrize(("what", "source", "slug", "path", "value"), GOOD_SOURCES,
                         ids=[what for what, *_ in GOOD_SOURCES])
def test_values_at_the_limits_are_saved_and_read_back_exactly(instructor, what, source, slug, path, value):
    response = instructor.post(reverse("authoring:new", args=["attn"]), {"source": source})
    assert response.status_code == 302
    version = ExerciseVersion.objects.get(exercise__slug=slug)  # read back from the database
    found = version.spec
    for step in path:
        found = found[step]
    assert found == value
    assert version.source == source
    if path == ("title",):
        assert version.exercise.title == value
