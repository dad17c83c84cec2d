"""The assignment editor's exercise picker: what it offers (the library's published
versions, never a course's private work), its search, its preview, and adding several
exercises at once in the order chosen (all or none; duplicates skipped and named)."""

import re

import pytest
from django.urls import reverse

from authoring.models import ExerciseOwner
from authoring.tests.factories import PASSWORD, assignment_create, product_yaml, published_version
from courses.models import AssignmentItem
from exercises.models import ExerciseVersion, VersionStatus
from instructor import selectors_picker, services
from instructor.services import InstructorRefused


def exercise_yaml(slug: str, title: str, *, skills=(), topics=(), difficulty="medium") -> str:
    source = product_yaml(slug=slug).replace("title: Product of two numbers", f"title: {title}")
    extra = f"topics: [{', '.join(topics)}]\nskills: [{', '.join(skills)}]\ndifficulty: {difficulty}\n"
    return source.replace("version: 1\n", "version: 1\n" + extra, 1)


@pytest.fixture
def library(people):
    """Four published library exercises, a draft of this course and a draft of another."""
    versions = {
        "scaling-why": published_version(source=exercise_yaml(
            "scaling-why", "Why divide by root d_k", skills=["scaling"], topics=["variance"], difficulty="easy")),
        "softmax-row": published_version(source=exercise_yaml(
            "softmax-row", "Weights of one row", skills=["softmax"], topics=["softmax"])),
        "shapes": published_version(source=exercise_yaml(
            "shapes", "Shapes in one head", skills=["matrix-shapes"], difficulty="hard")),
        "saturation": published_version(source=exercise_yaml(
            "saturation", "Saturated softmax", skills=["softmax-saturation", "scaling"])),
    }
    # v2 of softmax-row is the one offered (the latest published version).
    versions["softmax-row-v2"] = published_version(
        source=exercise_yaml("softmax-row", "Weights of one row", skills=["softmax"]), number=2,
        exercise=versions["softmax-row"].exercise,
    )
    own_draft = published_version(source=exercise_yaml("own-draft", "Our draft", skills=["scaling"]))
    own_draft.status = VersionStatus.DRAFT
    own_draft.save()
    ExerciseOwner.objects.create(exercise=own_draft.exercise, course=people.course)
    other_draft = published_version(source=exercise_yaml("their-draft", "Their private draft", skills=["scaling"]))
    other_draft.status = VersionStatus.IN_REVIEW
    other_draft.save()
    ExerciseOwner.objects.create(exercise=other_draft.exercise, course=people.other_course)
    versions["own-draft"], versions["their-draft"] = own_draft, other_draft
    return versions


@pytest.fixture
def assignment(people, library):
    return assignment_create(people.course, [library["shapes"]])


def slugs(rows):
    return [row.slug for row in rows]


def items_in_order(assignment):
    return [(item.exercise_version.exercise.slug, item.exercise_version.number, item.position, item.points)
            for item in assignment.items.select_related("exercise_version__exercise").order_by("position")]


# ---------------------------------------------------------------- what is offered


def test_the_picker_offers_each_published_exercise_once_with_what_people_choose_by(assignment, library):
    rows = selectors_picker.exercise_picker_rows(assignment=assignment)
    assert slugs(rows) == ["saturation", "shapes", "softmax-row", "scaling-why"]  # by title
    by_slug = {row.slug: row for row in rows}
    assert by_slug["softmax-row"].version == library["softmax-row-v2"]
    assert (by_slug["saturation"].skills, by_slug["saturation"].skill_labels) == (
        ("scaling", "softmax-saturation"), ["scaling by √d_k", "softmax saturation"])
    assert [(r.slug, r.difficulty, r.part_count, r.in_assignment, r.topics) for r in rows] == [
        ("saturation", "medium", 2, False, ()),
        ("shapes", "hard", 2, True, ()),
        ("softmax-row", "medium", 2, False, ()),
        ("scaling-why", "easy", 2, False, ("variance",)),
    ]


@pytest.mark.parametrize("query,skill,expected", [
    ("", "", ["saturation", "shapes", "softmax-row", "scaling-why"]),
    ("softmax", "", ["saturation", "softmax-row"]),              # title words
    ("SHAPES", "", ["shapes"]),                                  # case does not matter
    ("row weights", "", ["softmax-row"]),                        # every word, any order
    ("scaling-why", "", ["scaling-why"]),                        # the slug
    ("√d_k", "", ["saturation", "scaling-why"]),                 # a skill's label
    ("variance", "", ["scaling-why"]),                           # a topic
    ("", "scaling", ["saturation", "scaling-why"]),              # the skill filter
    ("why", "scaling", ["scaling-why"]),
    ("softmax", "matrix-shapes", []),
    ("draft", "", []),                                           # drafts are never offered
    ("private", "", []),
    ("nothing like this", "", []),
])
def test_search_filters_by_title_slug_skill_and_topic(assignment, query, skill, expected):
    assert slugs(selectors_picker.exercise_picker_rows(assignment=assignment, query=query, skill=skill)) == expected


def test_the_source_filter_tells_the_bank_this_course_and_other_courses_apart(client, people, assignment, library):
    ExerciseOwner.objects.create(exercise=library["saturation"].exercise, course=people.course)
    ExerciseOwner.objects.create(exercise=library["scaling-why"].exercise, course=people.other_course)
    rows = selectors_picker.exercise_picker_rows(assignment=assignment)
    assert [(row.slug, row.source, row.source_label) for row in rows] == [
        ("saturation", "course", "this course's"),
        ("shapes", "bank", "from the bank"),
        ("softmax-row", "bank", "from the bank"),
        ("scaling-why", "other", "another course's"),
    ]
    for source, expected in (("course", ["saturation"]), ("bank", ["shapes", "softmax-row"]), ("other", ["scaling-why"])):
        assert slugs(selectors_picker.exercise_picker_rows(assignment=assignment, source=source)) == expected
    client.login(username="ines", password=PASSWORD)
    url = reverse("instructor:exercise_picker", args=["attn", "week1"])
    page = client.get(url, {"source": "other"}).content.decode()
    assert re.findall(r'data-slug="([^"]+)"', page) == ["scaling-why"]
    assert 'data-source="other"' in page and "another course&#x27;s" in page
    refused = client.get(url, {"source": "elsewhere"})
    assert refused.status_code == 400
    assert "Choose where the exercises come from from the list; showing all." in refused.content.decode()
    assert len(re.findall(r'data-slug="', refused.content.decode())) == 4


# ---------------------------------------------------------------- adding several


def test_several_are_added_in_the_order_given_after_the_existing_items(assignment, library):
    outcome = services.assignment_items_add(
        assignment=assignment,
        version_ids=[library["scaling-why"].pk, library["softmax-row-v2"].pk, library["saturation"].pk],
        points=2.5,
    )
    assert [item.exercise_version.exercise.slug for item in outcome.added] == ["scaling-why", "softmax-row", "saturation"]
    assert outcome.skipped == []
    assert items_in_order(assignment) == [
        ("shapes", 1, 0, 1.0), ("scaling-why", 1, 1, 2.5), ("softmax-row", 2, 2, 2.5), ("saturation", 1, 3, 2.5),
    ]


@pytest.mark.parametrize("chosen,added,skipped", [
    (["shapes", "scaling-why"], ["scaling-why"], ["shapes"]),                 # already in the assignment
    (["scaling-why", "scaling-why"], ["scaling-why"], ["scaling-why"]),       # the same id twice
    (["softmax-row", "softmax-row-v2"], ["softmax-row"], ["softmax-row"]),    # two versions of one exercise
    (["shapes"], [], ["shapes"]),                                             # nothing new
])
def test_duplicates_are_skipped_and_named(assignment, library, chosen, added, skipped):
    outcome = services.assignment_items_add(assignment=assignment, version_ids=[library[k].pk for k in chosen])
    assert [item.exercise_version.exercise.slug for item in outcome.added] == added
    assert outcome.skipped == skipped
    assert sorted(slug for slug, *_ in items_in_order(assignment)) == sorted({"shapes", *added})


@pytest.mark.parametrize("chosen,message", [
    ([], "Tick at least one exercise to add."),
    (["scaling-why", "their-draft"], "Not a published exercise version: {their-draft}. Nothing was added."),
    (["own-draft"], "Not a published exercise version: {own-draft}. Nothing was added."),
    (["scaling-why", 999999, "softmax-row"], "Not a published exercise version: 999999. Nothing was added."),
])
def test_refusals_add_nothing(assignment, library, chosen, message):
    ids = [library[k].pk if isinstance(k, str) else k for k in chosen]
    for key in ("their-draft", "own-draft"):
        message = message.replace("{" + key + "}", str(library[key].pk))
    with pytest.raises(InstructorRefused) as refused:
        services.assignment_items_add(assignment=assignment, version_ids=ids)
    assert refused.value.message == message
    assert items_in_order(assignment) == [("shapes", 1, 0, 1.0)]


def test_a_retired_version_and_an_archived_course_are_refused(assignment, library, people):
    retired = library["saturation"]
    ExerciseVersion.objects.filter(pk=retired.pk).update(status=VersionStatus.RETIRED)
    with pytest.raises(InstructorRefused, match="Not a published exercise version"):
        services.assignment_items_add(assignment=assignment, version_ids=[retired.pk])
    from django.utils import timezone

    people.course.archived_at = timezone.now()
    people.course.save()
    assignment.refresh_from_db()
    with pytest.raises(InstructorRefused):
        services.assignment_items_add(assignment=assignment, version_ids=[library["scaling-why"].pk])
    assert AssignmentItem.objects.filter(assignment=assignment).count() == 1


# ---------------------------------------------------------------- the pages


def picker_url(**query):
    from urllib.parse import urlencode

    url = reverse("instructor:exercise_picker", args=["attn", "week1"])
    return url + ("?" + urlencode(query) if query else "")


def preview_url(version):
    return reverse("instructor:exercise_preview", args=["attn", "week1", version.pk])


@pytest.mark.parametrize("username,status", [("sam", 403), ("tariq", 403), ("otto", 404), ("ines", 200)])
def test_only_the_course_instructors_reach_the_picker_and_its_preview(client, assignment, library, username, status):
    client.login(username=username, password=PASSWORD)
    assert client.get(picker_url()).status_code == status
    assert client.get(preview_url(library["scaling-why"])).status_code == status
    posted = client.post(picker_url(), {"version": [library["scaling-why"].pk], "points": "1"})
    assert posted.status_code == (302 if status == 200 else status)
    assert assignment.items.count() == (2 if status == 200 else 1)


def test_the_page_lists_the_search_results_with_titles_skills_and_marks(client, assignment, library):
    client.login(username="ines", password=PASSWORD)
    page = client.get(picker_url(q="softmax")).content.decode()
    assert page.count('class="aq-picker-row') == 2
    assert "Saturated softmax" in page and "Weights of one row" in page and "Shapes in one head" not in page
    assert "softmax saturation" in page and "2 exercises fit the search." in page
    assert "softmax-row v2 · medium · 2 parts ·" not in page
    assert "softmax-row v2 · from the bank · medium · 2 parts" in re.sub(r"<[^>]+>", "", page)
    full = client.get(picker_url()).content.decode()
    assert "scaling-why v1 · from the bank · easy · 2 parts · topics: variance" in re.sub(r"<[^>]+>", "", full)
    assert full.count('class="aq-picker-row') == 4
    assert full.count("already in this assignment") == 1
    assert f'value="{library["shapes"].pk}" id="pick-{library["shapes"].pk}" disabled' in full
    assert "Their private draft" not in full and "Our draft" not in full
    skill = client.get(picker_url(skill="matrix-shapes")).content.decode()
    assert skill.count('class="aq-picker-row') == 1 and "Shapes in one head" in skill


def test_an_unknown_skill_is_a_400_that_says_so(client, assignment):
    client.login(username="ines", password=PASSWORD)
    response = client.get(picker_url(skill="astrology"))
    assert response.status_code == 400
    assert "There is no skill called &#x27;astrology&#x27;" in response.content.decode()


def test_posting_adds_them_all_in_order_and_says_what_was_skipped(client, assignment, library):
    client.login(username="ines", password=PASSWORD)
    response = client.post(picker_url(), {
        "version": [library["saturation"].pk, library["shapes"].pk, library["scaling-why"].pk], "points": "3",
    }, follow=True)
    assert response.redirect_chain[-1][0] == reverse("instructor:assignment", args=["attn", "week1"])
    page = response.content.decode()
    assert "Added 2 exercises: saturation, scaling-why." in page
    assert "Skipped, already in the assignment: shapes." in page
    assert items_in_order(assignment) == [("shapes", 1, 0, 1.0), ("saturation", 1, 1, 3.0), ("scaling-why", 1, 2, 3.0)]


@pytest.mark.parametrize("data,message", [
    ({"points": "1"}, "Tick at least one exercise to add."),
    ({"version": ["abc"], "points": "1"}, "Not an exercise version id: &#x27;abc&#x27;. Nothing was added."),
    ({"version": ["{scaling-why}", "{their-draft}"], "points": "1"},
     "Not a published exercise version: {their-draft}. Nothing was added."),
    ({"version": ["{scaling-why}"], "points": "-1"}, "Ensure this value is greater than or equal to 0."),
    ({"version": ["{scaling-why}"], "points": "many"}, "Enter a number."),
])
def test_bad_posts_are_400_with_a_message_and_add_nothing(client, assignment, library, data, message):
    client.login(username="ines", password=PASSWORD)

    def fill(text):
        for key in ("scaling-why", "their-draft"):
            text = text.replace("{" + key + "}", str(library[key].pk))
        return text

    data = {key: [fill(v) for v in value] if isinstance(value, list) else value for key, value in data.items()}
    response = client.post(picker_url(), data)
    assert response.status_code == 400
    assert fill(message) in response.content.decode()
    assert items_in_order(assignment) == [("shapes", 1, 0, 1.0)]


def test_the_preview_shows_the_rendered_prompt_of_a_sample_variant(client, assignment, library):
    client.login(username="ines", password=PASSWORD)
    fragment = client.get(preview_url(library["scaling-why"]), HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    html = fragment.content.decode()
    assert "<html" not in html and 'data-version="%d"' % library["scaling-why"].pk in html
    assert "Multiply" in html and "seed 0" in html
    page = client.get(preview_url(library["scaling-why"])).content.decode()
    assert "<h1>Why divide by root d_k</h1>" in page and "Multiply" in page
    for key in ("own-draft", "their-draft"):
        assert client.get(preview_url(library[key])).status_code == 404


def test_the_single_add_form_offers_only_assignable_versions(library):
    from instructor.forms import ItemAddForm

    offered = set(ItemAddForm().fields["version"].queryset)
    assert library["their-draft"] not in offered and library["own-draft"] not in offered
    assert library["softmax-row"] in offered and library["softmax-row-v2"] in offered


def test_the_preview_names_the_choices_of_a_choice_part_by_its_label(client, people):
    from exercises.services_bank import bank_load

    bank_load()
    assignment_create(people.course, [])
    version = selectors_picker.assignable_versions().get(exercise__slug="qkv-misconception")
    client.login(username="ines", password=PASSWORD)
    html = client.get(preview_url(version), HTTP_HX_REQUEST="true").content.decode()
    assert "Choices of (a)" in html
    assert "Q, K and V are three learned linear maps applied to the same embeddings X." in html
    assert "correct_statement" not in html and "separate" not in html.replace("separate inputs", "")
